"""Data-fit terms (losses) bound to data, with one-pass clipped gradient sums.

A loss object offers ``clipped_grad_sum(W, clip_norm, idx=None, norm=2)``,
``loss_values(W, idx=None, loss_clip=None)``, ``mean_loss(W)``,
the row sampling and clipped loss sums of :class:`BatchSums`
(``sample_rows``, ``clipped_loss_sum``, ``clipped_decrease``),
``grad_sum(W, idx=None)``, ``smoothness()``, ``coef_shape``, ``n_samples``
and ``capabilities`` (a frozenset of properties such as ``"smooth"`` and
``"convex"`` that solvers declare they need).

Two doors every data pass goes through: :func:`canonical_rows` (norms and
clipping read sparse rows with duplicates summed and indices sorted) and the
float64 sums (:func:`column_totals`, :func:`float64_total`,
:class:`CompensatedSum`): a sum with a sensitivity claim is accumulated in
float64 by row blocks, whatever X's dtype.
"""

from ._batch_sums import BatchSums
from ._canonical import canonical_rows
from ._design import LinearDesign
from ._design_rows import sum_is_finite
from ._factor_stand_ins import factor_step
from ._float64_sums import CompensatedSum, column_totals, float64_total
from ._glm import GLMLoss
from ._threads import one_blas_thread
from .logistic import BinaryLogisticLoss, MultinomialLogisticLoss
from .hinge import HINGE_LOSSES, HingeLoss, SigmoidLoss, SmoothHingeLoss, SquaredHingeLoss
from .matrix_sensing import MatrixSensingLoss
from .squared import SquaredLoss

__all__ = [
    "BatchSums",
    "LinearDesign",
    "GLMLoss",
    "BinaryLogisticLoss",
    "MultinomialLogisticLoss",
    "HingeLoss",
    "SquaredHingeLoss",
    "SmoothHingeLoss",
    "SigmoidLoss",
    "HINGE_LOSSES",
    "MatrixSensingLoss",
    "SquaredLoss",
    "canonical_rows",
    "CompensatedSum",
    "column_totals",
    "factor_step",
    "one_blas_thread",
    "float64_total",
    "sum_is_finite",
]

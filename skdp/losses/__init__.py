"""Data-fit terms (losses) bound to data, with one-pass clipped gradient sums.

A loss object offers ``clipped_grad_sum(W, clip_norm, idx=None, norm=2)``,
``loss_values(W, idx=None, loss_clip=None)``, ``mean_loss(W)``,
the row sampling and clipped loss sums of :class:`BatchSums`
(``sample_rows``, ``clipped_loss_sum``, ``clipped_decrease``),
``grad_sum(W, idx=None)``, ``smoothness()``, ``coef_shape``, ``n_samples``
and ``capabilities`` (a frozenset of properties such as ``"smooth"`` and
``"convex"`` that solvers declare they need).
"""

from ._batch_sums import BatchSums
from ._design import LinearDesign
from ._glm import GLMLoss
from .logistic import BinaryLogisticLoss, MultinomialLogisticLoss
from .hinge import HINGE_LOSSES, HingeLoss, SigmoidLoss, SmoothHingeLoss, SquaredHingeLoss
from .matrix_sensing import MatrixSensingLoss

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
]

r"""Hinge-family losses of linear support vector machines.

Each loss is a function :math:`\ell(m)` of the margin ``m = s z`` where
``s`` in {-1, +1} is the label and ``z`` the linear predictor:

* ``hinge``: :math:`\max(0, 1 - m)`; not differentiable at ``m = 1`` (the
  solvers get the subgradient ``-1`` for ``m < 1`` and ``0`` otherwise),
  ``|l'| <= 1``.
* ``squared_hinge``: :math:`\max(0, 1 - m)^2`; smooth, curvature at most 2;
  its derivative ``-2 max(0, 1 - m)`` is unbounded (per-example clipping is
  what bounds the sensitivity).
* ``smooth_hinge``: the Huber-smoothed hinge of width ``h`` (papers 001 and
  002): ``0`` for ``m >= 1``, :math:`(1 - m)^2 / (2h)` for ``1 - h < m < 1``
  and :math:`1 - m - h/2` for ``m <= 1 - h``; smooth with curvature at most
  ``1/h``, ``|l'| <= 1``, and within ``h/2`` of the hinge everywhere.
* ``sigmoid``: :math:`1 / (1 + e^{m})` (paper 004), bounded in (0, 1),
  smooth and not convex: robust to outliers and label noise.

Labels ``s`` have shape ``(n,)`` for a binary model (one coefficient vector)
or ``(n, K)`` for a one-vs-rest model with K outputs. In the one-vs-rest case
the loss of an example is the sum of its K binary losses; its gradient is the
matrix ``r_i (x) x_i`` with ``r_i`` in R^K, clipped *as a whole*
(:class:`~skdp.losses.GLMLoss` does this), so all classes share one
mechanism instead of splitting epsilon across them. The Hessian in ``z`` is
diagonal, so the curvature bound of the binary loss also bounds its
operator norm.
"""

import numpy as np
from scipy.special import expit

from ._glm import GLMLoss

__all__ = ["HingeLoss", "SquaredHingeLoss", "SmoothHingeLoss", "SigmoidLoss", "HINGE_LOSSES"]


#: the hinge's stand-in step, times ``1 / (data_norm**2 + fit_intercept)``: it
#: has no smoothness constant to derive one from. Chosen (confirmed) with
#: DPLinearSVC(loss='hinge') and gd on validation splits of the training files of
#: Adult and Reuters (``python benchmarks/validation_defaults.py``, file
#: benchmarks/results/validation_defaults.md; see DPLinearSVC's notes)
HINGE_STEP = 16.0
#: iterations the margin losses' defaults were measured for (DPLinearSVC on
#: Adult and Reuters): the iteration cap of runs whose own rule has no public
#: constant to size them (second_order on the sigmoid loss:
#: docs/solvers/second_order.md)
MARGIN_ITERATIONS = 300


class _MarginLoss(GLMLoss):
    """A loss ``l(s z)`` of the margin; binary (``s`` 1-D) or one-vs-rest (2-D).

    Subclasses implement ``_dloss(m)`` (derivative in the margin) and
    ``_loss(m)`` (value).

    Parameters
    ----------
    design : LinearDesign
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Labels in {-1.0, +1.0}; one column per class for one-vs-rest.
    """

    def __init__(self, design, y):
        y = np.asarray(y, dtype=np.float64)
        if y.ndim not in (1, 2):
            # the array's number of dimensions only: nothing computed from the data
            raise ValueError(
                f"labels must be a 1-D array of signs (binary) or a 2-D array with one "
                f"column of signs per class (one-vs-rest), got a {y.ndim}-D array."
            )
        super().__init__(design, y)
        self.n_outputs = None if y.ndim == 1 else y.shape[1]

    def _dloss(self, m):  # pragma: no cover - abstract
        raise NotImplementedError

    def _loss(self, m):  # pragma: no cover - abstract
        raise NotImplementedError

    def _residuals(self, Z, y):
        return y * self._dloss(y * Z)

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        """The loss at margin 0, once per one-vs-rest column: a public ``F(0)``.

        Parameters
        ----------
        n_outputs : int or None
            Number of one-vs-rest columns ``K`` (None for a binary model).
        **params
            The loss's public parameters (e.g. ``smoothing``).

        Returns
        -------
        float
            ``K * l(0)`` (``K = 1`` for a binary model): every example's
            loss, hence the mean loss, at ``W = 0``, whatever the data.
        """
        return (n_outputs or 1) * cls._margin_loss_at_zero(**params)

    @classmethod
    def _margin_loss_at_zero(cls, **params):
        return 1.0

    @classmethod
    def _bounded_stand_ins(cls, data_norm, fit_intercept, **params):
        # the run length the margin losses' defaults were measured for
        return {"iterations": MARGIN_ITERATIONS}

    def _values(self, Z, y):
        values = self._loss(y * Z)
        return values if values.ndim == 1 else values.sum(axis=1)


class HingeLoss(_MarginLoss):
    r"""Hinge loss :math:`\max(0, 1 - s z)` (convex, not smooth).

    The gradient is the subgradient ``-s`` where the margin is below 1 and
    ``0`` elsewhere (including at the kink), so ``|l'| <= 1``.

    Parameters
    ----------
    design : LinearDesign
        The implicit rows ``[s_i x_i, c]``; the loss is not smooth, so
        ``data_norm`` gives no smoothness constant (:meth:`smoothness` is None).
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Labels in {-1.0, +1.0}: one vector for a binary model, one column
        of signs per class for one-vs-rest.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "convex"})
    curvature_bound = None

    @classmethod
    def _bounded_stand_ins(cls, data_norm, fit_intercept, **params):
        # a stable step for the hinge, which has no smoothness bound:
        # HINGE_STEP / (B**2 + fit_intercept), with the margin losses' iterations
        stand_ins = super()._bounded_stand_ins(data_norm, fit_intercept, **params)
        stand_ins["step"] = HINGE_STEP / (data_norm ** 2 + float(fit_intercept))
        return stand_ins

    def _dloss(self, m):
        return -(m < 1.0).astype(np.float64)

    def _loss(self, m):
        return np.maximum(0.0, 1.0 - m)


class SquaredHingeLoss(_MarginLoss):
    r"""Squared hinge loss :math:`\max(0, 1 - s z)^2` (convex, smooth).

    Curvature at most 2. The derivative ``-2 max(0, 1 - m)`` is unbounded;
    per-example clipping bounds the sensitivity.

    Parameters
    ----------
    design : LinearDesign
        The implicit rows ``[s_i x_i, c]``; with ``data_norm`` set, the
        public bound ``B`` on their L2 norm gives the smoothness constant
        ``2 B**2``.
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Labels in {-1.0, +1.0}: one vector for a binary model, one column
        of signs per class for one-vs-rest.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "convex", "hessian"})
    curvature_bound = 2.0

    def _dloss(self, m):
        return -2.0 * np.maximum(0.0, 1.0 - m)

    def _loss(self, m):
        return np.maximum(0.0, 1.0 - m) ** 2

    def _second_derivatives(self, Z, y):
        """Generalised second derivatives (2 where the margin is below 1, else 0)."""
        return 2.0 * (y * Z < 1.0)


class SmoothHingeLoss(_MarginLoss):
    r"""Huber-smoothed hinge of width ``h`` (convex, smooth).

    .. math::

        \ell_h(m) = \begin{cases} 0 & m \ge 1 \\
        (1 - m)^2 / (2h) & 1 - h < m < 1 \\
        1 - m - h/2 & m \le 1 - h \end{cases}

    Curvature at most ``1/h``, ``|l'| <= 1``, and
    ``hinge - h/2 <= l_h <= hinge``.

    Parameters
    ----------
    design : LinearDesign
        The implicit rows ``[s_i x_i, c]``; with ``data_norm`` set, the
        public bound ``B`` on their L2 norm gives the smoothness constant
        ``B**2 / h``.
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Labels in {-1.0, +1.0}.
    smoothing : float, default=1.0
        The width ``h > 0``.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "convex", "hessian"})

    @classmethod
    def curvature(cls, smoothing=1.0, **params):
        """Bound ``1 / h`` on the loss's second derivative in the margin.

        Parameters
        ----------
        smoothing : float, default=1.0
            The public width ``h > 0``.
        **params
            Other public parameters of the loss; unused.

        Returns
        -------
        float
            ``1 / smoothing``: the curvature in the quadratic zone, from the
            public width only.
        """
        return 1.0 / float(smoothing)

    @classmethod
    def _margin_loss_at_zero(cls, smoothing=1.0, **params):
        h = float(smoothing)
        return 1.0 - h / 2.0 if h <= 1.0 else 1.0 / (2.0 * h)

    def __init__(self, design, y, smoothing=1.0):
        if not np.isfinite(smoothing) or smoothing <= 0:
            raise ValueError(f"smoothing must be a finite number > 0, got {smoothing!r}.")
        super().__init__(design, y)
        self.smoothing = float(smoothing)
        self.curvature_bound = 1.0 / self.smoothing

    def _dloss(self, m):
        h = self.smoothing
        return -np.clip((1.0 - m) / h, 0.0, 1.0)

    def _loss(self, m):
        h = self.smoothing
        gap = 1.0 - m
        return np.where(gap >= h, gap - 0.5 * h,
                        np.where(gap > 0.0, gap * gap / (2.0 * h), 0.0))

    def _second_derivatives(self, Z, y):
        """Generalised second derivatives (``1/h`` inside the quadratic zone, else 0)."""
        gap = 1.0 - y * Z
        return ((gap > 0.0) & (gap < self.smoothing)) / self.smoothing


class SigmoidLoss(_MarginLoss):
    r"""The bounded sigmoid loss :math:`1 / (1 + e^{m})` of the margin (smooth, not convex).

    Paper 004's "SVM-like" loss (its appendix E.3, with the sign that
    penalises errors): in (0, 1), 1/2 at margin 0, near 0 for confident
    correct margins and near 1 for confident errors, so one outlier moves
    the objective by at most 1/n. With :math:`\sigma(t) = 1/(1 + e^{-t})`
    and :math:`s = \sigma(-m)`: :math:`\ell' = -s(1 - s)`, so
    :math:`|\ell'| \le 1/4`; :math:`\ell'' = s(1 - s)(1 - 2s)`, so
    :math:`|\ell''| \le 1/(6\sqrt 3) = 0.0962`; and
    :math:`|\ell^{(3)}| = |s(1 - s)(1 - 6s + 6s^2)| \le 1/8`.

    Parameters
    ----------
    design : LinearDesign
        The implicit rows ``[s_i x_i, c]``, built with this class's
        :attr:`intercept_scale`. With ``data_norm`` set, the public bound
        ``B`` on their L2 norm gives the smoothness constant ``0.09623 B**2``.
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Labels in {-1.0, +1.0}: one vector for a binary model, one column
        of signs per class for one-vs-rest.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "hessian"})
    #: Value 0.3 of the implicit intercept feature, below the default 1 (public).
    #:
    #: From w = 0 the intercept's gradient (the label imbalance) would otherwise
    #: saturate every margin before the features move, a flat local minimum at
    #: the majority class (docs/solvers/second_order.md, "Sigmoid intercept").
    intercept_scale = 0.3
    #: Bound on the second derivative: ``1 / (6 sqrt 3) = 0.096225``, rounded up.
    curvature_bound = 0.09623
    #: Bound 1/8 on the third derivative of the loss in the margin.
    third_derivative_bound = 0.125

    @classmethod
    def _margin_loss_at_zero(cls, **params):
        return 0.5

    def _dloss(self, m):
        s = expit(-m)
        return -s * (1.0 - s)

    def _loss(self, m):
        return expit(-m)

    def _second_derivatives(self, Z, y):
        s = expit(-y * Z)
        return s * (1.0 - s) * (1.0 - 2.0 * s)


#: loss name (``DPLinearSVC(loss=...)``) -> class
HINGE_LOSSES = {
    "hinge": HingeLoss,
    "squared_hinge": SquaredHingeLoss,
    "smooth_hinge": SmoothHingeLoss,
    "sigmoid": SigmoidLoss,
}

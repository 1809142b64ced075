r"""Penalties: data-independent terms of the objective, shared by every solver.

A penalty never touches data: it adds no sensitivity and costs no privacy.
Each states its value, its gradient and Hessian (diagonal for the penalties
here) where it is smooth, its proximal operator where it has a closed form,
its public constants (smoothness, strong convexity, Lipschitz constant of
the Hessian) and its capabilities (``'smooth'``, ``'hessian'``,
``'convex'``, ``'strongly_convex'``, ``'prox'``), which solvers may require
as ``'penalty:<capability>'`` (see :func:`skdp.solvers.available_solvers`).
The intercept is never penalised: ``mask`` is False on its row.

Strengths follow :class:`sklearn.linear_model.SGDClassifier`: ``'l2'`` is
:math:`\frac{\alpha}{2}\|w\|_2^2`, ``'l1'`` is :math:`\alpha\|w\|_1` and
``'elasticnet'`` is :math:`\alpha(\rho\|w\|_1 + \frac{1-\rho}{2}\|w\|_2^2)`
with :math:`\rho` = ``l1_ratio``.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

__all__ = ["L2Penalty", "L1Penalty", "ElasticNetPenalty", "NonConvexPenalty", "make_penalty",
           "PENALTIES"]

#: max over w of |r'''(w)| / alpha for r(w) = alpha w^2 / (1 + w^2): the
#: maximum of 24 |w (1 - w^2)| / (1 + w^2)^4, 4.66856 at |w| = 0.3249 (rounded up)
_NONCONVEX_THIRD_DERIVATIVE = 4.6686


@dataclass(frozen=True, eq=False)
class L2Penalty:
    r"""The ridge penalty :math:`\frac{\alpha}{2}\|W_{pen}\|^2` (data-independent, free).

    Parameters
    ----------
    alpha : float
        Strength (public).
    mask : ndarray of bool or None
        True where the penalty applies (the intercept row is False); None
        penalises every coefficient.
    """

    alpha: float
    mask: Optional[np.ndarray] = None

    @property
    def capabilities(self):
        """The capabilities ``{'smooth', 'convex', 'hessian', 'prox'}`` (frozenset).

        Plus ``'strongly_convex'`` when ``alpha > 0``.
        """
        base = {"smooth", "convex", "hessian", "prox"}
        return frozenset(base | {"strongly_convex"} if self.alpha > 0 else base)

    @property
    def smoothness(self):
        return float(self.alpha)

    @property
    def strong_convexity(self):
        return float(self.alpha)

    @property
    def hessian_lipschitz(self):
        """0: the Hessian is constant."""
        return 0.0

    def _masked(self, W):
        return W if self.mask is None else W * self.mask

    def gradient(self, W):
        return self.alpha * self._masked(W)

    def value(self, W):
        Wp = self._masked(W)
        return 0.5 * self.alpha * float(np.sum(Wp * Wp))

    def hessian_diagonal(self, W):
        """The (diagonal) Hessian at ``W``, shaped like ``W``.

        Parameters
        ----------
        W : ndarray
            The coefficients (any shape); only its shape is used, the Hessian
            being constant.

        Returns
        -------
        ndarray of float64, shaped like ``W``
            ``alpha`` where the penalty applies, 0 on unpenalised coordinates.
        """
        return self.alpha * self._masked(np.ones_like(W, dtype=np.float64))

    def prox(self, V, step):
        r"""Proximal operator: :math:`V / (1 + \text{step}\,\alpha)` on penalised coordinates.

        Solves ``argmin_W step * r(W) + ||W - V||^2 / 2`` in closed form;
        unpenalised coordinates are returned unchanged.

        Parameters
        ----------
        V : ndarray
            The point to shrink (typically a gradient step from the iterate).
        step : float or ndarray
            The step size: a scalar or an array shaped like ``V`` (one step
            per coordinate), >= 0.

        Returns
        -------
        ndarray, shaped like ``V``
            The proximal point.
        """
        return V / (1.0 + self._masked(step * self.alpha * np.ones_like(V)))


def _soft_threshold(V, threshold):
    return np.sign(V) * np.maximum(np.abs(V) - threshold, 0.0)


@dataclass(frozen=True, eq=False)
class ElasticNetPenalty:
    r"""The elastic net :math:`\alpha(\rho\|W_{pen}\|_1 + \frac{1-\rho}{2}\|W_{pen}\|_2^2)`.

    Not smooth when :math:`\rho > 0`; solvers handle it by its closed-form
    proximal operator (soft thresholding, then shrinking), which sets
    coefficients exactly to zero. Data-independent and free.

    Parameters
    ----------
    alpha : float
        Strength (public).
    l1_ratio : float in [0, 1]
        :math:`\rho`: 1 is the lasso penalty :math:`\alpha\|w\|_1`, 0 the
        ridge penalty.
    mask : ndarray of bool or None
        True where the penalty applies (the intercept row is False); None
        penalises every coefficient.
    """

    alpha: float
    l1_ratio: float = 0.15
    mask: Optional[np.ndarray] = None

    @property
    def capabilities(self):
        """``{'convex', 'prox'}``, plus ``'strongly_convex'`` when the ridge part is > 0."""
        base = {"convex", "prox"}
        return frozenset(base | {"strongly_convex"} if self.strong_convexity > 0 else base)

    @property
    def smoothness(self):
        """None: not differentiable at 0 (use the proximal operator)."""
        return None

    @property
    def strong_convexity(self):
        return float(self.alpha) * (1.0 - float(self.l1_ratio))

    @property
    def hessian_lipschitz(self):
        return None

    def _masked(self, W):
        return W if self.mask is None else W * self.mask

    def value(self, W):
        Wp = self._masked(W)
        l1 = float(np.sum(np.abs(Wp)))
        l2 = 0.5 * float(np.sum(Wp * Wp))
        return float(self.alpha) * (self.l1_ratio * l1 + (1.0 - self.l1_ratio) * l2)

    def prox(self, V, step):
        r"""Proximal operator: soft thresholding, then shrinking, coordinate-wise.

        Solves ``argmin_W step * r(W) + ||W - V||^2 / 2`` in closed form:
        :math:`\mathrm{soft}(v, s\alpha\rho) / (1 + s\alpha(1 - \rho))` per
        coordinate, with :math:`s` the step, which sets coordinates with
        :math:`|v| \le s\alpha\rho` exactly to zero. Unpenalised coordinates
        are returned unchanged.

        Parameters
        ----------
        V : ndarray
            The point to shrink (typically a gradient step from the iterate).
        step : float or ndarray
            The step size :math:`s`: a scalar or an array shaped like ``V``
            (one step per coordinate), >= 0.

        Returns
        -------
        ndarray of float64, shaped like ``V``
            The proximal point.
        """
        s = self._masked(step * np.ones_like(V, dtype=np.float64))
        shrunk = _soft_threshold(V, s * self.alpha * self.l1_ratio)
        return shrunk / (1.0 + s * self.alpha * (1.0 - self.l1_ratio))


def L1Penalty(alpha, mask=None):
    r"""The lasso penalty :math:`\alpha\|W_{pen}\|_1` (data-independent, free).

    A factory, not a class: it returns an :class:`ElasticNetPenalty` with
    ``l1_ratio=1``.

    Parameters
    ----------
    alpha : float
        Strength (public).
    mask : ndarray of bool or None
        True where the penalty applies; None penalises every coefficient.

    Returns
    -------
    ElasticNetPenalty
        The penalty ``ElasticNetPenalty(alpha, 1.0, mask)``: convex, not
        smooth, handled by its proximal operator (soft thresholding).
    """
    return ElasticNetPenalty(alpha, 1.0, mask)


@dataclass(frozen=True, eq=False)
class NonConvexPenalty:
    r"""The smooth non-convex penalty :math:`\sum_j \alpha\, w_j^2 / (1 + w_j^2)`.

    Close to the ridge penalty for small weights and bounded by
    :math:`\alpha` per weight, so large weights are not shrunk: a
    regulariser that keeps strong features while damping weak ones.

    Public constants (per coordinate, :math:`r(w) = \alpha w^2/(1+w^2)`):
    :math:`r''(w) = 2\alpha(1 - 3w^2)/(1 + w^2)^3 \in [-\alpha/2, 2\alpha]`,
    so the Hessian (diagonal) has operator norm at most :math:`2\alpha`
    (``smoothness``); :math:`|r'''(w)| = 24\alpha|w(1 - w^2)|/(1 + w^2)^4
    \le 4.6686\,\alpha`, which bounds the Lipschitz constant of the Hessian
    in operator norm (a diagonal's change is its largest entry's,
    :math:`\le \max|r'''|\,\|\Delta\|_\infty`).

    It is the penalty of the non-convex experiments of [1]_, the paper of
    the ``second_order`` solver.

    Parameters
    ----------
    alpha : float
        Strength (public).
    mask : ndarray of bool or None
        True where the penalty applies; None penalises every coefficient.

    References
    ----------
    .. [1] "Differentially Private Optimization for Smooth Non-convex ERM"
       (paper 004 of the solvers page of the documentation).
    """

    alpha: float
    mask: Optional[np.ndarray] = None

    @property
    def capabilities(self):
        """``{'smooth', 'hessian'}``: not convex."""
        return frozenset({"smooth", "hessian"})

    @property
    def smoothness(self):
        return 2.0 * float(self.alpha)

    @property
    def strong_convexity(self):
        return 0.0

    @property
    def hessian_lipschitz(self):
        return _NONCONVEX_THIRD_DERIVATIVE * float(self.alpha)

    def _masked(self, A):
        return A if self.mask is None else A * self.mask

    def gradient(self, W):
        return self._masked(2.0 * self.alpha * W / (1.0 + W * W) ** 2)

    def value(self, W):
        sq = W * W
        return float(self.alpha * np.sum(self._masked(sq / (1.0 + sq))))

    def hessian_diagonal(self, W):
        r"""The (diagonal) Hessian at ``W``, shaped like ``W``.

        Parameters
        ----------
        W : ndarray
            The coefficients (any shape).

        Returns
        -------
        ndarray, shaped like ``W``
            :math:`2\alpha(1 - 3w^2)/(1 + w^2)^3` per penalised coordinate,
            in :math:`[-\alpha/2, 2\alpha]`; 0 on unpenalised coordinates.
        """
        sq = W * W
        return self._masked(2.0 * self.alpha * (1.0 - 3.0 * sq) / (1.0 + sq) ** 3)


#: the ``penalty=`` names an estimator accepts (None is the ridge penalty with alpha = 0)
PENALTIES = ("l2", "l1", "elasticnet", "nonconvex")


def make_penalty(name, alpha, mask=None, l1_ratio=0.15):
    """The penalty object of an estimator's ``penalty``, ``alpha`` and ``l1_ratio``.

    Parameters
    ----------
    name : {'l2', 'l1', 'elasticnet', 'nonconvex'} or None
        None means no penalty.
    alpha : float
        The penalty strength (public, >= 0; ignored when ``name`` is None).
    mask : ndarray of bool or None, default=None
        True where the penalty applies, shaped like the coefficients (False
        on the intercept row); None penalises every coefficient.
    l1_ratio : float, default=0.15
        Used by 'elasticnet' only.

    Returns
    -------
    L2Penalty, ElasticNetPenalty or NonConvexPenalty
        ``L2Penalty(0)`` for None, ``L2Penalty`` for 'l2',
        ``ElasticNetPenalty`` for 'l1' (with ``l1_ratio=1``) and
        'elasticnet', ``NonConvexPenalty`` for 'nonconvex'.

    Raises
    ------
    ValueError
        If ``name`` is not one of the accepted names.
    """
    alpha = float(alpha)
    if name is None:
        return L2Penalty(0.0, mask)
    if name == "l2":
        return L2Penalty(alpha, mask)
    if name == "l1":
        return L1Penalty(alpha, mask)
    if name == "elasticnet":
        return ElasticNetPenalty(alpha, float(l1_ratio), mask)
    if name == "nonconvex":
        return NonConvexPenalty(alpha, mask)
    raise ValueError(f"Unknown penalty {name!r}; choose one of {list(PENALTIES)} or None.")

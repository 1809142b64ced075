r"""Penalties: data-independent terms of the objective, shared by every solver.

A penalty never touches data: it adds no sensitivity and costs no privacy.
Each states its value, gradient, Hessian (diagonal for the penalties here),
its public constants (smoothness, strong convexity, Lipschitz constant of
the Hessian) and its capabilities, which solvers may require as
``'penalty:<capability>'`` (see :func:`skdp.solvers.available_solvers`).
The intercept is never penalised: ``mask`` is False on its row.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

__all__ = ["L2Penalty", "NonConvexPenalty", "make_penalty", "PENALTIES"]

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
        """``{'smooth', 'convex', 'hessian'}``, plus ``'strongly_convex'`` when ``alpha > 0``."""
        base = {"smooth", "convex", "hessian"}
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
        """The (diagonal) Hessian at ``W``, shaped like ``W``."""
        return self.alpha * self._masked(np.ones_like(W, dtype=np.float64))


@dataclass(frozen=True, eq=False)
class NonConvexPenalty:
    r"""The smooth non-convex penalty :math:`\sum_j \alpha\, w_j^2 / (1 + w_j^2)` (paper 004).

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

    Parameters
    ----------
    alpha : float
        Strength (public).
    mask : ndarray of bool or None
        True where the penalty applies; None penalises every coefficient.
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
        """The (diagonal) Hessian at ``W``, shaped like ``W``."""
        sq = W * W
        return self._masked(2.0 * self.alpha * (1.0 - 3.0 * sq) / (1.0 + sq) ** 3)


#: ``penalty=`` name -> class (None is the ridge penalty with alpha = 0)
PENALTIES = {"l2": L2Penalty, "nonconvex": NonConvexPenalty}


def make_penalty(name, alpha, mask=None):
    """The penalty object of an estimator's ``penalty`` and ``alpha`` parameters.

    Parameters
    ----------
    name : {'l2', 'nonconvex'} or None
        None means no penalty.
    alpha : float
    mask : ndarray of bool or None

    Returns
    -------
    L2Penalty or NonConvexPenalty
    """
    if name is None:
        return L2Penalty(0.0, mask)
    return PENALTIES[name](float(alpha), mask)

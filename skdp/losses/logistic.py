"""Logistic losses: binary (labels in {0, 1}) and multinomial (one-hot)."""

import numpy as np
from scipy.special import expit, logsumexp, softmax

from ._glm import GLMLoss

__all__ = ["BinaryLogisticLoss", "MultinomialLogisticLoss"]


class BinaryLogisticLoss(GLMLoss):
    r"""Binary logistic loss :math:`\log(1 + e^{-s z})`, ``s = 2y - 1``.

    Its derivative in the linear predictor is ``sigmoid(z) - y``, bounded by
    1 in absolute value, and its second derivative by 1/4.

    Parameters
    ----------
    design : LinearDesign
    y : ndarray of shape (n_samples,)
        Labels encoded as 0.0 / 1.0.
    """

    capabilities = frozenset({"gradient", "values", "smooth", "convex", "hessian"})
    curvature_bound = 0.25

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        return float(np.log(2.0))

    def _residuals(self, Z, y):
        return expit(Z) - y

    def _values(self, Z, y):
        return np.logaddexp(0.0, -(2.0 * y - 1.0) * Z)

    def hessian_weights(self, W, idx=None):
        """Per-example second derivatives ``p (1 - p)`` (for Hessian products)."""
        p = expit(self.design.decision(W, idx))
        return p * (1.0 - p)


class MultinomialLogisticLoss(GLMLoss):
    r"""Multinomial logistic (cross-entropy) loss over K classes.

    ``W`` has shape ``(n_params, K)``. Each example's gradient is the matrix
    ``(p_i - y_i) (x) x_i``, clipped as a whole (one mechanism for all
    classes). The Hessian of the loss in the linear predictor is bounded by
    1/2 in operator norm.

    Parameters
    ----------
    design : LinearDesign
    y : ndarray of shape (n_samples, K)
        One-hot labels.
    """

    curvature_bound = 0.5

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        return float(np.log(n_outputs))

    def __init__(self, design, y):
        super().__init__(design, y)
        self.n_outputs = y.shape[1]

    def _residuals(self, Z, y):
        return softmax(Z, axis=1) - y

    def _values(self, Z, y):
        return logsumexp(Z, axis=1) - np.einsum("ij,ij->i", Z, y)

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

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "convex", "hessian"})
    curvature_bound = 0.25
    #: max |p (1 - p) (1 - 2 p)| = 1 / (6 sqrt 3) = 0.096225, rounded up
    third_derivative_bound = 0.09623

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        return float(np.log(2.0))

    def _residuals(self, Z, y):
        return expit(Z) - y

    def _values(self, Z, y):
        return np.logaddexp(0.0, -(2.0 * y - 1.0) * Z)

    def _second_derivatives(self, Z, y):
        p = expit(Z)
        return p * (1.0 - p)


class MultinomialLogisticLoss(GLMLoss):
    r"""Multinomial logistic (cross-entropy) loss over K classes.

    ``W`` has shape ``(n_params, K)``. Each example's gradient is the matrix
    ``(p_i - y_i) (x) x_i``, clipped as a whole (one mechanism for all
    classes). The Hessian of the loss in the linear predictor is bounded by
    1/2 in operator norm.

    Second order: one example's second derivative in the predictor is
    ``A_i = diag(p_i) - p_i p_i^T`` (positive semi-definite, trace at most
    1, largest eigenvalue at most 1/2, so ``||A_i||_F <= 1/sqrt 2``); its
    third derivative along a unit direction ``v`` is the third cumulant of
    ``v_k`` under ``p``, at most ``2 ||v||^3``.

    Parameters
    ----------
    design : LinearDesign
    y : ndarray of shape (n_samples, K)
        One-hot labels.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "convex", "hessian"})
    curvature_bound = 0.5
    third_derivative_bound = 2.0

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        return float(np.log(n_outputs))

    @classmethod
    def hessian_frobenius(cls, n_outputs=None, **params):
        return float(np.sqrt(0.5))

    def _probabilities_and_clip(self, W, hessian_clip, idx):
        """``(p, c)``: probabilities and each example's clipping factor for ``A_i``."""
        p = softmax(self.design.decision(W, idx), axis=1)
        if hessian_clip is None:
            return p, np.ones(len(p))
        s2 = np.einsum("ij,ij->i", p, p)
        frob = np.sqrt(np.maximum(s2 - 2.0 * np.einsum("ij,ij,ij->i", p, p, p) + s2 * s2, 0.0))
        inv = self.design.inverse_row_norms(2, idx)
        with np.errstate(under="ignore", divide="ignore"):
            limit = hessian_clip * inv * inv
            c = np.where(frob > limit, limit / np.where(frob > 0, frob, 1.0), 1.0)
        return p, c

    def hessian_matvec(self, W, V, hessian_clip=None, idx=None):
        p, c = self._probabilities_and_clip(W, hessian_clip, idx)
        zv = self.design.decision(V, idx)
        R = p * zv - p * np.einsum("ij,ij->i", p, zv)[:, None]
        return self.design.weighted_sum(R * c[:, None], idx)

    def hessian(self, W, hessian_clip=None, idx=None):
        p, c = self._probabilities_and_clip(W, hessian_clip, idx)
        P, K = self.coef_shape
        H = np.zeros((P * K, P * K))
        for k in range(K):  # K (K + 1) / 2 weighted Gram passes, none per example
            for j in range(k, K):
                a = c * ((p[:, k] if j == k else 0.0) - p[:, k] * p[:, j])
                G = self.design.weighted_gram(a, idx)
                H[k::K, j::K] = G
                if j != k:
                    H[j::K, k::K] = G
        return H

    def __init__(self, design, y):
        super().__init__(design, y)
        self.n_outputs = y.shape[1]

    def _residuals(self, Z, y):
        return softmax(Z, axis=1) - y

    def _values(self, Z, y):
        return logsumexp(Z, axis=1) - np.einsum("ij,ij->i", Z, y)

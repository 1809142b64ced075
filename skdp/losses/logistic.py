"""Logistic losses: binary (labels in {0, 1}) and multinomial (one-hot)."""

import numpy as np
from scipy.special import expit, logsumexp, softmax

from ._glm import GLMLoss

__all__ = ["BinaryLogisticLoss", "MultinomialLogisticLoss"]


def _softmax_jacobian_norms(p):
    """``||diag(p_i) - p_i p_i^T||_F`` of each row of probabilities, without cancellation.

    The square is ``sum_k p_k^2 (1 - p_k)^2 + sum_{j != k} p_j^2 p_k^2``. For a
    confident row (``p_top`` within a rounding of 1) ``1 - p_top`` and ``sum_{j
    != top} p_j^2`` are summed from the other classes' probabilities, which are
    accurate, instead of subtracted from 1 (the expanded form ``s2 - 2 sum p^3 +
    s2^2`` cancels to 0 there, and left such a row's Hessian unclipped).
    """
    rows = np.arange(p.shape[0])
    top = np.argmax(p, axis=1)
    others = p.copy()
    others[rows, top] = 0.0
    rest = others.sum(axis=1)                         # 1 - p_top
    rest2 = np.einsum("ij,ij->i", others, others)     # sum over j != top of p_j^2
    one_minus = 1.0 - p
    one_minus[rows, top] = rest
    sq = p * p
    off = (sq[rows, top] + rest2)[:, None] - sq       # sum over j != k of p_j^2
    off[rows, top] = rest2
    return np.sqrt(np.einsum("ij,ij->i", sq, one_minus * one_minus)
                   + np.einsum("ij,ij->i", sq, off))


class BinaryLogisticLoss(GLMLoss):
    r"""Binary logistic loss :math:`\log(1 + e^{-s z})`, ``s = 2y - 1``.

    Its derivative in the linear predictor is ``sigmoid(z) - y``, bounded by
    1 in absolute value, and its second derivative by 1/4.

    Parameters
    ----------
    design : LinearDesign
        The implicit rows ``[s_i x_i, c]``; with ``data_norm`` set, the
        public bound ``B`` on their L2 norm gives the smoothness constant
        ``B**2 / 4``.
    y : ndarray of shape (n_samples,)
        Labels encoded as 0.0 / 1.0.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "convex", "hessian"})
    curvature_bound = 0.25
    #: Bound on the third derivative ``|p (1 - p) (1 - 2 p)|`` in the linear predictor.
    #:
    #: Its maximum is ``1 / (6 sqrt 3) = 0.096225``, rounded up to 0.09623.
    third_derivative_bound = 0.09623

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        """The loss at linear predictor 0: ``log 2`` for every example, a public ``F(0)``.

        Parameters
        ----------
        n_outputs : int or None
            Number of coefficient columns; unused (one vector).
        **params
            The loss's public parameters; unused.

        Returns
        -------
        float
            ``log(2)``: the loss of every example (so the mean loss) at
            ``W = 0``, whatever the data.
        """
        return float(np.log(2.0))

    def _residuals(self, Z, y):
        # sigma(z) - y as 1 / (1 + exp(-z)): a third of expit's time, exact to
        # rounding (exp(-z) = inf for z < -709 gives 0; the callers ignore
        # that overflow: an errstate here would cost as much as a small block)
        R = np.negative(Z)
        np.exp(R, out=R)
        R += 1.0
        np.reciprocal(R, out=R)
        R -= y
        return R

    def _values(self, Z, y):
        # log(1 + exp(m)), m = -(2y - 1) z, as log1p(exp(-|m|)) + max(m, 0): a
        # third of logaddexp's time, equal to rounding (and inf for m = inf)
        m = (1.0 - 2.0 * y) * Z
        out = np.abs(m)
        np.negative(out, out=out)
        np.exp(out, out=out)
        np.log1p(out, out=out)
        out += np.maximum(m, 0.0)
        return out

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
        The implicit rows ``[s_i x_i, c]``; with ``data_norm`` set, the
        public bound ``B`` on their L2 norm gives the smoothness constant
        ``B**2 / 2``.
    y : ndarray of shape (n_samples, K)
        One-hot labels.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "convex", "hessian"})
    curvature_bound = 0.5
    #: Bound 2 on the third derivative along a unit direction of the linear predictor.
    third_derivative_bound = 2.0

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        """The loss at linear predictor 0: ``log K`` for every example, a public ``F(0)``.

        Parameters
        ----------
        n_outputs : int
            Number of classes ``K`` (public: the classes are).
        **params
            The loss's public parameters; unused.

        Returns
        -------
        float
            ``log(K)``: the cross-entropy of every example (so the mean loss)
            at ``W = 0``, where all classes have probability ``1 / K``.
        """
        return float(np.log(n_outputs))

    @classmethod
    def hessian_frobenius(cls, n_outputs=None, **params):
        """Bound ``1 / sqrt 2`` on the Frobenius norm of ``A_i = diag(p_i) - p_i p_i^T``.

        Parameters
        ----------
        n_outputs : int or None
            Number of classes ``K``; the bound does not depend on it.
        **params
            The loss's public parameters; unused.

        Returns
        -------
        float
            ``sqrt(1 / 2)``: ``A_i`` is positive semi-definite with trace at
            most 1 and eigenvalues at most 1/2, so ``||A_i||_F**2 <= 1/2``.
        """
        return float(np.sqrt(0.5))

    def _probabilities_and_clip(self, W, hessian_clip, idx):
        """``(p, c)``: probabilities and each example's clipping factor for ``A_i``."""
        with np.errstate(over="ignore", invalid="ignore"):
            p = softmax(self.design.decision(W, idx), axis=1)
        if hessian_clip is None:
            return p, np.ones(len(p))
        # the rounding of A_i's entries and of its products (about one rounding of p,
        # i.e. of 1, per entry) is added: for a confident prediction the true norm is
        # of the order of that rounding, and the computed A_i is what is summed
        frob = _softmax_jacobian_norms(p) + 4.0 * p.shape[1] * np.finfo(np.float64).eps
        inv = self.design.inverse_row_norms(2, idx)
        with np.errstate(under="ignore", divide="ignore", over="ignore"):
            limit = hessian_clip * inv * inv
            c = np.where(frob > limit, limit / np.where(frob > 0, frob, 1.0), 1.0)
        return p, c

    def hessian_matvec(self, W, V, hessian_clip=None, idx=None):
        """``sum_i H_i V`` with each example's Hessian ``H_i`` clipped to Frobenius norm.

        ``H_i = A_i (x) x_i x_i^T`` with ``A_i = diag(p_i) - p_i p_i^T`` is
        scaled by ``min(1, hessian_clip / (||A_i||_F ||x_i||**2))``; the product
        takes passes over ``X`` only, no ``K x K`` matrix per example.

        Parameters
        ----------
        W, V : ndarray of shape (n_params, K)
            The coefficients at which the Hessians are taken, and the
            direction they are applied to.
        hessian_clip : float or None
            Frobenius-norm bound of each example's Hessian: the sensitivity
            of the sum. None does not clip (non-private; for tests).
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.

        Returns
        -------
        ndarray of shape (n_params, K), float64
            ``sum_i H_i V``: with ``hessian_clip`` each term has norm at most
            ``hessian_clip * ||V||_F``, the sensitivity of the product.
        """
        p, c = self._probabilities_and_clip(W, hessian_clip, idx)
        zv = self.design.decision(V, idx)
        R = p * zv - p * np.einsum("ij,ij->i", p, zv)[:, None]
        return self.design.weighted_sum(R * c[:, None], idx)

    def hessian(self, W, hessian_clip=None, idx=None):
        """``sum_i H_i`` as a dense ``(P, P)`` array, ``P = n_params * K`` (C order).

        ``K (K + 1) / 2`` weighted Gram passes, one per pair of classes
        (never a loop over examples); each example's Hessian is clipped as
        in :meth:`hessian_matvec`.

        Parameters
        ----------
        W : ndarray of shape (n_params, K)
            The multinomial coefficients (one column per class) at which
            each example's Hessian is evaluated.
        hessian_clip : float or None
            Bound on each example's Hessian in Frobenius norm, which makes
            it the sensitivity of the sum; None leaves them unclipped
            (non-private, for tests).
        idx : ndarray of int or None
            Indices of the rows of a sampled batch; None uses every row.

        Returns
        -------
        H : ndarray of shape (P, P), float64
            The symmetric sum over examples of their clipped Hessians, in
            the layout where entry ``j * K + k`` is coefficient ``W[j, k]``.
        """
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

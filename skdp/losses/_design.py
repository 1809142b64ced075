"""The design matrix of a generalised linear model, seen by the private solvers.

A :class:`LinearDesign` wraps ``X`` (dense or CSR, float32 or float64) and
answers the two data passes every GLM solver needs, ``X @ W`` and
``X.T @ R``, with the intercept column and the row clipping handled
implicitly: no copy of ``X``, no ``n x d`` temporary.

Row clipping
------------
When ``data_norm`` is given, every row is scaled to norm at most
``data_norm`` (``x_i <- x_i * min(1, data_norm / ||x_i||)``). This is a
per-record transformation, so it costs no privacy, and it makes
``data_norm`` a *public* bound on ``||x_i||`` from which solvers may derive
smoothness constants. The scaling is stored as one factor per row.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import row_norms

__all__ = ["LinearDesign"]

_UNDERFLOW = np.sqrt(np.finfo(np.float64).tiny) * 1e3


def _row_norms(X, ord):
    """L2 or L1 norm of every row, in float64, without a copy of X.

    Overflow-safe for every finite input: rows whose fast sum of squares (or
    of absolute values) overflows are computed again, scaled by their largest
    entry first, so a record of any finite size has its true (finite) norm.
    """
    norms = _fast_row_norms(X, ord)
    # squares overflow above ~1e154 and underflow (to 0) below ~1e-154
    bad = np.flatnonzero(~np.isfinite(norms) | (norms < _UNDERFLOW))
    if bad.size:
        rows = X[bad]
        rows = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
        rows = rows.astype(np.float64)
        peak = np.max(np.abs(rows), axis=1) if rows.shape[1] else np.zeros(len(bad))
        unit = rows / np.where(peak > 0, peak, 1.0)[:, None]
        norms[bad] = peak * (np.sqrt(np.einsum("ij,ij->i", unit, unit)) if ord == 2
                             else np.abs(unit).sum(axis=1))
    return norms


def _fast_row_norms(X, ord):
    if sp.issparse(X):
        if ord == 2:
            with np.errstate(over="ignore"):
                return np.sqrt(row_norms(X, squared=True).astype(np.float64))
        X = sp.csr_matrix(X)  # no copy for CSR input
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        with np.errstate(over="ignore"):
            return np.bincount(rows, weights=np.abs(X.data), minlength=X.shape[0])
    if ord == 2:
        with np.errstate(over="ignore"):
            return np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
    # |X| in blocks of rows, so no temporary of the size of X
    out = np.empty(X.shape[0])
    step = max(1, (1 << 22) // max(1, X.shape[1]))
    with np.errstate(over="ignore"):
        for start in range(0, X.shape[0], step):
            out[start:start + step] = np.abs(X[start:start + step]).sum(axis=1,
                                                                        dtype=np.float64)
    return out


class LinearDesign:
    """Implicit design ``[s_i * x_i, 1]`` for a GLM with optional intercept.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Validated input, float32 or float64; not copied.
    fit_intercept : bool
        Whether a constant feature equal to 1 is appended (implicitly).
    data_norm : float or None
        Public bound on the L2 norm of the feature part of each row; rows
        above it are scaled down. None leaves rows untouched.
    """

    def __init__(self, X, fit_intercept, data_norm=None):
        self.X = X
        self.fit_intercept = bool(fit_intercept)
        self.data_norm = data_norm
        self.n_samples, self.n_features = X.shape
        self.dtype = X.dtype
        norms = _row_norms(X, 2)
        self.raw_row_norms = norms
        if data_norm is None:
            self.row_scale = None
        else:
            with np.errstate(divide="ignore"):
                scale = np.minimum(1.0, data_norm / norms)
            scale[norms == 0] = 1.0
            # rows already inside the ball need no scaling: skip the products
            self.row_scale = None if np.all(scale == 1.0) else scale
            norms = np.minimum(norms, data_norm)  # = norms * scale, without rounding up
        self._l2_feature_norms = norms
        self._l2_row_norms = np.hypot(norms, 1.0) if self.fit_intercept else norms
        self._l1_feature_norms = None

    @property
    def n_params(self):
        """Length of one coefficient column (features plus intercept)."""
        return self.n_features + int(self.fit_intercept)

    def row_norms(self, ord=2, idx=None):
        """Norms of the implicit rows ``[s_i x_i, 1]`` (intercept included)."""
        if ord == 2:
            norms = self._l2_row_norms
        else:
            if self._l1_feature_norms is None:
                l1 = _row_norms(self.X, 1)
                if self.row_scale is not None:
                    l1 = l1 * self.row_scale
                self._l1_feature_norms = l1
            norms = self._l1_feature_norms + float(self.fit_intercept)
        return norms if idx is None else norms[idx]

    def _rows(self, idx):
        if idx is None:
            return self.X, self.row_scale
        scale = None if self.row_scale is None else self.row_scale[idx]
        return self.X[idx], scale

    def decision(self, W, idx=None):
        """Linear predictor ``Z = [s x, 1] @ W``.

        Parameters
        ----------
        W : ndarray of shape (n_params,) or (n_params, n_outputs)
        idx : ndarray of int or None
            Rows to use; None means all.

        Returns
        -------
        Z : ndarray of shape (n_rows,) or (n_rows, n_outputs), float64
        """
        X, scale = self._rows(idx)
        d = self.n_features
        coef = np.asarray(W[:d], dtype=self.dtype)
        Z = np.asarray(X @ coef, dtype=np.float64)
        if scale is not None:
            Z = Z * (scale if Z.ndim == 1 else scale[:, None])
        if self.fit_intercept:
            Z = Z + W[d]
        return Z

    def weighted_sum(self, R, idx=None):
        """``sum_i R_i (x) [s_i x_i, 1]``: one pass ``X.T @ (s * R)``.

        Parameters
        ----------
        R : ndarray of shape (n_rows,) or (n_rows, n_outputs)
            Per-row weights (for a GLM: the clipped residuals).
        idx : ndarray of int or None

        Returns
        -------
        G : ndarray of shape (n_params,) or (n_params, n_outputs), float64
        """
        X, scale = self._rows(idx)
        if scale is not None:
            R_scaled = R * (scale if R.ndim == 1 else scale[:, None])
        else:
            R_scaled = R
        G_feat = np.asarray(X.T @ R_scaled.astype(self.dtype, copy=False), dtype=np.float64)
        if not self.fit_intercept:
            return G_feat
        G_int = R.sum(axis=0)
        if R.ndim == 1:
            return np.concatenate([G_feat, [G_int]])
        return np.vstack([G_feat, G_int[None, :]])

    def feature_norm_bound(self):
        """Public bound on ``||[s x, 1]||_2``, or None when rows are not clipped."""
        if self.data_norm is None:
            return None
        return float(np.sqrt(self.data_norm**2 + float(self.fit_intercept)))

"""Upper bounds on the per-example gradient norms of the factored matrix-sensing loss.

The clipping norm is never underestimated: every route adds its worst-case
rounding error (see :mod:`skdp.losses.matrix_sensing`). A mixin of
:class:`~skdp.losses.MatrixSensingLoss`, which provides ``design``,
``shape``, ``rank``, ``fit_intercept``, ``intercept_scale``, ``unpack``,
``_dense_plan`` and ``_cached``.
"""

import functools

import numpy as np
import scipy.sparse as sp

__all__ = ["FactorGradientNorms"]

_F64_MAX = float(np.finfo(np.float64).max)


@functools.lru_cache(maxsize=None)
def _triu_indices(d):
    """``numpy.triu_indices(d)``, built once per size (read-only: shared)."""
    rows, cols = np.triu_indices(d)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def _unit_roundoff(dtype):
    return float(np.finfo(dtype).eps) / 2.0


def _gamma(k, dtype):
    """Bound ``k u / (1 - k u)`` on the relative error of a k-term dot product (padded)."""
    return 1.01 * (k + 2) * _unit_roundoff(dtype)


class FactorGradientNorms:
    """The per-example gradient-norm bounds of :class:`~skdp.losses.MatrixSensingLoss`."""

    @staticmethod
    def _gram_triu(X, shape, side, chunk=4096):
        """Upper triangles of ``A_i^T A_i`` (side 'right') or ``A_i A_i^T`` ('left').

        Off-diagonal entries are doubled, so that ``G_i @ triu(S)`` equals
        ``<A_i^T A_i, S>`` for a symmetric ``S``.
        """
        p, q = shape
        d = q if side == "right" else p
        iu = _triu_indices(d)
        weight = np.where(iu[0] == iu[1], 1.0, 2.0)
        out = np.empty((X.shape[0], len(iu[0])), dtype=np.float64)
        for start in range(0, X.shape[0], chunk):
            A = X[start:start + chunk].reshape(-1, p, q).astype(np.float64)
            G = A.transpose(0, 2, 1) @ A if side == "right" else A @ A.transpose(0, 2, 1)
            out[start:start + chunk] = G[:, iu[0], iu[1]] * weight
        return out

    def _factor_sq_norm(self, F, side, how, X, idx):
        """``||A_i F||_F^2`` (side 'right', F = V) or ``||A_i^T F||_F^2`` ('left', F = U)."""
        p, q = self.shape
        if how == "gram":
            d = F.shape[0]
            iu = _triu_indices(d)
            G = self._cached(("gram", side),
                             lambda X_all: self._gram_triu(X_all, self.shape, side), idx)
            return G @ (F @ F.T)[iu]
        m, r = X.shape[0], F.shape[1]
        if side == "right":
            rows = X.reshape(m * p, q)                       # rows A_i[j, :] (a view)
        elif p == 1 or q == 1:
            rows = X.reshape(m * q, p) if q == 1 else X      # A_i^T has the same layout
        else:
            def transpose(X_all):
                n = X_all.shape[0]
                return np.ascontiguousarray(
                    X_all.reshape(n, p, q).transpose(0, 2, 1)).reshape(n * q, p)
            rows = self._cached(("transposed",), transpose, None)
            if idx is not None:
                rows = rows.reshape(-1, q, p)[idx].reshape(-1, p)
        # (F^T @ rows^T) is the fast orientation of a tall-skinny product; the
        # last axis is named, not -1, so that an empty batch (m = 0) reshapes
        prod = (F.T.astype(rows.dtype) @ rows.T).reshape(r, m, p if side == "right" else q)
        return np.einsum("aij,aij->i", prod, prod, dtype=np.float64)

    def _dense_sq_bounds(self, F, side, how, X, idx, a):
        """Upper bound on ``||A_i F||_F^2`` (or ``||A_i^T F||_F^2``) of the raw rows.

        The computed value plus the worst-case rounding error of its route
        (``a`` the rows' L2 norms): never below the exact value, so the
        norm that decides the clipping is never underestimated.
        """
        p, q = self.shape
        r = F.shape[1]
        f = float(np.sqrt(np.sum(F * F)))
        sq = self._factor_sq_norm(F, side, how, X, idx)
        if how == "gram":
            # Gram entries (k = p or q terms), F F^T (r terms), the dot
            # product over d (d + 1) / 2 entries; all in float64
            d = q if side == "right" else p
            k = p if side == "right" else q
            g = _gamma(k + r + d * (d + 1) // 2, np.float64)
            return np.maximum(sq, 0.0) + g * (a * a) * (f * f)
        # direct: each entry of A F (k terms in X's dtype) is off by at most
        # gamma_k times (|A| |F|)_jl, so ||A F|| is off by gamma_k ||A|| ||F||
        k = q if side == "right" else p
        g = _gamma(k + 1, X.dtype)
        rel = 1.0 + _gamma((p + q) * r + 2, np.float64)  # the sum of squares
        return (np.sqrt(sq) * rel + g * a * f) ** 2

    def _sparse_sq_bounds(self, U, V, X, a):
        """Upper bounds on ``(||A_i V||_F^2, ||A_i^T U||_F^2)`` by sparse products."""
        p, q = self.shape
        r = self.rank
        X = sp.csr_matrix(X)
        K_v = sp.kron(sp.identity(p, format="csr"), sp.csr_matrix(V), format="csr")
        K_u = sp.kron(sp.csr_matrix(U), sp.identity(q, format="csr"), format="csr")
        out = []
        for K, F, k in ((K_v, V, q), (K_u, U, p)):
            AF = sp.csr_matrix(X @ K.astype(X.dtype), dtype=np.float64)
            sq = np.asarray(AF.multiply(AF).sum(axis=1), dtype=np.float64).ravel()
            f = float(np.sqrt(np.sum(F * F)))
            g = _gamma(k + 1, X.dtype)
            rel = 1.0 + _gamma((p + q) * r + 2, np.float64)  # the sum of squares
            out.append((np.sqrt(sq) * rel + g * a * f) ** 2)
        return tuple(out)

    def _extreme_sq_bounds(self, unit, U, V):
        """Upper bounds on ``(||u_i V||_F^2, ||u_i^T U||_F^2)`` of unit rows (float64)."""
        p, q = self.shape
        r = self.rank
        if sp.issparse(unit):
            return self._sparse_sq_bounds(U, V, unit, np.ones(unit.shape[0]))
        A = unit.reshape(-1, p, q)
        AV = A @ V
        AU = A.transpose(0, 2, 1) @ U
        out = []
        for prod, F, k in ((AV, V, q), (AU, U, p)):
            sq = np.einsum("ijk,ijk->i", prod, prod)
            f = float(np.sqrt(np.sum(F * F)))
            rel = 1.0 + _gamma((p + q) * r + 2, np.float64)  # the sum of squares
            out.append((np.sqrt(sq) * rel + _gamma(k + 1, np.float64) * f) ** 2)
        return tuple(out)

    def gradient_norm_bounds(self, W, idx=None, intercept=True):
        """Upper bounds on ``||(A_i V, A_i^T U, s)||`` of the (row-clipped) rows.

        The per-example gradient is ``rho_i`` times this vector, so
        ``clip_norm / bound`` is the largest ``|rho_i|`` an example keeps.
        Each bound includes the worst-case rounding error of its route, so it
        is never below the norm of the vector (see the module docstring);
        it is finite for every finite row and every finite ``W``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters whose factors ``U`` and ``V`` enter the bound (a
            step ``W - W'`` for the second term of a gradient difference).
        idx : ndarray of int or None
            Rows to use; None for all.
        intercept : bool, default=True
            False leaves out the intercept entry ``s`` (bounds of
            ``||(A_i V, A_i^T U)||``).

        Returns
        -------
        ndarray of shape (n_rows,), float64
            For each row used, an upper bound on the L2 norm of
            ``(A_i V, A_i^T U, s)`` (of the row-clipped ``A_i``), finite for
            every finite row and ``W``; 0 for a zero vector (e.g. ``A_i = 0``
            without an intercept).
        """
        U, V, _ = self.unpack(W)
        # the factors at unit norm: no square of a tiny or huge factor (the
        # norms f scale the results, without underflow or overflow)
        f_u, f_v = float(np.linalg.norm(U)), float(np.linalg.norm(V))
        U = U / f_u if f_u > 0 else U
        V = V / f_v if f_v > 0 else V
        design = self.design
        X = design.X if idx is None else design.X[idx]
        a = design.raw_feature_norms(idx)

        def combine(sq_v, sq_u):
            return np.hypot(f_v * np.sqrt(sq_v), f_u * np.sqrt(sq_u))

        with np.errstate(over="ignore", invalid="ignore"):
            if sp.issparse(X):
                norms = combine(*self._sparse_sq_bounds(U, V, X, a))
            else:
                how_v, how_u = self._dense_plan()
                norms = combine(self._dense_sq_bounds(V, "right", how_v, X, idx, a),
                                self._dense_sq_bounds(U, "left", how_u, X, idx, a))
            scale = design.row_scale
            if scale is not None:
                norms = norms * (scale if idx is None else scale[idx])
        extreme = design.extreme_rows(idx)
        if extreme is not None:
            pos, unit, mult = extreme
            with np.errstate(over="ignore"):
                norms[pos] = np.minimum(mult * combine(*self._extreme_sq_bounds(unit, U, V)),
                                        _F64_MAX)
        if self.fit_intercept and intercept:
            norms = np.hypot(norms, self.intercept_scale)
        # absorbs the relative rounding of the last few operations (that of the
        # unit-norm factors included) and, for a positive bound, the absolute
        # error of a result below the normal range
        norms = norms * (1.0 + 2.0 ** -40)
        return np.where(norms > 0, norms + 2.0 ** -1060, 0.0)

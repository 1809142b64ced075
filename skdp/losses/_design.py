"""The design matrix of a generalised linear model, seen by the private solvers.

A :class:`LinearDesign` wraps ``X`` (dense or CSR, float32 or float64) and
answers the two data passes every GLM solver needs, ``X @ W`` and
``X.T @ R``, with the intercept column and the row clipping handled
implicitly: no copy of ``X`` (but see the canonical form), no ``n x d``
temporary.

Two rules hold for every pass
-----------------------------
* **Norms and clipping read the canonical form.** Sparse input goes through
  :func:`~skdp.losses.canonical_rows` first: CSR with each row's duplicate
  entries summed and its columns sorted (other sparse formats converted),
  so the norm that clips a row is the norm of the row the products use.
  The caller's matrix is copied only when it is not canonical already.
* **Sums with a sensitivity claim are accumulated in float64**, whatever
  ``X``'s dtype: ``X.T @ R`` (:meth:`LinearDesign.weighted_sum` and the
  fused pass), the Gram matrix, its diagonal, the weighted Gram matrix and
  the intercept's sums are taken by row blocks (a float32 block cast to
  float64 as it is read; ``X`` itself stays float32) and the blocks'
  partial sums added accurately (:mod:`skdp.losses._float64_sums`).
  A float32 accumulation let one removed record move a clipped gradient
  sum of 2,000,000 rows by 3.8 ``clip_norm``.
* **Products of a row with public coefficients are float64 too** (the
  linear predictor ``X @ W``, the projections ``x_i . v`` of a
  Hessian-vector product), float32 rows cast by blocks as they are read.
  In float32 the same row rounded differently by path (Fortran order
  against gathered rows, CSR against a dense gather), so removing one
  record moved the other records' clipped terms (by 1.7e-8 ``C`` in a loss
  decrease), and a projection rounded after clipping let a record's own
  Hessian-vector term exceed its bound.

Row clipping
------------
When ``data_norm`` is given, every row is scaled to norm at most
``data_norm`` (``x_i <- x_i * min(1, data_norm / ||x_i||)``). This is a
per-record transformation, so it costs no privacy, and it makes
``data_norm`` a *public* bound on ``||x_i||`` from which solvers may derive
smoothness constants. The scaling is stored as one factor per row.

Any finite record
-----------------
One record must not be able to break a fit (a NaN model would reveal that
it is there), so nothing here overflows or underflows for finite input:

* row norms are accurate in float64 for every finite row: sums of squares
  are accumulated in float64 (float32 squares cannot leave its range) and
  the rare float64 rows whose sum of squares overflowed or underflowed are
  recomputed scaled by their largest entry (like ``hypot``); a norm above
  the largest float is taken as the largest float;
* *extreme* rows, whose norm exceeds a dtype-dependent threshold (2**40
  for float32, 2**200 for float64), is below its inverse but not zero, or
  whose clipping factor is below its inverse, are kept apart, once, as
  float64 unit rows ``u_i = x_i / ||x_i||`` with the multiplier
  ``m_i = min(||x_i||, data_norm)``; the passes over ``X`` give them
  weight 0 and add ``m_i (u_i @ W)`` and ``sum_i (R_i m_i) u_i`` computed
  from the unit rows. A huge row is thus treated exactly as the row
  clipped to ``data_norm`` (or, with ``data_norm=None``, as the row itself,
  whose linear predictor is then bounded by the largest float; a row whose
  L2 or L1 norm exceeds the largest float is used scaled down to fit, in
  the same direction). Every other row takes the usual single pass over
  ``X``, whose products cannot overflow below those thresholds.
  Data without extreme rows (the common case) pays nothing for this.
"""

import numpy as np
import scipy.sparse as sp

from ._canonical import canonical_rows
from ._design_rows import (_block_rows, _dense_rows, _l1_row_norms, _l2_row_norms, _product64,
                           _rowwise_product, _scaled_rows, nbytes_of)
from ._float64_sums import (SUM_ROWS, CompensatedSum, CSRBlocks, column_totals, csr_blocks,
                            csr_rows, dense_blocks, row_blocks, transpose_product)
from ._threads import map_blocks, pass_threads

__all__ = ["LinearDesign"]

_F64_MAX = float(np.finfo(np.float64).max)
#: rows above this norm, or with a clipping factor below its inverse, are
#: extreme (kept apart as unit rows): the single pass over X stays far from
#: overflow (``|x @ w| <= limit ||w||``) and underflow (``s_i R_i``)
_EXTREME = {np.dtype(np.float32): 2.0 ** 40, np.dtype(np.float64): 2.0 ** 200}

#: a few sparse rows (one node's sample) are gathered into a dense array up
#: to this many entries: scipy's fancy indexing costs far more than the products
_DENSE_GATHER = 1 << 18


def _temporary(scratch, name, n_rows, n_columns):
    """A thread's float64 array of ``n_rows`` x ``n_columns``, kept in ``scratch`` and
    reused by the thread's next blocks (a thread's first block is its largest)."""
    buffer = scratch.get(name)
    if buffer is None or buffer.shape[0] < n_rows or buffer.shape[1] != n_columns:
        buffer = scratch[name] = np.empty((n_rows, n_columns))
    return buffer[:n_rows]


class LinearDesign:
    """Implicit design ``[s_i * x_i, c]`` for a GLM with optional intercept.

    ``c`` is ``intercept_scale`` (1 by default): the intercept of the model
    is ``c * W[-1]``. A public reparametrisation: the model class is the
    same, only the path of a gradient method changes (a smaller ``c``
    moves the intercept more slowly).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Validated input, float32 or float64, finite; not copied.
    fit_intercept : bool
        Whether a constant feature is appended (implicitly).
    data_norm : float or None
        Public bound on the L2 norm of the feature part of each row; rows
        above it are scaled down. None leaves rows untouched.
    intercept_scale : float, default=1.0
        The constant feature's value ``c`` (public).

    Attributes
    ----------
    row_scale : ndarray of shape (n_samples,) or None
        Factor applied to each row in the passes over ``X``: ``s_i`` for
        ordinary rows, 0 for the extreme rows kept apart (see the module
        docstring); None when every factor is 1.
    """

    def __init__(self, X, fit_intercept, data_norm=None, intercept_scale=1.0):
        X = canonical_rows(X)  # the clip door: norms and products read the same rows
        self.X = X
        self.fit_intercept = bool(fit_intercept)
        #: Value ``c`` of the constant feature (0.0 without it): the intercept is ``c * W[-1]``.
        self.intercept_scale = float(intercept_scale) if self.fit_intercept else 0.0
        self.data_norm = data_norm
        self.n_samples, self.n_features = X.shape
        self.dtype = X.dtype
        norms = _l2_row_norms(X)
        self._raw_l2_norms = norms
        limit = _EXTREME[np.dtype(self.dtype)]
        # tiny rows too: their products underflow, and weights that clip their
        # gradients (up to C / ||x_i||) would overflow X's dtype
        extreme = (norms > limit) | ((norms > 0) & (norms < 1.0 / limit))
        if data_norm is None:
            scale = None
            feature_norms = norms
        else:
            with np.errstate(divide="ignore", over="ignore"):
                scale = np.minimum(1.0, data_norm / norms)
            scale[norms == 0] = 1.0
            feature_norms = np.minimum(norms, data_norm)
            extreme |= scale < 1.0 / limit
        self._extreme = None
        big = np.flatnonzero(extreme)
        if big.size:
            unit = _scaled_rows(X[big])[1]
            unit_l1 = np.asarray(abs(unit).sum(axis=1), dtype=np.float64).ravel()
            # a row whose L2 or L1 norm exceeds the largest float is used as
            # that row scaled down to fit (same direction), consistently in
            # every norm and product
            mult = np.minimum(feature_norms[big],
                              (_F64_MAX * (1.0 - 2.0 ** -40)) / np.maximum(unit_l1, 1.0))
            feature_norms = feature_norms.copy()
            feature_norms[big] = mult
            self._extreme = {"rows": big, "unit": unit, "mult": mult, "unit_l1": unit_l1}
            self._extreme_pos = np.full(self.n_samples, -1, dtype=np.intp)
            self._extreme_pos[big] = np.arange(big.size)
            scale = np.ones(self.n_samples) if scale is None else scale
            scale[big] = 0.0  # their share of the passes over X comes from the unit rows
        # rows already inside the ball need no scaling: skip the products
        self.row_scale = None if scale is None or np.all(scale == 1.0) else scale
        self._l2_feature_norms = feature_norms
        self._l2_row_norms = np.hypot(feature_norms, self.intercept_scale) if self.fit_intercept \
            else feature_norms
        self._l1_feature_norms = None
        self._inverse_norms = {}
        self._limits = None
        self._blocks = None
        self._last_decision = None
        self._fused_rows = None

    def __sizeof__(self):
        # X and the per-row arrays: what moving this object between processes
        # ships (a Dask scheduler weighs that before moving a bound block)
        return object.__sizeof__(self) + nbytes_of(vars(self))

    @property
    def n_params(self):
        """Length of one coefficient column (features plus intercept)."""
        return self.n_features + int(self.fit_intercept)

    def row_norms(self, ord=2, idx=None):
        """Norms of the implicit rows ``[s_i x_i, c]`` (intercept included).

        Parameters
        ----------
        ord : {1, 2}
            The norm: L2, or L1 (the feature part's L1 norm plus ``c``).
        idx : ndarray of int or None
            Rows to use; None for all.

        Returns
        -------
        ndarray of shape (n_rows,), float64
            The norm of each row used, after row clipping (extreme rows as
            the scaled unit rows), so at most ``hypot(data_norm, c)`` in L2
            when ``data_norm`` is set. Data-dependent: not for release.
        """
        if ord == 2:
            norms = self._l2_row_norms
        else:
            if self._l1_feature_norms is None:
                with np.errstate(over="ignore", invalid="ignore"):
                    l1 = _l1_row_norms(self.X)
                    if self.row_scale is not None:
                        l1 = l1 * self.row_scale
                ext = self._extreme
                if ext is not None:
                    l1[ext["rows"]] = ext["mult"] * ext["unit_l1"]
                self._l1_feature_norms = l1
            norms = self._l1_feature_norms + self.intercept_scale
        return norms if idx is None else norms[idx]

    def inverse_row_norms(self, ord=2, idx=None):
        """``1 / row_norms(ord)``, with 0 for rows of norm 0 (cached).

        ``clip_norm * inverse_row_norms()`` is the largest residual magnitude
        each row can carry with a gradient of norm at most ``clip_norm``.

        Parameters
        ----------
        ord : {1, 2}
            The norm, as in :meth:`row_norms`.
        idx : ndarray of int or None
            Rows to use; None for all (the cache holds all rows).

        Returns
        -------
        ndarray of shape (n_rows,), float64
            ``1 / ||[s_i x_i, c]||`` for each row used; 0 for a row of norm 0
            (its gradient is 0 whatever the residual) and inf where the
            inverse of a subnormal norm overflows.
        """
        inv = self._inverse_norms.get(ord)
        if inv is None:
            norms = self.row_norms(ord)
            with np.errstate(divide="ignore", over="ignore"):
                inv = np.where(norms > 0, 1.0 / norms, 0.0)   # inf for subnormal norms
            self._inverse_norms[ord] = inv
        return inv if idx is None else inv[idx]

    def raw_feature_norms(self, idx=None):
        """L2 norms of the rows of ``X`` before row clipping (float64, accurate).

        Parameters
        ----------
        idx : ndarray of int or None
            Rows to use; None for all.

        Returns
        -------
        ndarray of shape (n_rows,), float64
            ``||x_i||_2`` of each row used, without the intercept and capped
            at the largest float64; data-dependent, not a public bound.
        """
        return self._raw_l2_norms if idx is None else self._raw_l2_norms[idx]

    def extreme_rows(self, idx=None):
        """The extreme rows among the rows used, kept apart as unit rows.

        Parameters
        ----------
        idx : ndarray of int or None
            Rows used; None for all.

        Returns
        -------
        extreme : tuple of (ndarray, ndarray or sparse matrix, ndarray) or None
            None when there are none, else ``(pos, unit, mult)``: ``pos`` the
            positions of the extreme rows among the rows used, ``unit`` their
            unit rows ``x_i / ||x_i||`` (float64, dense or CSR) and ``mult``
            the norms ``min(||x_i||, data_norm)`` of the (clipped) rows, so
            that the clipped row is ``mult[k] * unit[k]``. In the passes over
            ``X`` these rows have weight 0 (``row_scale`` is 0 there).
        """
        ext = self._extreme
        if ext is None:
            return None
        if idx is None:
            return ext["rows"], ext["unit"], ext["mult"]
        which = self._extreme_pos[idx]
        pos = np.flatnonzero(which >= 0)
        if pos.size == 0:
            return None
        which = which[pos]
        return pos, ext["unit"][which], ext["mult"][which]

    def clip_limits(self, clip_norm, ord=2, idx=None):
        """``clip_norm / row_norms(ord)`` and its negative (cached for the last clip_norm).

        The largest residual magnitude each row can carry with a gradient of
        norm at most ``clip_norm`` (0 for rows of norm 0, inf where the
        inverse of a subnormal norm overflows).

        Parameters
        ----------
        clip_norm : float
            The per-example gradient bound.
        ord : {1, 2}
            The norm, as in :meth:`row_norms`.
        idx : ndarray of int or None
            Rows to use; None for all (the cache holds all rows).

        Returns
        -------
        upper, lower : ndarray of shape (n_rows,), float64
            The limits and their negatives. Data-dependent: not for release.
        """
        key = (float(clip_norm), ord)
        cached = self._limits
        if cached is None or cached[0] != key:
            with np.errstate(invalid="ignore"):  # 0 * inf: a subnormal row at C = 0
                upper = float(clip_norm) * self.inverse_row_norms(ord)
            cached = self._limits = (key, upper, -upper)
        _, upper, lower = cached
        return (upper, lower) if idx is None else (upper[idx], lower[idx])

    def _csr_blocks(self, idx):
        """The row blocks of a CSR ``X`` read whole (built once), else None."""
        if idx is not None or not sp.issparse(self.X):
            return None
        if self._blocks is None:
            self._blocks = CSRBlocks(self.X)
        return self._blocks

    def _rows(self, idx):
        if idx is None:
            return self.X, self.row_scale
        scale = None if self.row_scale is None else self.row_scale[idx]
        if sp.issparse(self.X) and len(idx) * self.n_features <= _DENSE_GATHER:
            return _dense_rows(self.X, idx), scale
        return self.X[idx], scale

    def decision(self, W, idx=None):
        """Linear predictor ``Z = [s x, c] @ W``.

        Parameters
        ----------
        W : ndarray of shape (n_params,) or (n_params, n_outputs)
            Coefficients: one per feature, then the intercept coefficient
            ``W[-1]`` (the intercept is ``c * W[-1]``) when ``fit_intercept``.
        idx : ndarray of int or None
            Rows to use; None means all.

        Returns
        -------
        Z : ndarray of shape (n_rows,) or (n_rows, n_outputs), float64
            Finite for finite ``W``: the predictor of an extreme row is
            bounded by the largest float.
        """
        cached = self._last_decision
        if idx is None and cached is not None and np.array_equal(cached[0], W):
            return cached[1].copy()
        X, scale = self._rows(idx)
        d = self.n_features
        # float64 products whatever X's dtype: each row's predictor depends
        # on its own record only, whichever path computes it
        coef = np.asarray(W[:d], dtype=np.float64)
        extreme = self.extreme_rows(idx)
        if extreme is None:
            Z = _product64(X, coef)
            if scale is not None:
                Z = Z * (scale if Z.ndim == 1 else scale[:, None])
        else:
            # the products of the extreme rows may overflow here: they are replaced
            with np.errstate(over="ignore", invalid="ignore"):
                Z = _product64(X, coef)
                Z = Z * (scale if Z.ndim == 1 else scale[:, None])
            pos, unit, mult = extreme
            coef64 = np.asarray(W[:d], dtype=np.float64)
            Z_ext = (np.asarray(unit @ coef64, dtype=np.float64) if sp.issparse(unit)
                     else _rowwise_product(np.asarray(unit, dtype=np.float64), coef64))
            with np.errstate(over="ignore"):
                Z_ext = Z_ext * (mult if Z_ext.ndim == 1 else mult[:, None])
            Z[pos] = np.clip(Z_ext, -_F64_MAX, _F64_MAX)
        if self.fit_intercept:
            Z += self.intercept_scale * W[d]   # Z is this call's own array
            if extreme is not None:
                Z[extreme[0]] = np.clip(Z[extreme[0]], -_F64_MAX, _F64_MAX)
        return Z

    def weighted_sum(self, R, idx=None):
        """``sum_i R_i (x) [s_i x_i, c]``: one pass ``X.T @ (s * R)``.

        Parameters
        ----------
        R : ndarray of shape (n_rows,) or (n_rows, n_outputs)
            Per-row weights (for a GLM: the clipped residuals).
        idx : ndarray of int or None
            Rows to use, aligned with the rows of ``R``; None for all.

        Returns
        -------
        G : ndarray of shape (n_params,) or (n_params, n_outputs), float64
            The weighted sum of the implicit rows: the feature rows first,
            then ``c * sum_i R_i`` when ``fit_intercept``. Row ``i`` adds at
            most ``||R_i|| ||[s_i x_i, c]||`` to its norm.
        """
        X, scale = self._rows(idx)
        extreme = self.extreme_rows(idx)
        if scale is not None:
            R_scaled = R * (scale if R.ndim == 1 else scale[:, None])
        else:
            R_scaled = R
        if extreme is not None:
            R_scaled[extreme[0]] = 0.0  # (a copy: scale is set when rows are extreme)
        # float64 whatever X's dtype, by compensated row blocks (see _float64_sums)
        G_feat = transpose_product(X, R_scaled, blocks=self._csr_blocks(idx))
        if extreme is not None:
            pos, unit, mult = extreme
            R_ext = R[pos] * (mult if R.ndim == 1 else mult[:, None])
            G_feat = G_feat + np.asarray(unit.T @ R_ext, dtype=np.float64).reshape(G_feat.shape)
        if not self.fit_intercept:
            return G_feat
        G_int = self.intercept_scale * column_totals(R)
        if R.ndim == 1:
            return np.concatenate([G_feat, [G_int]])
        return np.vstack([G_feat, G_int[None, :]])

    def fused_rows(self, idx=None):
        """Rows per block of a fused pass, or None where it does not apply.

        A fused pass applies to dense C-ordered ``X`` without extreme rows
        when ``X`` spans more than one block, over all rows or over a sample
        (whose blocks are runs of its rows); elsewhere the two separate
        passes are as fast.

        Parameters
        ----------
        idx : ndarray of int or None
            The rows a pass would use (None: all); the answer is the same
            for a sample.

        Returns
        -------
        int or None
            Rows per block (about 2 MiB of ``X``), or None.
        """
        if self._fused_rows is None:  # a property of X, which a design never changes
            X = self.X
            rows = 0
            if (not sp.issparse(X) and self._extreme is None and isinstance(X, np.ndarray)
                    and X.flags.c_contiguous):
                # float64 blocks (a float32 block is cast into a buffer of this size);
                # short partial sums, compensated (see _float64_sums)
                rows = _block_rows(self.n_features)
                rows = rows if self.n_samples > rows else 0
            self._fused_rows = rows
        return self._fused_rows or None

    def fused_weighted_sum(self, W, weights, rows, idx=None):
        """``weighted_sum(weights(decision(W)))`` in one pass over the rows, by blocks.

        Each block's predictor, weights and weighted sum are computed while
        the block is in cache (see :meth:`fused_rows`); the result equals the
        two-pass form up to the order of the floating-point sums.

        Parameters
        ----------
        W : ndarray of shape (n_params,) or (n_params, n_outputs)
            Coefficients, as in :meth:`decision`.
        weights : callable
            ``weights(Z_block, rows_slice)`` returns the block's weights (a
            new array of the shape of ``Z_block``, which it must not write
            into: ``Z_block`` is kept as the predictor at ``W``), as ``R`` in
            :meth:`weighted_sum`.
        rows : int
            Rows per block, from :meth:`fused_rows`.
        idx : ndarray of int or None, default=None
            The rows of a sample (increasing, from ``sample_rows``); None for
            all. A sample's blocks are runs of ``rows`` of its rows, gathered
            one block at a time.

        Returns
        -------
        G : ndarray of shape (n_params,) or (n_params, n_outputs), float64
            As :meth:`weighted_sum`.
        """
        if idx is not None:
            return self._sampled_fused_sum(W, weights, rows, idx)
        X, d = self.X, self.n_features
        coef = np.asarray(W[:d], dtype=np.float64)
        # the last pass's predictor array is reused (its pages are mapped): the
        # cache is emptied first, so a pass that fails leaves no stale predictor
        cached, self._last_decision = self._last_decision, None
        shape = (self.n_samples,) + np.shape(W)[1:]
        Z_all = cached[1] if cached is not None and cached[1].shape == shape else np.empty(shape)
        blocks = row_blocks(self.n_samples, rows)
        shift = self.intercept_scale * W[d] if self.fit_intercept else None
        at_zero = not coef.any()

        def block_sums(k, scratch):
            block = blocks[k]
            if X.dtype == np.float64:
                Xb = X[block]
            else:  # cast into the thread's float64 buffer (in cache; no allocation per block)
                Xb = _temporary(scratch, "buffer", block.stop - block.start, d)
                np.copyto(Xb, X[block])
            Z = Z_all[block]
            if at_zero:  # the first step from 0: X W = 0, no product to compute
                Z.fill(0.0)
            else:
                _rowwise_product(Xb, coef, out=Z)  # in place, each row on its own
            return self._block_partial(Xb, Z, block, shift, weights)

        # fixed blocks, partials added in block order: the same sum with any number of threads
        partials = map_blocks(block_sums, len(blocks), pass_threads(len(blocks)),
                              single_blas=coef.ndim > 1)
        # the predictor at W, kept for a decision(W) that follows at the same W
        # (a line search's reference point): one pass saved
        self._last_decision = (np.array(W, dtype=np.float64), Z_all)
        return self._partials_total(partials, np.shape(W))

    def _block_partial(self, Xb, Z, rows, shift, weights):
        """One block's ``(Xb.T @ (s R), sum of R)`` from its raw products ``Z = Xb @ coef``.

        ``Z`` is scaled by the rows' ``s`` and shifted by the intercept in
        place; ``rows`` (a slice or positions) selects the block's labels and
        clip limits in ``weights``.
        """
        s = None if self.row_scale is None else self.row_scale[rows]
        if s is not None:
            Z *= s if Z.ndim == 1 else s[:, None]
        if shift is not None:
            Z += shift
        R = weights(Z, rows)  # a new array (weights never write into Z)
        total = R.sum(axis=0) if self.fit_intercept else None
        if s is not None:
            R *= s if R.ndim == 1 else s[:, None]
        return Xb.T @ R, total

    def _partials_total(self, partials, coef_shape):
        """The blocks' partials added accurately, in block order: the weighted sum."""
        d = self.n_features
        G_feat = CompensatedSum((d,) + tuple(coef_shape[1:]))
        G_int = CompensatedSum(tuple(coef_shape[1:]))
        for feat, total in partials:
            G_feat.add(feat)
            if self.fit_intercept:
                G_int.add(total)
        G_feat = G_feat.value()
        if not self.fit_intercept:
            return G_feat
        G_int = self.intercept_scale * G_int.value()
        if G_feat.ndim == 1:
            return np.concatenate([G_feat, [G_int]])
        return np.vstack([G_feat, G_int[None, :]])

    def _sampled_fused_sum(self, W, weights, rows, idx):
        """``fused_weighted_sum`` over the rows ``idx``: each block gathers ``rows`` of them.

        The blocks are fixed runs of ``idx`` (not of ``X``), so a pass reads
        only the sampled rows and its partial sums do not depend on the
        number of threads.
        """
        X, d = self.X, self.n_features
        coef = np.asarray(W[:d], dtype=np.float64)
        blocks = row_blocks(len(idx), rows)
        shift = self.intercept_scale * W[d] if self.fit_intercept else None

        def block_sums(k, scratch):
            sub = idx[blocks[k]]
            Xb = X[sub] if X.dtype == np.float64 else X[sub].astype(np.float64)
            return self._block_partial(Xb, _rowwise_product(Xb, coef), sub, shift, weights)

        partials = map_blocks(block_sums, len(blocks), pass_threads(len(blocks)),
                              single_blas=coef.ndim > 1)
        return self._partials_total(partials, np.shape(W))

    def _dense_block_map(self, product, X=None):
        """``[product(Xb, rows, scratch) ...]`` over the float64 row blocks of a dense ``X``, in order.

        Blocks in threads (see :func:`~skdp.losses._threads.map_blocks`), each
        block's BLAS on one thread: the same partials whatever the thread count.
        ``scratch`` is the thread's dict, for a product's temporary of a
        block's shape (:func:`_temporary`): a new array of that size per block
        would pay its page faults again.
        """
        X = self.X if X is None else X
        n, d = X.shape
        rows = max(1, min(SUM_ROWS, n))
        blocks = row_blocks(n, rows)

        def work(k, scratch):
            block = blocks[k]
            if X.dtype == np.float64:
                return product(X[block], block, scratch)
            Xb = _temporary(scratch, "buffer", block.stop - block.start, d)
            np.copyto(Xb, X[block])
            return product(Xb, block, scratch)

        return map_blocks(work, len(blocks), pass_threads(len(blocks)), single_blas=True)

    def gram(self):
        """``sum_i [s_i x_i, c] [s_i x_i, c]^T`` over all rows (the second moment, unweighted).

        Returns
        -------
        G : ndarray of shape (n_params, n_params), float64, symmetric
            Row ``i`` adds a term of Frobenius norm ``||[s_i x_i, c]||**2``.
        """
        return self.weighted_gram(None)

    def gram_diagonal(self, idx=None):
        """Diagonal of :meth:`gram`: ``sum_i [s_i x_i, c]_j ** 2`` per parameter, one pass.

        Parameters
        ----------
        idx : ndarray of int or None
            Rows to use; None for all.

        Returns
        -------
        ndarray of shape (n_params,), float64
            Row ``i`` adds a vector of L2 norm at most ``||[s_i x_i, c]||**2``.
        """
        X, scale = self._rows(idx)
        # rows scaled before squaring: an extreme row (scale 0) must not overflow
        acc = CompensatedSum((self.n_features,))
        if sp.issparse(X):
            blocks = self._csr_blocks(idx) or CSRBlocks(sp.csr_matrix(X))
            for block, T in blocks.transposed():  # float64 blocks of rows
                data = T.data
                if scale is not None:
                    data = data * np.repeat(scale[block], np.diff(T.indptr))
                acc.add(np.bincount(T.indices, weights=data * data, minlength=self.n_features))
        else:
            for block, Xb in dense_blocks(X):  # blocks of rows, not examples
                if scale is not None:
                    Xb = Xb * scale[block, None]
                acc.add(np.einsum("ij,ij->j", Xb, Xb))
        feat = acc.value()
        extreme = self.extreme_rows(idx)
        if extreme is not None:
            _, unit, mult = extreme
            U = unit.toarray() if sp.issparse(unit) else np.asarray(unit)
            with np.errstate(over="ignore"):
                feat = feat + (U * U).T @ (mult * mult)
        if not self.fit_intercept:
            return feat
        return np.append(feat, self.intercept_scale ** 2 * X.shape[0])

    def weighted_gram(self, w, idx=None):
        """``sum_i w_i [s_i x_i, c] [s_i x_i, c]^T``: one pass, no ``n x d`` temporary beyond X.

        Parameters
        ----------
        w : ndarray of shape (n_rows,) or None
            Per-row weights (for a GLM: the clipped second derivatives); None
            for weights 1 (the Gram matrix: each dense block's product is then
            symmetric, ``Y.T @ Y``, half the work of a weighted one).
        idx : ndarray of int or None
            Rows to use, aligned with ``w``; None for all.

        Returns
        -------
        G : ndarray of shape (n_params, n_params), float64, symmetric
            The weighted Gram matrix of the implicit rows (intercept last);
            row ``i`` adds a term of Frobenius norm ``|w_i| ||[s_i x_i, c]||**2``.
        """
        X, scale = self._rows(idx)
        unit_weights = w is None
        w = np.ones(X.shape[0]) if unit_weights else np.asarray(w, dtype=np.float64)
        extreme = self.extreme_rows(idx)
        ws = w if scale is None else w * scale   # extreme rows: scale 0
        ws2 = ws if scale is None else ws * scale
        d = self.n_features
        if sp.issparse(X):
            acc = CompensatedSum((d, d))
            # blocks large enough that the dense d x d partials stay cheap
            for block, B in csr_blocks(X, max(csr_rows(X.shape[0]), d)):
                acc.add((B.T @ sp.diags(ws2[block]) @ B).toarray())
            feat = acc.value()
            cross = transpose_product(X, ws, blocks=self._csr_blocks(idx))
        else:
            # each block's square and its weighted column sum while it is in cache
            if unit_weights and scale is not None:  # sum_i (s_i x_i)(s_i x_i)^T: symmetric
                def product(Xb, block, scratch):
                    Y = _temporary(scratch, "scaled", *Xb.shape)
                    np.multiply(Xb, scale[block, None], out=Y)
                    return Y.T @ Y, Y.sum(axis=0)
            elif unit_weights:
                def product(Xb, block, scratch):
                    return Xb.T @ Xb, Xb.sum(axis=0)
            else:
                def product(Xb, block, scratch):
                    Y = _temporary(scratch, "scaled", *Xb.shape)
                    np.multiply(Xb, ws2[block, None], out=Y)
                    return Y.T @ Xb, Xb.T @ ws[block]
            acc, col = CompensatedSum((d, d)), CompensatedSum((d,))
            for square, column in self._dense_block_map(product, X):
                acc.add(square)
                col.add(column)
            feat, cross = acc.value(), col.value()
        if extreme is not None:
            pos, unit, mult = extreme
            we = w[pos]
            U = unit.toarray() if sp.issparse(unit) else np.asarray(unit)
            with np.errstate(over="ignore", invalid="ignore"):
                feat = feat + (U * (we * mult * mult)[:, None]).T @ U
                cross = cross + U.T @ (we * mult)
        if not self.fit_intercept:
            return 0.5 * (feat + feat.T)
        d = self.n_features
        G = np.empty((d + 1, d + 1))
        G[:d, :d] = 0.5 * (feat + feat.T)
        c = self.intercept_scale
        G[:d, d] = G[d, :d] = c * cross
        G[d, d] = c * c * float(column_totals(w))
        return G

    def feature_norm_bound(self):
        """Public bound on ``||[s x, c]||_2``, or None when rows are not clipped.

        Returns
        -------
        float or None
            ``hypot(data_norm, c)``: public, since ``data_norm`` and ``c`` are;
            None with ``data_norm=None`` (no public bound exists then).
        """
        if self.data_norm is None:
            return None
        return float(np.hypot(self.data_norm, self.intercept_scale))

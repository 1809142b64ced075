"""Row kernels of :class:`~skdp.losses.LinearDesign`: row norms, scaled rows and blocked products.

Functions of arrays only (dense or CSR), float64 results whatever the input dtype.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import row_norms

from ._float64_sums import SUM_ROWS, row_blocks
from ._threads import map_blocks, pass_threads

__all__ = ["nbytes_of", "sum_is_finite"]

_F64_MAX = float(np.finfo(np.float64).max)
#: float64 sums of squares at or above this lost nothing to underflow (a
#: square below the normal range is < 2**-1022, i.e. 2**-222 of this)
_SQ_LO = 2.0 ** -800

#: a fused pass (:meth:`LinearDesign.fused_weighted_sum`) reads dense rows in
#: blocks of about this many bytes, which stay in cache between the two
#: products: one read of X from memory per pass instead of two (``X @ w`` then
#: ``X.T @ r``)
_FUSED_BLOCK_BYTES = 1 << 21


def _dense_rows(X, idx):
    """Rows ``idx`` of a CSR matrix as a dense float64 array (for a handful of rows)."""
    if X.format != "csr":
        X = sp.csr_matrix(X)
    starts = X.indptr[idx]
    lengths = X.indptr[np.asarray(idx) + 1] - starts
    ends = np.cumsum(lengths)
    entries = np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1] if len(ends) else 0)
    out = np.zeros((len(idx), X.shape[1]), dtype=np.float64)   # exact for float32 entries
    out[np.repeat(np.arange(len(idx)), lengths), X.indices[entries]] = X.data[entries]
    return out


def _rowwise_product(X, coef, out=None):
    """``X @ coef`` for a float64 dense ``X``, each row's value a function of that row alone.

    A BLAS product rounds a row by where it sits (OpenBLAS's gemv takes the
    rows past the last multiple of four through another kernel), so removing
    one record, which moves the rows behind it, moved the others'
    predictors by an ulp; where the clip window of a residual is narrower
    than that ulp (the squared loss far from 0) one record then moved a
    clipped sum by up to 2 ``clip_norm`` per other row. numpy's einsum sums
    each row in an order fixed by the number of columns, whatever its
    position, alignment or neighbours, and on one thread (a loop over the
    outputs, not over examples, for a 2-d ``coef``).
    """
    if coef.ndim == 1:
        return np.einsum("ij,j->i", X, coef, out=out)
    if out is None:
        out = np.empty((X.shape[0], coef.shape[1]))
    for k in range(coef.shape[1]):
        np.einsum("ij,j->i", X, np.ascontiguousarray(coef[:, k]), out=out[:, k])
    return out


def _product64(X, coef):
    """``X @ coef`` computed in float64 (``coef`` float64), whatever X's dtype and thread count.

    Each row's product is then a function of that row alone, bit for bit,
    whichever path reads it (C or Fortran order, a gathered batch, CSR or a
    dense gather) and wherever the row sits (:func:`_rowwise_product`): in
    float32 the same row rounded differently by path, and a BLAS product
    rounds it by position, so one record's presence moved the others'
    clipped terms. A float64
    dense ``X`` is read as it is (no copy); a float32 one is cast by row
    blocks (one cached buffer of about 2 MiB, never a float64 copy of ``X``);
    scipy computes a sparse product in the float64 of ``coef``.
    """
    if sp.issparse(X):  # scipy's loop is over each row's own entries
        return np.asarray(X @ coef, dtype=np.float64)
    if X.dtype == np.float64 and coef.ndim == 1:
        return _rowwise_product(X, coef)
    n, d = X.shape
    rows = min(_block_rows(d), max(n, 1))
    # the buffer in X's memory order: the cast is then a contiguous copy
    order = "F" if X.flags.f_contiguous and not X.flags.c_contiguous else "C"
    out = np.empty((n,) + coef.shape[1:])
    blocks = row_blocks(n, rows)

    def product(k, scratch):  # each row's product is its own: any thread gives the same
        block = blocks[k]
        if X.dtype == np.float64:
            Xb = X[block]
        else:
            if "buffer" not in scratch:
                scratch["buffer"] = np.empty((rows, d), order=order)
            Xb = scratch["buffer"][:block.stop - block.start]
            np.copyto(Xb, X[block])
        _rowwise_product(Xb, coef, out=out[block])

    map_blocks(product, len(blocks), pass_threads(len(blocks)))
    return out


def _block_rows(n_features):
    """Rows per float64 block of about :data:`_FUSED_BLOCK_BYTES` (at most SUM_ROWS)."""
    return min(max(64, _FUSED_BLOCK_BYTES // max(1, n_features * 8)), SUM_ROWS)


def _csr_row_sums(values, indptr):
    """Sum of ``values`` (aligned with a CSR ``data``) over each row."""
    n = len(indptr) - 1
    out = np.zeros(n, dtype=np.float64)
    nonempty = np.flatnonzero(np.diff(indptr) > 0)
    if nonempty.size:
        # segments start at the first entry of each non-empty row and run to
        # the next one: empty rows in between hold no entries
        out[nonempty] = np.add.reduceat(values, indptr[:-1][nonempty])
    return out


def _scaled_rows(X):
    """Accurate L2 norms and unit rows of a (small) float matrix, by scaling.

    Each row is divided by its largest absolute entry before squaring, so
    nothing overflows or underflows for finite input.

    Returns
    -------
    norms : ndarray of shape (n_rows,), float64
        Capped at the largest float64.
    unit : ndarray or CSR matrix of shape X.shape, float64
        ``x_i / ||x_i||`` (zero rows stay zero).
    """
    if sp.issparse(X):
        Y = sp.csr_matrix(X, dtype=np.float64, copy=True)
        counts = np.diff(Y.indptr)
        a = np.zeros(Y.shape[0])
        nonempty = np.flatnonzero(counts > 0)
        if nonempty.size:
            a[nonempty] = np.maximum.reduceat(np.abs(Y.data), Y.indptr[:-1][nonempty])
        a_rep = np.repeat(np.where(a > 0, a, 1.0), counts)
        Y.data /= a_rep
        nu = np.sqrt(_csr_row_sums(Y.data * Y.data, Y.indptr))
        Y.data /= np.repeat(np.where(nu > 0, nu, 1.0), counts)
        unit = Y
    else:
        Y = np.array(X, dtype=np.float64)
        a = np.abs(Y).max(axis=1) if Y.shape[1] else np.zeros(Y.shape[0])
        Y /= np.where(a > 0, a, 1.0)[:, None]
        nu = np.sqrt(np.einsum("ij,ij->i", Y, Y))
        Y /= np.where(nu > 0, nu, 1.0)[:, None]
        unit = Y
    with np.errstate(over="ignore"):
        norms = np.minimum(a * nu, _F64_MAX)
    return norms, unit


def nbytes_of(value):
    """Bytes of the arrays in ``value`` (an array, a sparse matrix, or a dict, list or
    tuple of them; anything else counts 0)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if sp.issparse(value):
        return sum(getattr(value, name).nbytes for name in ("data", "indices", "indptr")
                   if hasattr(value, name))
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return sum(nbytes_of(item) for item in value)
    return 0


def _l2_row_norms(X):
    """L2 norm of every row, in float64, accurate for any finite row; no copy of X."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)  # no copy for CSR input
        if X.dtype == np.float64:
            sq = row_norms(X, squared=True)  # float64 accumulation
        else:  # float32: square in float64 (float32 squares overflow at 1.8e19)
            sq = _csr_row_sums(np.square(X.data, dtype=np.float64), X.indptr)
    else:
        sq = _dense_squared_norms(X)
    sq = np.asarray(sq, dtype=np.float64)
    norms = np.sqrt(sq)
    if X.dtype == np.float64:
        # float32 entries squared in float64 never overflow or underflow;
        # float64 rows whose squares did are recomputed with scaling
        fix = np.flatnonzero((sq < _SQ_LO) | (sq > _F64_MAX))
        if fix.size:
            norms[fix] = _scaled_rows(X[fix])[0]
    return norms


def sum_is_finite(X):
    """Whether the sum of ``X``'s entries is finite (True proves every entry finite).

    scikit-learn's first test of finiteness (``np.isfinite(X.sum())``), with a
    C-contiguous dense ``X`` summed by row blocks in threads. False means an
    entry is NaN or infinite, or that a sum of finite entries overflowed: the
    caller then runs the entry-wise check.

    Parameters
    ----------
    X : ndarray or sparse matrix, float
        Validated input (for a sparse matrix, its stored entries are summed).

    Returns
    -------
    bool
    """
    A = X.data if sp.issparse(X) else np.asarray(X)

    def finite(rows):
        with np.errstate(over="ignore", invalid="ignore"):
            return bool(np.isfinite(rows.sum()))

    if A.ndim != 2:
        return finite(A)
    return all(_by_row_blocks(A, finite))


def _dense_squared_norms(X):
    """Squared L2 norm of every row of a dense ``X``, in float64, by row blocks in threads.

    Each row's sum is the one ``np.einsum("ij,ij->i", X, X, dtype=float64)``
    gives over the whole of a C-contiguous ``X`` (a row's result depends on
    that row only), so the blocks and their thread count change no bit of it.
    Other layouts are summed in one call: a cast float32 column-major ``X`` is
    buffered along the rows, and its sums round with the buffer's bounds.
    """
    return np.concatenate(_by_row_blocks(
        X, lambda rows: np.einsum("ij,ij->i", rows, rows, dtype=np.float64)))


def _by_row_blocks(X, work):
    """``[work(rows) ...]`` over the fixed row blocks of a C-contiguous 2-D ``X``
    (blocks in threads, results in block order); one call on the whole of any
    other ``X`` or of one block's worth of rows."""
    if not X.flags.c_contiguous or X.shape[0] <= SUM_ROWS:
        return [work(X)]
    blocks = row_blocks(X.shape[0], SUM_ROWS)
    return map_blocks(lambda k, scratch: work(X[blocks[k]]), len(blocks),
                      pass_threads(len(blocks)))


def _l1_row_norms(X):
    """L1 norm of every row, in float64, without a copy of X."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)  # no copy for CSR input
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return np.bincount(rows, weights=np.abs(X.data), minlength=X.shape[0])
    # |X| in blocks of rows, so no temporary of the size of X
    out = np.empty(X.shape[0])
    step = max(1, (1 << 22) // max(1, X.shape[1]))
    for start in range(0, X.shape[0], step):
        out[start:start + step] = np.abs(X[start:start + step]).sum(axis=1, dtype=np.float64)
    return out

"""Sums over records that carry a sensitivity claim: float64, by row blocks, compensated.

A clipped sum has sensitivity ``C`` only if the computed sums of two
neighbouring data sets differ by (about) the removed record's term. Rounding
breaks that when the sum is long: accumulated in float32, one removed record
moved a clipped gradient sum of 2,000,000 rows by 3.8 ``C``; even a plain
float64 pass over them is off by ``2e-9 C``. So every such sum is taken
here, the same way for dense and CSR rows, float32 and float64 alike:

* rows are read in blocks of at most :data:`SUM_ROWS` rows (CSR: also about
  :data:`_CSR_BLOCK_NNZ` stored entries), a float32 block cast to float64
  as it is read (``X`` itself stays float32: no copy of ``X`` per pass);
* each block's partial sum is a float64 product (BLAS or scipy), short
  enough to be accurate to far below ``C``;
* the partial sums are added by an error-free extraction (Rump, Ogita and
  Oishi; :class:`CompensatedSum`), vectorised over the entries of the sum,
  so the total is within about one rounding of the exact sum of the partials.

The result changes by the removed record's term up to about ``1e-10 C`` at
two million rows (measured; see ``tests/test_float64_sums.py``). That is the
typical rounding (errors of random sign), not a worst-case bound: the worst
case of a block of m rows whose terms all round the same way is of order
``m**2 u C`` (``u = 2**-53``), which the block sizes keep below about
``1e-7 C`` for dense blocks.
"""

import copy
import math

import numpy as np
import scipy.sparse as sp

from ._threads import map_blocks, pass_threads

__all__ = ["SUM_ROWS", "CompensatedSum", "CSRBlocks", "row_blocks", "dense_blocks", "csr_rows",
           "csr_blocks", "transpose_product", "column_totals", "float64_total"]

#: most dense rows one product adds before its partial sum is set apart (BLAS
#: accumulates a product in several lanes: 2,000,000 rows in one pass were off
#: by 2e-9 C, 16,384 rows by far less than 1e-11 C)
SUM_ROWS = 16384
#: a CSR product (scipy) adds each feature's terms one after the other, so
#: the typical error of a sum of n terms in blocks of m rows is about
#: ``u sqrt(n) m C / sqrt(3)`` (u = 2**-53); blocks of ``_CSR_ROWS_SCALE /
#: sqrt(n)`` rows keep it below 4e-10 C at every n (one block up to 32,768 rows)
_CSR_ROWS_SCALE = 2.0 ** 22.5
_CSR_ROWS_MIN = 1024
#: rows per block of a sum of values (numpy adds a block of a 1-D array pairwise,
#: the rows of a 2-D one one after the other)
_TOTAL_ROWS = 1 << 16
_TOTAL_ROWS_2D = 1 << 12
#: partial sums kept before they are added (bounds the memory of a long pass)
_BUFFER_BYTES = 1 << 23
#: partials below this leave room for ``sigma`` (no overflow in the extraction)
_SIGMA_TOP = 2.0 ** 960


def _accurate_sum(P):
    """``P.sum(axis=0)`` of float64 partial sums, within about one rounding of the exact sum.

    One step of Rump, Ogita and Oishi's error-free extraction: with ``sigma``
    a power of two at least ``(k + 2) max |P|``, ``q = (sigma + P) - sigma``
    and ``r = P - q`` split every partial exactly, the high parts ``q`` (whole
    multiples of ``u sigma``, ``u = 2**-53``) add up without rounding, and the
    low parts (``|r| <= u sigma``) add an error of order ``k**2 u**2 sigma``:
    each entry is its exact sum rounded once, up to an error far below one
    rounding of the largest entry (an entry far smaller than the largest is
    summed plainly, which is as accurate relative to the largest). Vectorised:
    a few array operations whatever ``k``. Sums that overflow are summed plainly.
    """
    k = P.shape[0]
    if k <= 1:
        return P.sum(axis=0)
    top = float(np.max(np.abs(P)))
    if not top < _SIGMA_TOP:  # also NaN and infinities
        with np.errstate(over="ignore", invalid="ignore"):
            return P.sum(axis=0)
    sigma = math.ldexp(1.0, math.frexp(top)[1] + (k + 2).bit_length())
    high = (sigma + P) - sigma
    return high.sum(axis=0) + (P - high).sum(axis=0)


class CompensatedSum:
    """A float64 sum of arrays of one shape, accurate to about one rounding of the total.

    The parts are kept (not copied: pass arrays the caller will not change)
    and added by :func:`_accurate_sum` when the value is asked for, or when
    they exceed :data:`_BUFFER_BYTES` (then the sum so far is kept as one
    part): adding a part costs no arithmetic, so a pass pays nothing per block.

    Parameters
    ----------
    shape : tuple of int
        Shape of the parts (and of the sum).
    """

    def __init__(self, shape):
        self.shape = tuple(shape)
        self._parts = []
        self._limit = max(2, _BUFFER_BYTES // (8 * max(1, math.prod(self.shape))))

    def add(self, part):
        """Add one partial sum.

        Parameters
        ----------
        part : ndarray of shape ``shape``
            A float64 partial sum (kept, not copied).
        """
        self._parts.append(np.asarray(part, dtype=np.float64).reshape(self.shape))
        if len(self._parts) >= self._limit:
            self._parts = [self.value()]

    def value(self):
        """The sum of the parts added so far.

        Returns
        -------
        ndarray of shape ``shape``, float64
            A new array: each entry the exact sum of the parts rounded about once.
        """
        if len(self._parts) <= 1:
            return self._parts[0].copy() if self._parts else np.zeros(self.shape)
        return np.asarray(_accurate_sum(np.stack(self._parts)), dtype=np.float64)


def row_blocks(n_rows, rows=SUM_ROWS):
    """Slices of at most ``rows`` consecutive rows covering ``range(n_rows)``."""
    rows = max(1, int(rows))
    return [slice(start, min(start + rows, n_rows)) for start in range(0, n_rows, rows)]


def dense_blocks(X, rows=SUM_ROWS):
    """Yield ``(rows, Xb)``: blocks of a dense ``X`` as float64 arrays.

    ``Xb`` is a view of ``X`` when ``X`` is float64 (do not modify it); a
    float32 block is cast into one buffer, reused from block to block (use
    ``Xb`` before the next block is read).
    """
    n, d = X.shape
    rows = max(1, min(int(rows), n))
    buffer = None if X.dtype == np.float64 else np.empty((rows, d))
    for block in row_blocks(n, rows):
        if buffer is None:
            yield block, X[block]
        else:
            Xb = buffer[:block.stop - block.start]
            np.copyto(Xb, X[block])
            yield block, Xb


def csr_rows(n_rows):
    """Rows per block of a CSR sum over ``n_rows`` rows (see :data:`_CSR_ROWS_SCALE`)."""
    return max(int(_CSR_ROWS_SCALE / math.sqrt(max(1, n_rows))), _CSR_ROWS_MIN)


class CSRBlocks:
    """The row blocks of a CSR matrix, kept for repeated float64 passes over it.

    Each block is held as the transpose of its rows, a CSC matrix whose
    arrays are views of ``X``'s (no copy of ``X``: the views are set as the
    matrix's attributes, since scipy's constructor copies slices of a larger
    array). A float64 pass casts a float32 block's entries as it reads them.

    Parameters
    ----------
    X : CSR matrix of shape (n, d)
        Canonical rows (see :func:`skdp.losses.canonical_rows`).
    rows : int or None
        Rows per block; None for :func:`csr_rows` of ``n``.
    """

    def __init__(self, X, rows=None):
        n, d = X.shape
        rows = csr_rows(n) if rows is None else rows
        self.shape = X.shape
        self.blocks = []
        for block in row_blocks(n, rows):
            a, b = int(X.indptr[block.start]), int(X.indptr[block.stop])
            T = sp.csc_matrix((d, block.stop - block.start), dtype=X.dtype)
            T.data, T.indices = X.data[a:b], X.indices[a:b]
            T.indptr = X.indptr[block.start:block.stop + 1] - X.indptr[block.start]
            self.blocks.append((block, T))

    def transposed(self):
        """Yield ``(rows, T)``: each block's rows (a slice) and their transpose, float64.

        ``T`` shares ``X``'s arrays when ``X`` is float64 (do not modify it);
        a float32 block's entries are cast here, one block at a time.
        """
        for block, T in self.blocks:
            if T.dtype != np.float64:
                T = copy.copy(T)  # the block's own float64 entries; X's stay float32
                T.data = T.data.astype(np.float64)
            yield block, T


def csr_blocks(X, rows=None):
    """Row blocks of a CSR matrix as float64 CSR matrices (float32 data cast per block).

    Parameters
    ----------
    X : CSR matrix of shape (n, d)
        Canonical rows.
    rows : int or None
        Rows per block; None for :func:`csr_rows` of ``n``.

    Yields
    ------
    block : slice
        The rows of the block.
    B : CSR matrix of shape (block rows, d), float64
        Those rows (a new matrix per block).
    """
    for block, T in CSRBlocks(X, rows).transposed():
        yield block, sp.csr_matrix((T.data, T.indices, T.indptr), shape=T.shape[::-1])


def transpose_product(X, R, rows=None, blocks=None):
    """``X.T @ R`` (``sum_i x_i (x) R_i``) accumulated in float64, by row blocks.

    Parameters
    ----------
    X : {ndarray, CSR matrix} of shape (n, d)
        float32 or float64; not copied (a float32 block is cast as it is read).
    R : ndarray of shape (n,) or (n, k)
        Per-row weights, float64.
    rows : int or None
        Rows per block; None for :data:`SUM_ROWS` (dense) or :func:`csr_rows` (CSR).
    blocks : CSRBlocks or None
        ``X``'s blocks when the caller keeps them (CSR input).

    Returns
    -------
    ndarray of shape (d,) or (d, k), float64
    """
    R = np.asarray(R, dtype=np.float64)
    if sp.issparse(X):
        blocks = CSRBlocks(sp.csr_matrix(X), rows) if blocks is None else blocks
        if len(blocks.blocks) == 1:  # one block: one product
            return np.asarray(next(blocks.transposed())[1] @ R, dtype=np.float64)

        def partial(k, scratch):
            block, T = blocks.blocks[k]
            if T.dtype != np.float64:
                T = copy.copy(T)  # the block's own float64 entries; X's stay float32
                T.data = T.data.astype(np.float64)
            return T @ R[block]

        n_blocks = len(blocks.blocks)
    else:
        n_rows = X.shape[0]
        size = max(1, min(int(SUM_ROWS if rows is None else rows), n_rows))
        if size >= n_rows and R.ndim == 1:  # one matrix-vector product: nothing to add
            # (the C-ordered float64 rows the block path reads: the same product)
            Xb = X if X.dtype == np.float64 else np.array(X, dtype=np.float64, order="C")
            return Xb.T @ R
        slices = row_blocks(n_rows, size)

        def partial(k, scratch):
            block = slices[k]
            if X.dtype == np.float64:
                return X[block].T @ R[block]
            if "buffer" not in scratch:  # the thread's cast buffer, reused block to block
                scratch["buffer"] = np.empty((size, X.shape[1]))
            Xb = scratch["buffer"][:block.stop - block.start]
            np.copyto(Xb, X[block])
            return Xb.T @ R[block]

        n_blocks = len(slices)
    # fixed blocks, partials added in block order: the same sum with any number of threads
    acc = CompensatedSum((X.shape[1],) + R.shape[1:])
    for part in map_blocks(partial, n_blocks, pass_threads(n_blocks), single_blas=R.ndim > 1):
        acc.add(part)
    return acc.value()


def column_totals(A, rows=None):
    """``A.sum(axis=0)`` of a float64 array: sums per block, blocks added accurately.

    Parameters
    ----------
    A : ndarray of shape (n,) or (n, k)
        The terms, one row per record.
    rows : int or None
        Rows per block; None for 65,536 (1-D, summed pairwise) or 4,096 (2-D).

    Returns
    -------
    totals : float64 scalar (0-d ndarray) or ndarray of shape (k,)
        The column sums (the sum of a 1-D array), in float64.
    """
    A = np.asarray(A, dtype=np.float64)
    if rows is None:
        rows = _TOTAL_ROWS if A.ndim == 1 else _TOTAL_ROWS_2D
    if A.shape[0] <= rows:
        return np.asarray(A.sum(axis=0))
    return np.asarray(_accurate_sum(np.add.reduceat(A, np.arange(0, A.shape[0], rows), axis=0)))


def float64_total(values):
    """The sum of a 1-D array of per-record values as a float (compensated, float64).

    Parameters
    ----------
    values : ndarray of shape (n,)
        One value per record (e.g. clipped losses).

    Returns
    -------
    total : float
        The sum of the values, accumulated in float64.
    """
    return float(column_totals(np.ravel(values)))

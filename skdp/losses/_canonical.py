"""The clip door: the one form of the data that norms and clipping read.

A scipy CSR matrix may hold the same column of a row several times (scipy's
products sum the duplicates) and may keep a row's columns unsorted. A norm
computed entry by entry from ``X.data`` is then not the norm of the row the
products use (``k`` copies of ``v`` count as ``sqrt(k) |v|`` instead of
``k |v|``), and one record escapes its clipping. :func:`canonical_rows` is
called wherever data enters a private computation (every
:class:`~skdp.losses.LinearDesign`, so every estimator, loss and Dask block,
and :class:`~skdp.preprocessing.BoundedScaler`): sparse rows come out with
duplicates summed and columns sorted, and the caller's matrix is copied only
when it is not already in that form.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["canonical_rows"]

#: index entries compared per step of the canonical-form check (bounded temporaries)
_CHECK_BLOCK = 1 << 22


def _is_canonical(X):
    """Whether every row of a CSR matrix has strictly increasing column indices.

    Read from the index arrays themselves: scipy caches its own flag, and a
    caller may set it, so it is not trusted.
    """
    indices, indptr = X.indices, X.indptr
    nnz = int(indptr[-1])
    if nnz < 2:
        return True
    # a new row starts at these entries: no order is required across them
    starts = indptr[1:-1]
    for lo in range(0, nnz - 1, _CHECK_BLOCK):  # blocks of entries, not rows
        hi = min(lo + _CHECK_BLOCK, nnz - 1)
        ok = indices[lo + 1:hi + 1] > indices[lo:hi]
        if not ok.all():
            # entry k + 1 may start a new row, where anything may follow
            cut = starts[(starts > lo) & (starts <= hi)] - 1 - lo
            ok[cut] = True
            if not ok.all():
                return False
    return True


def canonical_rows(X):
    """``X`` in the form its norms are read from: sparse rows canonical CSR.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Validated, finite input. Dense input is returned as it is.

    Returns
    -------
    X : {ndarray, CSR matrix} of shape (n_samples, n_features)
        Dense input unchanged; sparse input as CSR whose rows have their
        duplicate entries summed and their column indices sorted. The
        caller's matrix is never modified: it is returned itself when it
        is already canonical CSR, else a converted copy.

    Raises
    ------
    ValueError
        When summing a row's duplicate entries overflows X's dtype.
    """
    if not sp.issparse(X):
        return X
    if X.format != "csr":
        X = X.tocsr()  # a new matrix (COO input has its duplicates summed here)
        if _is_canonical(X):
            return X
    elif _is_canonical(X):
        return X
    else:
        X = X.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        X.sum_duplicates()  # sorts the indices too; X is this call's own copy
    if not np.all(np.isfinite(X.data)):
        raise ValueError(
            f"X holds duplicate entries in a sparse row whose sum overflows {X.dtype}; "
            "sum the duplicates in a wider type (X.sum_duplicates() on a float64 copy) "
            "or rescale the features."
        )
    return X

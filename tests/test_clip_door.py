"""The clip door: norms and clipping read sparse rows in canonical form (issue 38, item 2).

A legal scipy CSR matrix may hold the same column of a row many times (scipy's
products sum the duplicates). Row norms read entry by entry from ``X.data``
then saw ``sqrt(k) |v|`` where the products use ``k v``, and one record
escaped its clipping.
"""

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp

from skdp import BudgetAccountant, DPLogisticRegression
from skdp.losses import BinaryLogisticLoss, LinearDesign, canonical_rows
from skdp.preprocessing import BoundedScaler

K = 10_000  # copies of one column in the attacker's row


def _data(n=400, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = (rng.random(n) < 0.5).astype(float)
    return X, y


def _with_duplicate_row(X, value=1.0, column=2):
    """CSR from (data, indices, indptr): row 0 holds ``column`` K times (``value`` each)."""
    rest = sp.csr_matrix(X[1:])
    data = np.concatenate([np.full(K, value), rest.data])
    indices = np.concatenate([np.full(K, column, dtype=rest.indices.dtype), rest.indices])
    indptr = np.concatenate([[0], K + rest.indptr])
    return sp.csr_matrix((data, indices, indptr), shape=X.shape)


def _split_entries(block, copies=4):
    """The same matrix with every stored entry split into ``copies`` duplicates, unsorted."""
    M = sp.coo_matrix(block)
    rows = np.tile(M.row, copies)
    order = np.lexsort((-np.tile(M.col, copies), rows))  # columns in decreasing order
    data = np.tile(M.data / copies, copies)[order]
    cols = np.tile(M.col, copies)[order]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=M.shape[0]))])
    return sp.csr_matrix((data, cols, indptr), shape=M.shape)


def _arrays(X):
    return X.data.copy(), X.indices.copy(), X.indptr.copy()


def _unchanged(X, saved):
    return all(np.array_equal(a, b) for a, b in zip(_arrays(X), saved))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_a_row_of_duplicates_moves_the_clipped_sum_by_at_most_clip_norm(fmt):
    X, y = _data()
    X_dup = _with_duplicate_row(X)
    assert not X_dup.has_canonical_format
    X_in = X_dup if fmt == "csr" else X_dup.tocsc()  # CSC keeps the duplicates
    saved = _arrays(X_in)
    W = np.zeros(X.shape[1] + 1)
    clip = 1.0
    G = BinaryLogisticLoss(LinearDesign(X_in, True), y).clipped_grad_sum(W, clip)
    without = BinaryLogisticLoss(LinearDesign(sp.csr_matrix(X[1:]), True), y[1:])
    change = np.linalg.norm(G - without.clipped_grad_sum(W, clip))
    assert change <= clip * (1 + 1e-9)   # was 70.7
    assert _unchanged(X_in, saved)


def test_duplicates_are_read_as_their_sum_everywhere():
    """Norms, products and the clipped sum of a non-canonical matrix are the canonical one's."""
    X, y = _data()
    X_split = _split_entries(X)
    assert not X_split.has_canonical_format
    saved = _arrays(X_split)
    canonical = LinearDesign(sp.csr_matrix(X), True, data_norm=0.5)
    split = LinearDesign(X_split, True, data_norm=0.5)
    np.testing.assert_allclose(split.row_norms(), canonical.row_norms(), rtol=1e-12)
    W = np.random.default_rng(1).standard_normal(X.shape[1] + 1)
    np.testing.assert_allclose(
        BinaryLogisticLoss(split, y).clipped_grad_sum(W, 0.1),
        BinaryLogisticLoss(canonical, y).clipped_grad_sum(W, 0.1), rtol=1e-12, atol=1e-14)
    assert _unchanged(X_split, saved)
    assert canonical_rows(sp.csr_matrix(X)).has_canonical_format


def test_end_to_end_one_record_of_duplicates_moves_the_model_less_than_its_noise():
    """epsilon 1, solver='gd', one seed: neighbours differ by less than the noise's spread."""
    X, y = _data(n=1000)
    X_dup = _with_duplicate_row(X, value=-1.0)
    X_zero = sp.csr_matrix(np.vstack([np.zeros(X.shape[1]), X[1:]]))  # record 0 zeroed out
    saved = _arrays(X_dup)

    def coef(Xm, seed):
        model = DPLogisticRegression(epsilon=1.0, solver="gd", random_state=seed,
                                     accountant=BudgetAccountant())
        return model.fit(Xm, y).coef_.ravel()

    shift = np.abs(coef(X_dup, 0) - coef(X_zero, 0))
    spread = np.std([coef(X_zero, seed) for seed in range(1, 7)], axis=0)
    # one record's clipped gradient is a small part of each step's noise (here
    # at most 0.1 of the spread); the record escaping its clipping moved
    # coef_[2] by 3.9 times the spread
    assert np.all(shift <= 0.5 * spread)
    assert _unchanged(X_dup, saved)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_bounded_scaler_output_stays_inside_the_feature_range(fmt):
    X, _ = _data()
    X_dup = _with_duplicate_row(np.abs(X), value=0.05)   # summed: 500
    X_in = X_dup if fmt == "csr" else X_dup.tocsc()
    saved = _arrays(X_in)
    out = BoundedScaler(bounds=(0, 1)).fit(X_in).transform(X_in)
    dense = out.toarray()
    assert dense.min() >= 0.0 and dense.max() <= 1.0   # was 500
    assert dense[0, 2] == 1.0
    assert _unchanged(X_in, saved)


def test_a_dask_fit_on_non_canonical_blocks_is_the_fit_on_canonical_ones():
    X, y = _data(n=600)
    yd = da.from_array(y, chunks=(200,))

    def fit(split):
        Xd = da.from_array(X, chunks=(200, X.shape[1]))
        Xd = Xd.map_blocks(_split_entries if split else sp.csr_matrix, dtype=X.dtype)
        model = DPLogisticRegression(epsilon=1.0, solver="gd", random_state=0, data_norm=0.5,
                                     accountant=BudgetAccountant())
        return model.fit(Xd, yd).coef_

    np.testing.assert_allclose(fit(True), fit(False), rtol=1e-10, atol=1e-12)


def test_summed_duplicates_that_overflow_are_refused_before_any_charge():
    X = sp.csr_matrix((np.full(3, 2e38, dtype=np.float32), np.array([1, 1, 1]),
                       np.array([0, 3, 3])), shape=(2, 2))
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="duplicate entries"):
        DPLogisticRegression(accountant=accountant, classes=[0, 1]).fit(X, [0, 1])
    assert accountant.spent() == (0.0, 0.0)

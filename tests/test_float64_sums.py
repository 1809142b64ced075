"""Sums with a sensitivity claim are accumulated in float64 (issue 38, item 3).

On 2,000,000 nearly collinear float32 rows (d = 2, intercept on, the first
step), one record moved the clipped gradient sum by 3.8 ``clip_norm`` when
``X.T @ R`` ran in float32 (3.0 on a Poisson batch of rate 0.25).
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from skdp.losses import (BinaryLogisticLoss, CompensatedSum, LinearDesign, column_totals,
                         float64_total)
from skdp.losses._float64_sums import transpose_product

N = 2_000_000
CLIP = 0.5  # every record's gradient is clipped: its term has norm exactly CLIP
W0 = np.zeros(3)


@pytest.fixture(scope="module")
def collinear():
    rng = np.random.default_rng(0)
    a = rng.uniform(1.0, 2.0, N)
    X = np.column_stack([a, a * (1.0 + 1e-3 * rng.standard_normal(N))]).astype(np.float32)
    y = np.ones(N)
    batch = np.flatnonzero(np.random.default_rng(1).random(N) < 0.25)
    return X, y, batch


def _sum(X, y, idx=None):
    return BinaryLogisticLoss(LinearDesign(X, True), y).clipped_grad_sum(W0, CLIP, idx=idx)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("relation", ["zero-out", "removal"])
@pytest.mark.parametrize("sample", ["full", "poisson"])
def test_one_record_moves_a_long_float32_sum_by_its_clipped_term(collinear, fmt, relation,
                                                                 sample):
    X, y, batch = collinear
    i = int(batch[len(batch) // 3])             # a record of the batch
    if relation == "zero-out":                  # its slot kept, contributing nothing
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = 0.0, 0.5                 # zero row, residual 0.5 - 0.5 = 0
        batch2 = batch
    else:                                       # removed: later records move up one
        keep = np.ones(N, dtype=bool)
        keep[i] = False
        X2, y2 = X[keep], y[keep]
        batch2 = np.delete(batch, np.searchsorted(batch, i))
        batch2[batch2 > i] -= 1
    if fmt == "csr":
        X, X2 = sp.csr_matrix(X), sp.csr_matrix(X2)
    idx, idx2 = (None, None) if sample == "full" else (batch, batch2)
    change = np.linalg.norm(_sum(X, y, idx) - _sum(X2, y2, idx2))
    assert change <= CLIP * (1 + 1e-9)   # was 1.89 x CLIP (removal, full batch)
    # the record's clipped term has norm CLIP: the sums are exact to far below it
    assert change >= CLIP * (1 - 1e-9)


def test_float32_and_float64_rows_give_the_same_sums():
    """X may stay float32 in memory: the products and sums are those of its float64 values."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50_000, 5)).astype(np.float32)
    R = rng.standard_normal(50_000)
    for Xm in (X, sp.csr_matrix(X)):
        D32 = LinearDesign(Xm, True)
        D64 = LinearDesign(Xm.astype(np.float64), True)
        np.testing.assert_allclose(D32.weighted_sum(R), D64.weighted_sum(R), rtol=1e-13)
        np.testing.assert_allclose(D32.gram(), D64.gram(), rtol=1e-13)
        np.testing.assert_allclose(D32.gram_diagonal(), D64.gram_diagonal(), rtol=1e-13)
        np.testing.assert_allclose(D32.weighted_gram(R), D64.weighted_gram(R), rtol=1e-12,
                                   atol=1e-9)


def test_accurate_sums_match_exact_sums():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((300_000, 3)) * np.array([1.0, 1e-8, 1e8])
    exact = np.array([math.fsum(A[:, j]) for j in range(3)])
    # a few roundings of the total mass (a plain float64 pass is off by about 1e-12 of it)
    tol = 1e-14 * np.abs(A).sum(axis=0)
    ones = np.ones(len(A))
    acc = CompensatedSum((3,))
    for part in np.array_split(A, 97):
        acc.add(part.sum(axis=0))
    for total in (column_totals(A), acc.value(), transpose_product(A, ones),
                  transpose_product(sp.csr_matrix(A), ones)):
        assert np.all(np.abs(total - exact) <= tol)
    assert abs(float64_total(A[:, 2]) - exact[2]) <= tol[2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_one_block_product_is_the_float64_product_of_the_rows_as_read(dtype, order):
    # rows that fit one block skip the block machinery: the result must be
    # the block path's own product (float64 rows as stored, a float32 block
    # cast to C-ordered float64), to the last bit, and never a float32 product
    rng = np.random.default_rng(3)
    X = np.asarray(rng.standard_normal((300, 7)), dtype=dtype, order=order)
    R = rng.standard_normal(300)
    one_block = transpose_product(X, R)
    rows = X if dtype == np.float64 else np.array(X, dtype=np.float64, order="C")
    assert one_block.dtype == np.float64 and one_block.shape == (7,)
    np.testing.assert_array_equal(one_block, rows.T @ R)
    # and within a rounding of the same rows summed in two blocks
    np.testing.assert_allclose(one_block, transpose_product(X, R, rows=150), rtol=1e-13, atol=1e-12)

"""LinearDesign: row norms and the implicit intercept / row clipping."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdp.losses import LinearDesign


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_row_norms_dense_and_csr_agree_with_empty_rows(dtype, fit_intercept):
    rng = np.random.default_rng(0)
    D = rng.standard_normal((40, 6))
    D[rng.random(D.shape) < 0.6] = 0.0
    D[[0, 7, 38, 39]] = 0.0  # empty rows, including trailing ones
    D = D.astype(dtype)
    extra = float(fit_intercept)
    expected_l2 = np.sqrt(np.sum(D.astype(np.float64) ** 2, axis=1) + extra)
    expected_l1 = np.abs(D.astype(np.float64)).sum(axis=1) + extra
    for X in (D, sp.csr_matrix(D)):
        design = LinearDesign(X, fit_intercept, data_norm=None)
        np.testing.assert_allclose(design.row_norms(2), expected_l2, rtol=1e-6)
        np.testing.assert_allclose(design.row_norms(1), expected_l1, rtol=1e-6)


def test_row_clipping_scales_only_rows_above_data_norm():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    design = LinearDesign(sp.csr_matrix(X), fit_intercept=True, data_norm=1.0)
    np.testing.assert_allclose(design.decision(np.array([1.0, 1.0, 0.5])),
                               [0.6 + 0.8 + 0.5, 0.7 + 0.5, 0.5])
    np.testing.assert_allclose(design.row_norms(2), np.sqrt([2.0, 1.25, 1.0]))


def _brute_clipped_grad_sum(loss, X, W, clip_norm, fit_intercept, data_norm, idx=None):
    """Per-example gradients of the implicit rows, each clipped, summed (no fused pass)."""
    Xf = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(Xf, axis=1)
    if data_norm is not None:
        Xf = Xf * np.minimum(1.0, data_norm / np.where(norms > 0, norms, 1.0))[:, None]
    rows = np.hstack([Xf, np.ones((len(Xf), 1))]) if fit_intercept else Xf
    y = loss.y
    if idx is not None:
        rows, y = rows[idx], y[idx]
    R = loss._residuals(rows @ W, y)
    grads = np.einsum("ij,i...->i j...", rows, R) if R.ndim == 1 else \
        np.einsum("ij,ik->ijk", rows, R)
    flat = grads.reshape(len(rows), -1)
    factor = np.minimum(1.0, clip_norm / np.maximum(np.linalg.norm(flat, axis=1), 1e-300))
    return (grads * factor.reshape((-1,) + (1,) * (grads.ndim - 1))).sum(axis=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("data_norm", [None, 2.0])
@pytest.mark.parametrize("multiclass", [False, True])
def test_fused_block_pass_equals_the_per_example_clipped_sum(dtype, fit_intercept, data_norm,
                                                             multiclass):
    # 40,000 x 7 float64 spans 2 blocks: the dense pass is fused, over all
    # rows and over a sample (whose blocks are runs of the sample's rows)
    from skdp.losses import BinaryLogisticLoss, MultinomialLogisticLoss
    rng = np.random.default_rng(1)
    n, d = 80_000 if dtype == np.float32 else 40_000, 7
    X = (2.0 * rng.standard_normal((n, d))).astype(dtype)
    design = LinearDesign(X, fit_intercept, data_norm=data_norm)
    assert design.fused_rows() is not None and design.fused_rows(np.arange(5)) is not None
    if multiclass:
        loss = MultinomialLogisticLoss(design, np.eye(3)[rng.integers(0, 3, n)])
    else:
        loss = BinaryLogisticLoss(design, (rng.random(n) < 0.3).astype(np.float64))
    W = rng.standard_normal(loss.coef_shape)
    got = loss.clipped_grad_sum(W, 0.7)
    expected = _brute_clipped_grad_sum(loss, X, W, 0.7, fit_intercept, data_norm)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.abs(expected).max())
    # a sample spanning several of its blocks, and one shorter than a block
    for idx in (np.flatnonzero(rng.random(n) < 0.8), np.sort(rng.choice(n, 50, replace=False))):
        got = loss.clipped_grad_sum(W, 0.7, idx=idx)
        expected = _brute_clipped_grad_sum(loss, X, W, 0.7, fit_intercept, data_norm, idx)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_float32_decision_is_float64_of_each_row_whatever_the_path(fit_intercept):
    # the predictor of a float32 row is its float64 product with W, the same
    # by every path (C or Fortran order, whole or a gathered batch, CSR or
    # its dense gather): one record's presence must not move the others'
    rng = np.random.default_rng(11)
    D = rng.standard_normal((3000, 37)).astype(np.float32)
    D[::3] *= np.float32(1e5)   # large entries: float32 products would cancel badly
    D[::7, ::2] = 0.0
    W = rng.standard_normal(38 if fit_intercept else 37)
    W2 = rng.standard_normal((W.shape[0], 3))
    idx = np.flatnonzero(rng.random(3000) < 0.3)
    for coef in (W, W2):
        exact = D.astype(np.float64) @ coef[:37]
        if fit_intercept:
            exact = exact + coef[37]
        for X in (D, np.asfortranarray(D), sp.csr_matrix(D)):
            design = LinearDesign(X, fit_intercept)
            assert design.decision(coef).dtype == np.float64
            np.testing.assert_allclose(design.decision(coef), exact, rtol=1e-12, atol=1e-9)
            for batch in (idx, idx[:5]):   # a large batch, and a small (dense-gathered) one
                np.testing.assert_allclose(design.decision(coef, batch), exact[batch],
                                           rtol=1e-12, atol=1e-9)


def test_the_predictor_kept_by_a_fused_pass_is_always_that_of_its_coefficients():
    # a fused pass keeps its predictor for a decision(W) at the same W, and
    # the next pass reuses that array: the kept predictor must follow the W
    # of the last pass that finished, and a pass that fails must keep none
    from skdp.losses import BinaryLogisticLoss
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40_000, 7))
    design = LinearDesign(X, True, data_norm=2.0)
    loss = BinaryLogisticLoss(design, (rng.random(40_000) < 0.3).astype(np.float64))
    fresh = LinearDesign(X, True, data_norm=2.0)
    W1, W2 = rng.standard_normal(8), rng.standard_normal(8)
    loss.clipped_grad_sum(W1, 0.7)
    loss.clipped_grad_sum(W2, 0.7)
    np.testing.assert_array_equal(design.decision(W2), fresh.decision(W2))
    np.testing.assert_array_equal(design.decision(W1), fresh.decision(W1))
    kept = design.decision(W2)
    kept[:] = 0.0                                    # a copy: the cache is untouched
    np.testing.assert_array_equal(design.decision(W2), fresh.decision(W2))

    def failing(Z, block):
        if block.start > 0:
            raise RuntimeError("a block failed")
        return np.zeros_like(Z)
    with pytest.raises(RuntimeError, match="a block failed"):
        design.fused_weighted_sum(W1, failing, design.fused_rows())
    np.testing.assert_array_equal(design.decision(W2), fresh.decision(W2))


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_the_fused_pass_from_zero_coefficients_equals_the_per_example_sum(fit_intercept):
    # the first step of a fit starts at 0: the pass skips X @ 0
    from skdp.losses import BinaryLogisticLoss
    rng = np.random.default_rng(3)
    X = 2.0 * rng.standard_normal((40_000, 7))
    design = LinearDesign(X, fit_intercept, data_norm=2.0)
    loss = BinaryLogisticLoss(design, (rng.random(40_000) < 0.3).astype(np.float64))
    W = np.zeros(loss.coef_shape)
    if fit_intercept:
        W[-1] = 0.8
    got = loss.clipped_grad_sum(W, 0.7)
    expected = _brute_clipped_grad_sum(loss, X, W, 0.7, fit_intercept, 2.0)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())
    np.testing.assert_array_equal(design.decision(W), LinearDesign(X, fit_intercept, 2.0).decision(W))


@pytest.mark.parametrize("n_outputs", [None, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_each_rows_predictor_is_the_same_bits_wherever_the_row_sits(n_outputs, dtype):
    # gathered batches, shifted rows and the whole X give each row the same
    # predictor bit for bit (a BLAS product rounds a row by its position)
    rng = np.random.default_rng(5)
    n, d = 40_001, 13
    X = (rng.standard_normal((n, d)) * 1e3).astype(dtype)
    W = rng.standard_normal(d + 1 if n_outputs is None else (d + 1, n_outputs)) * 1e12
    design = LinearDesign(X, fit_intercept=True)
    whole = design.decision(W)
    for idx in (np.arange(1, n), np.flatnonzero(rng.random(n) < 0.5), np.arange(n - 7, n)):
        np.testing.assert_array_equal(design.decision(W, idx), whole[idx])
    shifted = LinearDesign(np.ascontiguousarray(X[3:]), fit_intercept=True)
    np.testing.assert_array_equal(shifted.decision(W), whole[3:])

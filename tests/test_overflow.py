"""One huge (or tiny) record must not break a fit (issue #10).

A finite record of any size gives a finite model, exactly the model of the
same data with that row clipped to ``data_norm``: row norms and per-example
gradient norms are computed without overflow or underflow, and every
example is clipped by a norm that is never underestimated.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skdp import DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.losses import (
    BinaryLogisticLoss,
    HingeLoss,
    LinearDesign,
    MatrixSensingLoss,
    MultinomialLogisticLoss,
    SmoothHingeLoss,
    SquaredHingeLoss,
)

ESTIMATORS = [DPLogisticRegression, DPLinearSVC, DPMatrixSensing]


def _base_data(n_classes=2):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    if n_classes == 2:
        y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    else:
        y = np.argmax(X[:, :n_classes], axis=1)
    return X, y


def _targets(Estimator, X, y):
    if Estimator is DPMatrixSensing:   # a regression target
        return X @ np.array([1.0, -0.5, 0.25, 0.0, 0.5]) / 4.0
    return y


def _with_row(X, y, row, label, fmt):
    """X (and y) with one more record ``row``, as float64 dense or float32 CSR."""
    X = np.vstack([X, row[None, :]])
    y = np.append(y, label)
    if fmt == "dense64":
        return X, y
    return sp.csr_matrix(X.astype(np.float32)), y


def _huge_row(X, fmt):
    """A copy of the first row blown up: 1e200 times (float64) or one entry 1e30 (float32)."""
    row = X[0].copy()
    if fmt == "dense64":
        return row * 1e200
    row[2] = 1e30
    return row


def _norm(row):
    """Reference L2 norm without overflow (Python's scaled hypot)."""
    return math.hypot(*(float(v) for v in row))


def _fit(Estimator, X, y, **params):
    return Estimator(random_state=0, **params).fit(X, y)


def _rel(a, b):
    return np.linalg.norm(np.ravel(a) - np.ravel(b)) / max(np.linalg.norm(np.ravel(b)), 1e-300)


# -- through the estimators -----------------------------------------------------------
@pytest.mark.parametrize("fmt", ["dense64", "csr32"])
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_one_huge_record_gives_a_finite_model(Estimator, fmt):
    X, y = _base_data()
    y = _targets(Estimator, X, y)
    label = 1 - y[0] if Estimator is not DPMatrixSensing else 1.0
    X_big, y_big = _with_row(X, y, _huge_row(X, fmt), label, fmt)
    est = _fit(Estimator, X_big, y_big)
    assert np.all(np.isfinite(est.coef_))
    assert np.all(np.isfinite(est.intercept_))
    pred = est.predict(X_big)
    assert pred.shape == (X_big.shape[0],)
    if Estimator is DPMatrixSensing:
        assert np.all(np.isfinite(pred))
        # the huge record is clipped, not dropped: the model differs from the
        # one where it is the null record (a zero row adds nothing without an
        # intercept)
        X_null, y_null = _with_row(X, y, np.zeros(5), 0.0, fmt)
        null = _fit(Estimator, X_null, y_null)
        assert _rel(est.coef_, null.coef_) > 1e-6
    else:
        assert np.all(np.isfinite(est.decision_function(X_big)))
        assert set(np.unique(pred)) <= set(est.classes_)
    if Estimator is DPLogisticRegression:
        assert np.all(np.isfinite(est.predict_proba(X_big)))


@pytest.mark.parametrize("fmt", ["dense64", "csr32"])
@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_a_huge_record_is_clipped_exactly_to_data_norm(Estimator, fmt):
    # the fit with the huge row equals the fit with that row clipped to data_norm
    data_norm = 1.5
    X, y = _base_data()
    y = _targets(Estimator, X, y)
    label = 1 - y[0] if Estimator is not DPMatrixSensing else 1.0
    row = _huge_row(X, fmt)
    norm = _norm(row.astype(np.float32) if fmt == "csr32" else row)
    clipped = (row / np.max(np.abs(row))) * (data_norm * np.max(np.abs(row)) / norm) \
        if fmt == "dense64" else row.astype(np.float64) * (data_norm / norm)
    assert np.all(np.isfinite(clipped)) and _norm(clipped) == pytest.approx(data_norm)
    X_big, y_big = _with_row(X, y, row, label, fmt)
    X_clip, y_clip = _with_row(X, y, clipped, label, fmt)
    big = _fit(Estimator, X_big, y_big, data_norm=data_norm)
    ref = _fit(Estimator, X_clip, y_clip, data_norm=data_norm)
    assert np.all(np.isfinite(ref.coef_))
    assert _rel(big.coef_, ref.coef_) < 1e-6
    np.testing.assert_allclose(big.intercept_, ref.intercept_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("Estimator, params", [
    (DPLogisticRegression, {}),
    (DPLinearSVC, {}),
    (DPLinearSVC, {"loss": "squared_hinge"}),
    (DPMatrixSensing, {}),
])
@pytest.mark.parametrize("fmt", ["dense64", "csr32"])
def test_without_data_norm_a_huge_record_is_clipped_like_a_large_one(Estimator, params, fmt):
    # data_norm=None: the gradient of a huge row is clipped to clip_norm; its
    # direction is that of the row, so a row 1e200 (or 1e30) times larger than
    # one of norm 1e9 gives the same model (up to the intercept's share, 1e-9)
    X, y = _base_data()
    y = _targets(Estimator, X, y)
    label = 1 - y[0] if Estimator is not DPMatrixSensing else 1.0
    row = _huge_row(X, fmt)
    large = (row / np.max(np.abs(row))) * 1e9
    if Estimator is not DPMatrixSensing:
        params = {**params, "data_norm": None, "solver_params": {"learning_rate": 0.5}}
    X_big, y_big = _with_row(X, y, row, label, fmt)
    X_large, y_large = _with_row(X, y, large, label, fmt)
    big = _fit(Estimator, X_big, y_big, **params)
    ref = _fit(Estimator, X_large, y_large, **params)
    assert np.all(np.isfinite(big.coef_)) and np.all(np.isfinite(big.intercept_))
    assert _rel(big.coef_, ref.coef_) < 1e-6
    np.testing.assert_allclose(big.intercept_, ref.intercept_, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("Estimator, params", [
    (DPLogisticRegression, {}),
    (DPLinearSVC, {"loss": "squared_hinge", "data_norm": None,
                   "solver_params": {"learning_rate": 0.1}}),
])
def test_multiclass_with_a_huge_record_is_finite(Estimator, params):
    X, y = _base_data(n_classes=3)
    X_big, y_big = _with_row(X, y, X[0] * 1e300, (y[0] + 1) % 3, "dense64")
    est = _fit(Estimator, X_big, y_big, **params)
    assert est.coef_.shape == (3, 5)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))
    assert np.all(np.isfinite(est.decision_function(X_big)))


# -- the design: row norms ------------------------------------------------------------
def _awkward_rows():
    return np.array([
        [1e200, 1e200, 0.0, 0.0, 0.0],
        [1e-200, -1e-200, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0],
        [1e200, 1e-200, 3.0, 0.0, -4.0],
        [3e154, 4e154, 0.0, 0.0, 0.0],          # squares overflow
        [3e-170, 4e-170, 0.0, 0.0, 0.0],        # squares underflow
        [1e307, -1e307, 1e307, 1e307, 1e307],   # norm near the largest float
        [5e-324, 0.0, 0.0, 0.0, 0.0],           # the smallest subnormal
        [0.3, -0.4, 1.2, 0.0, 2.0],
    ])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_row_norms_are_accurate_for_any_finite_row(sparse, fit_intercept):
    D = _awkward_rows()
    ref = np.array([_norm(row) for row in D])
    ref_l1 = np.array([math.fsum(abs(v) for v in row) for row in D])
    X = sp.csr_matrix(D) if sparse else D
    design = LinearDesign(X, fit_intercept, data_norm=None)
    extra = 1.0 if fit_intercept else 0.0
    expected = np.array([math.hypot(v, extra) for v in ref])
    np.testing.assert_allclose(design.row_norms(2), expected, rtol=1e-14, atol=0)
    expected_l1 = np.where(np.isfinite(ref_l1), ref_l1, np.finfo(float).max) + extra
    np.testing.assert_allclose(design.row_norms(1)[:6], expected_l1[:6], rtol=1e-14)
    assert np.all(np.isfinite(design.row_norms(1)))
    # row clipping: every row above data_norm has norm exactly data_norm
    clipped = LinearDesign(X, fit_intercept, data_norm=2.0)
    np.testing.assert_allclose(
        clipped.row_norms(2), [math.hypot(min(v, 2.0), extra) for v in ref], rtol=1e-14)


def test_float32_row_norms_do_not_overflow():
    D = np.array([[1e30, 1e30, 0.0], [3e38, 3e38, -3e38], [1e-30, 1e-40, 0.0],
                  [0.0, 0.0, 0.0], [0.5, -1.5, 2.0]], dtype=np.float32)
    ref = np.array([_norm(row) for row in D])
    for X in (sp.csr_matrix(D), D):
        design = LinearDesign(X, False, data_norm=None)
        np.testing.assert_allclose(design.row_norms(2), ref, rtol=1e-12)


@pytest.mark.parametrize("fmt", ["dense64", "csr64", "dense32", "csr32"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_design_products_of_huge_rows_equal_those_of_clipped_rows(fmt, fit_intercept):
    # decision and weighted_sum use the clipped row, computed without overflow,
    # also with coefficients that would overflow x @ w in float32
    dtype = np.float32 if fmt.endswith("32") else np.float64
    rng = np.random.default_rng(1)
    D = rng.standard_normal((30, 4))
    big = 1e30 if dtype == np.float32 else 1e250
    D[3] *= big
    D[7, 1] = big
    D = D.astype(dtype)
    data_norm = 2.0
    norms = np.array([_norm(row) for row in D])
    s = np.minimum(1.0, data_norm / norms)
    clipped = D.astype(np.float64) * s[:, None]
    X = sp.csr_matrix(D) if fmt.startswith("csr") else D
    design = LinearDesign(X, fit_intercept, data_norm)
    W = np.concatenate([np.array([1e9, -2e9, 3e9, 1e9]), [0.5] if fit_intercept else []])
    Z = design.decision(W)
    Z_ref = clipped @ W[:4] + (W[4] if fit_intercept else 0.0)
    assert np.all(np.isfinite(Z))
    np.testing.assert_allclose(Z, Z_ref, rtol=1e-5)
    R = rng.standard_normal((30, 3))
    G = design.weighted_sum(R)
    G_ref = clipped.T @ R
    if fit_intercept:
        G_ref = np.vstack([G_ref, R.sum(axis=0)])
    np.testing.assert_allclose(G, G_ref, rtol=1e-5, atol=1e-5)
    idx = np.array([3, 5, 7, 7, 20])
    np.testing.assert_allclose(design.decision(W, idx), Z_ref[idx], rtol=1e-5)
    G_idx = design.weighted_sum(R[:5], idx)
    G_idx_ref = clipped[idx].T @ R[:5]
    if fit_intercept:
        G_idx_ref = np.vstack([G_idx_ref, R[:5].sum(axis=0)])
    np.testing.assert_allclose(G_idx, G_idx_ref, rtol=1e-5, atol=1e-5)


# -- the losses -------------------------------------------------------------------------
def _glm_losses(design, n):
    rng = np.random.default_rng(2)
    labels01 = rng.integers(0, 2, n).astype(float)
    signs = 2.0 * labels01 - 1.0
    onehot = np.eye(3)[rng.integers(0, 3, n)]
    ovr = 2.0 * onehot - 1.0
    return [
        BinaryLogisticLoss(design, labels01),
        MultinomialLogisticLoss(design, onehot),
        HingeLoss(design, signs),
        SquaredHingeLoss(design, signs),
        SmoothHingeLoss(design, signs, smoothing=0.5),
        HingeLoss(design, ovr),
        SquaredHingeLoss(design, ovr),
        SmoothHingeLoss(design, ovr, smoothing=0.5),
    ]


@pytest.mark.parametrize("data_norm", [None, 1.0])
@pytest.mark.parametrize("norm", [1, 2])
def test_clipped_sums_and_loss_values_of_huge_margins_are_finite(data_norm, norm):
    rng = np.random.default_rng(3)
    D = rng.standard_normal((20, 4))
    D[0] *= 1e300
    D[1] *= 1e-300
    D[2, :2] = [1e308, -1e308]
    design = LinearDesign(D, True, data_norm)
    C = 0.7
    for loss in _glm_losses(design, 20):
        W = np.full(loss.coef_shape, 50.0)
        W[..., 1] = -80.0
        G = loss.clipped_grad_sum(W, C, norm=norm)
        assert np.all(np.isfinite(G)), type(loss).__name__
        # the sum of 20 examples clipped to C has norm at most 20 C
        assert np.linalg.norm(np.ravel(G), ord=norm) <= 20 * C * (1 + 1e-9)
        for i in range(3):   # each huge row alone is clipped to C
            g = loss.clipped_grad_sum(W, C, idx=np.array([i]), norm=norm)
            assert np.linalg.norm(np.ravel(g), ord=norm) <= C * (1 + 1e-9), type(loss).__name__
        values = loss.loss_values(W)
        assert not np.any(np.isnan(values)), type(loss).__name__
        clipped = loss.loss_values(W, loss_clip=2.0)
        assert np.all((clipped >= 0) & (clipped <= 2.0)), type(loss).__name__


def test_glm_huge_row_alone_gets_the_full_clipped_gradient():
    # the huge row's clipped gradient has norm exactly C (it is not zeroed)
    D = np.array([[1e200, -2e200, 0.0], [1.0, 0.0, 0.0]])
    for data_norm in (None, 1.0):
        design = LinearDesign(D, True, data_norm)
        loss = BinaryLogisticLoss(design, np.array([0.0, 1.0]))
        W = np.array([1.0, -0.3, 0.2, 0.1])  # a large positive margin with label 0
        g = loss.clipped_grad_sum(W, 0.5, idx=np.array([0]))
        assert np.linalg.norm(g) == pytest.approx(0.5, rel=1e-12)
        direction = np.array([1.0, -2.0, 0.0]) / math.sqrt(5.0)
        np.testing.assert_allclose(g[:3] / np.linalg.norm(g[:3]), direction, rtol=1e-12)


# -- matrix sensing: the clipping norm is never underestimated --------------------------
def _cancelling_record(rng, p, q, big):
    """Factors U, V and a record A = big * 1 1^T + E whose Gram route cancels.

    ``A V = E V`` and ``A^T U = E^T U`` are tiny (the all-ones part is
    orthogonal to U and V) while ``A^T A`` and ``A A^T`` have entries of
    order ``big**2``: their quadratic forms with ``V V^T`` / ``U U^T`` lose
    every digit.
    """
    U = rng.standard_normal((p, 1))
    U -= U.mean()
    V = rng.standard_normal((q, 1))
    V -= V.mean()
    E = 1e-3 * rng.standard_normal((p, q))
    A = big * np.ones((p, q)) + E
    return U, V, A


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4), (5, 1)])
def test_matrix_sensing_clipping_norm_is_never_underestimated(shape, sparse):
    # a per-example gradient whose norm the Gram formula rounds to 0 must
    # still be clipped to clip_norm
    p, q = shape
    rng = np.random.default_rng(4)
    C = 0.1
    worst = 0.0
    for trial in range(30):
        U, V, A = _cancelling_record(rng, p, q, big=1e8)
        X = np.vstack([A.ravel(), rng.standard_normal(p * q)])
        y = np.array([1e12, 0.0])    # a huge residual on the cancelling record
        design = LinearDesign(sp.csr_matrix(X) if sparse else X, False, None)
        loss = MatrixSensingLoss(design, y, (p, q), 1)
        W = loss.pack(U, V)
        g = loss.clipped_grad_sum(W, C, idx=np.array([0]))
        assert np.all(np.isfinite(g))
        worst = max(worst, np.linalg.norm(g) / C)
        # the exact per-example gradient, for reference: rho (A V, A^T U)
        rho = float(A.ravel() @ (U @ V.T).ravel()) - y[0]
        exact = rho * np.concatenate([(A @ V).ravel(), (A.T @ U).ravel()])
        if np.linalg.norm(exact) > C:
            # clipped: norm at most C, pointing the same way (within rounding)
            cos = g @ exact / (np.linalg.norm(g) * np.linalg.norm(exact))
            assert cos > 1 - 1e-3 or np.linalg.norm(g) < 1e-3 * C
    assert worst <= 1 + 1e-9


@pytest.mark.parametrize("fmt", ["dense64", "csr32"])
def test_matrix_sensing_huge_record_is_clipped_as_a_whole(fmt):
    rng = np.random.default_rng(5)
    p, q, r = 3, 4, 2
    X = rng.standard_normal((6, p * q))
    X[0] *= 1e200 if fmt == "dense64" else 1e30
    if fmt == "csr32":
        X = sp.csr_matrix(X.astype(np.float32))
    y = rng.standard_normal(6)
    for data_norm in (None, 1.0):
        design = LinearDesign(X, False, data_norm)
        loss = MatrixSensingLoss(design, y, (p, q), r, fit_intercept=True, intercept_scale=0.5)
        W = rng.standard_normal(loss.coef_shape)
        g = loss.clipped_grad_sum(W, 0.2, idx=np.array([0]))
        assert np.linalg.norm(g) == pytest.approx(0.2, rel=1e-9)
        G = loss.clipped_grad_sum(W, 0.2)
        assert np.all(np.isfinite(G)) and np.linalg.norm(G) <= 6 * 0.2 * (1 + 1e-9)
        values = loss.loss_values(W, loss_clip=3.0)
        assert np.all((values >= 0) & (values <= 3.0))
        assert not np.any(np.isnan(loss.loss_values(W)))


# -- zero rows: a clip limit of 0 on a zero residual vector is no 0 / 0 ------------------
def _multi_output_losses(design, n):
    rng = np.random.default_rng(4)
    onehot = np.eye(3)[rng.integers(0, 3, n)]
    ovr = 2.0 * onehot - 1.0
    return [MultinomialLogisticLoss(design, onehot), HingeLoss(design, ovr),
            SquaredHingeLoss(design, ovr), SmoothHingeLoss(design, ovr, smoothing=0.5)]


@pytest.mark.parametrize("norm", [1, 2])
def test_zero_record_without_intercept_leaves_clipped_sums_unchanged(norm):
    # a zero row has limit 0 and (at these W) a zero residual difference:
    # clipping it must give 0, not NaN, so the sums equal those without it
    rng = np.random.default_rng(6)
    X = rng.standard_normal((6, 3))
    X[2] = 0.0
    design = LinearDesign(X, False)
    rest = np.array([0, 1, 3, 4, 5])
    for loss in _multi_output_losses(design, 6):
        W = rng.standard_normal(loss.coef_shape)
        W_prev = rng.standard_normal(loss.coef_shape)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            D = loss.clipped_grad_diff_sum(W, W_prev, 0.5, norm=norm)
            G = loss.clipped_grad_sum(W, 0.5, norm=norm)
            D_alone = loss.clipped_grad_diff_sum(W, W_prev, 0.5, idx=np.array([2]), norm=norm)
        assert np.array_equal(D_alone, np.zeros_like(D_alone)), type(loss).__name__
        np.testing.assert_allclose(
            D, loss.clipped_grad_diff_sum(W, W_prev, 0.5, idx=rest, norm=norm),
            rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(G, loss.clipped_grad_sum(W, 0.5, idx=rest, norm=norm),
                                   rtol=1e-12, atol=1e-15)


def test_record_at_the_largest_float_leaves_one_vs_rest_hessians_unchanged():
    # its Hessian clip limit C / ||x||**2 underflows to 0 and its curvature
    # vector is 0 (every margin far outside the quadratic zone): the record
    # adds exactly nothing, never 0 / 0 = NaN
    big = float(np.finfo(np.float64).max)
    X = np.array([[0.5, -0.86], [big, big], [0.3, 0.1]])
    ovr = np.array([[1.0, -1.0, -1.0], [1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]])
    W = np.array([[10.1, -0.06, 2.86], [1.0, 2.0, -3.0]])
    V = np.array([[0.3, -1.0, 0.5], [2.0, 0.1, -0.7]])
    rest = np.array([0, 2])
    for loss in (SquaredHingeLoss(LinearDesign(X, False), ovr),
                 SmoothHingeLoss(LinearDesign(X, False), ovr, smoothing=0.5)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            H = loss.hessian(W, 1.0)
            Hv = loss.hessian_matvec(W, V, 1.0)
            H_alone = loss.hessian(W, 1.0, idx=np.array([1]))
        assert np.array_equal(H_alone, np.zeros_like(H_alone)), type(loss).__name__
        np.testing.assert_allclose(H, loss.hessian(W, 1.0, idx=rest), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(Hv, loss.hessian_matvec(W, V, 1.0, idx=rest),
                                   rtol=1e-12, atol=1e-15)


def test_matrix_sensing_hessian_of_a_zero_matrix_with_an_overflowing_residual_is_finite():
    # A_i = 0 and a residual that overflows: the Hessian bound is inf * 0 =
    # NaN; the record must be clipped to nothing, not left unclipped (NaN)
    rng = np.random.default_rng(8)
    X = rng.normal(size=(4, 4))
    X[0] = 0.0
    y = rng.normal(size=4)
    y[0] = -1.7e308
    loss = MatrixSensingLoss(LinearDesign(X, False), y, (2, 2), 1, fit_intercept=True)
    W = rng.normal(size=loss.coef_shape)
    W[-1] = 1.5e308
    alone = np.array([0])
    with np.errstate(over="ignore", invalid="ignore"):
        H = loss.hessian(W, 0.5, idx=alone)
        Hv = loss.hessian_matvec(W, np.ones(loss.coef_shape), 0.5, idx=alone)
    assert np.all(np.isfinite(H)) and np.linalg.norm(H) <= 0.5 * (1 + 1e-9)
    assert np.all(np.isfinite(Hv))
    assert np.linalg.norm(Hv) <= 0.5 * np.linalg.norm(np.ones(loss.coef_shape)) * (1 + 1e-9)


def test_matrix_sensing_hessian_of_a_record_whose_gradient_overflows_is_finite():
    # found by the slow property tier: a record at the largest float with a huge
    # public W has J_i = inf and c_i = 0; its Hessian term must be 0, not 0 * inf
    X = np.array([[1.0], [-1.7976931348623157e308]])
    y = np.array([9.9e28, 2.7e35])
    loss = MatrixSensingLoss(LinearDesign(X, False), y, (1, 1), 1, fit_intercept=False)
    W = np.array([6.25e102, 0.435])
    with np.errstate(over="ignore", invalid="ignore"):
        both = loss.hessian(W, 1.0)
        first = loss.hessian(W, 1.0, idx=np.array([0]))
    assert np.all(np.isfinite(both)) and np.all(np.isfinite(first))
    assert np.linalg.norm(both - first) <= 1.0 * (1 + 1e-9)


def test_the_passes_over_huge_margins_warn_of_no_overflow():
    # exp(-z) overflows for z < -709: every caller of a loss's residuals
    # ignores it (sigma is 0 there), in the fused pass over many blocks too
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6000, 100))          # more than one fused block
    design = LinearDesign(X, True, 1.0)
    assert design.fused_rows() is not None
    y = (rng.random(6000) < 0.5).astype(float)
    loss = BinaryLogisticLoss(design, y)
    W = np.full(101, 1e4)
    W[::2] = -1e4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for G in (loss.clipped_grad_sum(W, 1.0), loss.grad_sum(W),
                  loss.clipped_grad_diff_sum(W, -W, 1.0),
                  loss.clipped_grad_sum(W, 1.0, idx=np.arange(100))):
            assert np.all(np.isfinite(G))

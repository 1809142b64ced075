"""A record of any finite size is clipped like any other (issue 10, item 4 and 9)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.losses import LinearDesign, MatrixSensingLoss
from skdp.matrix_sensing import make_matrix_sensing


def _classification():
    X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def _huge_dense(X, y):
    return np.vstack([X, X[0] * 1e200]), np.append(y, y[0])


def _huge_csr32(X, y):
    Z = np.vstack([X, X[0]]).astype(np.float32)
    Z[-1, 0] = 1e30
    return sp.csr_matrix(Z), np.append(y, y[0])


@pytest.mark.parametrize("make", [_huge_dense, _huge_csr32])
@pytest.mark.parametrize("cls", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("data_norm", [1.0, None])
def test_a_huge_record_gives_a_finite_classifier(cls, make, data_norm):
    X, y = make(*_classification())
    params = {} if data_norm else {"solver_params": {"learning_rate": 0.5}}
    est = cls(data_norm=data_norm, random_state=0, **params).fit(X, y)
    assert np.all(np.isfinite(est.coef_)) and np.all(np.isfinite(est.intercept_))
    assert np.all(np.isfinite(est.decision_function(X)))


@pytest.mark.parametrize("cls", [DPLogisticRegression, DPLinearSVC])
def test_a_huge_record_is_clipped_exactly_like_its_clipped_copy(cls):
    X, y = _classification()
    X_huge, y_huge = _huge_dense(X, y)
    X_clipped = X_huge.copy()
    X_clipped[-1] = X[0] / np.linalg.norm(X[0])          # data_norm = 1
    fits = [cls(random_state=0, accountant=BudgetAccountant()).fit(Z, y_huge)
            for Z in (X_huge, X_clipped)]
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("data_norm", [1.0, None])
def test_a_huge_measurement_matrix_gives_a_finite_model(sparse, data_norm):
    X, y, _ = make_matrix_sensing(300, shape=(3, 2), rank=1, random_state=0)
    X, y = np.vstack([X, X[0] * 1e200]), np.append(y, 1.0)
    X = sp.csr_matrix(X) if sparse else X
    est = DPMatrixSensing(shape=(3, 2), rank=1, data_norm=data_norm, fit_intercept=True,
                          solver_params={"learning_rate": 1.0}, random_state=0).fit(X, y)
    assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)


def test_matrix_sensing_never_skips_clipping_when_the_gram_form_cancels():
    # A_i V is tiny but not 0 and the measurement is huge: the Gram form of
    # ||A_i V||^2 cancels to 0 (or below) in floating point, which used to mean
    # "no clipping" for a gradient of norm ~ 1e3
    U = V = np.array([[1.0], [1.0]]) / np.sqrt(2.0)
    A = np.array([[1.0, -1.0 + 1e-9], [-1.0, 1.0 - 1e-9]])
    X = np.vstack([A.ravel(), np.eye(2).ravel()])
    y = np.array([1e12, 0.0])
    loss = MatrixSensingLoss(LinearDesign(X, False), y, (2, 2), 1)
    W = loss.pack(U, V)
    C = 0.1
    for i in range(len(X)):
        G = loss.clipped_grad_sum(W, C, idx=np.array([i]))
        assert np.linalg.norm(G) <= C * (1 + 1e-9)


def test_row_norms_are_exact_for_extreme_rows():
    rows = np.array([[3e200, 4e200], [3e-200, 4e-200], [0.0, 0.0], [3.0, 4.0]])
    for X in (rows, sp.csr_matrix(rows)):
        design = LinearDesign(X, fit_intercept=True, data_norm=1.0)
        np.testing.assert_allclose(design.raw_feature_norms(), [5e200, 5e-200, 0.0, 5.0],
                                   rtol=1e-12)
        # clipped rows and the intercept column: sqrt(min(norm, 1)^2 + 1)
        np.testing.assert_allclose(design.row_norms(2),
                                   np.hypot([1.0, 5e-200, 0.0, 1.0], 1.0), rtol=1e-12)
    X32 = sp.csr_matrix(np.array([[1e30, 0.0], [3.0, 4.0]], dtype=np.float32))
    np.testing.assert_allclose(LinearDesign(X32, False).raw_feature_norms(), [1e30, 5.0],
                               rtol=1e-6)


def test_a_tiny_measurement_matrix_with_a_huge_measurement_is_clipped():
    # ||A_i||^2 underflows to 0: the norm must still be exact, or the
    # gradient rho_i * A_i V (rho_i ~ 1e300) would escape clipping
    X = np.vstack([np.full(4, 1e-200), np.eye(2).ravel()])
    y = np.array([1e300, 0.0])
    loss = MatrixSensingLoss(LinearDesign(X, False), y, (2, 2), 1)
    W = loss.pack(np.ones((2, 1)), np.ones((2, 1)))
    G = loss.clipped_grad_sum(W, 0.1, idx=np.array([0]))
    assert np.all(np.isfinite(G)) and np.linalg.norm(G) <= 0.1 * (1 + 1e-9)

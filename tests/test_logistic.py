"""DPLogisticRegression: accounting through scikit-learn tools, noise, accuracy, errors."""

import copy

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import load_digits, make_classification
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from skdp import BudgetAccountant, BudgetError, DPLogisticRegression
from skdp.accounting import Gaussian, Repeated, calibrate, get_epsilon
from skdp.losses import GLMLoss


@pytest.fixture
def small_data():
    X, y = make_classification(n_samples=400, n_features=8, random_state=0)
    return Normalizer().fit_transform(X), y


def test_gridsearch_charges_every_fit_to_one_accountant(small_data):
    X, y = small_data
    acc = BudgetAccountant()
    grid = GridSearchCV(
        make_pipeline(Normalizer(), DPLogisticRegression(accountant=acc, random_state=0)),
        {"dplogisticregression__epsilon": [0.5, 1, 2]},
        cv=3,
    ).fit(X, y)
    assert len(acc.spends) == 10  # 9 fits + the refit
    eps_sum = sum(s.epsilon for s in acc.spends)
    best = grid.best_params_["dplogisticregression__epsilon"]
    assert eps_sum == pytest.approx(3 * 3.5 + best)
    # the default rule, basic composition, is a valid filter for adaptive fits
    assert acc.spent() == pytest.approx((eps_sum, 10 * 1e-5))
    # Gaussian-DP composition of the same ten fits is far tighter
    tight = BudgetAccountant(delta=1e-4, composition="gaussian")
    for spend in acc.spends:
        tight.spend(spend.epsilon, spend.delta, mechanism=spend.mechanism)
    eps_total, delta_total = tight.spent()
    assert eps_total < 0.5 * eps_sum and delta_total == 1e-4


def test_clone_and_deepcopy_keep_the_accountant():
    acc = BudgetAccountant()
    est = DPLogisticRegression(accountant=acc)
    assert clone(est).accountant is acc
    assert copy.deepcopy(est).accountant is acc


class _Unreadable:
    """Has a shape (metadata) but raises if its values are read."""

    shape = (100, 3)

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read")

    def __len__(self):
        return 100


def test_exhausted_budget_raises_before_reading_data(small_data):
    X, y = small_data
    acc = BudgetAccountant(epsilon=1.0, delta=1e-3)
    DPLogisticRegression(epsilon=0.8, accountant=acc, random_state=0).fit(X, y)
    assert len(acc.spends) == 1
    with pytest.raises(BudgetError):
        DPLogisticRegression(epsilon=0.8, accountant=acc).fit(_Unreadable(), np.zeros(100))
    assert len(acc.spends) == 1
    with pytest.raises(BudgetError):
        DPLogisticRegression(epsilon=0.8, accountant=acc).fit(X, y)
    assert len(acc.spends) == 1


@pytest.mark.parametrize(
    "X_bad, y_bad, params, match",
    [
        ("nan", None, {}, "NaN"),
        ("inf", None, {}, "infinity"),
        ("1d", None, {}, "2D array"),
        (None, "one_class", {}, "class"),
        (None, None, {"epsilon": 0}, "epsilon"),
        (None, None, {"epsilon": -1.0}, "epsilon"),
        (None, None, {"delta": 1.0}, "delta"),
        (None, None, {"delta": -1e-5}, "delta"),
        (None, None, {"solver": "newton"}, "solver"),
        (None, None, {"clip_norm": 0}, "clip_norm"),
        (None, None, {"max_iter": 0}, "max_iter"),
        (None, None, {"solver_params": {"no_such_option": 1}}, "no_such_option"),
    ],
)
def test_bad_input_raises_clearly_and_costs_nothing(small_data, X_bad, y_bad, params, match):
    X, y = small_data
    X = X.copy()
    if X_bad == "nan":
        X[3, 2] = np.nan
    elif X_bad == "inf":
        X[3, 2] = np.inf
    elif X_bad == "1d":
        X = X[:, 0]
    if y_bad == "one_class":
        y = np.ones_like(y)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(accountant=acc, **params).fit(X, y)
    assert len(acc.spends) == 0


def _zero_gradients(monkeypatch):
    monkeypatch.setattr(
        GLMLoss, "clipped_grad_sum",
        lambda self, W, clip_norm, idx=None, norm=2: np.zeros(self.coef_shape),
    )


def test_added_noise_has_the_calibrated_std(monkeypatch):
    # With zero gradients and no penalty the coefficients are pure noise:
    # W_T = -(lr / n) * sum_t xi_t with xi_t ~ N(0, (z C)^2 I).
    _zero_gradients(monkeypatch)
    n, d, T, eps, delta, C, lr = 1000, 3000, 20, 1.0, 1e-5, 0.7, 1.0
    X = np.zeros((n, d))
    y = np.arange(n) % 2
    est = DPLogisticRegression(
        epsilon=eps, delta=delta, alpha=0.0, clip_norm=C, max_iter=T, solver="gd",
        solver_params={"learning_rate": lr, "average": 0.0}, random_state=1,
    ).fit(X, y)
    z = calibrate(lambda z: Repeated(Gaussian(z), T), eps, delta)
    eps_of_z = get_epsilon(Repeated(Gaussian(z), T), delta)
    assert 0.995 * eps <= eps_of_z <= eps
    expected = lr / n * z * C * np.sqrt(T)
    coef = np.append(est.coef_.ravel(), est.intercept_)
    # d + 1 independent draws: the sample std is within 6% with overwhelming probability
    assert np.std(coef) == pytest.approx(expected, rel=0.06)
    assert abs(np.mean(coef)) < 5 * expected / np.sqrt(d)


def test_pure_dp_noise_is_laplace_at_the_calibrated_scale(monkeypatch):
    _zero_gradients(monkeypatch)
    n, d, T, eps, C = 1000, 3000, 10, 2.0, 0.5
    est = DPLogisticRegression(
        epsilon=eps, delta=0.0, alpha=0.0, clip_norm=C, max_iter=T, solver="gd",
        solver_params={"learning_rate": 1.0, "average": 0.0}, random_state=2,
    ).fit(np.zeros((n, d)), np.arange(n) % 2)
    # basic composition of T Laplace steps: scale b = T / eps per unit L1 sensitivity
    b = T / eps * C
    coef = np.append(est.coef_.ravel(), est.intercept_)
    assert np.std(coef) == pytest.approx(np.sqrt(2 * T) * b / n, rel=0.06)
    assert est.privacy_spent_ == (2.0, 0.0)


def test_same_seed_same_model_and_input_formats_agree(small_data):
    X, y = small_data
    params = dict(epsilon=1.0, random_state=3)
    dense = DPLogisticRegression(**params).fit(X, y)
    again = DPLogisticRegression(**params).fit(X, y)
    sparse = DPLogisticRegression(**params).fit(sp.csr_matrix(X), y)
    single = DPLogisticRegression(**params).fit(X.astype(np.float32), y)
    np.testing.assert_array_equal(dense.coef_, again.coef_)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dense.coef_, single.coef_, rtol=1e-3, atol=1e-4)
    assert dense.solver_ == "gd" and dense.n_iter_ >= 1
    assert dense.privacy_spent_ == (1.0, 1e-5)


def test_multinomial_on_digits():
    X, y = load_digits(return_X_y=True)
    X = Normalizer().fit_transform(X)
    est = DPLogisticRegression(epsilon=2.0, random_state=0).fit(X[:1200], y[:1200])
    assert est.coef_.shape == (10, 64)
    assert est.predict_proba(X[1200:]).shape == (len(X) - 1200, 10)
    assert est.score(X[1200:], y[1200:]) > 0.6  # chance: 0.1


def test_dp_sgd_with_poisson_batches(small_data):
    X, y = small_data
    acc = BudgetAccountant()
    est = DPLogisticRegression(batch_size=64, max_iter=50, accountant=acc,
                               random_state=0).fit(X, y)
    assert est.n_iter_ == 50
    assert "PoissonSampled" in repr(acc.spends[0].mechanism)
    assert est.score(X, y) > 0.6


@pytest.mark.parametrize("epsilon, minimum", [(1.0, 0.840), (0.1, 0.820)])
def test_adult_accuracy_with_defaults(adult, epsilon, minimum):
    X_tr, y_tr, X_te, y_te = adult
    scores = [
        DPLogisticRegression(epsilon=epsilon, random_state=seed).fit(X_tr, y_tr).score(X_te, y_te)
        for seed in range(5)
    ]
    assert np.mean(scores) >= minimum, scores


def test_gridsearch_in_worker_processes(small_data, tmp_path):
    X, y = small_data
    grid = {"epsilon": [0.5, 1, 2]}
    ledger = BudgetAccountant(ledger=str(tmp_path / "budget.sqlite"))
    GridSearchCV(DPLogisticRegression(accountant=ledger, random_state=0), grid, cv=3,
                 n_jobs=2).fit(X, y)
    assert len(ledger.spends) == 10
    # an in-memory accountant reaches the workers through a temporary ledger
    in_memory = BudgetAccountant()
    GridSearchCV(DPLogisticRegression(accountant=in_memory, random_state=0), grid, cv=3,
                 n_jobs=2, error_score="raise").fit(X, y)
    assert len(in_memory.spends) == 10

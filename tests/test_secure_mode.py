"""Secure mode through the release door (issue 42): grids, discrete noise, charges.

The noise of a secure release comes from the OS CSPRNG and cannot be
seeded; the statistical checks below allow a false failure with
probability below 1e-6 each.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import sparse

import skdp
from skdp.accounting import (
    BudgetAccountant,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    RepeatAndSelect,
    get_epsilon,
    recording,
)
from skdp.accounting.release import (
    SecureGenerator,
    release,
    release_operator,
    release_symmetric,
    secret_run_count,
    secure_grid,
)
from skdp.model_selection import PrivateGridSearchCV
from skdp.preprocessing import DPStandardScaler


def _on_grid(record):
    value = np.asarray(record.value, dtype=np.float64)
    units = value / record.grid
    return record.grid > 0 and np.all(units == np.round(units)) and np.all(np.isfinite(value))


def _data(n=400, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


# -- the door ----------------------------------------------------------------

@pytest.mark.parametrize("mechanism", [Gaussian(1.5), Laplace(2.0)])
def test_secure_release_is_the_discrete_mechanism_on_a_grid(mechanism):
    exact = np.linspace(-3.0, 3.0, 2000)
    with recording() as records:
        value = release(exact, mechanism, 0.5, SecureGenerator(), what="x")
    (record,) = records
    assert type(record.mechanism) is {Gaussian: DiscreteGaussian,
                                      Laplace: DiscreteLaplace}[type(mechanism)]
    assert record.mechanism.noise_multiplier == mechanism.noise_multiplier
    assert _on_grid(record) and np.array_equal(record.value, value)
    # the grid is a power of two, fine against the sensitivity
    assert math.log2(record.grid) == int(math.log2(record.grid))
    assert record.grid * (2000 if isinstance(mechanism, Laplace) else 45) <= 0.5 / 1024
    # the noise has the calibrated scale (z times the rounded sensitivity)
    noise = value - exact
    scale = 1.5 * 0.5 if isinstance(mechanism, Gaussian) else 2.0 * 0.5 * math.sqrt(2)
    assert np.std(noise) == pytest.approx(scale, rel=0.1)


def test_float_release_is_unchanged():
    with recording() as records:
        release(np.zeros(5), Gaussian(1.0), 1.0, np.random.default_rng(0), what="x")
    assert records[0].grid is None and type(records[0].mechanism) is Gaussian


def test_a_discrete_mechanism_is_released_securely_from_any_stream():
    with recording() as records:
        release(np.zeros(5), DiscreteGaussian(1.0), 1.0, np.random.default_rng(0), what="x")
    assert _on_grid(records[0])


def test_secure_grid_covers_the_rounding():
    for mechanism, size in [(DiscreteGaussian(0.7), 8316), (DiscreteLaplace(3.0), 124),
                            (DiscreteGaussian(2000.0), 10_000)]:
        for sensitivity in (1e-6, 0.37, 1.0, 250.0):
            k, scale = secure_grid(mechanism, sensitivity, size)
            c = (math.isqrt(size - 1) + 1 if mechanism.sensitivity_norm == 2 else size)
            gamma = 2.0 ** k
            # at least z times the rounded query's sensitivity, in grid units
            assert scale >= mechanism.noise_multiplier * (sensitivity / gamma + c)
            assert scale <= 1 << 24
            if mechanism.noise_multiplier < 10:
                assert gamma * c <= sensitivity / 1024  # a small inflation


def test_secure_release_rounds_to_the_nearest_grid_point():
    k, scale = secure_grid(DiscreteGaussian(1.0), 1.0, 1)
    gamma = 2.0 ** k
    exact = np.array([0.3 * gamma, 0.7 * gamma, 5.5 * gamma + 1e-3 * gamma])
    values = np.array([release(exact, DiscreteGaussian(1.0), 1.0, None, what="x")
                       for _ in range(3000)])
    # unbiased: the noise is symmetric around the rounded value [0, 1, 6] (grid units)
    mean = values.mean(axis=0) / gamma
    assert np.all(np.abs(mean - [0.0, 1.0, 6.0]) < 5 * scale / math.sqrt(3000))
    # sensitivity 0 (a public value): released as it is, no noise
    with recording() as records:
        value = release(np.array([1.0, -2.5, np.nan]), Gaussian(1.0), 0.0,
                        SecureGenerator(), what="public")
    assert records[0].grid == 2.0 ** -1074
    assert list(value) == [1.0, -2.5, 0.0]


def test_secure_release_symmetric_releases_a_grid_vector():
    S = np.arange(16.0).reshape(4, 4)
    S = S + S.T
    with recording() as records:
        out = release_symmetric(S, Gaussian(1.0), 1.0, SecureGenerator(), what="Gram",
                                off_diagonal_scale=math.sqrt(2))
    assert _on_grid(records[0]) and np.allclose(out, out.T)


def test_secure_mode_refuses_what_has_no_exact_form():
    with pytest.raises(ValueError, match="never formed"):
        release_operator(lambda v: v, 3, Gaussian(1.0), 1.0, SecureGenerator(), what="H")
    # the secret number of runs of a selection has an exact form (an integer >= 1)
    assert secret_run_count(RepeatAndSelect(Gaussian(1.0), 0.5), SecureGenerator()) >= 1


def test_secure_generator_cannot_be_seeded_and_stays_secure_when_pickled():
    import pickle
    a, b = SecureGenerator(), SecureGenerator()
    assert a.random() != b.random()
    assert isinstance(pickle.loads(pickle.dumps(a)), SecureGenerator)


# -- estimators ----------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: skdp.DPLogisticRegression(classes=[0, 1], secure_mode=True),
    lambda: skdp.DPLogisticRegression(classes=[0, 1], delta=0.0, secure_mode=True),
    lambda: skdp.DPLogisticRegression(classes=[0, 1], batch_size=64, max_iter=5,
                                      secure_mode=True),
    lambda: skdp.DPLinearSVC(classes=[0, 1], solver="line_search", secure_mode=True),
    lambda: skdp.DPLogisticRegression(classes=[0, 1], solver="second_order",
                                      secure_mode=True),
    lambda: skdp.DPLogisticRegression(classes=[0, 1], solver="dual_averaging",
                                      secure_mode=True),
    lambda: skdp.DPLogisticRegression(classes=[0, 1], solver="rgda", max_iter=3,
                                      secure_mode=True),
    lambda: skdp.DPLogisticRegression(classes=[0, 1], solver="nesterov", secure_mode=True),
    lambda: skdp.DPLogisticRegression(classes=[0, 1], solver="preconditioned_gd",
                                      secure_mode=True),
])
def test_every_release_of_a_secure_fit_is_on_its_grid(make):
    X, y = _data()
    accountant = BudgetAccountant()
    with recording() as records:
        est = make().set_params(accountant=accountant).fit(sparse.csr_matrix(X), y)
    assert records and all(_on_grid(r) for r in records if r.value is not None)
    assert {type(r.mechanism) for r in records} <= {DiscreteGaussian, DiscreteLaplace}
    # the charge is what ran: the discrete tree, within the budget
    (spend,) = accountant.spends
    assert "Gaussian(" not in repr(spend.mechanism).replace("DiscreteGaussian(", "")
    assert "Laplace(" not in repr(spend.mechanism).replace("DiscreteLaplace(", "")
    assert get_epsilon(spend.mechanism, est.privacy_spent_[1]) <= est.epsilon * (1 + 1e-9)
    assert np.all(np.isfinite(est.coef_))


def test_secure_fit_is_about_as_accurate_as_the_float_fit():
    X, y = _data(n=2000, d=8, seed=1)
    secure = [skdp.DPLogisticRegression(classes=[0, 1], secure_mode=True).fit(X, y).score(X, y)
              for _ in range(3)]
    floats = [skdp.DPLogisticRegression(classes=[0, 1], random_state=s).fit(X, y).score(X, y)
              for s in range(3)]
    assert abs(np.mean(secure) - np.mean(floats)) < 0.03


def test_random_state_is_ignored_with_a_warning():
    X, y = _data()
    est = skdp.DPLogisticRegression(classes=[0, 1], secure_mode=True, random_state=0,
                                    accountant=BudgetAccountant())
    with pytest.warns(UserWarning, match="random_state is ignored with secure_mode=True"):
        a = est.fit(X, y).coef_.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = est.fit(X, y).coef_.copy()
    assert not np.array_equal(a, b)
    # no seed key: the accountant sees no replayed seed
    assert all(s.seed_key is None for s in est.accountant.spends)


def test_secure_mode_is_validated_and_refused_parts_cost_nothing():
    X, y = _data()
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="secure_mode"):
        skdp.DPLogisticRegression(secure_mode="yes", accountant=accountant).fit(X, y)
    # the Gaussian sparse vector has no secure form: refused before the charge
    est = skdp.DPLogisticRegression(
        classes=[0, 1], solver="line_search", secure_mode=True, accountant=accountant,
        solver_params={"search_noise": "gaussian"})
    with pytest.raises(ValueError, match="Gaussian sparse vector"):
        est.fit(X, y)
    assert accountant.spends == []


def test_private_search_refuses_a_secure_step_in_a_float_search_before_any_charge():
    # the search's own noise would not be secure: secure_mode goes on the search
    X, y = _data()
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(skdp.DPLogisticRegression(classes=[0, 1], secure_mode=True),
                                 {"alpha": [1e-3, 1e-2]}, accountant=accountant)
    with pytest.raises(ValueError, match="Pass secure_mode=True to the search"):
        search.fit(X, y)
    assert accountant.spends == []


def test_secure_standard_scaler_releases_on_the_grid():
    X, _ = _data(n=3000)
    accountant = BudgetAccountant()
    with recording() as records:
        scaler = DPStandardScaler(bounds=(-5.0, 5.0), secure_mode=True,
                                  accountant=accountant).fit(X)
    assert len(records) == 2 and all(_on_grid(r) for r in records)
    assert type(records[0].mechanism) is DiscreteGaussian
    assert get_epsilon(accountant.spends[0].mechanism, 1e-5) <= 1.0
    assert np.allclose(scaler.mean_, 0.0, atol=0.3)


@pytest.mark.parametrize("solver, params", [("gd", {}), ("gd", {"batch_size": 50}),
                                            ("dual_averaging", {}), ("rgda", {"max_iter": 3}),
                                            ("preconditioned_gd", {})])
def test_a_cached_float_calibration_never_serves_a_secure_fit(solver, params):
    # the solvers cache their calibrations: a float fit first, then the same
    # plan in secure mode must be calibrated for the discrete charge
    X, y = _data()
    for secure in (False, True):
        accountant = BudgetAccountant()
        skdp.DPLogisticRegression(classes=[0, 1], solver=solver, secure_mode=secure,
                                  accountant=accountant, **params).fit(X, y)
        spent = get_epsilon(accountant.spends[0].mechanism, 1e-5)
        assert spent <= 1.0 + 1e-9 and spent > 0.97

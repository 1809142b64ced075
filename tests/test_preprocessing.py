"""skdp.preprocessing: BoundedScaler (free) and DPStandardScaler (charged)."""

import math
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, reject, settings
from hypothesis import strategies as st
from sklearn.ensemble import BaggingClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, DPLogisticRegression
from skdp.accounting import Gaussian, Laplace, Repeated, calibrate, get_epsilon
from skdp.preprocessing import BoundedScaler, DPStandardScaler, pipeline_privacy_spent
from skdp.testing import audit_estimator


# --------------------------------------------------------------------------
# BoundedScaler
# --------------------------------------------------------------------------
def test_bounded_scaler_clips_and_maps_each_feature():
    X = np.array([[0.0, 10.0, -5.0], [16.0, 30.0, 5.0], [8.0, 50.0, 0.0], [-3.0, 0.0, 99.0]])
    scaler = BoundedScaler(bounds=([0, 10, -5], [16, 30, 5])).fit(X)
    expected = np.array([[-1, -1, -1], [1, 1, 1], [0, 1, 0], [-1, -1, 1.0]])
    np.testing.assert_allclose(scaler.transform(X), expected)
    out = BoundedScaler(bounds=(0, 16), feature_range=(0, 1)).fit_transform(X[:, :1])
    np.testing.assert_allclose(out.ravel(), [0, 1, 0.5, 0])
    X32 = X.astype(np.float32)
    assert scaler.transform(X32).dtype == np.float32


def test_bounded_scaler_learns_nothing_from_the_values():
    rng = np.random.default_rng(0)
    fits = [BoundedScaler(bounds=(-2.0, 3.0)).fit(data)
            for data in (rng.normal(size=(50, 4)), 100 * rng.normal(size=(50, 4)) + 7)]
    for name in ("lower_", "upper_", "scale_", "min_"):
        np.testing.assert_array_equal(getattr(fits[0], name), getattr(fits[1], name))


def test_bounded_scaler_keeps_sparse_input_sparse():
    rng = np.random.default_rng(1)
    dense = rng.integers(0, 20, size=(30, 5)).astype(float)
    dense[rng.random(dense.shape) < 0.6] = 0.0
    X = sp.csr_matrix(dense)
    out = BoundedScaler(bounds=(0, 16)).fit(X).transform(X)
    assert sp.issparse(out) and out.nnz == X.nnz
    # lower = 0: [0, upper] -> [0, 1], values above the bound clipped, zeros kept
    np.testing.assert_allclose(out.toarray(), np.minimum(dense, 16) / 16)
    # a range around 0 is scaled by its larger end, into [-1, 1]
    out = BoundedScaler(bounds=(-4, 16)).fit(X).transform(sp.csc_matrix(-dense))
    np.testing.assert_allclose(out.toarray(), np.maximum(-dense, -4) / 16)


@pytest.mark.parametrize("bounds, X, match", [
    ((0, np.inf), np.ones((3, 2)), "finite"),
    ((np.nan, 1), np.ones((3, 2)), "finite"),
    ((1, 1), np.ones((3, 2)), "lower < upper"),
    (([0, 2], [1, 1]), np.ones((3, 2)), "features \\[1\\]"),
    (([0, 0, 0], 1), np.ones((3, 2)), "one value per feature \\(2\\)"),
    ((0,), np.ones((3, 2)), "pair \\(lower, upper\\)"),
    (5.0, np.ones((3, 2)), "pair \\(lower, upper\\)"),
    ((1, 2), sp.csr_matrix(np.ones((3, 2))), "contain 0"),
])
def test_bounded_scaler_rejects_bad_bounds(bounds, X, match):
    with pytest.raises(ValueError, match=match):
        BoundedScaler(bounds=bounds).fit(X)


def test_bounded_scaler_rejects_a_bad_feature_range():
    with pytest.raises(ValueError, match="feature_range"):
        BoundedScaler(bounds=(0, 1), feature_range=(1, -1)).fit(np.ones((2, 2)))


# --------------------------------------------------------------------------
# DPStandardScaler
# --------------------------------------------------------------------------
class _Recorder(np.random.Generator):
    scales = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        _Recorder.scales.append(float(scale))
        return super().normal(loc, scale, size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        _Recorder.scales.append(float(scale))
        return super().laplace(loc, scale, size)


class _Noiseless(np.random.Generator):
    def normal(self, loc=0.0, scale=1.0, size=None):
        return np.zeros(size) + loc


def _recording(rng_class):
    real = DPStandardScaler._noise_rng
    return mock.patch.object(DPStandardScaler, "_noise_rng",
                             lambda self, i: rng_class(real(self, i).bit_generator))


@pytest.mark.parametrize("delta, base, norm", [(1e-5, Gaussian, 2), (0.0, Laplace, 1)])
def test_dp_standard_scaler_charges_its_cost_and_draws_the_calibrated_noise(delta, base, norm):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 3, size=(500, 3))
    lower, upper = np.array([-1.0, 0.0, -2.0]), np.array([3.0, 2.0, 6.0])
    acc = BudgetAccountant()
    _Recorder.scales = []
    with _recording(_Recorder):
        scaler = DPStandardScaler(bounds=(lower, upper), epsilon=0.7, delta=delta,
                                  accountant=acc, random_state=0).fit(X)
    # our own calibration: two releases of one multiplier compose to (0.7, delta)
    z = calibrate(lambda s: Repeated(base(s), 2), 0.7, delta)
    assert scaler.noise_multiplier_ == pytest.approx(z, rel=1e-9)
    assert get_epsilon(Repeated(base(z), 2), delta) <= 0.7 * (1 + 1e-9)
    (spend,) = acc.spends
    assert (spend.epsilon, spend.delta) == (0.7, delta)
    assert spend.mechanism == Repeated(base(z), 2)
    assert scaler.privacy_spent_ == (0.7, delta)
    # the sums' sensitivities: ||h|| and ||h^2|| (L2; L1 for Laplace), h the half-ranges
    half = (upper - lower) / 2
    assert _Recorder.scales == pytest.approx([z * np.linalg.norm(half, norm),
                                              z * np.linalg.norm(half ** 2, norm)])


def test_dp_standard_scaler_estimates_mean_and_scale_at_large_n():
    rng = np.random.default_rng(3)
    X = rng.normal([1.0, -2.0], [0.5, 2.0], size=(50000, 2))
    scaler = DPStandardScaler(bounds=([-4, -10], [6, 6]), epsilon=1.0, random_state=0,
                              accountant=BudgetAccountant()).fit(X)
    # noise on the mean: z * ||h|| / n = about 5 * 9.4 / 5e4 = 1e-3; the
    # clipping of the second feature at -10 / 6 moves its moments by < 1e-3
    np.testing.assert_allclose(scaler.mean_, [1.0, -2.0], atol=0.02)
    np.testing.assert_allclose(scaler.scale_, [0.5, 2.0], rtol=0.05)
    Z = scaler.transform(X)
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=0.03)
    np.testing.assert_allclose(Z.std(axis=0), 1.0, atol=0.06)


def test_dp_standard_scaler_fits_never_share_noise():
    X = np.random.default_rng(0).uniform(size=(100, 2))
    acc = BudgetAccountant()
    a, b = (DPStandardScaler(bounds=(0, 1), random_state=0, accountant=acc).fit(X)
            for _ in range(2))
    assert not np.allclose(a.mean_, b.mean_)
    replay = DPStandardScaler(bounds=(0, 1), random_state=0,
                              accountant=BudgetAccountant()).fit(X)
    np.testing.assert_array_equal(replay.mean_, a.mean_)


@pytest.mark.parametrize("X, params, error, match", [
    (np.array([[0.0, np.nan], [1.0, 0.0]]), {}, ValueError, "NaN"),
    (np.array([[0.0, np.inf], [1.0, 0.0]]), {}, ValueError, "infinity"),
    (np.ones((4, 2)), {"epsilon": 0.0}, ValueError, "epsilon"),
    (np.ones((4, 2)), {"delta": 1.0}, ValueError, "delta"),
    (np.ones((4, 2)), {"bounds": ([0, 0, 0], 1)}, ValueError, "describe 3"),
    (np.ones((4, 2)), {"bounds": (1, 0)}, ValueError, "lower < upper"),
    (sp.csr_matrix(np.ones((4, 2))), {}, TypeError, "sparse"),
    (np.ones((4, 2)), {"epsilon": 50.0}, ValueError, "budget"),
])
def test_dp_standard_scaler_bad_input_costs_nothing(X, params, error, match):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    scaler = DPStandardScaler(**{"bounds": (-1, 1), "accountant": acc, **params})
    with pytest.raises(error, match=match):
        scaler.fit(X)
    assert len(acc.spends) == 0 and not hasattr(scaler, "mean_")


def _first_mean(model):
    return float(model.mean_[0])


def test_dp_standard_scaler_audit_passes_and_catches_a_noiseless_fit():
    # D: 100 records at the centre of the range; the canary at its upper end
    # moves S_1 by the full sensitivity h = 1
    X = np.zeros((100, 1))
    scaler = DPStandardScaler(bounds=(-1.0, 1.0), epsilon=2.0, delta=1e-5)
    y = np.zeros(100)   # ignored by the scaler
    result = audit_estimator(scaler, X, y, np.array([1.0]), 0.0, _first_mean,
                             n_runs=1000, random_state=0)
    assert result.claimed_epsilon == 2.0
    assert result.epsilon_lower_bound <= 2.0, result.summary()
    with _recording(_Noiseless):
        control = audit_estimator(scaler, X, y, np.array([1.0]), 0.0, _first_mean,
                                  n_runs=200, random_state=0)
    assert control.epsilon_lower_bound > 2.0, control.summary()


# --------------------------------------------------------------------------
# Pipelines
# --------------------------------------------------------------------------
def test_pipeline_privacy_spent_sums_the_charged_steps():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    acc = BudgetAccountant()
    pipe = make_pipeline(BoundedScaler(bounds=(-3, 3)),
                         DPStandardScaler(bounds=(-1, 1), epsilon=0.5, accountant=acc,
                                          random_state=0),
                         DPLogisticRegression(epsilon=1.0, accountant=acc, random_state=0))
    pipe.fit(X, y)
    eps, delta = pipeline_privacy_spent(pipe)
    assert eps == pytest.approx(1.5) and delta == pytest.approx(1e-5 + 1e-5)
    assert acc.spent() == pytest.approx((eps, delta))
    assert pipeline_privacy_spent(make_pipeline(BoundedScaler((0, 1))).fit(X)) == (0.0, 0.0)
    assert math.isclose(pipeline_privacy_spent(pipe[-1])[0], 1.0)


def _meta_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(240, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5)
    return X, y


def _private_logistic(acc, classes):
    return DPLogisticRegression(epsilon=1.0, classes=classes, accountant=acc, random_state=0)


@pytest.mark.parametrize("meta, classes, fits", [
    # each fit of a clone is charged: 5 bagged fits; 2 candidates x 3 folds + the refit;
    # one binary fit per class
    (lambda est: BaggingClassifier(est, n_estimators=5, random_state=0), [0, 1, 2], 5),
    (lambda est: GridSearchCV(est, {"alpha": [0.01, 0.1]}, cv=3), [0, 1, 2], 7),
    (lambda est: OneVsRestClassifier(est), [0, 1], 3),
], ids=["bagging", "grid-search", "one-vs-rest"])
def test_pipeline_privacy_spent_counts_the_fits_of_meta_estimators(meta, classes, fits):
    X, y = _meta_data()
    acc = BudgetAccountant()
    pipe = make_pipeline(BoundedScaler(bounds=(-1, 1)), meta(_private_logistic(acc, classes)))
    pipe.fit(X, y)
    assert len(acc.spends) == fits
    eps, delta = pipeline_privacy_spent(pipe)
    assert eps == pytest.approx(fits * 1.0) and delta == pytest.approx(fits * 1e-5)
    assert (eps, delta) == pytest.approx(acc.spent())


def test_pipeline_privacy_spent_counts_each_accountant_once():
    X, y = _meta_data()
    acc, other = BudgetAccountant(), BudgetAccountant()
    pipe = make_pipeline(
        DPStandardScaler(bounds=(-1, 1), epsilon=0.5, accountant=other, random_state=0),
        OneVsRestClassifier(_private_logistic(acc, [0, 1])))
    pipe.fit(X, y)
    eps, _ = pipeline_privacy_spent(pipe)
    assert eps == pytest.approx(0.5 + 3.0)
    # the scaler on the same accountant: its total already holds the scaler's charge,
    # and the three earlier fits too (an over-report, never an under-report)
    shared = make_pipeline(
        DPStandardScaler(bounds=(-1, 1), epsilon=0.5, accountant=acc, random_state=0),
        OneVsRestClassifier(_private_logistic(acc, [0, 1])))
    shared.fit(X, y)
    assert acc.spent()[0] == pytest.approx(3.0 + 0.5 + 3.0)
    assert pipeline_privacy_spent(shared)[0] == pytest.approx(acc.spent()[0])


def test_pipeline_privacy_spent_refuses_a_meta_estimator_on_an_unknown_accountant():
    X, y = _meta_data()
    pipe = make_pipeline(OneVsRestClassifier(
        DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)))
    with BudgetAccountant():
        pipe.fit(X, y)
    with pytest.raises(ValueError, match="accountant=None"):
        pipeline_privacy_spent(pipe)


def test_pipeline_privacy_spent_reads_accountants_from_a_parameter_grid():
    X, y = _meta_data()
    acc, other = BudgetAccountant(), BudgetAccountant()
    search = GridSearchCV(_private_logistic(acc, [0, 1, 2]), {"accountant": [acc, other]}, cv=2)
    search.fit(X, y)
    assert len(acc.spends) + len(other.spends) == 2 * 2 + 1  # 2 candidates x 2 folds + refit
    eps, delta = pipeline_privacy_spent(make_pipeline(search))
    assert eps == pytest.approx(acc.spent()[0] + other.spent()[0]) == 5.0
    unknown = GridSearchCV(_private_logistic(acc, [0, 1, 2]), {"accountant": [None, acc]}, cv=2)
    with BudgetAccountant():
        unknown.fit(X, y)
    with pytest.raises(ValueError, match="accountant=None"):
        pipeline_privacy_spent(unknown)


@st.composite
def _scaler_cases(draw):
    """Data and public bounds for DPStandardScaler, from narrow bounds at large magnitudes
    (float32's spacing wider than the bounds) to wide ones; values inside and outside."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    d = draw(st.integers(1, 3))
    n = draw(st.integers(2, 6))
    centre = draw(st.floats(-1e12, 1e12, allow_nan=False)) * draw(st.sampled_from([1e-9, 1e-3,
                                                                                   1.0]))
    width = max(abs(centre), 1.0) * 10.0 ** draw(st.integers(-12, 1))
    lower = np.full(d, centre - width / 2)
    upper = np.full(d, centre + width / 2)
    if not (upper > lower).all():
        reject()
    t = draw(st.lists(st.floats(-4, 4, allow_nan=False), min_size=n * d, max_size=n * d))
    X = (centre + width * np.reshape(t, (n, d))).astype(dtype)
    delta = draw(st.sampled_from([1e-5, 0.0]))
    return X, lower, upper, delta


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(case=_scaler_cases(), row=st.integers(0, 5))
@example(case=(np.array([[1.7e9], [1.7e9 + 128], [1.7e9]], dtype=np.float32),
               np.array([1.7e9 + 63]), np.array([1.7e9 + 65]), 1e-5), row=1)
def test_dp_standard_scaler_sums_move_by_at_most_their_sensitivity(case, row):
    # the two released sums (exact parts, before their noise) of a data set and of the
    # same without one record differ by at most the sensitivity each is noised for, in
    # the mechanism's norm; float32 data near narrow bounds once broke it by 64x
    import skdp.preprocessing as preprocessing

    X, lower, upper, delta = case
    row = row % X.shape[0]
    seen = []
    real = preprocessing.release

    def spy(value, mechanism, sensitivity, rng, **kwargs):
        seen.append((np.array(value, dtype=np.float64), float(sensitivity)))
        return real(value, mechanism, sensitivity, rng, **kwargs)

    with mock.patch.object(preprocessing, "release", spy):
        for data in (X, np.delete(X, row, axis=0)):
            DPStandardScaler(bounds=(lower, upper), epsilon=1.0, delta=delta, random_state=0,
                             accountant=BudgetAccountant()).fit(data)
    norm = 2 if delta > 0 else 1
    (s1, sens1), (s2, sens2), (t1, _), (t2, _) = seen
    for a, b, sens in ((s1, t1, sens1), (s2, t2, sens2)):
        assert np.linalg.norm(a - b, norm) <= sens * (1 + 1e-9) + 1e-300, (a - b, sens)

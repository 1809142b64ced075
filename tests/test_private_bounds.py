"""DPBoundsScaler (issue 41): private feature bounds with no public range."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_wine
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

import skdp
from skdp import BudgetAccountant, DPLogisticRegression
from skdp._private_bounds import (
    bounds_from_counts,
    cell_counts,
    cell_edges,
    cell_of,
    octave_grid,
)
from skdp.accounting import Gaussian, Laplace, calibrate, get_epsilon, recording
from skdp.preprocessing import (BoundedScaler, DPBoundsScaler, pipeline_privacy_spent,
                                split_budget)

LO, HI = octave_grid((1e-6, 1e12))


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(3.0, 7.0, n),          # octaves (2, 4], (4, 8]
                            -rng.uniform(100.0, 120.0, n),     # (-128, -64]
                            rng.uniform(0.001, 0.002, n)])     # (2^-10, 2^-9] (2^-9, 2^-8]


def test_exported_from_skdp_and_preprocessing():
    assert skdp.DPBoundsScaler is DPBoundsScaler
    assert "DPBoundsScaler" in skdp.__all__


def test_cells_are_the_documented_octaves():
    left, right = cell_edges(LO, HI)
    values = np.array([-1e15, -100.0, -64.0, -2.0 ** LO, 0.0, 1e-9, 2.0 ** LO, 1.0, 1.5, 16.0,
                       16.5, 1e15])
    cells = cell_of(values, LO, HI)
    inside = (left[cells] <= values) & (values <= right[cells])
    # beyond the grid's ends a value is counted in the last octave
    np.testing.assert_array_equal(inside, [False] + [True] * 10 + [False])
    assert (right[cells[[1, 7, 9]]] == [-64.0, 1.0, 16.0]).all()  # right-closed octaves
    assert cells[3] == cells[4] == cells[5] == cells[6] == HI - LO  # the zero cell


@pytest.mark.parametrize("sparse", [False, True])
def test_one_record_moves_one_cell_per_feature(sparse):
    # the sensitivity the noise is calibrated to: zero-out neighbours
    # (a record replaced by a null record, which counts nowhere) differ by
    # exactly 1 in one cell of each feature: sqrt(d) in L2, d in L1
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 6)) * 10.0 ** rng.integers(-3, 4, (50, 6))
    X[rng.random(X.shape) < 0.5] = 0.0
    for row in range(0, 50, 7):
        rest = np.delete(X, row, axis=0)
        a, b = (cell_counts(sp.csr_matrix(M) if sparse else M, LO, HI) for M in (X, rest))
        diff = a - b
        assert diff.min() == 0 and diff.max() == 1
        assert (diff.sum(axis=1) == 1).all()
        assert np.linalg.norm(diff) == pytest.approx(np.sqrt(6))


def test_dense_and_sparse_counts_agree():
    X = _data(300)
    X[::3, 1] = 0.0
    np.testing.assert_array_equal(cell_counts(X, LO, HI), cell_counts(sp.csr_matrix(X), LO, HI))
    assert cell_counts(X, LO, HI).sum(axis=1).tolist() == [300] * 3


@pytest.mark.parametrize("delta, base", [(1e-5, Gaussian), (0.0, Laplace)])
def test_charge_equals_the_release_and_the_accountant_record(delta, base):
    X = _data()
    acc = BudgetAccountant()
    with recording() as records:
        scaler = DPBoundsScaler(epsilon=0.3, delta=delta, accountant=acc,
                                random_state=0).fit(X)
    z = calibrate(lambda s: base(s), 0.3, delta)
    assert scaler.noise_multiplier_ == pytest.approx(z, rel=1e-12)
    assert get_epsilon(base(z), delta) <= 0.3 * (1 + 1e-9)
    (spend,) = acc.spends
    assert (spend.epsilon, spend.delta) == (0.3, delta) == scaler.privacy_spent_
    assert spend.mechanism == base(z)
    (release,) = records
    assert release.what == "DPBoundsScaler grid counts"
    assert release.mechanism == base(z)
    assert release.sensitivity == pytest.approx(np.sqrt(3) if delta else 3.0)
    assert release.shape == (3, 2 * (HI - LO) + 1)


def test_fitted_bounds_are_post_processing_of_the_released_counts():
    X = _data()
    with recording() as records:
        scaler = DPBoundsScaler(epsilon=0.5, accountant=BudgetAccountant(),
                                random_state=3).fit(X)
    (release,) = records
    std = scaler.noise_multiplier_ * np.sqrt(3)
    lower, upper = bounds_from_counts(release.value, std, LO, HI)
    np.testing.assert_array_equal(scaler.lower_, lower)
    np.testing.assert_array_equal(scaler.upper_, upper)
    # only cell edges (signed powers of two), never a data value
    left, right = cell_edges(LO, HI)
    assert np.isin(scaler.lower_, left).all() and np.isin(scaler.upper_, right).all()
    # at n = 2000 the noise (std about 22) is far below the counts
    np.testing.assert_array_equal(scaler.lower_, [2.0, -128.0, 2.0 ** -10])
    np.testing.assert_array_equal(scaler.upper_, [8.0, -64.0, 2.0 ** -8])


def test_bounds_move_only_with_the_noise():
    # with the noise fixed, a neighbour (one record's value changed inside
    # its octave, or moved to another one) gives the same bounds: the
    # released counts are all the bounds depend on
    X = _data()
    Y = X.copy()
    Y[0] = [6.5, -101.0, 0.0019]
    Z = X.copy()
    Z[0] = [1e9, 1e9, 1e9]
    fitted = [DPBoundsScaler(epsilon=0.5, accountant=BudgetAccountant(), random_state=3)
              .fit(M) for M in (X, Y, Z)]
    for other in fitted[1:]:
        np.testing.assert_array_equal(other.lower_, fitted[0].lower_)
        np.testing.assert_array_equal(other.upper_, fitted[0].upper_)


def test_max_subarray_picks_the_run_above_the_noise():
    noisy = np.zeros((2, 2 * (HI - LO) + 1))
    m = HI - LO
    noisy[0, m + 1 + (2 - LO)] = 100.0       # (4, 8]
    noisy[0, m + 1 + (3 - LO)] = 80.0        # (8, 16]
    noisy[0, m + 1 + (10 - LO)] = 15.0       # a lone small cell far away
    noisy[1, m] = 500.0                      # all zeros
    lower, upper = bounds_from_counts(noisy, 10.0, LO, HI, penalty=2.0)
    np.testing.assert_array_equal(lower, [4.0, -(2.0 ** LO)])
    np.testing.assert_array_equal(upper, [16.0, 2.0 ** LO])


@pytest.mark.parametrize("X, params, error, match", [
    (np.array([[0.0, np.nan], [1.0, 0.0]]), {}, ValueError, "NaN"),
    (np.array([[0.0, np.inf], [1.0, 0.0]]), {}, ValueError, "infinity"),
    (np.ones((4, 2)), {"epsilon": 0.0}, ValueError, "epsilon"),
    (np.ones((4, 2)), {"delta": 1.0}, ValueError, "delta"),
    (np.ones((4, 2)), {"feature_range": (1, 0)}, ValueError, "feature_range"),
    (np.ones((4, 2)), {"magnitudes": (0, 10)}, ValueError, "magnitudes"),
    (np.ones((4, 2)), {"magnitudes": "wide"}, ValueError, "magnitudes"),
    (np.ones((4, 2)), {"epsilon": 50.0}, ValueError, "budget"),
])
def test_bad_input_costs_nothing(X, params, error, match):
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    scaler = DPBoundsScaler(**{"accountant": acc, **params})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(error, match=match):
            scaler.fit(X)
    assert len(acc.spends) == 0 and not hasattr(scaler, "lower_")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dense_and_sparse_transform(dtype):
    X = _data(1000).astype(dtype)
    X[::2, 2] = 0.0
    dense = DPBoundsScaler(accountant=BudgetAccountant(), random_state=0).fit(X)
    out = dense.transform(X)
    assert out.dtype == dtype and out.min() >= -1 and out.max() <= 1
    np.testing.assert_allclose(out, BoundedScaler((dense.lower_, dense.upper_))
                               .fit(X).transform(X))
    Xs = sp.csr_matrix(X)
    sparse = DPBoundsScaler(accountant=BudgetAccountant(), random_state=0).fit(Xs)
    assert (sparse.lower_ <= 0).all() and (sparse.upper_ >= 0).all()
    Zs = sparse.transform(Xs)
    assert sp.issparse(Zs) and Zs.dtype == dtype and Zs.nnz == Xs.nnz
    assert abs(Zs).max() <= 1


def test_low_signal_warns_without_data_values():
    X = _data(40) * 7.77
    with pytest.warns(UserWarning, match="may miss") as caught:
        DPBoundsScaler(epsilon=0.1, accountant=BudgetAccountant(), random_state=0).fit(X)
    text = str(caught[0].message)
    assert "40 records" in text and "7.77" not in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DPBoundsScaler(epsilon=1.0, accountant=BudgetAccountant(), random_state=0).fit(
            _data(5000))


@pytest.mark.parametrize("load, warns", [(load_wine, True), (load_breast_cancer, False)])
def test_low_signal_warning_covers_raw_wine_at_a_total_of_one(load, warns):
    """Wine's training part (124 rows) has 5 records per noise deviation at the
    kept split of a total of 1: its private pipeline falls 12 points below the
    documented ranges (benchmarks/results/private_bounds_small_n.md), so its
    fit warns; breast_cancer's 398 rows (10.7 per deviation) do not."""
    X, y = load(return_X_y=True)
    X_train = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)[0]
    bounds_eps = split_budget(1.0, 1e-5, (0.3, 0.7))[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DPBoundsScaler(epsilon=bounds_eps, delta=1e-5, accountant=BudgetAccountant(),
                       random_state=0).fit(X_train)
    assert any("may miss" in str(w.message) for w in caught) == warns


def test_fits_never_share_noise_and_a_seed_replays_on_a_fresh_accountant():
    X = _data(60)
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with recording() as records:
            a = DPBoundsScaler(random_state=0, accountant=acc).fit(X)
            DPBoundsScaler(random_state=0, accountant=acc).fit(X)
            replay = DPBoundsScaler(random_state=0, accountant=BudgetAccountant()).fit(X)
    assert not np.array_equal(records[0].value, records[1].value)
    np.testing.assert_array_equal(records[0].value, records[2].value)
    np.testing.assert_array_equal(replay.upper_, a.upper_)


def test_one_line_pipeline_on_raw_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    acc = BudgetAccountant(epsilon=1.0)
    pipe = make_pipeline(DPBoundsScaler(epsilon=0.35, accountant=acc, random_state=0),
                         DPLogisticRegression(epsilon=0.65, classes=[0, 1], accountant=acc,
                                              random_state=0)).fit(X_tr, y_tr)
    # the documented-bounds pipeline scores 0.91 here at epsilon 1; the
    # majority class 0.63 (what the raw data gives without the scaler)
    assert pipe.score(X_te, y_te) >= 0.85
    eps, delta = pipeline_privacy_spent(pipe)
    assert acc.spent() == pytest.approx((eps, delta))
    assert (eps, delta) == pytest.approx((1.0, 2e-5))


def test_zero_cell_joins_a_positive_run_it_competes_with():
    # a pixel-like feature: half zeros, half in (4, 16]: the bounds are
    # [-t, 16] (t the zero cell's half-width), not the zeros alone
    rng = np.random.default_rng(0)
    X = np.where(rng.random((3000, 2)) < 0.5, 0.0, rng.integers(5, 17, (3000, 2)))
    scaler = DPBoundsScaler(epsilon=1.0, accountant=BudgetAccountant(), random_state=0).fit(X)
    np.testing.assert_array_equal(scaler.lower_, [-(2.0 ** LO)] * 2)
    np.testing.assert_array_equal(scaler.upper_, [16.0, 16.0])


def test_trim_keeps_rare_outliers_out(monkeypatch):
    import skdp._private_bounds as private_bounds

    X = _data(20000)[:, :1]
    X[:50] = 1e6   # 0.25% of the records, far out
    fit = lambda: DPBoundsScaler(epsilon=5.0, accountant=BudgetAccountant(),  # noqa: E731
                                 random_state=0).fit(X)
    assert fit().upper_[0] >= 1e6
    monkeypatch.setattr(private_bounds, "TRIM", 0.01)
    assert fit().upper_[0] == 8.0


def test_bounds_read_only_the_released_table(monkeypatch):
    # the door returns a table unrelated to the data: the bounds follow it
    import skdp._private_bounds as private_bounds

    def fake_release(exact, mechanism, sensitivity, rng, *, what):
        table = np.zeros(exact.shape)
        table[:, HI - LO + 1 + (5 - LO)] = 1e6   # every feature in (32, 64]
        return table

    monkeypatch.setattr(private_bounds, "release", fake_release)
    scaler = DPBoundsScaler(accountant=BudgetAccountant(), random_state=0).fit(_data())
    np.testing.assert_array_equal(scaler.lower_, [32.0] * 3)
    np.testing.assert_array_equal(scaler.upper_, [64.0] * 3)


@pytest.mark.parametrize("delta, discrete", [(1e-5, "DiscreteGaussian"),
                                             (0.0, "DiscreteLaplace")])
def test_secure_mode_releases_the_discrete_counts_and_charges_them(delta, discrete):
    from skdp.accounting import DiscreteGaussian, DiscreteLaplace

    kind = {"DiscreteGaussian": DiscreteGaussian, "DiscreteLaplace": DiscreteLaplace}[discrete]
    X = _data()
    acc = BudgetAccountant()
    with recording() as records:
        scaler = DPBoundsScaler(epsilon=0.5, delta=delta, secure_mode=True,
                                accountant=acc).fit(X)
    (release,) = records
    assert type(release.mechanism) is kind
    units = np.asarray(release.value) / release.grid
    assert release.grid > 0 and np.all(units == np.round(units))
    (spend,) = acc.spends
    assert type(spend.mechanism) is kind and spend.epsilon == 0.5
    assert get_epsilon(spend.mechanism, delta) <= 0.5 * (1 + 1e-9)
    # the bounds are post-processing of the released (discrete) counts alone
    std = scaler.noise_multiplier_ * (np.sqrt(3) if delta else 3 * np.sqrt(2))
    lower, upper = bounds_from_counts(np.asarray(release.value), std, LO, HI,
                                      n_records=len(X))
    np.testing.assert_array_equal(scaler.lower_, lower)
    np.testing.assert_array_equal(scaler.upper_, upper)


@pytest.mark.parametrize("make", [
    lambda **kw: DPBoundsScaler(**kw),
    lambda **kw: skdp.preprocessing.DPStandardScaler(bounds=(-200.0, 200.0), **kw)])
def test_secure_mode_ignores_the_seed_with_a_warning_at_the_callers_line(make):
    with pytest.warns(UserWarning, match="random_state is ignored") as caught:
        make(secure_mode=True, random_state=0, accountant=BudgetAccountant()).fit(_data())
    assert [w.filename for w in caught if "random_state is ignored" in str(w.message)] == [
        __file__]


def test_one_line_pipeline_on_raw_digits_under_a_gaussian_budget_of_one():
    """Issue 41's acceptance on digits, on 3 of the benchmark's 5 splits.

    One split's noise moves either pipeline by 3-4 points, so the means are
    compared, as in ``benchmarks/results/private_bounds.md``. The bar is 1.5
    points: the former basic split (0.35 + 0.65, distance penalty 0.1) is
    2.4 points below on these splits and fails it; the Gaussian split is even.
    """
    from sklearn.datasets import load_digits

    from skdp.datasets import documented_bounds
    from skdp.preprocessing import split_budget

    X, y = load_digits(return_X_y=True)
    classes = np.arange(10)
    bounds_eps, model_eps = split_budget(1.0, 1e-5, (0.3, 0.7))
    private, documented = [], []
    for seed in range(3):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                                  stratify=y)
        acc = BudgetAccountant(epsilon=1.0, delta=1e-5, composition="gaussian")
        private.append(make_pipeline(
            DPBoundsScaler(epsilon=bounds_eps, delta=1e-5, accountant=acc, random_state=seed),
            DPLogisticRegression(epsilon=model_eps, delta=1e-5, classes=classes,
                                 accountant=acc, random_state=seed))
            .fit(X_tr, y_tr).score(X_te, y_te))
        assert acc.spent()[0] <= 1.0 and acc.spent()[0] == pytest.approx(1.0, rel=1e-6)
        documented.append(make_pipeline(
            BoundedScaler(documented_bounds("digits")),
            DPLogisticRegression(epsilon=1.0, delta=1e-5, classes=classes,
                                 accountant=BudgetAccountant(), random_state=seed))
            .fit(X_tr, y_tr).score(X_te, y_te))
    assert np.mean(private) >= np.mean(documented) - 0.015

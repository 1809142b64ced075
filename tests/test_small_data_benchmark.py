"""``benchmarks/small_data.py`` chooses on validation splits of the demo's training part only."""

import numpy as np
import pytest
from conftest import load_benchmark_script


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("small_data")


@pytest.fixture
def seen_splits(bench, monkeypatch):
    """The ``(name, seed)`` of every ``inner_split`` a grid reads, one seed."""
    seen = []
    real_split = bench.inner_split

    def recording_split(name, seed):
        seen.append((name, seed))
        return real_split(name, seed)

    monkeypatch.setattr(bench, "inner_split", recording_split)
    monkeypatch.setattr(bench, "SEEDS", range(1))
    return seen


@pytest.mark.parametrize("name", ["breast_cancer", "digits", "wine class 0/rest"])
def test_validation_rows_never_include_the_demo_test_rows(bench, name, monkeypatch):
    loader, bounds, classes = bench.DATA[name]
    _, y = loader()

    def row_ids():  # each row's feature is its index in the data set
        return np.arange(len(y), dtype=float)[:, None], y

    monkeypatch.setitem(bench.DATA, name, (row_ids, bounds, classes))
    X_tr, X_te, _, _ = bench.demo_split(name)
    train, test = set(X_tr[:, 0]), set(X_te[:, 0])
    for seed in bench.SEEDS:
        X_in, X_val, _, _ = bench.inner_split(name, seed)
        inner, val = set(X_in[:, 0]), set(X_val[:, 0])
        assert inner | val == train and not inner & val
        assert not (inner | val) & test


def test_the_demo_split_is_the_demos(bench):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    expected = train_test_split(X, y, test_size=0.3, random_state=0)[1]
    np.testing.assert_array_equal(bench.demo_split("breast_cancer")[1], expected)


def test_output_perturbation_prototype_noise_scale(bench, monkeypatch):
    # a tiny lam makes the noise dominate: the released coefficients' spread
    # is the calibrated multiplier times sqrt(2) / (n lam)
    from skdp.accounting import Gaussian, calibrate

    captured = {}
    real_rng = np.random.default_rng

    class Recorder:
        def __init__(self, seed):
            self.rng = real_rng(seed)

        def normal(self, loc, scale, size):
            captured["scale"] = scale
            return self.rng.normal(loc, scale, size)

    monkeypatch.setattr(bench.np.random, "default_rng", Recorder)
    X_in, X_val, y_in, y_val = bench.inner_split("breast_cancer", 0)
    bench.output_perturbation_accuracy("breast_cancer", 0.01, 1.0, 0, X_in, y_in, X_val, y_val)
    z = calibrate(lambda m: Gaussian(m), 1.0, bench.DELTA)
    assert captured["scale"] == pytest.approx(z * np.sqrt(2.0) / (len(X_in) * 0.01))


def test_the_demo_uses_the_setting_chosen_on_validation(bench):
    # the results file names the row-bound setting that won on validation
    # splits; the demo's classifiers must carry exactly that setting
    import re

    from conftest import BENCHMARKS
    from skdp import BudgetAccountant
    from skdp.demo import demo_tasks

    text = (BENCHMARKS / "results" / "small_data.md").read_text()
    chosen = re.search(r"Chosen for the demo: \*\*(.+?)\*\*", text).group(1)
    params = bench.CANDIDATES[chosen]
    assert set(params) <= {"data_norm", "clip_norm"}  # a setting the demo can carry
    tasks = [t for t in demo_tasks() if t[5] == "accuracy"]
    assert len(tasks) == 4
    for data, name, loader, private, public, metric in tasks:
        estimator = private(1.0, 0, BudgetAccountant()).steps[-1][1]
        defaults = type(estimator)().get_params()
        for key in ("data_norm", "clip_norm"):
            assert estimator.get_params()[key] == params.get(key, defaults[key]), (data, key)


def test_the_demo_choice_is_the_best_mean_over_the_general_settings(bench):
    rows = {("a", "E", label): {1.0: value} for label, value in
            zip(bench.GENERAL, (0.5, 0.7, 0.6))}
    rows[("b", "E", bench.GENERAL[0])] = {1.0: 0.9}   # defaults: mean 0.7 over its two cells
    rows[("b", "E", bench.GENERAL[1])] = {1.0: 0.8}   # mean 0.75: chosen
    chosen, means = bench.choose(rows)
    assert chosen == bench.GENERAL[1]
    assert means[bench.GENERAL[0]] == pytest.approx(0.7)


def test_the_wide_grid_scores_each_setting_on_validation_splits_only(bench, seen_splits,
                                                                     monkeypatch):
    # the wide grid reads its data through inner_split only (whose rows never
    # include the demo's test rows: the first test)
    monkeypatch.setattr(bench, "WIDE", [("gd", 2.0, 1.0, None), ("gd", 3.0, 1.0, 20)])
    summary, lines = bench.wide_table()
    assert seen_splits == [("breast_cancer", 0), ("digits", 0)]
    assert len(lines) == 2 + 4
    assert any("max_iter=20" in line for line in lines)
    assert len(summary) == 2 + 4   # one best setting per data set and estimator


@pytest.mark.parametrize("n_classes", [2, 10])
def test_objective_perturbation_prototype_penalty_and_noise(bench, n_classes):
    # the determinant term's share of epsilon sets the penalty: (K - 1) log(1 + beta / Lambda)
    # equals it; the rest calibrates one Gaussian of the gradient bound's sensitivity
    from skdp.accounting import Gaussian, calibrate

    rng = np.random.default_rng(0)
    Z = np.hstack([rng.uniform(-1, 1, size=(60, 3)), np.ones((60, 1))])
    Z[:, :3] /= np.maximum(np.linalg.norm(Z[:, :3], axis=1, keepdims=True), 1.0)
    y = rng.integers(0, n_classes, size=60)
    eps, share, dn = 1.0, 0.25, 1.0
    W, lam, std = bench.objective_perturbation_fit(Z, y, n_classes, eps, share, 0, dn)
    R2 = dn ** 2 + 1.0
    beta = R2 / 4 if n_classes == 2 else R2 / 2
    rank = 1 if n_classes == 2 else n_classes - 1
    assert rank * np.log1p(beta / lam) == pytest.approx(share * eps)
    L = np.sqrt(R2) if n_classes == 2 else np.sqrt(2 * R2)
    assert std == pytest.approx(calibrate(lambda m: Gaussian(m), (1 - share) * eps,
                                          bench.DELTA) * L)
    assert W.shape == (4, 1 if n_classes == 2 else n_classes)


def test_the_reduce_table_scores_on_validation_splits_only(bench, seen_splits, monkeypatch):
    monkeypatch.setattr(bench, "REDUCE_DIMS", (8,))
    monkeypatch.setattr(bench, "REDUCE_NORMS", (2.0,))
    monkeypatch.setattr(bench, "PRIVATE_PCA", [(0.2, 2.0, 8)])
    monkeypatch.setattr(bench, "DCT_DIMS", (10,))
    summary, lines = bench.reduce_table()
    assert seen_splits == [("digits", 0)]
    assert len(lines) == 3 + 4        # the demo's setting, oracle, private PCA, DCT, pooling
    assert len(summary) == 2 + 4


def test_the_private_subspace_clips_rows_and_calibrates_its_noise(bench, monkeypatch):
    # Analyze Gauss: rows clipped to R (sensitivity R**2 of the second moment), the
    # multiplier calibrated for the share of epsilon at delta / 2; noise symmetric
    from skdp.accounting import Gaussian, calibrate

    draws = []
    real_rng = np.random.default_rng

    def recording_rng(seed):
        rng = real_rng(seed)
        normal = rng.normal
        rng_proxy = type("R", (), {"normal": lambda self, loc, scale, size: (
            draws.append(scale), normal(loc, scale, size))[1]})()
        return rng_proxy

    monkeypatch.setattr(bench.np.random, "default_rng", recording_rng)
    Z = np.random.RandomState(0).uniform(-1, 1, size=(50, 6)) * 3.0
    clipped, P = bench.private_subspace(Z, 0.25, 2.0, 3, 0)
    assert np.linalg.norm(clipped, axis=1).max() <= 2.0 + 1e-12
    assert P.shape == (6, 3) and np.allclose(P.T @ P, np.eye(3))
    z = calibrate(lambda m: Gaussian(m), 0.25 * bench.WIDE_EPSILON, bench.DELTA / 2)
    assert draws == [pytest.approx(z * 4.0)]

"""``benchmarks/small_data.py`` chooses on validation splits of the demo's training part only."""

import numpy as np
import pytest
from conftest import load_benchmark_script


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("small_data")


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

"""The papers' baselines that live in benchmarks/ (paper 000's SPIDER variants, paper 004's
DP-TR) and the Covertype loader: their math is checked here so that a results file cannot
rest on a wrong gradient, a wrong trust-region step or a silent data fallback (seconds)."""

import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import benchmark_data
        import dp_trust_region
        import minimax_baselines
        import paper004
        yield {"mm": minimax_baselines, "tr": dp_trust_region, "cov": benchmark_data,
               "p4": paper004}
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_matrix_sensing_per_example_gradients_match_finite_differences(bench):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(5, 4, 3))
    b = rng.normal(size=5)
    U, V = rng.normal(size=(4, 2)), rng.normal(size=(3, 2))
    G = bench["mm"].per_example_grads(A, b, U, V)
    x = np.concatenate([U.ravel(), V.ravel()])

    def loss(z, i):
        Uz, Vz = z[:8].reshape(4, 2), z[8:].reshape(3, 2)
        return 0.5 * (np.sum(A[i] * (Uz @ Vz.T)) - b[i]) ** 2

    h = 1e-6
    for i in range(5):
        num = [(loss(x + h * e, i) - loss(x - h * e, i)) / (2 * h) for e in np.eye(x.size)]
        np.testing.assert_allclose(G[i], num, rtol=1e-5, atol=1e-7)


def test_spider_baselines_run_and_stay_finite(bench):
    rng = np.random.default_rng(1)
    A = rng.normal(scale=0.25, size=(60, 4, 4))
    b = rng.normal(size=60)
    U0, V0 = rng.normal(scale=0.1, size=(4, 2)), rng.normal(scale=0.1, size=(4, 2))
    for kw in bench["mm"].BASELINES.values():
        U, V, refreshes = bench["mm"].dp_spider(A, b, U0, V0, epsilon=1.0, delta=1e-5, T=20,
                                                b1=60, b2=60, rng=0, **kw)  # rate 1: fast
        assert np.all(np.isfinite(U)) and np.all(np.isfinite(V)) and refreshes >= 1


def test_trust_region_step_interior_and_boundary(bench):
    step = bench["tr"].trust_region_step
    H = np.diag([2.0, 1.0])
    g = np.array([0.2, -0.1])
    np.testing.assert_allclose(step(g, H, 10.0), -np.linalg.solve(H, g))   # Newton inside
    s = step(g, H, 0.05)
    assert np.linalg.norm(s) == pytest.approx(0.05, rel=1e-6)

    def model(d):
        return g @ d + 0.5 * d @ H @ d

    cauchy = -0.05 * g / np.linalg.norm(g)
    assert model(s) <= model(cauchy) + 1e-12
    # negative curvature, zero gradient (the hard case): a step of full length along it
    s = step(np.zeros(2), np.diag([1.0, -1.0]), 0.3)
    assert np.linalg.norm(s) == pytest.approx(0.3, rel=1e-6) and abs(s[1]) > 0.29


def test_dp_tr_certifies_at_a_minimum_and_spends_its_plan_only(bench):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(4000, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.array([1.0, -1.0, 0.5]) > 0, 1.0, -1.0)
    w, iters, hessians, certified = bench["tr"].dp_tr("sigmoid", X, y, epsilon=5.0,
                                                      delta=1e-5, eps_g=0.05, eps_H=0.3,
                                                      T=30, rng=0)
    assert certified and iters == hessians <= 30 and w.shape == (4,)


def test_covertype_absent_says_so_and_exits_cleanly(bench, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(bench["cov"].EXTRA_ENV, str(tmp_path))
    assert bench["cov"].load_covtype() is None
    assert bench["p4"].main(["--out", str(tmp_path / "x.md")]) == 0
    assert "Covertype is absent" in capsys.readouterr().out
    assert not (tmp_path / "x.md").exists()


def test_covtype_like_has_the_papers_shape_and_unit_rows(bench):
    X, y = bench["cov"].covtype_like(n=2000)
    assert X.shape == (2000, 54) and set(np.unique(y)) == {-1.0, 1.0}
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)

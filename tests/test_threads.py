"""Passes over row blocks in threads: the same fit whatever the number of threads."""

import threading

import numpy as np
import pytest
from joblib import cpu_count
from threadpoolctl import threadpool_limits

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp.losses import LinearDesign
from skdp.losses._threads import map_blocks, pass_threads


def _data(n=60_000, d=20, n_classes=2, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.integers(0, n_classes, n)
    return X.astype(dtype), y


def _fit(estimator, X, y, threads):
    with threadpool_limits(threads):
        return estimator.set_params(accountant=BudgetAccountant()).fit(X, y)


@pytest.mark.parametrize("n, d", [(60_000, 20), (20_000, 10)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("make, n_classes", [
    (lambda: DPLogisticRegression(solver="gd", classes=[0, 1], random_state=0, max_iter=5), 2),
    (lambda: DPLogisticRegression(solver="gd", classes=[0, 1, 2], random_state=0, max_iter=5), 3),
    (lambda: DPLinearSVC(solver="gd", classes=[0, 1], random_state=0, max_iter=5), 2),
    (lambda: DPLogisticRegression(classes=[0, 1], random_state=0), 2),  # the defaults
])
def test_same_coefficients_with_one_and_two_threads(make, n_classes, dtype, n, d):
    # (20,000 x 10: one block of the Gram matrix, whose product rounded with the BLAS's threads)
    X, y = _data(n=n, d=d, n_classes=n_classes, dtype=dtype)
    one = _fit(make(), X, y, 1)
    two = _fit(make(), X, y, 2)
    np.testing.assert_array_equal(one.coef_, two.coef_)
    np.testing.assert_array_equal(one.intercept_, two.intercept_)


def test_the_fused_pass_runs_its_blocks_in_threads():
    if cpu_count() < 2:
        pytest.fail("this test needs 2 CPUs (CI has 2)")
    X, y = _data()
    design = LinearDesign(X, fit_intercept=True)
    rows = design.fused_rows()
    assert rows is not None and X.shape[0] > 2 * rows
    seen = set()

    def weights(Z, block):
        seen.add(threading.current_thread().name)
        return np.tanh(Z)

    W = np.full(design.n_params, 0.1)
    with threadpool_limits(1):
        single = design.fused_weighted_sum(W, weights, rows)
    assert len(seen) == 1
    seen.clear()
    with threadpool_limits(2):
        threaded = design.fused_weighted_sum(W, weights, rows)
    assert len(seen) == 2
    np.testing.assert_array_equal(single, threaded)


def test_thread_count_follows_the_blas_limit():
    with threadpool_limits(1):
        assert pass_threads(10) == 1
    with threadpool_limits(2):
        assert pass_threads(10) == min(2, cpu_count())
        assert pass_threads(1) == 1


def test_map_blocks_keeps_block_order_and_restores_the_blas_limit():
    from threadpoolctl import threadpool_info

    before = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    out = map_blocks(lambda k, scratch: k * k, 7, 2)
    assert out == [k * k for k in range(7)]
    after = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert before == after


def test_an_error_in_a_block_reaches_the_caller():
    def work(k, scratch):
        if k == 3:
            raise ValueError("block 3")
        return k

    with pytest.raises(ValueError, match="block 3"):
        map_blocks(work, 6, 2)
    assert map_blocks(lambda k, s: k, 4, 2) == [0, 1, 2, 3]  # the pool still works


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transpose_product_is_the_same_with_one_and_two_threads(sparse, dtype):
    import scipy.sparse as sp

    from skdp.losses._float64_sums import transpose_product

    rng = np.random.default_rng(1)
    X = rng.standard_normal((20_000, 30)).astype(dtype)
    if sparse:
        X[rng.random(X.shape) < 0.8] = 0
        X = sp.csr_matrix(X)
    R = rng.standard_normal((20_000, 3))
    with threadpool_limits(1):
        one = transpose_product(X, R, rows=1024)
    with threadpool_limits(2):
        two = transpose_product(X, R, rows=1024)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(one, np.asarray(X.T @ R), rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("n_outputs", [None, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_decision_is_the_same_with_one_and_two_threads(order, dtype, n_outputs):
    rng = np.random.default_rng(2)
    X = np.asarray(rng.standard_normal((50_000, 40)), dtype=dtype, order=order)
    design = LinearDesign(X, fit_intercept=False)
    W = rng.standard_normal(40 if n_outputs is None else (40, n_outputs))
    with threadpool_limits(1):
        one = design.decision(W)
    design = LinearDesign(X, fit_intercept=False)
    with threadpool_limits(2):
        two = design.decision(W)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_allclose(one, X.astype(np.float64) @ W, rtol=1e-12)


@pytest.mark.parametrize("solver", ["auto", "preconditioned_gd"])
def test_the_full_preconditioner_is_the_same_with_one_and_two_threads(solver):
    # 100 features: LAPACK's eigendecomposition of the noisy Gram matrix runs
    # its BLAS in threads at this size, and rounded differently with 1 and 2
    X, y = _data(n=20_000, d=100)
    make = lambda: DPLogisticRegression(solver=solver, classes=[0, 1], random_state=0)  # noqa: E731
    one = _fit(make(), X, y, 1)
    assert one.solver_ == "preconditioned_gd"
    two = _fit(make(), X, y, 2)
    np.testing.assert_array_equal(one.coef_, two.coef_)
    np.testing.assert_array_equal(one.intercept_, two.intercept_)


def test_one_blas_thread_holds_the_blas_at_one_and_restores_it():
    from threadpoolctl import threadpool_info

    from skdp.losses import one_blas_thread

    def blas():
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    with threadpool_limits(2):
        before = blas()
        with one_blas_thread():
            assert set(blas()) == {1}
            with one_blas_thread():
                assert set(blas()) == {1}
            assert set(blas()) == {1}
        assert blas() == before


def test_dual_averaging_sets_the_blas_limit_once_per_fit_not_per_round(monkeypatch):
    # its rounds are products of a few rows; setting the limit to one thread and
    # back around each of them cost a quarter of a round on the audit's design
    from skdp.losses._threads import _blas_libraries, _controller

    calls = []
    for lib in _blas_libraries(_controller()):
        monkeypatch.setattr(lib, "set_num_threads",
                            lambda n, real=lib.set_num_threads: calls.append(n) or real(n))
    X, y = _data(n=400, d=3)
    est = DPLogisticRegression(solver="dual_averaging", classes=[0, 1], max_iter=50,
                               random_state=0)
    with threadpool_limits(2):
        calls.clear()
        one_fit = _fit(est, X, y, 2)
    assert one_fit.n_iter_ == 50
    assert 0 < len(calls) <= 4, len(calls)  # once down to 1 and once back, per library
    with threadpool_limits(1):
        np.testing.assert_array_equal(_fit(est, X, y, 1).coef_, one_fit.coef_)

"""Passes over row blocks in threads: the same fit whatever the number of threads."""

import itertools
import threading
import warnings

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
    (lambda n: DPLogisticRegression(solver="gd", classes=[0, 1], random_state=0, max_iter=5), 2),
    (lambda n: DPLogisticRegression(solver="gd", classes=[0, 1, 2], random_state=0,
                                    max_iter=5), 3),
    (lambda n: DPLinearSVC(solver="gd", classes=[0, 1], random_state=0, max_iter=5), 2),
    (lambda n: DPLogisticRegression(classes=[0, 1], random_state=0), 2),  # the defaults
    # the full preconditioner's first steps on Poisson samples of 5 / 12 of the rows (a
    # sampled pass's blocks are runs of the sample: several of them at 60,000 x 20)
    (lambda n: DPLogisticRegression(classes=[0, 1, 2], random_state=0,
                                    solver="preconditioned_gd",
                                    solver_params={"sampled_steps": 10,
                                                   "sample_rows": 5 * n / 12}), 3),
])
def test_same_coefficients_with_one_and_two_threads(make, n_classes, dtype, n, d):
    # (20,000 x 10: one block of the Gram matrix, whose product rounded with the BLAS's threads)
    X, y = _data(n=n, d=d, n_classes=n_classes, dtype=dtype)
    one = _fit(make(n), X, y, 1)
    two = _fit(make(n), X, y, 2)
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
    # against one float64 product: the error bound of a dot product, relative to
    # sum_j |x_ij w_j| (a relative tolerance fails where the terms cancel)
    X64 = X.astype(np.float64)
    assert np.all(np.abs(one - X64 @ W) <= 1e-12 * (np.abs(X64) @ np.abs(W)))


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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_row_norms_by_blocks_in_threads_are_einsums_bit_for_bit(dtype, order):
    # the squared norms are summed by row blocks in threads for a C-contiguous X;
    # each row's sum must be the one einsum gives over the whole X, whatever the threads
    from skdp.losses._design_rows import _dense_squared_norms
    rng = np.random.default_rng(3)
    X = (rng.standard_normal((40_001, 37)) * rng.lognormal(0, 4, size=(40_001, 1))).astype(dtype)
    X = np.asarray(X, order=order)
    expected = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    for threads in (1, 2):
        with threadpool_limits(threads):
            np.testing.assert_array_equal(_dense_squared_norms(X), expected)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_bad_value_in_any_block_of_a_large_x_is_found_before_the_charge(value, dtype):
    # the fit's finite check sums a large dense X by row blocks in threads
    # (skdp.losses.sum_is_finite): a NaN or infinity in the last block, in a
    # middle one or in the first must give scikit-learn's error (redacted:
    # the kind and the column, no value), and nothing is charged
    from skdp import DPLinearRegression
    from skdp.losses import sum_is_finite
    X, y = _data(n=50_000, d=6, dtype=dtype)
    assert sum_is_finite(X)
    for row, threads in itertools.product((0, 20_000, 49_999), (1, 2)):
        Xb = X.copy()
        Xb[row, 4] = value
        kind = "NaN" if np.isnan(value) else "infinity"
        # the thread count is explicit: the suite's workers hold the BLAS at one thread
        with threadpool_limits(threads):
            assert not sum_is_finite(Xb)
            for est in (DPLogisticRegression(random_state=0), DPLinearSVC(random_state=0),
                        DPLinearRegression(random_state=0)):
                accountant = BudgetAccountant()
                with pytest.raises(ValueError,
                                   match=rf"Input X contains {kind}.*\(in column 4\)"):
                    est.set_params(accountant=accountant).fit(Xb, y)
                assert len(accountant.spends) == 0 and accountant.spent() == (0.0, 0.0)


def test_finite_entries_whose_sum_overflows_are_accepted():
    # a sum that overflows is not proof of a bad value: scikit-learn's
    # entry-wise check decides, and this X is finite, so it fits
    X, y = _data(n=40_000, d=4)
    X[::2, 0] = 1e308
    from skdp.losses import sum_is_finite
    assert not sum_is_finite(X)
    model = DPLogisticRegression(random_state=0, data_norm=1.0, accountant=BudgetAccountant())
    assert np.isfinite(model.fit(X, y).coef_).all()


def test_a_fit_under_a_one_thread_blas_reads_the_limit_a_few_times_not_per_round(monkeypatch):
    # under threadpool_limits(1) (joblib's workers, OMP_NUM_THREADS=1, the test
    # suite's workers) one_blas_thread holds the BLAS like any other limit, so
    # the rounds' passes do not ask threadpoolctl for the thread count each time
    from skdp.losses._threads import _blas_libraries, _controller

    calls = []
    for lib in _blas_libraries(_controller()):
        monkeypatch.setattr(lib, "get_num_threads",
                            lambda real=lib.get_num_threads: calls.append(1) or real())
    X, y = _data(n=400, d=3)
    est = DPLogisticRegression(solver="dual_averaging", classes=[0, 1], max_iter=50,
                               random_state=0)
    with threadpool_limits(1):
        calls.clear()
        assert _fit(est, X, y, 1).n_iter_ == 50
    assert len(calls) <= 10, len(calls)


def test_every_share_of_a_pass_runs_under_the_callers_numpy_error_state():
    # review A, F2: numpy's error state is a context variable, which pool threads do not
    # inherit; a product that overflowed in a pool share warned although the caller had
    # silenced it, telling after the charge whether one huge record is in the data
    seen = set()

    def work(k, scratch):
        seen.add((threading.current_thread().name.startswith("skdp-pass"),
                  np.geterr()["over"]))
        return k

    with np.errstate(over="ignore"):
        assert map_blocks(work, 8, 2) == list(range(8))
    assert seen == {(False, "ignore"), (True, "ignore")}


@pytest.mark.skipif(cpu_count() < 2, reason="the pool shares need two CPUs")
def test_a_huge_record_in_a_pool_share_does_not_warn():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40000, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.integers(0, 3, 40000)
    y[X[:, 0] > 0.5] = 0
    X[20000] = 0.0
    X[20000, :2] = 1.5e308                 # finite, in a block a pool thread reads
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        DPLogisticRegression(classes=[0, 1, 2], solver="preconditioned_gd", random_state=0,
                             accountant=BudgetAccountant()).fit(X, y)

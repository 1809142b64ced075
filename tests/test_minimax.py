"""Solver ``rgda`` (paper 000): DP-SPIDER with normalised descent and saddle escape."""

import math
from unittest import mock

import numpy as np
import pytest
from joblib import Parallel, delayed
from sklearn.base import is_classifier

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp._base import PrivateEstimatorMixin
from skdp.accounting import (Composed, Gaussian, PoissonSampled, Repeated, calibrate,
                             get_epsilon)
from skdp.matrix_sensing import DPMatrixSensing, make_matrix_sensing
from skdp.solvers import PrivateQueries, available_solvers, get_solver

SHAPE, RANK = (20, 20), 3


@pytest.fixture(scope="module")
def sensing():
    return make_matrix_sensing(20000, shape=SHAPE, rank=RANK, noise=0.01, random_state=0)


def _relative_error(est, X_star):
    return np.linalg.norm(est.low_rank_matrix_ - X_star) / np.linalg.norm(X_star)


def _gradient_norm_of_phi(est, X, y):
    """||grad Phi(U, V)|| for Phi = mean squared residual / 2, from public outputs only."""
    U, V = est.components_
    residual = X @ (U @ V.T).ravel() + est.intercept_ - y
    G = (X.T @ residual / len(y)).reshape(SHAPE)
    return math.hypot(np.linalg.norm(G @ V), np.linalg.norm(G.T @ U))


def test_rgda_is_listed_for_the_smooth_models():
    assert "rgda" in available_solvers(DPMatrixSensing())
    assert "rgda" in available_solvers(DPLogisticRegression())
    for loss in ("squared_hinge", "smooth_hinge", "sigmoid"):
        assert "rgda" in available_solvers(DPLinearSVC(loss=loss))
    # the increments need a smooth loss: the hinge's kink has no smoothness
    assert "rgda" not in available_solvers(DPLinearSVC(loss="hinge"))
    with pytest.raises(ValueError, match="not available"):
        DPLinearSVC(loss="hinge", solver="rgda").fit(np.eye(2), [0, 1])


# --------------------------------------------------------------------------
# The saddle at U = V = 0
# --------------------------------------------------------------------------
class _Noiseless(np.random.Generator):
    """Every noise draw is zero; the public perturbation is still drawn."""

    def normal(self, loc=0.0, scale=1.0, size=None):
        return np.zeros(size) + loc if size is not None else np.float64(loc)


def _solve_from_zero(X, y, rng, **options):
    est = DPMatrixSensing(shape=SHAPE, rank=RANK, epsilon=8.0, solver="rgda",
                          solver_params=options or None)
    solver = get_solver("rgda")
    spec = est._problem_spec(solver, *X.shape, None)
    plan = solver.plan(spec)
    loss = est._bind_loss(X, y, spec)
    queries = PrivateQueries(loss, plan, rng, start=np.zeros(spec.coef_shape))
    return loss, solver.solve(queries, plan)


def test_escapes_the_exact_saddle_and_the_objective_falls(sensing):
    X, y, _ = sensing
    zero = np.zeros(2 * SHAPE[0] * RANK)
    # without the escape phase, the exact algorithm stays at the saddle (gradient 0)
    loss, stuck = _solve_from_zero(X, y, _Noiseless(np.random.PCG64(0)), escape=False)
    assert np.array_equal(stuck.coef, zero) and stuck.attributes["n_escapes_"] == 0
    f0 = loss.mean_loss(zero)
    for rng in (_Noiseless(np.random.PCG64(0)), np.random.default_rng(1)):
        loss, result = _solve_from_zero(X, y, rng)
        assert result.attributes["n_escapes_"] >= 1
        assert loss.mean_loss(result.coef) < 0.01 * f0   # measured: 0.002 f0


# --------------------------------------------------------------------------
# Accuracy and its trend in epsilon (the benchmark instance)
# --------------------------------------------------------------------------
def _fit_rgda(X, y, epsilon, seed):
    return DPMatrixSensing(shape=SHAPE, rank=RANK, epsilon=epsilon, solver="rgda",
                           random_state=seed, accountant=BudgetAccountant()).fit(X, y)


@pytest.fixture(scope="module")
def rgda_fits(sensing):
    """The benchmark instance's rgda fits, seeds 0-2, each fitted once (both cores)."""
    X, y, _ = sensing
    grid = [(epsilon, seed) for epsilon in (0.25, 1.0, 4.0, 8.0, 16.0) for seed in range(3)]
    fits = Parallel(n_jobs=2)(delayed(_fit_rgda)(X, y, e, s) for e, s in grid)
    return dict(zip(grid, fits))


@pytest.mark.parametrize("epsilon, ceiling", [(1.0, 0.20), (8.0, 0.05)])
def test_matrix_sensing_recovery(sensing, rgda_fits, epsilon, ceiling):
    X, y, X_star = sensing
    errors = [_relative_error(rgda_fits[epsilon, seed], X_star) for seed in range(3)]
    # measured (seeds 0-2): eps 1: 0.060 0.065 0.056; eps 8: 0.013 0.012 0.014
    assert max(errors) <= ceiling, errors


def test_gradient_norm_of_phi_falls_as_epsilon_grows(sensing, rgda_fits):
    X, y, _ = sensing
    means = []
    for epsilon in (0.25, 1.0, 4.0, 16.0):
        norms = [_gradient_norm_of_phi(rgda_fits[epsilon, seed], X, y) for seed in range(3)]
        means.append(np.mean(norms))
    # measured: 0.0107, 0.0012, 0.0004, 0.0003
    assert all(a > b for a, b in zip(means, means[1:])), means


def test_adult_accuracy_at_epsilon_1(adult):
    X_tr, y_tr, X_te, y_te = adult
    scores = [DPLogisticRegression(solver="rgda", random_state=s, accountant=BudgetAccountant())
              .fit(X_tr, y_tr).score(X_te, y_te) for s in range(2)]
    assert np.mean(scores) >= 0.82, scores   # measured 0.8334, 0.8336 (majority: 0.764)


# --------------------------------------------------------------------------
# Privacy: the queries, their count and their noise
# --------------------------------------------------------------------------
class _Recorder(np.random.Generator):
    log = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        _Recorder.log.append(float(scale))
        return super().normal(loc, scale, size)


def _logistic_problem(params):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0).astype(int)
    return DPLogisticRegression(solver="rgda", epsilon=2.0, delta=1e-5, max_iter=30,
                                solver_params=params, random_state=0,
                                accountant=BudgetAccountant()), X, y


def _minimax_problem(params):
    X, y, _ = make_matrix_sensing(1000, shape=(4, 4), rank=1, random_state=0)
    return DPMatrixSensing(shape=(4, 4), rank=1, solver="rgda", epsilon=2.0, delta=1e-5,
                           max_iter=30, solver_params={**params, "dual": "per_record"},
                           random_state=0, accountant=BudgetAccountant()), X, y


@pytest.mark.parametrize("problem", [_logistic_problem, _minimax_problem])
def test_noise_scales_are_the_calibrated_ones(problem):
    T, q, S2, step = 30, 10, 50, 1e-3
    # a tiny max_step: every descent step has exactly that length, so every
    # increment is clipped at C_t = L_clip * step
    params = {"threshold": 1e-12, "max_step": step, "relative_max_step": 0.0,
              "refresh_every": q, "increment_batch_size": S2, "escape": False}
    est, X, y = problem(params)
    real = PrivateEstimatorMixin._noise_rng
    _Recorder.log = []
    with mock.patch.object(PrivateEstimatorMixin, "_noise_rng",
                           lambda self, i: _Recorder(real(self, i).bit_generator)):
        est.fit(X, y)
    assert est.n_iter_ == T
    # our own calibration of the plan: R refreshes on the whole data, I
    # Poisson-sampled increments with kappa = 2 (S2 / n) sqrt(I / R)
    R, I, rate = 3, 27, S2 / 1000
    kappa = 2 * rate * math.sqrt(I / R)

    def tree(z):
        return Composed([Repeated(Gaussian(z), R),
                         Repeated(PoissonSampled(rate, Gaussian(kappa * z)), I)])

    z = calibrate(tree, 2.0, 1e-5)
    assert 0.999 * 2.0 <= get_epsilon(tree(z), 1e-5) <= 2.0 * (1 + 1e-9)
    labels = np.array([0, 1]) if is_classifier(est) else None
    plan = get_solver("rgda").plan(est._problem_spec(get_solver("rgda"), *X.shape, labels))
    assert math.isclose(plan.noise_multiplier, z, rel_tol=1e-6)
    L_clip = plan.details["clip_smoothness"]
    refresh, increment = z * est.clip_norm, kappa * z * L_clip * step
    log = np.array(_Recorder.log)
    assert np.sum(np.isclose(log, refresh, rtol=1e-5)) == R
    assert np.sum(np.isclose(log, increment, rtol=1e-5)) == I
    assert len(log) == R + I


def test_minimax_form_recovers_and_keeps_its_duals(sensing):
    # the paper's form: one private dual per record, K = 5 exact ascent steps
    X, y, X_star = sensing
    fits = [DPMatrixSensing(shape=SHAPE, rank=RANK, epsilon=1.0, solver="rgda",
                            solver_params={"dual": "per_record"}, random_state=seed,
                            accountant=BudgetAccountant()).fit(X, y) for seed in range(2)]
    errors = [_relative_error(est, X_star) for est in fits]
    # measured: 0.059 0.065 (the y-free form: 0.060 0.065)
    assert max(errors) <= 0.20, errors
    # the duals (one per record) are never released: no fitted attribute holds n values
    for est in fits:
        fitted = {k: v for k, v in vars(est).items() if k.endswith("_")}
        assert all(np.size(v) < len(y) for v in fitted.values()), sorted(fitted)


def test_minimax_form_at_exact_duals_is_the_y_free_form():
    # lambda = 1 maximises every dual exactly (y = rho): the same fit, noise
    # and all, as the y-free form; one short ascent step per outer step lags
    # behind and gives another fit, so the duals are what the queries use
    X, y, _ = make_matrix_sensing(1000, shape=(4, 4), rank=1, random_state=0)

    def fit(**params):
        return DPMatrixSensing(shape=(4, 4), rank=1, solver="rgda", max_iter=30,
                               solver_params=params or None, random_state=0,
                               accountant=BudgetAccountant()).fit(X, y).low_rank_matrix_

    y_free = fit()
    np.testing.assert_allclose(fit(dual="per_record", ascent_step=1, ascent_steps=1),
                               y_free, rtol=1e-9, atol=1e-12)
    lagging = fit(dual="per_record", ascent_step=0.2, ascent_steps=1)
    assert np.linalg.norm(lagging - y_free) > 1e-3 * np.linalg.norm(y_free)


def test_a_fit_never_runs_more_than_it_charged(sensing):
    X, y, _ = sensing
    acc = BudgetAccountant()
    est = DPMatrixSensing(shape=SHAPE, rank=RANK, epsilon=1.0, solver="rgda", max_iter=40,
                          random_state=0, accountant=acc).fit(X[:2000], y[:2000])
    assert 1 <= est.n_iter_ <= 40
    assert est.privacy_spent_ == (1.0, 1e-5)  # delta='auto' on 2,000 rows
    assert acc.spent()[0] == pytest.approx(1.0)


@pytest.mark.parametrize("params, match", [
    ({"refresh_every": 0}, "refresh_every"),
    ({"max_step": -1.0}, "max_step"),
    ({"relative_max_step": -0.1}, "relative_max_step"),
    ({"threshold": "small"}, "threshold"),
    ({"ascent_step": 1.5}, "ascent_step"),
    ({"dual": "per_record"}, "one dual per record"),
    ({"no_such_option": 1}, "no_such_option"),
])
def test_bad_options_raise_and_cost_nothing(params, match):
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(solver="rgda", solver_params=params,
                             accountant=acc).fit(np.eye(4), [0, 1, 0, 1])
    assert len(acc.spends) == 0


def test_no_public_smoothness_is_a_clear_error():
    # matrix sensing's loss reports a stand-in step (1 / step stands in for
    # L); a loss with neither a smoothness bound nor a stand-in cannot size
    # the increments
    from skdp.solvers import L2Penalty, ProblemSpec

    solver = get_solver("rgda")
    spec = dict(n_samples=200, coef_shape=(9,), loss_capabilities=frozenset(
        {"gradient", "gradient_difference", "smooth"}), smoothness=None, initial_value=None,
        penalty=L2Penalty(1e-5), clip_norm=0.05, data_norm=None, epsilon=1.0, delta=1e-5,
        options=solver.check_options({}))
    with pytest.raises(ValueError, match="public smoothness"):
        solver.plan(ProblemSpec(**spec))
    plan = solver.plan(ProblemSpec(**spec, stand_ins={"step": 0.5}))
    assert plan.spec.options["smoothness"] == 2.0


def test_sparse_and_float32_give_the_dense_float64_fit(sensing):
    import scipy.sparse as sp

    X, y, _ = sensing
    X, y = X[:1000], y[:1000]
    fits = [DPMatrixSensing(shape=SHAPE, rank=RANK, solver="rgda", max_iter=20, random_state=3,
                            accountant=BudgetAccountant()).fit(data, y).low_rank_matrix_
            for data in (X, sp.csr_matrix(X), X.astype(np.float32))]
    np.testing.assert_allclose(fits[1], fits[0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fits[2], fits[0], rtol=1e-3, atol=1e-4)


def _sparse_documents(n=3000, d=4000, seed=0):
    """Reuters-like: 10 random words per row, the 10% positives also 3 of 20 topic words."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.1).astype(int)
    rows, cols = [], []
    for i in range(n):
        c = rng.choice(np.arange(20, d), 10, replace=False)
        if y[i]:
            c = np.concatenate([c, rng.choice(20, 3, replace=False)])
        rows += [i] * len(c)
        cols += list(c)
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, d))
    return X.multiply(1.0 / np.sqrt(X.multiply(X).sum(axis=1))).tocsr(), y


@pytest.mark.parametrize("estimator", [DPLogisticRegression, DPLinearSVC])
def test_high_dimensional_sparse_data_beat_the_majority_class(estimator):
    # d >> the noise's budget: an increment after a gradient step is far
    # noisier than a refresh, so refresh_every='auto' refreshes every step and
    # the descent takes gd's step; the old defaults (q = 10, normalised steps,
    # threshold at the noise floor) released the majority class (0.894)
    X, y = _sparse_documents()
    majority = 1 - y.mean()
    scores = [estimator(epsilon=1.0, solver="rgda", random_state=s,
                        accountant=BudgetAccountant()).fit(X, y).score(X, y) for s in range(2)]
    # measured: LR 0.929, 0.924; SVC 0.932, 0.928
    assert min(scores) >= majority + 0.02, (scores, majority)
    plan = get_solver("rgda").plan(estimator(epsilon=1.0, solver="rgda")._problem_spec(
        get_solver("rgda"), *X.shape, np.array([0, 1])))
    assert plan.details["refresh_every"] == 1 and plan.details["max_step"] == math.inf


def test_with_increments_a_noise_only_estimate_still_ends_the_descent():
    # the paper's instance (n = 400, eps 2, C = 1, T = 400, q = 10): the noise floor is
    # above every clipped gradient, so rgda releases (about) its start. A threshold
    # below the floor there (as at q = 1) walks on noise: relative error ~1e5
    X, y, X_star = make_matrix_sensing(400, shape=(20, 20), rank=3, noise=0.01,
                                       random_state=0)
    est = DPMatrixSensing(shape=(20, 20), rank=3, solver="rgda", epsilon=2.0, delta=1e-6,
                          clip_norm=1.0, max_iter=400, random_state=0,
                          accountant=BudgetAccountant(),
                          solver_params={"refresh_every": 10, "refresh_batch_size": 200,
                                         "increment_batch_size": 50}).fit(X, y)
    error = np.linalg.norm(est.low_rank_matrix_ - X_star) / np.linalg.norm(X_star)
    assert error < 1.5

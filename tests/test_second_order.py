"""Solver ``second_order`` (issue 13, paper 004): penalties, Hessians, the noisy 2NS run."""

import math
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import eigh

import skdp
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp._base import PrivateEstimatorMixin
from skdp.accounting import get_epsilon
from skdp.losses import (
    BinaryLogisticLoss,
    LinearDesign,
    MultinomialLogisticLoss,
    SigmoidLoss,
    SmoothHingeLoss,
    SquaredHingeLoss,
)
from skdp.penalties import L2Penalty, NonConvexPenalty, make_penalty
from skdp.matrix_sensing import make_matrix_sensing
from skdp.solvers import PrivateQueries, available_solvers, get_solver
from skdp.solvers.second_order import C1
from skdp.validation import resolve_alpha

DELTA = 1e-5


# --------------------------------------------------------------------------
# Penalties
# --------------------------------------------------------------------------
def _fd_gradient(f, W, h=1e-6):
    g = np.zeros_like(W)
    for j in range(W.size):
        E = np.zeros(W.size)
        E[j] = h
        E = E.reshape(W.shape)
        g.flat[j] = (f(W + E) - f(W - E)) / (2 * h)
    return g


@pytest.mark.parametrize("cls", [L2Penalty, NonConvexPenalty])
def test_penalty_gradient_and_hessian_match_finite_differences(cls, rng):
    mask = np.array([True, True, True, False])
    pen = cls(0.3, mask)
    W = rng.normal(size=4) * 2
    np.testing.assert_allclose(pen.gradient(W), _fd_gradient(pen.value, W), atol=1e-7)
    second = [_fd_gradient(lambda v: pen.gradient(v)[j], W)[j] for j in range(4)]
    np.testing.assert_allclose(pen.hessian_diagonal(W), second, atol=1e-6)
    assert pen.gradient(W)[3] == 0 and pen.hessian_diagonal(W)[3] == 0  # the intercept


def test_nonconvex_penalty_constants_bound_its_derivatives():
    pen = NonConvexPenalty(1.0)
    w = np.linspace(-5, 5, 200001)
    second = pen.hessian_diagonal(w)
    assert second.max() <= pen.smoothness + 1e-12 and second.min() >= -pen.smoothness
    third = np.abs(np.diff(second) / np.diff(w))
    assert third.max() <= pen.hessian_lipschitz
    assert third.max() > 0.999 * pen.hessian_lipschitz  # and it is tight
    assert "convex" not in pen.capabilities and "convex" in L2Penalty(1.0).capabilities
    assert make_penalty(None, 5.0).alpha == 0.0


# --------------------------------------------------------------------------
# Loss Hessians: one vectorised pass, per-example clipping, public bounds
# --------------------------------------------------------------------------
def _losses(rng, n=40, d=4):
    X = rng.normal(size=(n, d))
    X[3] *= 1e3  # a row far above data_norm: clipped like every other
    y01 = rng.integers(0, 2, n).astype(float)
    signs = 2.0 * y01 - 1.0
    ovr = np.sign(rng.normal(size=(n, 3)))
    onehot = np.eye(3)[rng.integers(0, 3, n)]
    return X, [
        (BinaryLogisticLoss, y01, {}), (SigmoidLoss, signs, {}), (SigmoidLoss, ovr, {}),
        (MultinomialLogisticLoss, onehot, {}), (SmoothHingeLoss, signs, {"smoothing": 1.5}),
        (SquaredHingeLoss, ovr, {}),
    ]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hessians_match_finite_differences_of_the_gradient(sparse, dtype, rng):
    X, cases = _losses(rng)
    X = X.astype(dtype)
    for cls, y, params in cases:
        if cls in (SmoothHingeLoss, SquaredHingeLoss):
            continue  # piecewise quadratic: no second derivative at the kinks
        loss = cls(LinearDesign(sp.csr_matrix(X) if sparse else X, True, 2.0), y, **params)
        # the reference: central differences of the float64 gradient of the same rows
        exact = cls(LinearDesign(X.astype(np.float64), True, 2.0), y, **params)
        W = rng.normal(size=loss.coef_shape) * 0.5
        H = loss.hessian(W)
        P = W.size
        cols = []
        for j in range(P):
            E = np.zeros(P)
            E[j] = 1e-6
            E = E.reshape(W.shape)
            cols.append(((exact.grad_sum(W + E) - exact.grad_sum(W - E)) / 2e-6).ravel())
        fd = np.column_stack(cols)
        tol = 1e-5 if dtype == np.float64 else 1e-3
        np.testing.assert_allclose(H, fd, atol=tol * max(1.0, np.abs(fd).max()))
        np.testing.assert_allclose(H, H.T)
        V = rng.normal(size=W.shape)
        np.testing.assert_allclose(loss.hessian_matvec(W, V).ravel(), H @ V.ravel(),
                                   atol=tol * max(1.0, np.abs(H).max()) * np.abs(V).sum())


def test_each_example_hessian_is_clipped_to_the_frobenius_bound(rng):
    X, cases = _losses(rng)
    for cls, y, params in cases:
        design = LinearDesign(X, True, None)  # raw rows: the clip must bind
        loss = cls(design, y, **params)
        W = rng.normal(size=loss.coef_shape)
        for clip in (1e-3, 0.05):
            norms = [np.linalg.norm(loss.hessian(W, clip, idx=np.array([i])))
                     for i in range(len(y))]
            assert max(norms) <= clip * (1 + 1e-9), cls.__name__
            assert max(norms) > 0.5 * clip  # some example is clipped to the bound
            V = rng.normal(size=W.shape)
            np.testing.assert_allclose(loss.hessian_matvec(W, V, clip).ravel(),
                                       loss.hessian(W, clip) @ V.ravel(), atol=1e-12)


def test_public_hessian_bounds_hold_and_need_no_clipping(rng):
    X, cases = _losses(rng)
    for cls, y, params in cases:
        n_outputs = None if y.ndim == 1 else y.shape[1]
        row_bound = math.hypot(2.0, 1.0)
        bound, lipschitz = cls.hessian_constants(row_bound, n_outputs, **params)
        loss = cls(LinearDesign(X, True, 2.0), y, **params)
        W = rng.normal(size=loss.coef_shape) * 3
        norms = [np.linalg.norm(loss.hessian(W, idx=np.array([i]))) for i in range(len(y))]
        assert max(norms) <= bound * (1 + 1e-9), cls.__name__
        np.testing.assert_allclose(loss.hessian(W, bound), loss.hessian(W))
        if cls in (SmoothHingeLoss, SquaredHingeLoss):
            assert lipschitz is None  # not twice differentiable
            continue
        # the Hessian changes by at most M ||dW|| (operator norm), per example
        for _ in range(5):
            D = rng.normal(size=W.shape)
            D *= 1e-3 / np.linalg.norm(D)
            for i in range(0, len(y), 7):
                idx = np.array([i])
                change = np.linalg.norm(loss.hessian(W + D, idx=idx) - loss.hessian(W, idx=idx), 2)
                assert change <= lipschitz * 1e-3 * (1 + 1e-6), cls.__name__


def test_sigmoid_loss_is_bounded_and_its_constants_hold():
    m = np.linspace(-40, 40, 400001)
    loss = SigmoidLoss(LinearDesign(np.ones((1, 1)), False, None), np.ones(1))
    values, d1 = loss._loss(m), loss._dloss(m)
    d2 = loss._second_derivatives(m, np.ones_like(m))
    assert values.min() >= 0 and values.max() <= 1 and loss._loss(np.zeros(1))[0] == 0.5
    assert np.abs(d1).max() <= 0.25 and np.abs(d2).max() <= SigmoidLoss.curvature_bound
    assert np.abs(np.diff(d2) / np.diff(m)).max() <= SigmoidLoss.third_derivative_bound
    assert "convex" not in SigmoidLoss.capabilities


# --------------------------------------------------------------------------
# The solver
# --------------------------------------------------------------------------
def test_second_order_is_offered_where_its_needs_are_met():
    for est in (DPLogisticRegression(), DPLogisticRegression(penalty="nonconvex"),
                DPLogisticRegression(classes=[0, 1, 2], penalty="nonconvex"),
                DPLinearSVC(loss="sigmoid"), DPLinearSVC(), DPLinearSVC(loss="squared_hinge"),
                DPMatrixSensing()):
        assert "second_order" in available_solvers(est), est
    assert "second_order" not in available_solvers(DPLinearSVC(loss="hinge"))
    # solvers that need a convex objective are not offered for a non-convex one
    for est in (DPLogisticRegression(penalty="nonconvex"), DPLinearSVC(loss="sigmoid")):
        assert not {"heavy_ball", "nesterov", "multistage_nesterov"} & set(available_solvers(est))
        assert {"gd", "line_search", "second_order"} <= set(available_solvers(est))


class _Recorder(np.random.Generator):
    """Records the scale of every Gaussian and Laplace draw of a fit."""

    log = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        type(self).log.append(("normal", float(scale), size))
        return super().normal(loc, scale, size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        type(self).log.append(("laplace", float(scale), size))
        return super().laplace(loc, scale, size)


def _recorded_fit(est, X, y):
    real = PrivateEstimatorMixin._noise_rng
    _Recorder.log = []

    def recording(self, seed_index):
        return _Recorder(real(self, seed_index).bit_generator)

    with mock.patch.object(PrivateEstimatorMixin, "_noise_rng", recording):
        est.fit(X, y)
    return list(_Recorder.log)


def _nonconvex_problem(n=4000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = np.array([3.0, -2.0, 1.0])[:d]
    y = (rng.random(n) < 1 / (1 + np.exp(-X @ w))).astype(int)
    return X, y


@pytest.mark.parametrize("step", ["line_search", "short"])
def test_noise_scales_are_the_calibrated_ones(step):
    X, y = _nonconvex_problem()
    # tol_gradient large: the run reaches the Hessian test and certifies
    params = {"learning_rate": step, "tol_gradient": 0.1, "phase1_iter": 5, "max_iter_cap": 12,
              "two_phase": True, "hessian_share": 0.2, "max_hessians": 3, "search_weight": 0.25}
    est = DPLogisticRegression(penalty="nonconvex", solver="second_order", epsilon=2.0,
                               solver_params=params, random_state=0,
                               accountant=BudgetAccountant())
    log = _recorded_fit(est, X, y)
    spec = est._problem_spec(get_solver("second_order"), *X.shape, np.array([0, 1]))
    plan = get_solver("second_order").plan(spec)
    phases = plan.details["phases"]
    assert len(phases) == 2 and phases[0] == 5
    search = 0.25 if step == "line_search" else 0.0
    shares = [0.75, 0.25]
    u = plan.noise_multiplier
    # eq. 8 / 14 as ratios: phase j's share, 0.2 of it for min(3, T_j) Hessians,
    # the rest for T_j iterations of a gradient and a search in the ratio 1 : 0.25
    z = [u / math.sqrt(s * 0.8 / T / (1 + search)) for T, s in zip(phases, shares)]
    z_hessian = [u / math.sqrt(s * 0.2 / min(3, T)) for T, s in zip(phases, shares)]
    # the calibrated tree is exactly (epsilon, delta): paper 004's split, our accountant
    assert get_epsilon(plan.mechanism, DELTA) <= 2.0 * (1 + 1e-9)
    clip = est.clip_norm
    hclip = spec.hessian_bound
    gaussian = {s for kind, s, size in log if kind == "normal"}
    allowed = {zj * clip for zj in z} | {zj * hclip for zj in z_hessian}
    assert gaussian and all(any(math.isclose(s, a, rel_tol=1e-12) for a in allowed)
                            for s in gaussian)
    # a noisy Hessian was drawn at the Hessian's calibrated scale
    assert any(math.isclose(s, zj * hclip, rel_tol=1e-12) for s in gaussian for zj in z_hessian)
    laplace = {s for kind, s, size in log if kind == "laplace"}
    if step == "short":
        assert not laplace
    else:
        # threshold Lap(2 lambda Delta) and queries Lap(4 lambda Delta), lambda = z (eq. 14):
        # every search draws a threshold t and queries at 2 t
        draws = [s for kind, s, size in log if kind == "laplace"]
        assert laplace and all(any(math.isclose(q, 2 * t, rel_tol=1e-12) for t in laplace)
                               or any(math.isclose(q, t / 2, rel_tol=1e-12) for t in laplace)
                               for q in laplace), draws
    assert est.n_hessian_evaluations_ >= 1 and est.n_gradient_steps_ >= 1


def test_certification_rate_goes_to_one_as_n_grows():
    params = {"tol_gradient": 0.03, "phase1_iter": 40, "max_iter_cap": 80}
    rates = {}
    for n in (300, 100_000):
        certified = []
        for seed in range(4):
            X, y = _nonconvex_problem(n, seed=seed)
            est = DPLogisticRegression(penalty="nonconvex", solver="second_order", epsilon=1.0,
                                       solver_params=params, random_state=seed,
                                       accountant=BudgetAccountant()).fit(X, y)
            certified.append(est.certified_)
            if est.certified_ and n > 1000:
                # eq. 11: the certified point is a ((1+c1) eps_g, (1+c) eps_H)-2NS point
                loss = BinaryLogisticLoss(LinearDesign(X, True, 1.0), y.astype(float))
                W = np.r_[est.coef_.ravel(), est.intercept_]
                pen = NonConvexPenalty(resolve_alpha(est.alpha, n), np.r_[np.ones(3, bool), False])
                grad = loss.grad_sum(W) / n + pen.gradient(W)
                H = loss.hessian(W) / n + np.diag(pen.hessian_diagonal(W))
                assert np.linalg.norm(grad) <= est.gradient_tolerance_
                assert np.isclose(est.gradient_tolerance_, (1 + C1) * 0.03)
                assert eigh(H, eigvals_only=True)[0] >= -est.curvature_tolerance_
                assert est.curvature_tolerance_ > 0
        rates[n] = np.mean(certified)
    assert rates[100_000] == 1.0 and rates[300] < 1.0, rates


def test_convex_objectives_certify_without_any_hessian():
    X, y = _nonconvex_problem(20000)
    est = DPLogisticRegression(solver="second_order", epsilon=1.0, random_state=0,
                               solver_params={"tol_gradient": 0.03},
                               accountant=BudgetAccountant())
    log = _recorded_fit(est, X, y)
    assert est.certified_ and est.n_hessian_evaluations_ == 0
    assert est.curvature_tolerance_ == 0.0
    assert all(size != (4, 4) for kind, s, size in log)  # no noisy Hessian was drawn
    # pure DP: a convex run needs no Gaussian Hessian
    pure = DPLogisticRegression(solver="second_order", epsilon=1.0, delta=0.0, random_state=0,
                                accountant=BudgetAccountant()).fit(X, y)
    assert pure.score(X, y) > 0.7


def test_refusals_cost_nothing():
    X, y = _nonconvex_problem(500)
    acc = BudgetAccountant(epsilon=5.0)
    with pytest.raises(ValueError, match="needs delta > 0"):
        DPLogisticRegression(penalty="nonconvex", solver="second_order", delta=0.0,
                             accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="Lipschitz constant of the Hessian"):
        DPLogisticRegression(penalty="nonconvex", solver="second_order", data_norm=None,
                             solver_params={"smoothness": 1.0}, accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="public smoothness"):
        DPLogisticRegression(solver="second_order", data_norm=None, accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="tol_gradient"):
        DPLogisticRegression(solver="second_order", solver_params={"tol_gradient": -1},
                             accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="penalty"):
        DPLogisticRegression(penalty="l3", accountant=acc).fit(X, y)   # l1 is valid now
    assert acc.spends == []


def test_refit_with_another_solver_drops_the_solver_attributes():
    X, y = _nonconvex_problem(500)
    est = DPLogisticRegression(solver="second_order", random_state=0,
                               accountant=BudgetAccountant()).fit(X, y)
    assert hasattr(est, "certified_") and est.solver_ == "second_order"
    est.set_params(solver="gd").fit(X, y)
    assert not hasattr(est, "certified_") and not hasattr(est, "n_hessian_evaluations_")


def test_nonconvex_penalty_keeps_large_weights():
    X, y = _nonconvex_problem(20000)
    kw = dict(alpha=0.05, epsilon=5.0, solver="second_order", random_state=0)
    ridge = DPLogisticRegression(**kw, accountant=BudgetAccountant()).fit(X, y)
    nonconvex = DPLogisticRegression(penalty="nonconvex", **kw,
                                     accountant=BudgetAccountant()).fit(X, y)
    # the ridge shrinks the strong weight; the bounded penalty barely does
    assert np.abs(nonconvex.coef_).max() > 1.5 * np.abs(ridge.coef_).max()


@pytest.mark.parametrize("estimator, floor", [
    (lambda s: DPLogisticRegression(penalty="nonconvex", solver="second_order",
                                    random_state=s), 0.84),     # 0.8451 (seeds 0-2)
    (lambda s: DPLinearSVC(loss="sigmoid", solver="second_order", random_state=s), 0.83),
])
def test_adult_accuracy_with_defaults(estimator, floor, adult):
    X_tr, y_tr, X_te, y_te = adult
    scores = [estimator(s).set_params(accountant=BudgetAccountant()).fit(X_tr, y_tr)
              .score(X_te, y_te) for s in range(3)]
    assert np.mean(scores) >= floor, scores


# --------------------------------------------------------------------------
# Matrix sensing: the strict saddle at U = V = 0, recovery
# --------------------------------------------------------------------------
class _Noiseless(np.random.Generator):
    """Every noise draw is zero (what the exact algorithm would see)."""

    def normal(self, loc=0.0, scale=1.0, size=None):
        return np.zeros(size) + loc if size is not None else np.float64(loc)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self.normal(loc, scale, size)


@pytest.fixture(scope="module")
def sensing():
    return make_matrix_sensing(20000, shape=(20, 20), rank=3, noise=0.01, random_state=0)


def _solve_from_zero(solver_name, X, y, rng, epsilon=8.0):
    est = DPMatrixSensing(shape=(20, 20), rank=3, epsilon=epsilon, solver=solver_name)
    solver = get_solver(solver_name)
    spec = est._problem_spec(solver, *X.shape, None)
    plan = solver.plan(spec)
    loss = est._bind_loss(X, y, spec)
    queries = PrivateQueries(loss, plan, rng, start=np.zeros(spec.coef_shape))
    return loss, solver.solve(queries, plan)


def test_a_curvature_step_escapes_the_saddle_where_gd_cannot_move(sensing):
    X, y, _ = sensing
    zero = np.zeros(120)
    # the exact algorithms (noise switched off): the gradient at U = V = 0 is 0
    loss, gd = _solve_from_zero("gd", X, y, _Noiseless(np.random.PCG64(0)))
    assert np.array_equal(gd.coef, zero)
    f0 = loss.mean_loss(zero)
    loss, so = _solve_from_zero("second_order", X, y, _Noiseless(np.random.PCG64(0)))
    assert so.attributes["n_curvature_steps_"] >= 1
    assert loss.mean_loss(so.coef) < 0.5 * f0
    # with its noise, from the same point, the objective falls as well
    loss, noisy = _solve_from_zero("second_order", X, y, np.random.default_rng(1))
    assert loss.mean_loss(noisy.coef) < 0.1 * f0


def test_matrix_sensing_recovery_at_epsilon_8(sensing):
    X, y, X_star = sensing
    errors = []
    for seed in range(3):
        est = DPMatrixSensing(shape=(20, 20), rank=3, epsilon=8.0, solver="second_order",
                              random_state=seed, accountant=BudgetAccountant()).fit(X, y)
        errors.append(np.linalg.norm(est.low_rank_matrix_ - X_star) / np.linalg.norm(X_star))
    assert np.mean(errors) <= 0.05, errors   # 0.018


def test_hessians_are_drawn_from_their_reserve_only():
    # every iteration asks for a second-order test (huge eps_g) and no test
    # can certify (eps_H far below the Hessian noise at epsilon 0.01): the
    # reserve of 3 is drawn, then gradient steps run to the cap; nothing is
    # refused mid-run
    X, y = _nonconvex_problem(2000)
    est = DPLogisticRegression(penalty="nonconvex", solver="second_order", random_state=0,
                               epsilon=0.01,
                               solver_params={"tol_gradient": 10.0, "tol_hessian": 1e-12,
                                              "max_hessians": 3, "max_iter_cap": 20},
                               accountant=BudgetAccountant()).fit(X, y)
    assert est.n_hessian_evaluations_ == 3 and est.n_iter_ == 20 and not est.certified_
    assert est.n_curvature_steps_ + est.n_gradient_steps_ == 20


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_matrix_sensing_hessian_matches_finite_differences_and_is_clipped(sparse, fit_intercept,
                                                                          rng):
    p, q, r, n = 3, 4, 2, 30
    X = rng.normal(size=(n, p * q))
    X[2] *= 100  # far above data_norm: clipped like every other row
    y = rng.normal(size=n)
    design = LinearDesign(sp.csr_matrix(X) if sparse else X, False, 5.0)
    loss = skdp.losses.MatrixSensingLoss(design, y, (p, q), r, fit_intercept=fit_intercept,
                                         intercept_scale=0.7)
    W = rng.normal(size=loss.coef_shape)
    H = loss.hessian(W)
    P = W.size
    fd = np.column_stack([(loss.grad_sum(W + e) - loss.grad_sum(W - e)) / 2e-6
                          for e in np.eye(P) * 1e-6])
    np.testing.assert_allclose(H, fd, atol=1e-6 * np.abs(fd).max())
    V = rng.normal(size=P)
    np.testing.assert_allclose(loss.hessian_matvec(W, V), H @ V, atol=1e-10 * np.abs(H).max())
    for clip in (0.5, 5.0):
        norms = [np.linalg.norm(loss.hessian(W, clip, np.array([i]))) for i in range(n)]
        assert max(norms) <= clip * (1 + 1e-9) and max(norms) > 0.5 * clip
        np.testing.assert_allclose(loss.hessian_matvec(W, V, clip), loss.hessian(W, clip) @ V,
                                   atol=1e-12 * max(1.0, np.abs(H).max()))


def test_lanczos_and_dense_eigenpairs_agree():
    # beyond dense_limit the smallest eigenpair comes from Lanczos on
    # Hessian-vector products plus the same noise matrix: same answer
    X, y = _nonconvex_problem(3000, d=3)
    est = DPLogisticRegression(penalty="nonconvex", solver="second_order", epsilon=1.0)
    solver = get_solver("second_order")
    spec = est._problem_spec(solver, *X.shape, np.array([0, 1]))
    plan = solver.plan(spec)
    loss = est._bind_loss(X, y, spec)
    W = np.array([0.5, -1.0, 2.0, 0.1])
    pairs = []
    for limit in (2000, 1):
        queries = PrivateQueries(loss, plan, np.random.default_rng(7))
        z = 50.0
        pen = spec.penalty
        batch = queries.batch(spec.noise(z, 1.0), 1.0)
        pairs.append(batch.noisy_hessian_eigenpair(W, z, spec.hessian_bound,
                                                   public_diagonal=pen.hessian_diagonal(W),
                                                   dense_limit=limit))
    (lam_dense, v_dense), (lam_lanczos, v_lanczos) = pairs
    assert math.isclose(lam_dense, lam_lanczos, rel_tol=1e-6, abs_tol=1e-9)
    assert abs(abs(float(np.vdot(v_dense, v_lanczos))) - 1.0) < 1e-6


@pytest.mark.parametrize("step", ["line_search", "short"])
def test_poisson_batches_run_within_the_filter(step):
    # each iteration's gradient and search share one Poisson batch, charged
    # once; a second-order test draws its Hessian on a batch of its own
    X, y = _nonconvex_problem(20000)
    est = DPLogisticRegression(penalty="nonconvex", solver="second_order", batch_size=2000,
                               random_state=0, epsilon=2.0,
                               solver_params={"learning_rate": step, "tol_gradient": 0.05},
                               accountant=BudgetAccountant()).fit(X, y)
    assert est.n_hessian_evaluations_ >= 1 and est.score(X, y) > 0.7
    assert est.privacy_spent_ == (2.0, min(DELTA, 1 / (10 * 20000)))  # delta="auto"


def test_search_tests_each_candidate_at_its_own_steps_scale():
    # Algorithm 3's candidates b * safe, b/2 * safe, ..., safe: each query's
    # examples are clipped at the bound of its own step (gamma * C * ||d||
    # times relative_loss_clip) and the query rescaled to the first one's
    # sensitivity, so the shorter steps are not tested under noise sized for
    # the longest (the paper's Delta_q uses gamma_init for every query)
    from skdp.solvers._queries import PrivateBatch
    X, y = _nonconvex_problem()
    seen = []
    original = PrivateBatch.above_threshold

    def record(self, W, candidates, mechanism, loss_clip, clip="decrease"):
        candidates = list(candidates)
        seen.append((loss_clip, [c[2] for c in candidates],
                     [float(np.linalg.norm(c[0] - W)) for c in candidates]))
        return original(self, W, iter(candidates), mechanism, loss_clip, clip)

    est = DPLogisticRegression(penalty="nonconvex", solver="second_order", epsilon=2.0,
                               solver_params={"max_step": 4.0, "max_iter_cap": 5},
                               random_state=0, accountant=BudgetAccountant())
    with mock.patch.object(PrivateBatch, "above_threshold", record):
        est.fit(X, y)
    assert seen
    for loss_clip, own, lengths in seen:
        assert len(own) == 3 and math.isclose(own[0], loss_clip, rel_tol=1e-12)
        # own clip proportional to the step length: 1, 1/2, 1/4 of the first
        assert np.allclose(np.array(own) / loss_clip, np.array(lengths) / lengths[0], rtol=1e-9)
        assert np.allclose(np.array(own) / loss_clip, [1.0, 0.5, 0.25], rtol=1e-9)


def test_float32_hessian_vector_term_stays_within_its_bound():
    # the projection x . v of a float32 row is taken in float64: rounded in
    # float32 after the clipping, it let the record's own term exceed
    # hessian_clip * ||v|| (by 1.2e-7 relative here, v nearly parallel to x)
    X = np.array([[-0.01713627, -1.4755291]], dtype=np.float32)
    v = np.array([-0.01712148, -1.47444004])
    loss = BinaryLogisticLoss(LinearDesign(X, False), np.array([1.0]))
    term = loss.hessian_matvec(np.zeros(2), v, 1e-3, idx=np.array([0]))
    assert np.linalg.norm(term) <= 1e-3 * np.linalg.norm(v) * (1 + 1e-12)

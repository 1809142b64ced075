"""Solver ``line_search`` (issue 12, paper 002): private Armijo steps under a privacy filter."""

import contextlib
import io
import math
from unittest import mock

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import Normalizer

from skdp import DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.accounting import (
    BudgetAccountant,
    BudgetError,
    Composed,
    FilteredRDP,
    Gaussian,
    GaussianSparseVector,
    Laplace,
    PoissonSampled,
    PrivacyFilter,
    PureDP,
    Repeated,
    SparseVector,
    get_epsilon,
    get_rdp,
    mechanism_from_dict,
)
from skdp.losses import BatchSums
from skdp.matrix_sensing import make_matrix_sensing
from skdp.solvers import (
    L2Penalty,
    Plan,
    PrivateQueries,
    ProblemSpec,
    QueryBudgetError,
    Solver,
    available_solvers,
    get_solver,
    register_solver,
    unregister_solver,
)
from skdp.testing import epsilon_lower_bound
from skdp.validation import resolve_delta

DELTA = 1e-5


# --------------------------------------------------------------------------
# Accounting: Gaussian AboveThreshold, the filter's charge, the filter
# --------------------------------------------------------------------------
def test_gaussian_sparse_vector_curve_is_zhu_wang_and_grows_with_the_queries():
    orders = np.array([2.0, 8.0, 32.0])
    for k in (1, 20, 1000):
        m = GaussianSparseVector(3.0, 4.0, k)
        expected = np.log(k) / (orders - 1) + orders / 9.0 + 2 * orders / 16.0
        np.testing.assert_allclose(get_rdp(m, orders), expected)
    eps = [get_epsilon(GaussianSparseVector(10.0, 14.0, k), DELTA) for k in (1, 10, 100, 1000)]
    assert eps == sorted(eps) and eps[-1] > eps[0] * 1.2
    assert mechanism_from_dict(GaussianSparseVector(1.0, 2.0, 5).to_dict()) == \
        GaussianSparseVector(1.0, 2.0, 5)
    with pytest.raises(ValueError, match="max_queries must be >= 1"):
        GaussianSparseVector(1.0, 1.0, 0)


def test_filtered_rdp_holds_below_its_order_and_nowhere_above():
    m = FilteredRDP(12.0, 0.4)
    rdp = get_rdp(m, [2.0, 12.0, 12.5, 64.0])
    np.testing.assert_array_equal(rdp, [0.4, 0.4, np.inf, np.inf])
    assert mechanism_from_dict(m.to_dict()) == m
    with pytest.raises(ValueError, match="order must be > 1"):
        FilteredRDP(1.0, 0.1)


@pytest.mark.parametrize("epsilon, delta, order", [(1.0, 1e-5, 20.0), (0.5, 1e-6, 64.0),
                                                   (3.0, 1e-3, 4.0)])
def test_the_filter_charge_is_exactly_its_epsilon(epsilon, delta, order):
    f = PrivacyFilter(epsilon, delta, order=order)
    assert get_epsilon(f.mechanism, delta) == pytest.approx(epsilon, rel=1e-9)
    assert get_epsilon(f.mechanism, delta) <= epsilon * (1 + 1e-12)
    # and the accountant takes it as such (basic composition)
    acc = BudgetAccountant(epsilon, delta)
    acc.charge(epsilon, delta, mechanism=f.mechanism)
    with pytest.raises(BudgetError, match="composition='gaussian'"):
        BudgetAccountant(10.0, 0.1, composition="gaussian").charge(
            epsilon, delta, mechanism=f.mechanism)


def test_pure_filter_admits_pure_mechanisms_only():
    f = PrivacyFilter(1.0, 0.0)
    assert f.mechanism == PureDP(1.0)
    assert not f.admits(Gaussian(1.0))
    with pytest.raises(BudgetError, match="Nothing was recorded"):
        f.spend(Gaussian(100.0))
    f.spend(Repeated(Laplace(4.0), 2))
    f.spend(SparseVector(0.25, 0.25))
    assert f.spent == pytest.approx(1.0) and f.remaining == pytest.approx(0.0)
    assert not f.admits(Laplace(1e6))


def test_the_filter_computes_each_mechanisms_cost_once_per_accounting():
    # line_search asks its filter about the same few mechanisms at every step:
    # their RDP at the filter's order was 15 % of a fit on the audit's design
    from skdp.accounting import filter as filter_module
    from skdp.accounting.discrete import secure_accounting

    f = PrivacyFilter(100.0, 1e-5, order=8.0)
    step = SparseVector(0.05, 0.05)
    with mock.patch.object(filter_module, "get_rdp", wraps=filter_module.get_rdp) as spy:
        for _ in range(20):
            assert f.admits(step)
            f.spend(step)
        assert spy.call_count == 1
        with secure_accounting():  # secure accounting charges the discrete form anew
            f.admits(Gaussian(3.0))
            f.admits(Gaussian(3.0))
        f.admits(Gaussian(3.0))
        assert spy.call_count == 3
    fresh = PrivacyFilter(100.0, 1e-5, order=8.0)
    with secure_accounting():
        assert f.cost(Gaussian(3.0)) == fresh.cost(Gaussian(3.0))
    assert f.cost(Gaussian(3.0)) == float(get_rdp(Gaussian(3.0), orders=[8.0])[0])
    assert f.spent == pytest.approx(20 * f.cost(step))


def test_filter_needs_a_public_order_with_delta():
    with pytest.raises(ValueError, match="order > 1 fixed before the data is read"):
        PrivacyFilter(1.0, 1e-5)
    with pytest.raises(ValueError, match="conversion alone costs more"):
        PrivacyFilter(0.01, 1e-10, order=2.0)


def _random_mechanism(rng, scale):
    """A random mechanism whose size is about ``scale`` (adversarially near the rest)."""
    kind = rng.integers(5)
    z = 1.0 / max(scale, 1e-6) ** 0.5 * rng.uniform(0.5, 2.0)
    if kind == 0:
        return Gaussian(z)
    if kind == 1:
        return Laplace(z)
    if kind == 2:
        e = rng.uniform(0.2, 2.0) / z
        return SparseVector(e, e)
    if kind == 3:
        return GaussianSparseVector(z, 1.5 * z, int(rng.integers(1, 50)))
    inner = Composed([Gaussian(z / 3), SparseVector(1 / z, 1 / z)])
    return PoissonSampled(float(rng.uniform(0.01, 1.0)), inner)


@pytest.mark.parametrize("delta", [0.0, 1e-5, 1e-3])
def test_the_filter_never_admits_more_than_its_budget(delta):
    # property test: many runs, each adversary picks its next cost from what
    # is left (the hardest sequences sit right at the boundary)
    rng = np.random.default_rng(0)
    for run in range(60):
        epsilon = float(rng.choice([0.3, 1.0, 4.0]))
        if delta == 0:
            f = PrivacyFilter(epsilon, delta)
        else:
            valid = [o for o in (3.0, 8.0, 20.0, 64.0, 256.0)
                     if epsilon > -np.log(delta) / (o - 1)]
            f = PrivacyFilter(epsilon, delta, order=float(rng.choice(valid)))
        refused = 0
        for _ in range(300):
            left = f.remaining
            m = _random_mechanism(rng, max(left, 1e-4) * rng.uniform(0.01, 1.5))
            if delta == 0 and not isinstance(m, (Laplace, SparseVector)):
                m = Laplace(1.0 / max(left * rng.uniform(0.5, 1.5), 1e-6))
            before = list(f.admitted)
            if f.admits(m):
                f.spend(m)
            else:
                refused += 1
                with pytest.raises(BudgetError):
                    f.spend(m)
                assert f.admitted == before      # a refusal records nothing
            assert f.spent <= f.budget
        assert refused > 0
        if f.admitted:
            spent = get_epsilon(Composed(f.admitted), delta)
            assert spent <= epsilon * (1 + 1e-9), (run, spent, epsilon)
            assert f.spent_epsilon() <= epsilon


# --------------------------------------------------------------------------
# AboveThreshold, audited at the mechanism level
# --------------------------------------------------------------------------
class _OneRecord(BatchSums):
    """A data set of one record whose loss at candidate ``j`` rises by ``rise``.

    ``rise=0`` is the null record (zero-out neighbour: every decrease 0);
    ``rise=C`` makes every Armijo query of AboveThreshold lower by the full
    sensitivity C.
    """

    n_samples = 1

    def __init__(self, rise):
        self.rise = rise

    def loss_values(self, W, idx=None, loss_clip=None):
        return np.array([self.rise * float(W[0] != 0)])


def _above_threshold_outputs(rise, mechanism, n_runs, n_queries, seed, own_clip=None):
    spec = ProblemSpec(n_samples=1, coef_shape=(1,), loss_capabilities=frozenset({"values"}),
                       smoothness=None, initial_value=None, penalty=L2Penalty(0.0),
                       clip_norm=1.0, data_norm=None, epsilon=2.0, delta=0.0)
    plan = Plan(spec=spec, mechanism=Repeated(mechanism, n_runs), n_iter=n_runs)
    queries = PrivateQueries(_OneRecord(rise), plan, np.random.default_rng(seed))
    candidates = [(np.array([j + 1.0]), 0.0) + (() if own_clip is None else (own_clip,))
                  for j in range(n_queries)]
    return np.array([
        -1 if (k := queries.batch(mechanism).above_threshold(
            np.zeros(1), iter(candidates), mechanism, 1.0)) is None else k
        for _ in range(n_runs)])


def _svt_audit(mechanism, n_runs=20000, n_queries=8, own_clip=None):
    # D: the null record (every query 0); D': a record lowering every query
    # by the sensitivity. The event: no query is answered above.
    out_d = _above_threshold_outputs(0.0, mechanism, n_runs, n_queries, 1, own_clip)
    out_d2 = _above_threshold_outputs(1.0, mechanism, n_runs, n_queries, 2, own_clip)
    tp, fp = int(np.sum(out_d2 == -1)), int(np.sum(out_d == -1))
    return epsilon_lower_bound(tp, n_runs - tp, fp, n_runs - fp, 0.0, confidence=0.95)


def test_above_threshold_audit_stays_below_its_epsilon_and_catches_no_threshold_noise():
    claimed = SparseVector(1.0, 1.0)  # 2-DP for any number of queries
    bound = _svt_audit(claimed)
    assert bound <= claimed.epsilon, bound
    assert bound > 0.5  # the test has power: it sees most of the privacy loss
    # broken: without the threshold's noise each query leaks on its own, and
    # eight of them leak more than the claim (about 2.65 here)
    # (a vanishing scale: the release door refuses a noise multiplier of 0)
    with mock.patch.object(SparseVector, "threshold_scale", property(lambda self: 1e-300)):
        broken = _svt_audit(claimed)
    assert broken > claimed.epsilon, broken


def test_above_threshold_with_a_candidates_own_clip_keeps_the_sensitivity():
    # each query is (C / c) * sum clip(decrease, +-c): a record moves it by
    # at most C, so the audit sees what it sees at c = C, and no more
    claimed = SparseVector(1.0, 1.0)
    bound = _svt_audit(claimed, own_clip=0.25)
    assert 0.5 < bound <= claimed.epsilon, bound
    # broken: the rescaling without the candidate's own clip (each term
    # clipped to C, then times C / c = 4) moves a query by 4 C
    original = BatchSums.clipped_decrease

    def ignores_own_clip(self, W, loss_clip, idx=None):
        decrease = original(self, W, loss_clip, idx)
        return lambda V, own=None: decrease(V)

    with mock.patch.object(BatchSums, "clipped_decrease", ignores_own_clip):
        broken = _svt_audit(claimed, own_clip=0.25)
    assert broken > claimed.epsilon, broken


def _huge_drop_queries(third, n_searches):
    """Queries on three records; the first one's loss drops by 1e12 at every candidate."""
    spec = ProblemSpec(n_samples=3, coef_shape=(1,), loss_capabilities=frozenset({"values"}),
                       smoothness=None, initial_value=None, penalty=L2Penalty(0.0),
                       clip_norm=1.0, data_norm=None, epsilon=1.0, delta=0.0)

    class Huge(BatchSums):
        n_samples = 3

        def loss_values(self, W, idx=None, loss_clip=None):
            return np.array([1e12 * (W[0] == 0), 0.0, third])

    m = SparseVector(50.0, 50.0)
    plan = Plan(spec=spec, mechanism=Repeated(m, n_searches), n_iter=n_searches)
    return PrivateQueries(Huge(), plan, np.random.default_rng(0)), m


def test_above_threshold_tests_a_candidate_at_its_own_clip():
    q, m = _huge_drop_queries(0.0, 3)
    # clip 0.1 of C = 0.5: the drop counts 0.1, the query is 5 (0.1 + o)
    assert q.batch(m).above_threshold(np.zeros(1), [(np.ones(1), -0.14, 0.1)], m, 0.5) is None
    assert q.batch(m).above_threshold(np.zeros(1), [(np.ones(1), -0.06, 0.1)], m, 0.5) == 0
    with pytest.raises(ValueError, match="own clip must lie in"):
        q.batch(m).above_threshold(np.zeros(1), [(np.ones(1), 0.0, 0.6)], m, 0.5)


def test_above_threshold_releases_only_an_index_and_clips_each_example():
    q, m = _huge_drop_queries(np.inf, 2)
    # the huge drop counts as the clip 0.5 only: offset -0.6 keeps the query below 0
    assert q.batch(m).above_threshold(np.zeros(1), [(np.ones(1), -0.6)], m, 0.5) is None
    assert q.batch(m).above_threshold(np.zeros(1), [(np.ones(1), -0.4)], m, 0.5) == 0
    with pytest.raises(QueryBudgetError, match="does not provide for"):
        q.batch(m)


# --------------------------------------------------------------------------
# The seam: adaptive plans, batches, query budgets
# --------------------------------------------------------------------------
class _Greedy(Solver):
    """Test-only adaptive solver: one more gradient than its filter admits."""

    name = "greedy_for_tests"
    requires = frozenset({"gradient"})

    def plan(self, spec):
        f = PrivacyFilter.for_plan(Repeated(Gaussian(10.0), 5), spec.epsilon, spec.delta)
        return Plan(spec=spec, mechanism=f.mechanism, n_iter=5, adaptive=True,
                    noise_multiplier=10.0)

    def solve(self, queries, plan):
        W = queries.initial_coef()
        while True:  # never asks affordable(): the filter stops it
            W = W - queries.noisy_gradient(W, plan.noise_multiplier)


class _Sneaky(_Greedy):
    """Test-only: runs a search on a batch charged for a gradient only."""

    name = "sneaky_for_tests"

    def solve(self, queries, plan):
        batch = queries.batch(Gaussian(10.0))
        batch.above_threshold(queries.initial_coef(), [], SparseVector(1.0, 1.0), 1.0)


@pytest.mark.parametrize("solver, match", [(_Greedy(), "privacy filter does not admit"),
                                           (_Sneaky(), "was not charged for")])
def test_a_solver_querying_beyond_its_filter_fails_loudly(solver, match):
    register_solver(solver)
    try:
        X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
        est = DPLogisticRegression(solver=solver.name, accountant=BudgetAccountant())
        with pytest.raises(QueryBudgetError, match=match):
            est.fit(Normalizer().fit_transform(X), y)
        assert not hasattr(est, "coef_")
    finally:
        unregister_solver(solver.name)


def test_the_plan_calibrates_planned_iterations_to_the_filter_budget():
    solver = get_solver("line_search")
    for delta in (0.0, DELTA):
        spec = ProblemSpec(n_samples=30000, coef_shape=(124,),
                           loss_capabilities=frozenset({"gradient", "values"}), smoothness=0.5,
                           initial_value=None, penalty=L2Penalty(1e-4), clip_norm=1.0,
                           data_norm=1.0, epsilon=0.5, delta=delta, batch_size=3000,
                           options=solver.check_options({"gradient_noise_cap": None}))
        plan = solver.plan(spec)
        assert plan.adaptive and plan.n_iter == plan.spec.options["max_iter_cap"]
        f = PrivacyFilter(0.5, delta, getattr(plan.mechanism, "order", None))
        assert f.mechanism == plan.mechanism
        z = plan.noise_multiplier
        ratio = spec.options["search_share"] / (1 - spec.options["search_share"])
        e = ratio / z if delta == 0 else math.sqrt(ratio) / z
        grad = Laplace(z) if delta == 0 else Gaussian(z)
        one = PoissonSampled(0.1, Composed([grad, SparseVector(e / 2, e / 2)]))
        # the planned iterations fit, and the calibration wastes under 1 %
        assert f.cost(Repeated(one, plan.n_iter)) <= f.budget
        assert f.cost(Repeated(one, int(plan.n_iter * 1.01) + 1)) > f.budget


# --------------------------------------------------------------------------
# Estimators
# --------------------------------------------------------------------------
def test_line_search_is_offered_by_every_estimator():
    assert "line_search" in available_solvers(DPLogisticRegression)
    assert "line_search" in available_solvers(DPLogisticRegression(classes=[0, 1, 2]))
    for loss in ("hinge", "squared_hinge", "smooth_hinge"):
        assert "line_search" in available_solvers(DPLinearSVC(loss=loss))
    assert "line_search" in available_solvers(DPMatrixSensing)


def _easy(n_classes, n=3000, seed=0):
    X, y = make_classification(n, 6, n_informative=4, n_redundant=0, n_classes=n_classes,
                               class_sep=2.5, random_state=seed)
    return Normalizer().fit_transform(X), y


@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(solver="line_search", epsilon=5.0),
    lambda: DPLogisticRegression(solver="line_search", epsilon=5.0, delta=0.0),
    lambda: DPLogisticRegression(solver="line_search", epsilon=5.0, batch_size=200),
    lambda: DPLogisticRegression(solver="line_search", epsilon=5.0,
                                 solver_params={"search_noise": "gaussian",
                                                "clip_loss": "values",
                                                "adaptive_clipping": True,
                                                "budget_increase": "always"}),
    lambda: DPLinearSVC(solver="line_search", epsilon=5.0, loss="hinge"),
    lambda: DPLinearSVC(solver="line_search", epsilon=5.0),
], ids=["lr", "lr-pure", "lr-sampled", "lr-options", "svc-hinge", "svc-smooth"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_line_search_fits_classifiers(make, n_classes):
    X, y = _easy(n_classes)
    est = make().set_params(random_state=0, accountant=BudgetAccountant())
    est.fit(X, y)
    planned = est.solver_params_["max_iter_cap"]
    assert 1 <= est.n_iter_ <= planned
    assert est.score(X, y) > 0.8
    assert est.privacy_spent_ == (est.epsilon, resolve_delta(est.delta, len(X)))
    assert est.accountant.spent()[0] == pytest.approx(est.epsilon)


def test_line_search_fits_matrix_sensing():
    X, y, _ = make_matrix_sensing(5000, shape=(8, 8), rank=2, noise=0.01, random_state=0)
    est = DPMatrixSensing(shape=(8, 8), rank=2, solver="line_search", epsilon=2.0,
                          random_state=0, accountant=BudgetAccountant()).fit(X[:4000], y[:4000])
    assert 1 <= est.n_iter_ <= est.solver_params_["max_iter_cap"]
    assert est.score(X[4000:], y[4000:]) > 0.9


def test_line_search_is_reproducible_and_fresh_per_charge():
    X, y = _easy(2)
    fit = lambda acc: DPLogisticRegression(solver="line_search", random_state=3,  # noqa: E731
                                           accountant=acc).fit(X, y).coef_
    np.testing.assert_array_equal(fit(BudgetAccountant()), fit(BudgetAccountant()))
    acc = BudgetAccountant()
    assert not np.array_equal(fit(acc), fit(acc))


def test_verbose_reports_the_released_spend():
    X, y = _easy(2)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        DPLogisticRegression(solver="line_search", verbose=1, random_state=0,
                             accountant=BudgetAccountant()).fit(X, y)
    text = out.getvalue()
    assert "solver=line_search" in text and "(charged)" in text
    spent = float(text.split("spent epsilon=")[1].split()[0])
    assert 0 < spent <= 1.0


def test_bad_options_cost_nothing():
    X, y = _easy(2)
    acc = BudgetAccountant()
    for params, match in [({"armijo": 1.5}, "armijo"), ({"search_noise": "cauchy"}, "search_noise"),
                          ({"clip_loss": "both"}, "clip_loss"), ({"max_backtracks": 0},
                                                                 "max_backtracks")]:
        with pytest.raises(ValueError, match=match):
            DPLogisticRegression(solver="line_search", solver_params=params,
                                 accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="needs delta > 0"):
        DPLogisticRegression(solver="line_search", delta=0.0, accountant=acc,
                             solver_params={"search_noise": "gaussian"}).fit(X, y)
    with pytest.raises(ValueError, match="learning_rate='auto'"):
        DPLogisticRegression(solver="line_search", data_norm=None, accountant=acc).fit(X, y)
    assert acc.spent() == (0.0, 0.0)


# --------------------------------------------------------------------------
# Adult (real data): the acceptance numbers
# --------------------------------------------------------------------------
def _adult_accuracy(make, adult, seeds=(0, 1, 2)):
    X, y, Xt, yt = adult
    return float(np.mean([make().set_params(random_state=s, accountant=BudgetAccountant())
                          .fit(X, y).score(Xt, yt) for s in seeds]))


@pytest.mark.parametrize("estimator, epsilon, floor", [
    ("lr", 1.0, 0.845), ("lr", 0.1, 0.835), ("svc_hinge", 1.0, 0.845)])
def test_adult_accuracy_with_defaults(estimator, epsilon, floor, adult):
    def make():
        if estimator == "lr":
            return DPLogisticRegression(solver="line_search", epsilon=epsilon, delta=DELTA)
        return DPLinearSVC(solver="line_search", loss="hinge", epsilon=epsilon, delta=DELTA)

    assert _adult_accuracy(make, adult) >= floor


def test_gaussian_search_that_cannot_meet_epsilon_is_refused_before_the_charge():
    X, y = _easy(2)
    acc = BudgetAccountant()
    est = DPLogisticRegression(solver="line_search", epsilon=0.05, accountant=acc,
                               solver_params={"search_noise": "gaussian"})
    with pytest.raises(ValueError, match="log\\(max_backtracks\\)"):
        est.fit(X, y)
    assert acc.spent() == (0.0, 0.0)


# --------------------------------------------------------------------------
# High dimension: the noise-dominated regime (Reuters: 8315 sparse features)
# --------------------------------------------------------------------------
def _sparse_text_like(n=4000, d=4000, seed=0):
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.2).astype(int)
    rows, cols = [], []
    for i in range(n):
        c = list(rng.choice(d, 8, replace=False))
        if y[i]:
            c += list(rng.choice(10, 3, replace=False))  # class 1's words among the first 10
        rows += [i] * len(c)
        cols += c
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, d))
    X.data[:] = 1.0
    return Normalizer().fit_transform(X), y


@pytest.mark.parametrize("estimator", [DPLogisticRegression, DPLinearSVC])
def test_high_dimensional_defaults_beat_the_majority_class(estimator):
    # P z^2 / n^2 = 1.6 at max_iter_cap=300: the old offset a eta n ||g~||^2 was
    # dominated by noise, no step passed the search and the fit stayed at the
    # majority class (0.80); debiased offset and 46 planned iterations: ~0.98
    X, y = _sparse_text_like()
    Xt, yt = _sparse_text_like(seed=1)
    majority = max(np.mean(yt), 1 - np.mean(yt))
    est = estimator(solver="line_search", epsilon=1.0, random_state=0,
                    accountant=BudgetAccountant()).fit(X, y)
    assert est.n_iter_ < 100
    assert est.score(Xt, yt) > majority + 0.1
    old = estimator(solver="line_search", epsilon=1.0, random_state=0,
                    accountant=BudgetAccountant(),
                    solver_params={"armijo_norm": "noisy", "gradient_noise_cap": None})
    assert old.fit(X, y).score(Xt, yt) < majority + 0.01


def test_noise_cap_rule_is_public_and_leaves_low_dimensions_alone():
    solver = get_solver("line_search")

    def plan(n, d, **options):
        spec = ProblemSpec(n_samples=n, coef_shape=(d,),
                           loss_capabilities=frozenset({"gradient", "values"}), smoothness=0.5,
                           initial_value=None, penalty=L2Penalty(1e-4), clip_norm=1.0,
                           data_norm=1.0, epsilon=1.0, delta=DELTA, batch_size=None,
                           options=solver.check_options(options))
        return solver.plan(spec)

    low = plan(24420, 124)
    assert low.n_iter == 300 and not low.details["debiased"]
    high = plan(5827, 8316)
    assert 40 <= high.n_iter <= 50 and high.details["debiased"]
    assert LineSearchRatio(high) == pytest.approx(0.25, rel=0.05)
    off = plan(5827, 8316, gradient_noise_cap=None)
    assert off.n_iter == 300 and not off.details["debiased"]


def LineSearchRatio(plan):  # noqa: N802
    return get_solver("line_search").gradient_noise_ratio(plan.spec, plan.noise_multiplier)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_candidates_on_one_line_share_one_pass_and_equal_the_direct_sums(fmt):
    import scipy.sparse as sp
    from skdp.losses import BinaryLogisticLoss, LinearDesign, MultinomialLogisticLoss
    from skdp.losses._batch_sums import BatchSums
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    X[rng.random(X.shape) < 0.4] = 0.0
    X = sp.csr_matrix(X) if fmt == "csr" else X
    for loss in (BinaryLogisticLoss(LinearDesign(X, True, 1.0), (rng.random(400) < 0.3) * 1.0),
                 MultinomialLogisticLoss(LinearDesign(X, True, 1.0),
                                         np.eye(3)[rng.integers(0, 3, 400)])):
        W, d = rng.normal(size=loss.coef_shape), rng.normal(size=loss.coef_shape)
        passes = []
        decision = loss.design.decision
        loss.design.decision = lambda V, idx=None: passes.append(1) or decision(V, idx)
        try:
            fast = loss.clipped_decrease(W, 0.3)
            got = [fast(W - 3.0 * 0.7 ** k * d) for k in range(12)]
            assert len(passes) == 2            # the reference and the first candidate
            elsewhere = rng.normal(size=loss.coef_shape)
            got.append(fast(elsewhere))        # off the line: a pass of its own
            assert len(passes) == 3
        finally:
            loss.design.decision = decision
        direct = BatchSums.clipped_decrease(loss, W, 0.3)
        expected = [direct(W - 3.0 * 0.7 ** k * d) for k in range(12)] + [direct(elsewhere)]
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_budgets_build_each_mechanism_once_and_again_after_growth(delta):
    # the mechanisms are built once per budget (a step's cost) and must be
    # rebuilt whenever a budget grows: a stale one would charge and draw the
    # old noise
    from skdp.solvers.line_search import _Budgets

    spec = ProblemSpec(n_samples=100, coef_shape=(2,), loss_capabilities=frozenset({"values"}),
                       smoothness=None, initial_value=None, penalty=L2Penalty(0.0),
                       clip_norm=1.0, data_norm=None, epsilon=1.0, delta=delta)

    def fresh(z, search_epsilon):
        e = search_epsilon
        return spec.noise(z, 1.0), SparseVector(e / 2.0, e / 2.0)

    budgets = _Budgets(spec, 2.0, 0.25, 40, False)
    gradient, search, iteration = budgets.gradient(), budgets.search(), budgets.iteration()
    assert (gradient, search) == fresh(2.0, budgets.search_epsilon)
    assert iteration == Composed([gradient, search])
    assert budgets.gradient() is gradient and budgets.search() is search
    assert budgets.iteration() is iteration
    budgets.grow_gradient(1.3)
    assert budgets.z < 2.0
    assert budgets.gradient() == fresh(budgets.z, budgets.search_epsilon)[0] != gradient
    assert budgets.iteration() == Composed([budgets.gradient(), search])
    budgets.grow_search(1.3)
    assert budgets.search() == fresh(budgets.z, budgets.search_epsilon)[1] != search
    assert budgets.iteration() == Composed([budgets.gradient(), budgets.search()])

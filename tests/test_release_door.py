"""One release door (issue 38): every noisy value skdp releases goes through it.

A scan of the source fails if a noise distribution is sampled anywhere but in
the door (``skdp/accounting/release.py``) or a function named as public
randomness; a runtime check records the releases of real fits; the noise law
at the door is measured.
"""

import ast
import dataclasses
import pathlib
import textwrap
import types

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import make_classification

import skdp
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.accounting import (
    Gaussian,
    Laplace,
    GaussianSparseVector,
    Mechanism,
    Repeated,
    SparseVector,
    recording,
    release,
    release_operator,
    release_symmetric,
    sparse_vector_components,
)
from skdp.losses import BinaryLogisticLoss, LinearDesign
from skdp.matrix_sensing import make_matrix_sensing
from skdp.model_selection import PrivateGridSearchCV
from skdp.preprocessing import DPStandardScaler
from skdp.solvers import PrivateQueries, available_solvers

PACKAGE = pathlib.Path(skdp.__file__).parent

#: methods of numpy's Generator / RandomState (and the legacy numpy.random
#: functions) that sample a continuous or integer noise distribution. Uniform
#: draws, integers, choices, permutations and binomial counts are left out:
#: they make public choices, seeds and Poisson subsamples, not noise on a value.
NOISE_SAMPLERS = frozenset({
    "normal", "standard_normal", "randn", "laplace", "exponential", "standard_exponential",
    "gumbel", "logistic", "gamma", "standard_gamma", "standard_t", "cauchy", "standard_cauchy",
    "lognormal", "geometric", "poisson", "logseries", "negative_binomial", "chisquare",
    "noncentral_chisquare", "noncentral_f", "wald", "weibull", "pareto", "rayleigh",
    "vonmises", "triangular", "multivariate_normal", "dirichlet", "zipf", "hypergeometric",
    "beta", "multivariate_hypergeometric",
    "rvs",  # every scipy.stats distribution
})

#: (module path under skdp/, qualified function name): why it may sample. Minimal.
ALLOWED = {
    ("accounting/release.py", "_draw_noise"):
        "the door's one sampler: the noise of every release",
    ("accounting/release.py", "secret_run_count"):
        "the door: the secret number of runs of a private selection (RepeatAndSelect)",
    ("solvers/_batch_queries.py", "public_eigsh_start"):
        "public: Lanczos's start vector steers the eigen-solver, drawn without the data",
    ("solvers/minimax.py", "public_uniform_ball"):
        "public: the saddle-escape perturbation direction, drawn without the data",
    ("matrix_sensing.py", "public_random_factors"):
        "public: the random start of the factors, drawn before the data is read",
    ("matrix_sensing.py", "make_matrix_sensing"):
        "public: a synthetic data generator, seeded by its caller",
    ("datasets.py", "make_ill_conditioned_classification"):
        "public: a synthetic data generator, seeded by its caller",
    ("datasets.py", "make_bounded_regression"):
        "public: a synthetic data generator, seeded by its caller",
    ("testing/audit_designs.py", "_NoiselessGenerator.laplace"):
        "the audit's negative control noise_off: returns zeros (no draw), patched in "
        "only inside its with block",
    ("testing/audit_designs.py", "_HalfLaplaceGenerator.laplace"):
        "the audit's negative control laplace_half_scale: Laplace noise at half the "
        "calibrated scale, patched in only inside its with block, to be caught",
}


class _Sampling(ast.NodeVisitor):
    """Collect ``(qualified function, line, sampler)`` of every noise draw in a module."""

    def __init__(self):
        self.scope, self.found = [], []

    def _enter(self, node):
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _enter

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in NOISE_SAMPLERS:
            self.found.append((".".join(self.scope), node.lineno, func.attr))
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        # ``from numpy.random import normal`` would hide the sampler behind a bare name
        if node.module in ("numpy.random", "scipy.stats"):
            for alias in node.names:
                if alias.name in NOISE_SAMPLERS or node.module == "scipy.stats":
                    self.found.append((".".join(self.scope), node.lineno,
                                       f"import {alias.name}"))
        self.generic_visit(node)


def noise_draws(source):
    """Every noise draw in ``source``: a list of (qualified function, line, sampler)."""
    visitor = _Sampling()
    visitor.visit(ast.parse(source))
    return visitor.found


def _draws_outside_the_door(source, module):
    return [(module, where, line, what) for where, line, what in noise_draws(source)
            if (module, where) not in ALLOWED]


def _modules():
    return sorted(PACKAGE.rglob("*.py"))


def test_no_noise_is_sampled_outside_the_door():
    rogue = []
    for path in _modules():
        module = path.relative_to(PACKAGE).as_posix()
        rogue += _draws_outside_the_door(path.read_text(encoding="utf-8"), module)
    assert not rogue, (
        "noise sampled outside the release door (skdp.accounting.release); route it "
        f"through release(), or name public randomness and allow it here: {rogue}")


def test_every_allowed_function_still_exists_and_samples():
    # a stale entry would widen the door for the next function of that name
    drawing = set()
    for path in _modules():
        module = path.relative_to(PACKAGE).as_posix()
        drawing |= {(module, where) for where, _, _ in noise_draws(path.read_text("utf-8"))}
    assert set(ALLOWED) <= drawing, set(ALLOWED) - drawing


def test_the_scan_catches_a_rogue_draw():
    snippet = textwrap.dedent("""
        import scipy.stats
        from numpy.random import laplace

        class Solver:
            def step(self, g, rng):
                return g + rng.normal(0.0, 1.0, size=g.shape)

        def public_start(rng):  # named public, but not allowed by the list
            return rng.standard_normal(3)

        def score(c, rng):
            return c + scipy.stats.laplace(scale=2.0).rvs(random_state=rng)
    """)
    found = _draws_outside_the_door(snippet, "solvers/rogue.py")
    assert {(where, what) for _, where, _, what in found} == {
        ("Solver.step", "normal"), ("public_start", "standard_normal"),
        ("score", "laplace"), ("score", "rvs"), ("", "import laplace")}
    # and the real door's sampler is allowed only in the door's module
    door = "def _draw_noise(m, s, rng, shape):\n    return rng.normal(0.0, s, size=shape)\n"
    assert not _draws_outside_the_door(door, "accounting/release.py")
    assert _draws_outside_the_door(door, "solvers/gd.py")


# -- the releases of real fits --------------------------------------------------
def _nodes(mechanism, out=None):
    """Every mechanism in a tree (the node itself and everything below it)."""
    out = [] if out is None else out
    out.append(mechanism)
    for field in dataclasses.fields(mechanism):
        value = getattr(mechanism, field.name)
        for child in (value if isinstance(value, tuple) else (value,)):
            if isinstance(child, Mechanism):
                _nodes(child, out)
    return out


@pytest.fixture
def ran_queries(monkeypatch):
    """The PrivateQueries of the fits run in the test (what an adaptive plan ran)."""
    made = []
    init = PrivateQueries.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(PrivateQueries, "__init__", spy)
    return made


def _check_records(records, accountant, ran_queries):
    """Each release is finite and its mechanism is one the fit charged (or a component)."""
    assert records, "the fit released nothing through the door"
    charged = [node for spend in accountant.spends for node in _nodes(spend.mechanism)]
    for queries in ran_queries:
        if queries.privacy_filter is not None:
            # an adaptive plan charges its privacy filter (FilteredRDP, or PureDP
            # when delta = 0), which admitted exactly what ran
            assert queries.privacy_filter.mechanism in charged
            charged += _nodes(queries.ran)
    for record in records:
        assert record.mechanism in charged or record.part_of in charged, record
        if record.part_of is not None:
            assert record.mechanism in sparse_vector_components(record.part_of)
        assert isinstance(record.mechanism, (Gaussian, Laplace))
        assert record.sensitivity >= 0 and np.isfinite(record.sensitivity)
        if record.value is not None:
            assert np.shape(record.value) == record.shape
            assert np.all(np.isfinite(record.value)), record.what


@pytest.fixture(scope="module")
def classification():
    X, y = make_classification(n_samples=200, n_features=4, random_state=0)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


#: (estimator, solver) pairs that need Gaussian noise, refused at delta = 0
GAUSSIAN_ONLY = {(DPLogisticRegression, "preconditioned_gd"), (DPLinearSVC, "preconditioned_gd")}


def _solver_cases():
    cases = []
    for cls in (DPLogisticRegression, DPLinearSVC, DPMatrixSensing):
        for solver in available_solvers(cls):
            cases.append((cls, solver, 1e-5))
            if cls is not DPMatrixSensing and (cls, solver) not in GAUSSIAN_ONLY:
                cases.append((cls, solver, 0.0))  # Laplace noise, sparse vector
    return cases


@pytest.mark.parametrize("cls, solver, delta", _solver_cases(),
                         ids=lambda v: v.__name__ if isinstance(v, type) else str(v))
def test_every_solver_releases_only_through_the_door(cls, solver, delta, classification,
                                                     ran_queries):
    if cls is DPMatrixSensing:
        X, y, _ = make_matrix_sensing(200, shape=(3, 2), rank=1, random_state=0)
        params = {"shape": (3, 2), "rank": 1}
    else:
        (X, y), params = classification, {"data_norm": 1.0}
    est = cls(solver=solver, epsilon=1.0, delta=delta, max_iter=4, random_state=0,
              accountant=(accountant := BudgetAccountant()), **params)
    with recording() as records:
        est.fit(X, y)
    _check_records(records, accountant, ran_queries)


def test_a_scaler_releases_its_two_sums_through_the_door(classification, ran_queries):
    X, _ = classification
    accountant = BudgetAccountant()
    with recording() as records:
        DPStandardScaler(bounds=(-1.0, 1.0), epsilon=1.0, accountant=accountant,
                         random_state=0).fit(X)
    assert [r.what for r in records] == ["DPStandardScaler sum",
                                         "DPStandardScaler sum of squares"]
    assert all(r.shape == (X.shape[1],) for r in records)
    _check_records(records, accountant, ran_queries)


def test_a_private_search_releases_its_fits_and_score_through_the_door(classification,
                                                                        ran_queries):
    X, y = classification
    accountant = BudgetAccountant()
    with recording() as records:
        PrivateGridSearchCV(DPLogisticRegression(epsilon=0.5, max_iter=3),
                            {"alpha": [1e-4, 1e-2]}, accountant=accountant,
                            random_state=0).fit(X, y)
    whats = {r.what for r in records}
    assert "validation score" in whats and "noisy gradient" in whats
    _check_records(records, accountant, ran_queries)


# -- the noise law at the door --------------------------------------------------
N_DRAWS = 200_000


@pytest.mark.parametrize("mechanism, law", [
    (Gaussian(0.7), lambda scale: stats.norm(scale=scale)),
    (Laplace(0.7), lambda scale: stats.laplace(scale=scale)),
])
def test_the_door_adds_the_mechanisms_noise_at_its_scale(mechanism, law):
    exact = np.linspace(-3.0, 3.0, N_DRAWS).astype(np.float32)
    before = exact.copy()
    with recording() as records:
        noisy = release(exact, mechanism, 2.0, np.random.default_rng(0), what="law")
    assert noisy.dtype == np.float64 and np.array_equal(exact, before)  # caller's array kept
    noise = noisy - exact.astype(np.float64)
    scale = 0.7 * 2.0
    expected = law(scale)
    # mean and variance within 5 standard errors; the whole law by Kolmogorov-Smirnov
    assert abs(noise.mean()) < 5 * expected.std() / np.sqrt(N_DRAWS)
    kurtosis = expected.stats(moments="k") + 3.0
    assert abs(noise.var() / expected.var() - 1) < 5 * np.sqrt((kurtosis - 1) / N_DRAWS)
    assert stats.kstest(noise, expected.cdf).pvalue > 1e-3
    (record,) = records
    assert record.mechanism == mechanism and record.sensitivity == 2.0
    assert record.shape == (N_DRAWS,) and np.array_equal(record.value, noisy)
    assert record.value is not noisy  # the record keeps its own copy


def test_outside_recording_nothing_is_recorded():
    with recording() as records:
        pass
    release(1.0, Gaussian(1.0), 1.0, np.random.default_rng(0), what="unseen")
    assert records == []
    with recording() as outer:
        release(1.0, Gaussian(1.0), 1.0, np.random.default_rng(0), what="outer")
        with recording() as inner:
            release(1.0, Gaussian(1.0), 1.0, np.random.default_rng(0), what="inner")
    assert [r.what for r in outer] == ["outer"] and [r.what for r in inner] == ["inner"]


def test_the_door_refuses_what_it_cannot_release():
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match="Gaussian or Laplace"):
        release(1.0, SparseVector(1.0, 1.0), 1.0, rng, what="x")
    with pytest.raises(ValueError, match="sensitivity"):
        release(1.0, Gaussian(1.0), np.inf, rng, what="x")


def test_the_gram_noise_has_variance_sigma2_on_the_diagonal_and_half_off_it():
    # the Gram query as the solvers call it: R^2 = 2 (unit rows plus the intercept)
    X = np.random.default_rng(1).normal(size=(50, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    z, n_draws = 0.7, 3000
    loss = BinaryLogisticLoss(LinearDesign(X, True, 1.0), np.zeros(len(X)))
    spec = types.SimpleNamespace(n_samples=len(X), row_bound=np.sqrt(2.0), sampling_rate=1.0,
                                 noise=lambda m, rate=None: Gaussian(m))
    plan = types.SimpleNamespace(spec=spec, adaptive=False,
                                 mechanism=Repeated(Gaussian(z), n_draws))
    queries = PrivateQueries(loss, plan, np.random.default_rng(0))
    with recording() as records:
        noisy = np.array([queries.noisy_gram(z) for _ in range(n_draws)])
    noise = (noisy - loss.gram_sum() / len(X)) * len(X)
    p, sigma = 4, z * 2.0
    assert np.allclose(noise, noise.transpose(0, 2, 1))
    upper = np.triu_indices(p, 1)
    diag_var = noise[:, np.arange(p), np.arange(p)].var(axis=0) / sigma ** 2
    off_var = noise[:, upper[0], upper[1]].var(axis=0) / sigma ** 2
    se = np.sqrt(2.0 / n_draws)  # relative standard error of a Gaussian variance
    np.testing.assert_allclose(diag_var, 1.0, atol=5 * se)
    np.testing.assert_allclose(off_var, 0.5, atol=5 * 0.5 * se)
    # one release per query: the vector of the diagonal and sqrt(2) x the upper triangle
    assert len(records) == n_draws
    assert {(r.what, r.shape, r.mechanism) for r in records} == {
        ("Gram matrix", (p * (p + 1) // 2,), Gaussian(z))}
    assert all(r.sensitivity == pytest.approx(2.0, rel=1e-12) for r in records)


def test_the_hessian_noise_is_iid_on_and_above_the_diagonal_dense_and_as_an_operator():
    # release_symmetric with scale 1 (the dense Hessian) and release_operator
    # (Lanczos, H never formed) draw the same law: i.i.d. N(0, (z C)^2) on the
    # upper triangle including the diagonal, mirrored below it
    p, z, C, n_draws = 4, 0.5, 3.0, 3000
    rng = np.random.default_rng(0)
    upper = np.triu_indices(p)
    dense = np.array([release_symmetric(np.zeros((p, p)), Gaussian(z), C, rng, what="H",
                                        off_diagonal_scale=1.0) for _ in range(n_draws)])
    implicit = np.array([release_operator(np.zeros_like, p, Gaussian(z), C, rng,
                                          what="H")(np.eye(p)) for _ in range(n_draws)])
    se = np.sqrt(2.0 / n_draws)
    for E in (dense, implicit):
        assert np.array_equal(E, E.transpose(0, 2, 1))
        np.testing.assert_allclose(E[:, upper[0], upper[1]].var(axis=0) / (z * C) ** 2, 1.0,
                                   atol=5 * se)
        # independent entries: the correlation of two entries stays within noise
        corr = np.corrcoef(E[:, upper[0], upper[1]].T)
        assert np.abs(corr[np.triu_indices(len(upper[0]), 1)]).max() < 5 / np.sqrt(n_draws)


def test_the_sparse_vector_components_are_the_charged_scales():
    assert sparse_vector_components(SparseVector(0.5, 0.25)) == (Laplace(2.0), Laplace(8.0))
    assert sparse_vector_components(GaussianSparseVector(1.5, 2.5, 7)) == (
        Gaussian(1.5), Gaussian(2.5))


def _hessian_batch(X, y, z, seed):
    loss = BinaryLogisticLoss(LinearDesign(X, True, 1.0), y.astype(np.float64))
    spec = types.SimpleNamespace(n_samples=len(X), sampling_rate=1.0, n_params=X.shape[1] + 1,
                                 coef_shape=(X.shape[1] + 1,),
                                 noise=lambda m, rate=None: Gaussian(m))
    plan = types.SimpleNamespace(spec=spec, adaptive=False, mechanism=Gaussian(z))
    return PrivateQueries(loss, plan, np.random.default_rng(seed)).batch(Gaussian(z), 1.0)


def test_the_hessian_eigenpair_is_released_once_the_same_way_dense_or_as_an_operator(
        classification):
    X, y = classification
    z, C, W = 0.3, 0.5, np.full(X.shape[1] + 1, 0.1)
    with recording() as records:
        dense = _hessian_batch(X, y, z, 7).noisy_hessian_eigenpair(W, z, C)
        lanczos = _hessian_batch(X, y, z, 7).noisy_hessian_eigenpair(W, z, C, dense_limit=0)
    P = X.shape[1] + 1
    assert [(r.what, r.mechanism, r.sensitivity) for r in records] == [
        ("Hessian", Gaussian(z), C)] * 2
    assert records[0].shape == (P * (P + 1) // 2,) and records[1].shape == (P, P)
    assert records[1].value is None  # the operator's matrix is never formed
    # the same noise from the same stream: one mechanism, two computations
    assert dense[0] == pytest.approx(lanczos[0], rel=1e-5)
    assert abs(dense[1] @ lanczos[1]) == pytest.approx(1.0, abs=1e-4)

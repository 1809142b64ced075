"""preconditioned_gd: noisy gradient steps preconditioned by a private quadratic majorizer."""

import types

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import normalize

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.accounting import Composed, Gaussian, PoissonSampled, Repeated, get_epsilon
from skdp.datasets import make_ill_conditioned_classification
from skdp.losses import BinaryLogisticLoss, LinearDesign
from skdp.solvers import PrivateQueries, available_solvers


def ill_conditioned():
    """Issue 20's ill-conditioned imbalanced set: first 50,000 rows train, last 10,000 test."""
    X, y = make_ill_conditioned_classification()
    return X[:50000], y[:50000], X[50000:], y[50000:]


def _gram_queries(X, z, n_queries):
    loss = BinaryLogisticLoss(LinearDesign(X, True, 1.0), np.zeros(len(X)))
    spec = types.SimpleNamespace(n_samples=len(X), row_bound=np.sqrt(2.0), sampling_rate=1.0,
                                 noise=lambda m, rate=None: Gaussian(m))
    plan = types.SimpleNamespace(spec=spec, adaptive=False,
                                 mechanism=Repeated(Gaussian(z), n_queries))
    return PrivateQueries(loss, plan, np.random.default_rng(0)), loss


def test_the_noisy_second_moment_is_the_gaussian_mechanism_on_its_upper_triangle():
    X = normalize(np.random.default_rng(1).normal(size=(50, 3)))
    z, n_draws = 0.7, 4000
    queries, loss = _gram_queries(X, z, n_draws)
    exact = loss.gram_sum() / len(X)
    np.testing.assert_allclose(exact, np.vstack([np.c_[X.T @ X, X.sum(0)],
                                                 np.r_[X.sum(0), len(X)]]) / len(X))
    noise = np.array([queries.noisy_gram(z) for _ in range(n_draws)]) - exact
    assert np.allclose(noise, noise.transpose(0, 2, 1))            # symmetric
    sigma = z * 2.0 / len(X)                                       # z R^2 / n, R^2 = 2
    diag = noise[:, np.arange(4), np.arange(4)]
    off = noise[:, np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]]
    # variances sigma^2 on the diagonal and sigma^2 / 2 above it (Frobenius sensitivity)
    np.testing.assert_allclose(diag.var(axis=0) / sigma ** 2, 1.0, atol=0.1)
    np.testing.assert_allclose(off.var(axis=0) / sigma ** 2, 0.5, atol=0.05)
    with pytest.raises(Exception, match="plan does not provide"):
        queries.noisy_gram(z)                                      # the plan is spent


def test_the_fit_is_charged_one_second_moment_and_t_gradients():
    X, y = make_classification(n_samples=3000, n_features=6, random_state=0)
    accountant = BudgetAccountant()
    model = DPLogisticRegression(solver="preconditioned_gd", epsilon=0.7, random_state=0,
                                 accountant=accountant).fit(X, y)
    charged = accountant.spends[0].mechanism
    assert isinstance(charged, Composed) and model.n_iter_ == 30
    gram, steps = charged.mechanisms
    assert isinstance(gram, Gaussian) and steps.count == 30
    assert get_epsilon(charged, 1e-5) == pytest.approx(0.7, rel=1e-3)
    assert get_epsilon(charged, 1e-5) <= 0.7 * (1 + 1e-9)


def test_ill_conditioned_imbalanced_set_needs_no_extra_steps():
    X, y, X_test, y_test = ill_conditioned()
    for epsilon, auc_floor in ((1.0, 0.945), (0.1, 0.925)):
        aucs = [roc_auc_score(y_test, DPLogisticRegression(
            solver="preconditioned_gd", epsilon=epsilon, random_state=seed,
            accountant=BudgetAccountant()).fit(X, y).decision_function(X_test))
            for seed in range(3)]
        assert np.mean(aucs) >= auc_floor, epsilon
    # gd at its defaults (500 steps at eps 1) is far from it: the conditioning
    gd = DPLogisticRegression(solver="gd", epsilon=1.0, random_state=0,
                              accountant=BudgetAccountant()).fit(X, y)
    assert roc_auc_score(y_test, gd.decision_function(X_test)) < 0.935


def test_adult_matches_tuned_peers_in_thirty_steps(adult):
    X, y, X_test, y_test = adult
    for Estimator in (DPLogisticRegression, DPLinearSVC):
        scores = [Estimator(solver="preconditioned_gd", epsilon=1.0, random_state=seed,
                            accountant=BudgetAccountant()).fit(X, y).score(X_test, y_test)
                  for seed in range(3)]
        assert np.mean(scores) >= 0.848, Estimator.__name__


def test_multiclass_and_float32_rows():
    X, y = make_classification(n_samples=4000, n_features=8, n_informative=5, n_classes=3,
                               random_state=0)
    X = normalize(X).astype(np.float32)
    model = DPLogisticRegression(solver="preconditioned_gd", epsilon=2.0, random_state=0,
                                 accountant=BudgetAccountant()).fit(X, y)
    assert model.coef_.shape == (3, 8) and model.score(X, y) > 0.6


@pytest.mark.parametrize("params, match", [
    ({"delta": 0.0}, "needs delta > 0"),
    ({"batch_size": 100}, "full batches"),
    ({"data_norm": None}, "set data_norm"),
])
def test_what_it_cannot_run_is_refused_before_the_charge(params, match):
    X, y = make_classification(n_samples=500, n_features=4, random_state=0)
    accountant = BudgetAccountant()
    model = DPLogisticRegression(solver="preconditioned_gd", accountant=accountant, **params)
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)
    assert accountant.spends == []


def test_the_full_preconditioner_refuses_high_dimension_before_the_charge():
    X, y = make_classification(n_samples=50, n_features=2001, random_state=0)
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match="limit is 2000"):
        DPLogisticRegression(solver="preconditioned_gd", accountant=accountant,
                             solver_params={"preconditioner": "full"}).fit(X, y)
    assert accountant.spends == []
    auto = DPLogisticRegression(accountant=accountant).fit(X, y)      # auto: gd there
    assert auto.solver_ == "gd"


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_the_second_moment_diagonal_is_the_grams_diagonal(fmt):
    import scipy.sparse as sp
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 5)) * 3.0
    X[rng.random(X.shape) < 0.5] = 0.0
    X[7] *= 1e250                                  # an extreme row, kept apart
    X = sp.csr_matrix(X) if fmt == "csr" else X
    for fit_intercept in (True, False):
        loss = BinaryLogisticLoss(LinearDesign(X, fit_intercept, 2.0), np.zeros(60))
        np.testing.assert_allclose(loss.gram_diagonal_sum(), np.diag(loss.gram_sum()),
                                   rtol=1e-12)
        idx = np.array([1, 7, 30])
        np.testing.assert_allclose(loss.gram_diagonal_sum(idx),
                                   np.diag(loss.design.weighted_gram(np.ones(3), idx)),
                                   rtol=1e-12)


def test_the_noisy_diagonal_is_the_gaussian_mechanism_on_the_sums_of_squares():
    X = normalize(np.random.default_rng(1).normal(size=(50, 3)))
    z, n_draws = 0.7, 4000
    queries, loss = _gram_queries(X, z, n_draws)
    exact = np.diag(loss.gram_sum()) / len(X)
    noise = np.array([queries.noisy_gram_diagonal(z) for _ in range(n_draws)]) - exact
    sigma = z * 2.0 / len(X)                       # z R^2 / n, R^2 = 2
    np.testing.assert_allclose(noise.mean(axis=0) / sigma, 0.0, atol=0.06)
    np.testing.assert_allclose(noise.var(axis=0) / sigma ** 2, 1.0, atol=0.1)
    with pytest.raises(Exception, match="plan does not provide"):
        queries.noisy_gram_diagonal(z)


def test_high_dimension_takes_the_diagonal_preconditioner_and_learns(reuters):
    # Reuters: 8,316 parameters; the full preconditioner refused it, the
    # diagonal one beats the majority class (0.9457) for both classifiers
    X, y, X_test, y_test = reuters
    majority = max(np.mean(y_test == c) for c in np.unique(y_test))
    for Est in (DPLogisticRegression, DPLinearSVC):
        accountant = BudgetAccountant()
        model = Est(solver="preconditioned_gd", epsilon=1.0, random_state=0,
                    accountant=accountant).fit(X, y)
        assert model.n_iter_ == 30
        gram, steps = accountant.spends[0].mechanism.mechanisms
        assert isinstance(gram, Gaussian) and steps.count == 30
        assert model.score(X_test, y_test) > majority + 0.002, Est


def test_offered_only_where_a_curvature_bound_exists():
    assert "preconditioned_gd" in available_solvers(DPLogisticRegression())
    assert "preconditioned_gd" in available_solvers(DPLinearSVC())          # smoothed hinge
    assert "preconditioned_gd" not in available_solvers(DPLinearSVC(loss="hinge"))
    assert "preconditioned_gd" not in available_solvers(DPLogisticRegression(penalty="l1"))
    assert "preconditioned_gd" not in available_solvers(DPLogisticRegression(penalty="nonconvex"))
    assert "preconditioned_gd" not in available_solvers(DPMatrixSensing())


@pytest.mark.parametrize("n_features, solver, preconditioner", [
    (500, "preconditioned_gd", "noisy_gram"),         # the full majorizer up to 1000
    (1500, "gd", None),                               # between 1000 and 2000: gd
    (2500, "preconditioned_gd", "noisy_gram_diagonal"),  # above 2000: the diagonal one
])
def test_auto_takes_the_diagonal_preconditioner_in_high_dimension(
        n_features, solver, preconditioner, monkeypatch):
    import scipy.sparse as sp
    called = []
    for name in ("noisy_gram", "noisy_gram_diagonal"):
        query = getattr(PrivateQueries, name)
        monkeypatch.setattr(PrivateQueries, name, lambda self, z, _q=query, _n=name: (
            called.append(_n), _q(self, z))[1])
    rng = np.random.default_rng(0)                 # 5,000 sparse rows, 5 entries each
    columns = rng.integers(0, n_features, size=(5000, 5))
    X = normalize(sp.csr_matrix((rng.random(25000), (np.repeat(np.arange(5000), 5),
                                                     columns.ravel())), (5000, n_features)))
    y = (columns < 50).any(axis=1)
    model = DPLogisticRegression(max_iter=3, classes=[False, True], random_state=0,
                                 accountant=BudgetAccountant()).fit(X, y)
    assert model.solver_ == solver
    assert called == ([] if preconditioner is None else [preconditioner])


def test_reuters_defaults_take_the_diagonal_preconditioner(reuters):
    # solver='auto' on Reuters (8,316 parameters, 7,770 rows): preconditioned_gd's
    # diagonal mode, 30 steps after one noisy diagonal second moment
    X, y, X_test, y_test = reuters
    accountant = BudgetAccountant()
    model = DPLinearSVC(epsilon=1.0, classes=[-1.0, 1.0], random_state=0,
                        accountant=accountant).fit(X, y)
    assert model.solver_ == "preconditioned_gd" and model.n_iter_ == 30
    gram, steps = accountant.spends[0].mechanism.mechanisms
    assert isinstance(gram, Gaussian) and steps.count == 30


def _sparse_rows(n_features):
    """5,000 unit CSR rows of 5 random features each; the label: a feature below 50."""
    import scipy.sparse as sp
    rng = np.random.default_rng(0)
    columns = rng.integers(0, n_features, size=(5000, 5))
    X = normalize(sp.csr_matrix((rng.random(25000), (np.repeat(np.arange(5000), 5),
                                                     columns.ravel())), (5000, n_features)))
    return X, (columns < 50).any(axis=1)


@pytest.mark.parametrize("n_features, options, ratio", [
    (500, {}, 0.5),                                    # full mode
    (2500, {}, 2.0),                                   # diagonal mode: less for the diagonal
    (2500, {"gram_noise_ratio": 0.5}, 0.5),            # the option overrides it
    (500, {"preconditioner": "diagonal"}, 2.0),
])
def test_the_diagonal_mode_gives_the_second_moment_a_noise_ratio_of_2(n_features, options,
                                                                      ratio):
    X, y = _sparse_rows(n_features)
    accountant = BudgetAccountant()
    DPLogisticRegression(max_iter=3, classes=[False, True], random_state=0,
                         solver="preconditioned_gd", solver_params=options,
                         accountant=accountant).fit(X, y)
    # what is charged: the second moment's multiplier is the ratio times each step's,
    # and the pair is calibrated to the whole (epsilon, delta)
    spend, = accountant.spends
    gram, steps = spend.mechanism.mechanisms
    assert gram.noise_multiplier == pytest.approx(ratio * steps.mechanism.noise_multiplier)
    assert get_epsilon(spend.mechanism, spend.delta) == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("n_features, options, feature", [
    (500, {}, 1.0),                                    # full mode: the loss's own value
    (2500, {}, 0.3),                                   # diagonal mode: 0.3
    (2500, {"intercept_feature": 1.0}, 1.0),           # the option overrides it
    (500, {"preconditioner": "diagonal"}, 0.3),
])
def test_the_diagonal_mode_reads_rows_with_an_intercept_feature_of_0_3(
        n_features, options, feature, monkeypatch):
    seen = []
    for name in ("noisy_gram", "noisy_gram_diagonal"):
        query = getattr(PrivateQueries, name)
        monkeypatch.setattr(PrivateQueries, name, lambda self, z, _q=query: (
            seen.append((self._loss.intercept_feature, self._spec.row_bound,
                         self._loss.design.row_norms().max())), _q(self, z))[1])
    X, y = _sparse_rows(n_features)
    model = DPLogisticRegression(max_iter=3, classes=[False, True], random_state=0,
                                 solver="preconditioned_gd", solver_params=options,
                                 accountant=BudgetAccountant()).fit(X, y)
    (used, row_bound, largest_row), = seen
    # the design's rows, the public row bound (the sensitivity of the second
    # moment and the clip limits) and the released intercept all use one value
    assert used == feature
    assert row_bound == pytest.approx(np.hypot(1.0, feature))
    assert largest_row <= row_bound * (1 + 1e-12)
    np.testing.assert_allclose(model.decision_function(X[:20]).ravel(),
                               (X[:20] @ model.coef_.T).ravel() + model.intercept_)


@pytest.mark.parametrize("n_features, auto_tail", [
    (500, 0.5),                                        # full mode: half the steps averaged
    (2500, 0.4),                                       # diagonal mode: reuters_diagonal.md's
])
def test_the_averaged_tail_is_half_in_the_full_mode_and_0_4_in_the_diagonal_one(n_features,
                                                                                 auto_tail):
    X, y = _sparse_rows(n_features)

    def coef(**options):
        return DPLogisticRegression(max_iter=10, classes=[False, True], random_state=0,
                                    solver="preconditioned_gd", solver_params=options,
                                    accountant=BudgetAccountant()).fit(X, y).coef_

    auto = coef()
    np.testing.assert_array_equal(auto, coef(average=auto_tail))
    # the tail is what differs (same noise): 4 of the 10 iterates against 5
    assert not np.array_equal(auto, coef(average=0.9 - auto_tail))


def _charged(X, y, epsilon=1.0, **options):
    accountant = BudgetAccountant()
    DPLogisticRegression(epsilon=epsilon, classes=[False, True], random_state=0,
                         solver="preconditioned_gd", solver_params=options,
                         accountant=accountant).fit(X, y)
    return accountant.spends[0].mechanism


def test_the_first_15_steps_read_a_poisson_sample_from_twice_its_size():
    # 'auto': m = max(100,000, 1e5 / epsilon) rows, sampled where m <= n / 2
    from skdp.solvers import preconditioned as pc
    rng = np.random.default_rng(0)
    X = normalize(rng.normal(size=(200_000, 3)))
    y = X[:, 0] + 0.3 * rng.normal(size=len(X)) > 0
    gram, sampled, full = _charged(X, y).mechanisms
    assert sampled.count == pc.SAMPLED_STEPS == 15 and full.count == 30 - 15
    assert sampled.mechanism == PoissonSampled(0.5, full.mechanism)
    assert get_epsilon(Composed([gram, sampled, full]), 1e-6) <= 1.0 * (1 + 1e-9)
    # one row fewer, or an epsilon that asks for a larger sample: every step on all rows
    assert len(_charged(X[1:], y[1:]).mechanisms) == 2
    assert len(_charged(X, y, epsilon=0.9).mechanisms) == 2
    assert len(_charged(X, y, preconditioner="diagonal").mechanisms) == 2


def test_sampled_steps_are_charged_as_sampled_and_stay_off_the_averaged_tail():
    X, y = make_classification(n_samples=3000, n_features=6, random_state=0)
    gram, sampled, full = _charged(X, y, 0.7, sampled_steps=5, sample_rows=600).mechanisms
    assert (sampled.count, full.count) == (5, 25)
    assert sampled.mechanism == PoissonSampled(0.2, full.mechanism)
    # the sampled steps cost less than full ones: a smaller noise on every step
    z_full = _charged(X, y, 0.7).mechanisms[1].mechanism.noise_multiplier
    assert full.mechanism.noise_multiplier < z_full
    # the options change the fit; sampled_steps=0 is the fit without samples
    def coef(**options):
        return DPLogisticRegression(epsilon=0.7, random_state=0, solver="preconditioned_gd",
                                    solver_params=options, accountant=BudgetAccountant()
                                    ).fit(X, y).coef_
    np.testing.assert_array_equal(coef(sampled_steps=0, sample_rows=600), coef())
    assert not np.array_equal(coef(sampled_steps=5, sample_rows=600), coef())
    # never the averaged tail: at most 30 - 15 steps, at most 29 without a tail (and the
    # cut is said)
    with pytest.warns(UserWarning, match="sampled_steps=40 asked for, 15 taken: the averaged"):
        assert _charged(X, y, 0.7, sampled_steps=40, sample_rows=600).mechanisms[1].count == 15
    with pytest.warns(UserWarning, match="sampled_steps=40 asked for, 29 taken"):
        assert _charged(X, y, 0.7, sampled_steps=40, sample_rows=600,
                        average=0.0).mechanisms[1].count == 29


def test_an_explicit_sampled_steps_that_cannot_sample_warns_and_reads_every_row():
    # a sample of more than half of the rows is not drawn: the fit says so, before the
    # charge and from public quantities only; 'auto' and what is honoured stay silent
    X, y = make_classification(n_samples=3000, n_features=6, random_state=0)
    with pytest.warns(UserWarning, match="sampled_steps=5 asked for, 0 taken: a sample of "
                      "the requested expected size would hold more than 0.5 of the 3000 rows"):
        assert len(_charged(X, y, 0.7, sampled_steps=5, sample_rows=1600).mechanisms) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(_charged(X, y, 0.7, sampled_steps=5, sample_rows=1500).mechanisms) == 3
        assert len(_charged(X, y, 0.7).mechanisms) == 2        # 'auto' at this size: none
        assert len(_charged(X, y, 0.7, sampled_steps=0).mechanisms) == 2


@pytest.mark.parametrize("options, match", [
    ({"sampled_steps": -1}, "sampled_steps"),
    ({"sampled_steps": 1.5}, "sampled_steps"),
    ({"sample_rows": 0}, "sample_rows"),
    ({"sample_rows": 1e-300}, "sample_rows"),      # a rate of 1e-304: garbage coefficients
])
def test_bad_sampling_options_are_refused_before_the_charge(options, match):
    X, y = make_classification(n_samples=300, n_features=4, random_state=0)
    accountant = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        DPLogisticRegression(solver="preconditioned_gd", solver_params=options,
                             accountant=accountant).fit(X, y)
    assert accountant.spends == []

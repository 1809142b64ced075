"""Private hyperparameter search: its accounting, its releases, an empirical audit."""

import math

import numpy as np
import pytest
from scipy import special, stats
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, BudgetError, DPLinearSVC, DPLogisticRegression
from skdp.accounting import (
    AnyOf,
    Gaussian,
    Laplace,
    RepeatAndSelect,
    get_epsilon,
    get_rdp,
    mechanism_from_dict,
    secret_run_count,
)
from skdp._seeding import noise_generator
from skdp.datasets import documented_bounds
from skdp.model_selection import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdp.preprocessing import BoundedScaler, DPStandardScaler
from skdp.testing.audit import audit_scores

GRID = {"alpha": [1e-4, 1e-2], "clip_norm": [0.5, 1.0]}


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return BoundedScaler(documented_bounds("breast_cancer")).fit_transform(X), y


# -- the accounting of the selection (Papernot and Steinke, Theorem 2) --------
def _pgf_derivative(u, gamma, shape):
    """d/du E[u^K] for the truncated negative binomial distribution."""
    b = 1.0 - (1.0 - gamma) * u
    if shape == 0:
        return (1.0 - gamma) / (b * math.log(1.0 / gamma))
    return shape * (1.0 - gamma) * b ** (-shape - 1) / (gamma ** -shape - 1.0)


@pytest.mark.parametrize("shape", [0.0, 1.0, 2.0])
@pytest.mark.parametrize("z", [1.0, 3.0])
def test_selection_rdp_bounds_the_exact_divergence_of_best_of_k_gaussians(shape, z):
    # one run releases s ~ N(mu, z^2), mu = 0 or 1 on neighbours; the best of
    # K runs has density G'(F(t)) f(t): its Renyi divergence, computed by
    # quadrature, must not exceed the accountant's curve in either direction
    mech = RepeatAndSelect.from_mean(Gaussian(z), 5.0, shape)
    orders = np.array([1.5, 2.0, 4.0, 8.0, 16.0])
    bound = get_rdp(mech, orders)
    t = np.linspace(-15 * z, 15 * z + 1, 300001)
    log_dens = [np.log(_pgf_derivative(stats.norm.cdf(t, mu, z), mech.gamma, shape))
                + stats.norm.logpdf(t, mu, z) for mu in (0.0, 1.0)]
    weights = np.log(np.gradient(t))
    for log_p, log_q in (log_dens, log_dens[::-1]):
        for a, b in zip(orders, bound):
            exact = special.logsumexp(a * log_p + (1 - a) * log_q + weights) / (a - 1)
            assert exact <= b + 1e-9
    # and the bound is not vacuous: below running the mechanism mean-many times
    assert get_epsilon(mech, 1e-5) < get_epsilon(Gaussian(z / math.sqrt(10)), 1e-5)


def test_selection_of_pure_runs_costs_two_plus_shape_epsilon():
    # Liu and Talwar (2019): geometric number of runs of an eps-DP mechanism is 3 eps-DP
    geometric = RepeatAndSelect(Laplace(2.0), gamma=0.1, shape=1.0)
    assert get_epsilon(geometric, 0.0) == pytest.approx(1.5)
    assert get_epsilon(RepeatAndSelect(Laplace(2.0), 0.1, 0.0), 0.0) == pytest.approx(1.0)


def test_selection_mechanisms_round_trip_and_validate():
    mech = RepeatAndSelect.from_mean(AnyOf([Gaussian(2.0), Laplace(3.0)]), 8.0, 0.5)
    assert mech.mean_runs == pytest.approx(8.0, rel=1e-6)
    assert mechanism_from_dict(mech.to_dict()) == mech
    rng = np.random.default_rng(0)
    draws = [secret_run_count(mech, rng) for _ in range(20000)]
    assert min(draws) >= 1
    assert np.mean(draws) == pytest.approx(8.0, rel=0.05)
    # AnyOf costs the worst of its parts
    assert get_epsilon(AnyOf([Gaussian(3.0), Gaussian(5.0)]), 1e-5) == pytest.approx(
        get_epsilon(Gaussian(3.0), 1e-5))
    with pytest.raises(ValueError, match="gamma must be in"):
        RepeatAndSelect(Gaussian(1.0), 1.0)
    with pytest.raises(ValueError, match="at least one"):
        AnyOf([])
    with pytest.raises(ValueError, match="mean_runs must be > 1"):
        RepeatAndSelect.from_mean(Gaussian(1.0), 1.0)


# -- the search ----------------------------------------------------------------
def test_search_charges_its_total_once_and_releases_only_the_winner(cancer):
    X, y = cancer
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(DPLogisticRegression(epsilon=0.5), GRID,
                                 accountant=acc, random_state=0).fit(X, y)
    (spend,) = acc.spends
    assert search.privacy_spent_ == (spend.epsilon, spend.delta) == acc.spent()
    assert isinstance(spend.mechanism, RepeatAndSelect)
    assert get_epsilon(spend.mechanism, spend.delta) == pytest.approx(spend.epsilon)
    # the search costs more than one fit, much less than one fit per expected trial
    assert 0.5 < search.privacy_spent_[0] < 8 * 0.5
    scores = search.cv_results_["mean_test_score"]
    assert np.isnan(scores).sum() == len(scores) - 1
    assert scores[search.best_index_] == search.best_score_
    assert search.cv_results_["params"][search.best_index_] == search.best_params_
    assert search.best_estimator_.get_params()["alpha"] == search.best_params_["alpha"]
    assert search.score(X, y) > 0.75  # majority class: 0.627
    # the released model reveals nothing about the number of trials drawn
    assert len(search.best_estimator_.accountant.spends) == 1
    assert search.predict_proba(X).shape == (len(y), 2)


def test_refit_is_charged_in_the_same_single_charge(cancer):
    X, y = cancer
    costs = {}
    for refit in (False, True):
        acc = BudgetAccountant()
        search = PrivateGridSearchCV(DPLinearSVC(epsilon=0.5), GRID, refit=refit,
                                     accountant=acc, random_state=1).fit(X, y)
        assert len(acc.spends) == 1
        costs[refit] = search.privacy_spent_[0]
    assert costs[True] > costs[False] + 0.2


def test_budget_error_before_any_trial(cancer, monkeypatch):
    X, y = cancer
    acc = BudgetAccountant(epsilon=0.6)
    fits = []
    monkeypatch.setattr(DPLogisticRegression, "fit",
                        lambda self, *a, **k: fits.append(1) or self)
    with pytest.raises(BudgetError):
        PrivateGridSearchCV(DPLogisticRegression(epsilon=0.5), GRID,
                            accountant=acc).fit(X, y)
    assert fits == [] and acc.spends == []


def test_same_seed_never_shares_noise_between_charged_searches(cancer):
    X, y = cancer
    acc = BudgetAccountant()
    make = lambda: PrivateGridSearchCV(  # noqa: E731
        DPLogisticRegression(epsilon=0.5), GRID, accountant=acc, random_state=3)
    first, second = make().fit(X, y), make().fit(X, y)
    assert first.best_score_ != second.best_score_
    # and a fresh accountant replays the first search exactly
    replay = PrivateGridSearchCV(DPLogisticRegression(epsilon=0.5), GRID,
                                 accountant=BudgetAccountant(), random_state=3).fit(X, y)
    assert replay.best_score_ == first.best_score_
    np.testing.assert_array_equal(replay.best_estimator_.coef_, first.best_estimator_.coef_)


def test_randomized_search_draws_candidates_before_the_charge(cancer):
    X, y = cancer
    acc = BudgetAccountant()
    search = PrivateRandomizedSearchCV(
        DPLogisticRegression(epsilon=0.5), {"alpha": stats.loguniform(1e-5, 1e-1)},
        n_iter=4, accountant=acc, random_state=0).fit(X, y)
    assert len(search.cv_results_["params"]) == 4
    again = PrivateRandomizedSearchCV(
        DPLogisticRegression(epsilon=0.5), {"alpha": stats.loguniform(1e-5, 1e-1)},
        n_iter=4, accountant=BudgetAccountant(), random_state=0).fit(X, y)
    assert again.cv_results_["params"] == search.cv_results_["params"]
    assert search.privacy_spent_ == acc.spent()


@pytest.mark.parametrize("kwargs, error, match", [
    ({"n_trials": 1}, ValueError, "n_trials must be"),
    ({"validation_size": 1.0}, ValueError, "validation_size must be"),
    ({"shape": -1}, ValueError, "shape must be"),
])
def test_bad_search_parameters_cost_nothing(cancer, kwargs, error, match):
    X, y = cancer
    acc = BudgetAccountant()
    with pytest.raises(error, match=match):
        PrivateGridSearchCV(DPLogisticRegression(), GRID, accountant=acc, **kwargs).fit(X, y)
    assert acc.spends == []


def test_labels_outside_classes_are_refused_before_the_charge(cancer):
    X, y = cancer
    acc = BudgetAccountant()
    y = np.where(y == 1, 7331, y)
    with pytest.raises(ValueError, match="not in the estimator's classes=") as info:
        PrivateGridSearchCV(DPLogisticRegression(classes=[0, 2]), GRID,
                            accountant=acc).fit(X, y)
    assert "7331" not in str(info.value)  # the labels of y are private
    assert acc.spends == []


def test_non_private_estimator_is_refused(cancer):
    X, y = cancer
    with pytest.raises(TypeError, match="skdp's private classifiers"):
        PrivateGridSearchCV(LogisticRegression(), {"C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="grid is empty"):
        PrivateGridSearchCV(DPLogisticRegression(), []).fit(X, y)


# -- the released model holds no seed of its noise (issue 38, item 1) ----------
def _training_part(search, n_samples):
    """The rows a seeded search trained its trials on (its split is drawn first
    from its stream, which a fresh accountant starts at seed_index 0)."""
    order = noise_generator(search.random_state, 0).permutation(n_samples)
    return np.sort(order[search.n_validation_:])


def _refit_clone(model, X, y):
    """The attack: refit the released model's clone, charged to a fresh accountant."""
    return clone(model).set_params(accountant=BudgetAccountant()).fit(X, y)


_SEARCHES = {
    "grid": lambda **kw: PrivateGridSearchCV(
        DPLogisticRegression(epsilon=0.5, random_state=11), GRID, **kw),
    "grid-refit": lambda **kw: PrivateGridSearchCV(
        DPLogisticRegression(epsilon=0.5, random_state=11), GRID, refit=True, **kw),
    "randomized": lambda **kw: PrivateRandomizedSearchCV(
        DPLinearSVC(epsilon=0.5), {"alpha": stats.loguniform(1e-5, 1e-1)}, n_iter=3, **kw),
}


@pytest.mark.parametrize("kind", sorted(_SEARCHES))
def test_released_model_does_not_replay_its_noise(cancer, kind):
    X, y = cancer
    search = _SEARCHES[kind](accountant=BudgetAccountant(), random_state=0).fit(X, y)
    model = search.best_estimator_
    # the model keeps the user's own random_state, not a seed drawn by the search
    assert model.get_params()["random_state"] == search.estimator.random_state
    rows = np.arange(len(y)) if search.refit else _training_part(search, len(y))
    replay = _refit_clone(model, X[rows], y[rows])
    assert np.max(np.abs(replay.coef_ - model.coef_)) > 1e-3
    # nor does its accountant record a key derived from a drawn seed
    assert [s.seed_key for s in model.accountant.spends] == [None]


def _held_randomness(obj, seen=None, path="search"):
    """(path, value) of every generator, seed sequence, ``random_state`` and
    integer beyond 2**32 (a drawn 63-bit seed) reachable from obj's attributes."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, (np.random.Generator, np.random.RandomState,
                        np.random.BitGenerator, np.random.SeedSequence)):
        return [(path, obj)]
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool) and abs(obj) > 2**32:
        return [(path, obj)]
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = enumerate(obj)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        items = vars(obj).items()
    else:
        return []
    found = []
    for key, value in items:
        if key == "random_state":
            found.append((f"{path}.{key}", value))
        else:
            found += _held_randomness(value, seen, f"{path}.{key}")
    return found


@pytest.mark.parametrize("kind", sorted(_SEARCHES))
def test_nothing_in_the_fitted_search_holds_the_drawn_seeds(cancer, kind):
    X, y = cancer
    search = _SEARCHES[kind](accountant=BudgetAccountant(), random_state=0).fit(X, y)
    own = search.estimator.random_state  # the user's seed of the estimator (11 or None)
    held = {path: value for path, value in _held_randomness(search)
            if not path.startswith("search.param_distributions")}  # the user's scipy dists
    assert held.pop("search.random_state") == 0  # the user's seed of the search
    assert held and all(value == own for value in held.values()), held


def test_a_seeded_search_is_still_reproducible_as_a_whole(cancer):
    X, y = cancer
    runs = [_SEARCHES["grid-refit"](accountant=BudgetAccountant(), random_state=5).fit(X, y)
            for _ in range(2)]
    assert runs[0].best_params_ == runs[1].best_params_
    assert runs[0].best_score_ == runs[1].best_score_
    np.testing.assert_array_equal(runs[0].best_estimator_.coef_, runs[1].best_estimator_.coef_)


def test_verbose_estimator_inside_a_search_prints_no_trial(cancer, capsys):
    # one line per trial would release the number of trials K, which the
    # selection theorem needs hidden; the search prints one line of released values
    X, y = cancer
    search = PrivateGridSearchCV(DPLogisticRegression(epsilon=0.5, verbose=1), GRID,
                                 n_trials=8, refit=True, accountant=BudgetAccountant(),
                                 random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("[PrivateGridSearchCV] chose")
    assert "(charged)" not in lines[0] and "trial" not in lines[0]
    assert search.best_estimator_.get_params()["verbose"] == 1  # the user's value
    # and the line is the same whatever K was drawn: the same search on other seeds
    for seed in (1, 2):
        PrivateGridSearchCV(DPLogisticRegression(epsilon=0.5, verbose=1), GRID,
                            n_trials=8, accountant=BudgetAccountant(),
                            random_state=seed).fit(X, y)
        assert len(capsys.readouterr().out.splitlines()) == 1


# -- an empirical audit of the selection ---------------------------------------
class _ExactScoreSearch(PrivateGridSearchCV):
    """The leak of plain GridSearchCV: exact validation scores, same charge."""

    @staticmethod
    def _release_score(correct, n_val, mechanism, rng):
        return correct / n_val


def _audit_search(search_cls, n_runs):
    # 1-D, well separated: every trial's model classifies the other rows
    # correctly, so the released best score moves by exactly 1 / n_val when
    # the record lands in the validation part. Neighbours: the record is
    # (x=+1, y=1) (canary) or (x=+1, y=0) (mislabelled).
    rng = np.random.default_rng(0)
    n = 399
    x = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = np.r_[x, 1.0].reshape(-1, 1)
    y = np.r_[(x > 0).astype(int), 0]
    y_in = y.copy()
    y_in[-1] = 1
    grid = {"alpha": [1e-4, 1e-3]}
    scores = {}
    for name, labels in (("out", y), ("in", y_in)):
        runs = []
        for seed in range(n_runs):
            search = search_cls(DPLogisticRegression(epsilon=0.5, classes=[0, 1]), grid,
                                n_trials=3, validation_size=0.5,
                                accountant=BudgetAccountant(), random_state=seed)
            runs.append(search.fit(X, labels).best_score_)
        scores[name] = np.asarray(runs)
    claimed = search.privacy_spent_
    return audit_scores(scores["out"], scores["in"], claimed[1],
                        claimed_epsilon=claimed[0]), claimed[0]


def test_audit_of_the_selection_stays_below_its_claim_and_catches_exact_scores():
    private, claimed = _audit_search(PrivateGridSearchCV, 150)
    assert private.epsilon_lower_bound < claimed
    leaky, _ = _audit_search(_ExactScoreSearch, 150)
    assert leaky.epsilon_lower_bound > claimed


def test_adult_private_search_charges_its_total_and_is_accurate(adult):
    # issue 17's acceptance: 3 x 3 grid at epsilon 0.5 per fit, unit-norm rows
    X, y, X_test, y_test = adult
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(
        DPLogisticRegression(epsilon=0.5),
        {"alpha": [1e-5, 1e-4, 1e-3], "clip_norm": [0.5, 1.0, 2.0]},
        accountant=acc, random_state=0).fit(X, y)
    assert len(acc.spends) == 1
    assert search.privacy_spent_ == acc.spent()
    assert search.score(X_test, y_test) >= 0.840


# -- the same for a pipeline's charged steps (issue 41) -------------------------
def _pipeline_search(refit):
    return PrivateGridSearchCV(
        make_pipeline(DPStandardScaler(documented_bounds("breast_cancer"), epsilon=0.3,
                                       random_state=11),
                      DPLogisticRegression(epsilon=0.5, classes=[0, 1], random_state=11)),
        {"dplogisticregression__alpha": [1e-4, 1e-2]}, refit=refit,
        accountant=BudgetAccountant(), random_state=0)


@pytest.mark.parametrize("refit", [False, True])
def test_released_pipeline_does_not_replay_the_noise_of_its_charged_steps(refit):
    X, y = load_breast_cancer(return_X_y=True)  # raw: the pipeline scales it
    search = _pipeline_search(refit).fit(X, y)
    model = search.best_estimator_
    scaler, clf = model.steps[0][1], model.steps[-1][1]
    # every charged step keeps the user's own random_state
    assert scaler.random_state == clf.random_state == 11
    rows = np.arange(len(y)) if refit else _training_part(search, len(y))
    fresh = BudgetAccountant()  # the attack: refit the released pipeline's clone
    replay = clone(model).set_params(dpstandardscaler__accountant=fresh,
                                     dplogisticregression__accountant=fresh)
    replay.fit(X[rows], y[rows])
    assert np.max(np.abs(replay.steps[0][1].mean_ - scaler.mean_)) > 1e-3
    assert np.max(np.abs(replay.steps[-1][1].coef_ - clf.coef_)) > 1e-3
    # nor does the model's accountant record a key derived from a drawn seed
    assert [s.seed_key for s in clf.accountant.spends] == [None, None]
    held = {path: value for path, value in _held_randomness(search)}
    assert held.pop("search.random_state") == 0
    assert held and all(value == 11 for value in held.values()), held

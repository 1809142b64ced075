"""Pipelines inside the private searches (issue 41): free steps, charged steps, refusals."""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin, clone
from sklearn.datasets import load_breast_cancer
from sklearn.decomposition import PCA
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    StandardScaler,
)

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp._base import AccountedMixin
from skdp.accounting import (
    AnyOf,
    Composed,
    Gaussian,
    RepeatAndSelect,
    calibrate,
    noise_mechanism,
)
from skdp.accounting.release import release
from skdp.datasets import documented_bounds
from skdp.model_selection import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdp.preprocessing import BoundedScaler, DPStandardScaler

BOUNDS = documented_bounds("breast_cancer")


@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer(return_X_y=True)


def _estimator_mechanism(est, n, d):
    return clone(est).set_params(classes=[0, 1])._planned_mechanism(n, d, np.array([0, 1]))


def _expected_search_mechanism(search, n, d, scaler_eps):
    """The search's charge built by hand: every trial and refit composes the scaler's
    charge (Gaussian sums, noise z calibrated to scaler_eps) with the estimator's."""
    n_val = int(np.ceil(search.validation_size * n))
    trials, refits = [], []
    for eps in scaler_eps:
        plain = DPStandardScaler(BOUNDS, epsilon=eps)
        make = lambda z: plain._mechanism(z, 1e-5)  # noqa: E731  (delta 'auto' = 1e-5 here)
        scaler = make(calibrate(make, eps, 1e-5))
        est = search.estimator.steps[-1][1]
        score = Gaussian(calibrate(noise_mechanism(1e-5), est.epsilon, 1e-5))
        trials.append(AnyOf([Composed([scaler, _estimator_mechanism(est, n - n_val, d)]),
                             score]))
        refits.append(Composed([scaler, _estimator_mechanism(est, n, d)]))
    selection = RepeatAndSelect.from_mean(AnyOf(trials), 2.0 * len(scaler_eps), 1.0)
    return Composed([selection, AnyOf(refits)]) if search.refit else selection


@pytest.mark.parametrize("refit", [False, True])
def test_every_charged_step_of_every_trial_and_the_refit_is_in_the_one_charge(cancer, refit):
    X, y = cancer
    acc = BudgetAccountant()
    pipe = make_pipeline(DPStandardScaler(BOUNDS),
                         DPLogisticRegression(epsilon=0.5, classes=[0, 1]))
    grid = {"dpstandardscaler__epsilon": [0.2, 0.4]}  # step__param names
    search = PrivateGridSearchCV(pipe, grid, refit=refit, accountant=acc,
                                 random_state=0).fit(X, y)
    (spend,) = acc.spends
    assert search.privacy_spent_ == acc.spent() == (spend.epsilon, spend.delta)
    assert spend.mechanism == _expected_search_mechanism(search, *X.shape, [0.2, 0.4])
    # the scaler's cost is in it: the same search without it costs less
    bare = PrivateGridSearchCV(DPLogisticRegression(epsilon=0.5, classes=[0, 1]),
                               {"alpha": [1e-4, 1e-3]}, refit=refit,
                               accountant=BudgetAccountant(), random_state=0).fit(
        BoundedScaler(BOUNDS).fit_transform(X), y)
    assert search.privacy_spent_[0] > bare.privacy_spent_[0] + 0.1
    # the released pipeline holds its own fit's spends only (scaler, then estimator)
    model = search.best_estimator_
    assert [s.label.split("(")[0] for s in model.steps[-1][1].accountant.spends] == [
        "DPStandardScaler", "DPLogisticRegression"]
    assert model.steps[0][1].accountant is model.steps[-1][1].accountant
    assert search.score(X, y) > 0.7


def test_free_steps_cost_nothing_beyond_the_estimator(cancer):
    X, y = cancer
    X_int = np.floor(BoundedScaler(BOUNDS, feature_range=(0, 2.999)).fit_transform(X))
    est = DPLinearSVC(epsilon=0.5, classes=[0, 1])
    grid = {"dplinearsvc__alpha": [1e-4, 1e-2]}
    costs = []
    for pipe in (make_pipeline(BoundedScaler((0, 3)), FunctionTransformer(np.tanh),
                               Normalizer(), est),
                 make_pipeline(OneHotEncoder(categories=[[0.0, 1.0, 2.0]] * X.shape[1],
                                             handle_unknown="ignore", sparse_output=False),
                               est)):
        acc = BudgetAccountant()
        search = PrivateGridSearchCV(pipe, grid, accountant=acc, random_state=0).fit(X_int, y)
        assert len(acc.spends) == 1 and search.privacy_spent_ == acc.spent()
        costs.append(search.privacy_spent_)
        assert search.predict(X_int[:5]).shape == (5,)
    bare = PrivateGridSearchCV(est, {"alpha": [1e-4, 1e-2]}, accountant=BudgetAccountant(),
                               random_state=0).fit(X_int, y)
    assert costs == [bare.privacy_spent_] * 2


@pytest.mark.parametrize("step, match", [
    (StandardScaler(), r"'standardscaler' \(StandardScaler\) learns from the data without "
                       r"a privacy charge; use instead skdp.preprocessing.BoundedScaler"),
    (MinMaxScaler(), r"'minmaxscaler' \(MinMaxScaler\) .*BoundedScaler"),
    (PCA(2), r"'pca' \(PCA\) learns from the data without a privacy charge"),
    (OneHotEncoder(), r"'onehotencoder' \(OneHotEncoder\) learns its categories .*"
                      r"categories="),
    (OneHotEncoder(categories=[[0.0, 1.0]] * 30), "handle_unknown='ignore'"),
    (OneHotEncoder(categories=[[0.0, 1.0]] * 30, handle_unknown="warn"),
     "handle_unknown='ignore'"),
    (OneHotEncoder(categories=[[0.0, 1.0]] * 30, handle_unknown="ignore", drop="first"),
     "drop=None"),
    (OneHotEncoder(categories=[[0.0, 1.0]] * 30, handle_unknown="ignore", min_frequency=5),
     "min_frequency"),
    (FunctionTransformer(lambda X: X - X.mean(axis=0)), "func=None or one of np.absolute"),
    (FunctionTransformer(np.log1p), "func=None or one of"),
    (FunctionTransformer(np.tanh, np.arctanh), "check_inverse=False"),
    (DPLogisticRegression(classes=[0, 1]), "it can only be the last step"),
    (make_pipeline(BoundedScaler(BOUNDS)), r"'pipeline' \(Pipeline\) is a composite"),
])
def test_a_step_that_learns_without_a_charge_is_refused_before_any_charge(cancer, step,
                                                                           match):
    X, y = cancer
    acc = BudgetAccountant()
    pipe = make_pipeline(step, DPLogisticRegression(classes=[0, 1]))
    with pytest.raises(TypeError, match=match):
        PrivateGridSearchCV(pipe, {"dplogisticregression__alpha": [1e-4]},
                            accountant=acc).fit(X, y)
    assert acc.spends == []


def test_a_grid_that_swaps_in_a_leaky_step_is_refused_before_any_charge(cancer):
    X, y = cancer
    acc = BudgetAccountant()
    pipe = Pipeline([("scale", BoundedScaler(BOUNDS)),
                     ("clf", DPLogisticRegression(classes=[0, 1]))])
    with pytest.raises(TypeError, match=r"'scale' \(StandardScaler\)"):
        PrivateRandomizedSearchCV(pipe, {"scale": [BoundedScaler(BOUNDS), StandardScaler()]},
                                  n_iter=2, accountant=acc, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="memory"):
        PrivateGridSearchCV(Pipeline(pipe.steps, memory="/tmp"), {"clf__alpha": [1e-4]},
                            accountant=acc).fit(X, y)
    with pytest.raises(TypeError, match="or a Pipeline ending in one"):
        PrivateGridSearchCV(make_pipeline(BoundedScaler(BOUNDS), DPStandardScaler(BOUNDS)),
                            {"dpstandardscaler__epsilon": [1.0]}, accountant=acc).fit(X, y)
    assert acc.spends == []


class _NoisyCentring(AccountedMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """A charged step the search has no special knowledge of: it charges its
    accountant (a Gaussian sum of values clipped to [-1, 1]) before reading X."""

    def __init__(self, epsilon=1.0, accountant=None, random_state=None):
        self.epsilon = epsilon
        self.accountant = accountant
        self.random_state = random_state

    def fit(self, X, y=None):
        X = np.clip(np.asarray(X, dtype=float), -1, 1)
        z = calibrate(Gaussian, self.epsilon, 1e-5)
        record = self._accountant_in_force().charge(self.epsilon, 1e-5, Gaussian(z),
                                                    label="centring")
        total = release(X.sum(axis=0), Gaussian(z), np.sqrt(X.shape[1]),
                        self._noise_rng(record.seed_index), what="test sum")
        self.shift_ = total / X.shape[0]
        return self

    def transform(self, X):
        return np.clip(np.asarray(X, dtype=float), -1, 1) - self.shift_


def test_any_charged_skdp_step_is_accepted_and_charged(cancer):
    X, y = cancer
    acc = BudgetAccountant()
    pipe = make_pipeline(BoundedScaler(BOUNDS), _NoisyCentring(epsilon=0.3),
                         DPLogisticRegression(epsilon=0.5, classes=[0, 1]))
    search = PrivateGridSearchCV(pipe, {"dplogisticregression__alpha": [1e-4]},
                                 accountant=acc, random_state=0).fit(X, y)
    assert search.privacy_spent_ == acc.spent()
    (trial,) = acc.spends[0].mechanism.mechanism.mechanisms  # AnyOf over one candidate
    fit = trial.mechanisms[0]
    assert isinstance(fit, Composed) and fit.mechanisms[0] == Gaussian(
        calibrate(Gaussian, 0.3, 1e-5))
    model = search.best_estimator_.steps[1][1]
    assert [s.label for s in model.accountant.spends][0] == "centring"


def test_the_steps_accountant_is_charged_and_two_accountants_are_refused(cancer):
    X, y = cancer
    acc = BudgetAccountant()
    pipe = make_pipeline(DPStandardScaler(BOUNDS, epsilon=0.2),
                         DPLogisticRegression(classes=[0, 1], accountant=acc))
    search = PrivateGridSearchCV(pipe, {"dplogisticregression__alpha": [1e-4]},
                                 random_state=0).fit(X, y)
    assert acc.spent() == search.privacy_spent_
    other = BudgetAccountant()
    pipe.set_params(dpstandardscaler__accountant=other)
    with pytest.raises(ValueError, match="different accountants"):
        PrivateGridSearchCV(pipe, {"dplogisticregression__alpha": [1e-4]}).fit(X, y)
    assert other.spends == [] and len(acc.spends) == 1


def test_a_verbose_pipeline_inside_a_search_prints_no_trial(cancer, capsys):
    X, y = cancer
    pipe = make_pipeline(DPStandardScaler(BOUNDS, epsilon=0.2),
                         DPLogisticRegression(classes=[0, 1], verbose=1), verbose=True)
    search = PrivateGridSearchCV(pipe, {"dplogisticregression__alpha": [1e-4, 1e-3]},
                                 n_trials=6, refit=True, accountant=BudgetAccountant(),
                                 random_state=0).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("[PrivateGridSearchCV] chose")
    params = search.best_estimator_.get_params()
    assert params["verbose"] is True and params["dplogisticregression__verbose"] == 1


def test_a_private_bounds_pipeline_on_raw_data_is_searched_and_charged_once(cancer):
    # issue 41: the one-line private pipeline on a raw table inside the private
    # search; the accountant's total is the search's privacy_spent_ (the search's
    # selection has no Gaussian-DP bound: basic composition)
    from skdp.preprocessing import DPBoundsScaler

    X, y = cancer  # raw: features from 0.001 to 4254
    acc = BudgetAccountant()
    pipe = make_pipeline(DPBoundsScaler(epsilon=0.5, delta=1e-5),
                         DPLogisticRegression(epsilon=0.5, delta=1e-5, classes=[0, 1]))
    search = PrivateGridSearchCV(pipe, {"dplogisticregression__alpha": [1e-4, 1e-3]},
                                 accountant=acc, random_state=0).fit(X, y)
    assert len(acc.spends) == 1
    assert search.privacy_spent_ == acc.spent()
    assert search.score(X, y) > 0.8  # the bounds step learned the raw ranges


@pytest.mark.parametrize("refit", [True, False])
def test_a_search_issues_no_warning_per_trial(refit):
    # review B, F2: each trial's fit warned once (here DPBoundsScaler's low-signal
    # warning, from public quantities), so with warnings recorded the count was the
    # secret number of trials K. Now the trials' warnings are held back; the released
    # model's fit warns once (the refit, or the chosen trial's warnings re-issued)
    import warnings
    from unittest import mock

    import skdp._private_search as search_module
    from skdp.preprocessing import DPBoundsScaler

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    y = (X[:, 0] > 0).astype(int)
    drawn, counts = [], []
    real = search_module.secret_run_count

    def spy(selection, stream):
        drawn.append(real(selection, stream))
        return drawn[-1]

    for seed in range(6):
        pipe = make_pipeline(DPBoundsScaler(epsilon=0.3),
                             DPLogisticRegression(epsilon=0.5, classes=[0, 1], max_iter=5))
        search = PrivateGridSearchCV(pipe, {"dplogisticregression__alpha": [1e-3, 1e-2]},
                                     refit=refit, accountant=BudgetAccountant(),
                                     random_state=seed)
        with mock.patch.object(search_module, "secret_run_count", spy), \
                warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always")
            search.fit(X, y)
        counts.append(sum(str(w.message).startswith("DPBoundsScaler: with") for w in heard))
    assert max(drawn) >= 2 and len(set(drawn)) > 1          # K varied over the seeds
    # the released model's fit: on all 300 rows the refit's noise is below the warning's
    # level; the chosen trial (on the training part) warns once
    assert counts == [0 if refit else 1] * 6, (drawn, counts)

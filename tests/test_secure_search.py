"""Secure mode on the private searches (issue 42): their own noise, their number of
trials and every fit inside are secure, and the one charge is what runs."""

import math
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, DPLogisticRegression
from skdp.accounting import (
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    Laplace,
    RepeatAndSelect,
    recording,
)
from skdp.accounting.release import SecureGenerator, secret_run_count
from skdp.model_selection import (
    PrivateGridSearchCV,
    PrivateRandomizedSearchCV,
    planned_privacy,
)
from skdp.preprocessing import DPStandardScaler


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(400, 5, random_state=0)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def _leaves(mechanism):
    """Every leaf of a mechanism tree."""
    children = []
    for name in ("mechanism", "mechanisms"):
        child = getattr(mechanism, name, None)
        if child is not None:
            children += list(child) if isinstance(child, tuple) else [child]
    if not children:
        return [mechanism]
    return [leaf for child in children for leaf in _leaves(child)]


def _on_grid(record):
    units = np.asarray(record.value) / record.grid
    return record.grid is not None and np.array_equal(units, np.round(units))


def _searches(estimator, accountant, **kwargs):
    return [
        PrivateGridSearchCV(estimator, {"alpha": [1e-3, 1e-1]}, accountant=accountant,
                            secure_mode=True, **kwargs),
        PrivateRandomizedSearchCV(estimator, {"alpha": [1e-3, 1e-2, 1e-1]}, n_iter=2,
                                  accountant=accountant, secure_mode=True, random_state=0,
                                  **kwargs),
    ]


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("refit", [False, True])
def test_secure_search_charges_what_runs_and_releases_on_the_grid(data, which, refit):
    X, y = data
    accountant = BudgetAccountant()
    search = _searches(DPLogisticRegression(epsilon=1.0, classes=[0, 1]), accountant,
                       refit=refit)[which]
    planned = planned_privacy(search, X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the randomized search's seeded candidate list
        with recording() as records:
            search.fit(X, y)
    # one charge, equal to privacy_spent_ and to the plan
    assert len(accountant.spends) == 1
    assert search.privacy_spent_ == accountant.spent() == planned
    # charged as the discrete mechanisms: no continuous leaf in the tree
    leaves = _leaves(accountant.spends[0].mechanism)
    assert leaves and all(type(leaf) in (DiscreteGaussian, DiscreteLaplace) for leaf in leaves)
    assert not any(isinstance(leaf, (Gaussian, Laplace)) for leaf in leaves)
    # every release (the trials' gradients and the scores) is secure, on its grid
    whats = {r.what for r in records}
    assert "validation score" in whats and len(whats) >= 2
    assert all(type(r.mechanism) in (DiscreteGaussian, DiscreteLaplace) for r in records)
    assert all(_on_grid(r) for r in records)
    assert search.best_estimator_.secure_mode is True
    assert math.isfinite(search.best_score_)


def test_secure_search_costs_more_than_the_float_one_for_the_same_noise(data):
    # the scores' noise is calibrated for the discrete mechanism, and the fits'
    # charges are the discrete ones: a secure search charges its own tree
    X, y = data
    est = DPLogisticRegression(epsilon=1.0, classes=[0, 1])
    float_search = PrivateGridSearchCV(est, {"alpha": [1e-3, 1e-1]})
    secure_search = PrivateGridSearchCV(est, {"alpha": [1e-3, 1e-1]}, secure_mode=True)
    n, d = X.shape
    labels = np.array([0, 1])
    *_, float_mech, _, _ = float_search._plan(float_search._candidates(), n, d, labels, X)
    *_, secure_mech, _, _ = secure_search._plan(secure_search._candidates(), n, d, labels, X)
    assert any(isinstance(leaf, Gaussian) for leaf in _leaves(float_mech))
    assert all(isinstance(leaf, DiscreteGaussian) for leaf in _leaves(secure_mech))


def test_secure_search_ignores_its_seed_with_a_warning(data):
    X, y = data
    search = PrivateGridSearchCV(DPLogisticRegression(epsilon=1.0, classes=[0, 1],
                                                      random_state=3),
                                 {"alpha": [1e-3, 1e-1]}, accountant=BudgetAccountant(),
                                 secure_mode=True, random_state=0)
    with pytest.warns(UserWarning, match="random_state is ignored") as caught:
        search.fit(X, y)
    # one warning, for the search (the trials' own seeds are set aside silently),
    # pointing at the caller
    ignored = [w for w in caught if "random_state is ignored" in str(w.message)]
    assert len(ignored) == 1 and ignored[0].filename == __file__
    # the released model keeps the template's parameters
    assert search.best_estimator_.random_state == 3


def test_secure_search_with_a_charged_pipeline(data):
    X, y = data
    accountant = BudgetAccountant()
    pipe = make_pipeline(DPStandardScaler(bounds=(-1.0, 1.0), epsilon=0.5),
                         DPLogisticRegression(epsilon=1.0, classes=[0, 1]))
    search = PrivateGridSearchCV(pipe, {"dplogisticregression__alpha": [1e-3, 1e-1]},
                                 accountant=accountant, secure_mode=True, refit=True)
    with recording() as records:
        search.fit(X, y)
    assert search.privacy_spent_ == accountant.spent()
    assert all(_on_grid(r) for r in records)
    model = search.best_estimator_
    assert model[0].secure_mode is True and model[-1].secure_mode is True


def test_secure_search_refuses_a_step_without_secure_mode_before_any_charge(data):
    from sklearn.base import BaseEstimator, TransformerMixin

    from skdp._base import AccountedMixin

    class NoSecure(TransformerMixin, AccountedMixin, BaseEstimator):
        def __init__(self, accountant=None):
            self.accountant = accountant

    X, y = data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(make_pipeline(NoSecure(), DPLogisticRegression(classes=[0, 1])),
                                 {"dplogisticregression__alpha": [1e-3]},
                                 accountant=accountant, secure_mode=True)
    with pytest.raises(ValueError, match="NoSecure has no secure_mode"):
        search.fit(X, y)
    assert accountant.spends == []


def test_secure_mode_parameter_is_validated(data):
    X, y = data
    accountant = BudgetAccountant()
    search = PrivateGridSearchCV(DPLogisticRegression(classes=[0, 1]), {"alpha": [1e-3]},
                                 accountant=accountant, secure_mode="yes")
    with pytest.raises(ValueError, match="secure_mode"):
        search.fit(X, y)
    assert accountant.spends == []


def test_secret_run_count_on_a_secure_stream_is_exact_and_ignores_numpy():
    # a SecureGenerator's numpy stream is not used for K: the exact sampler is
    selection = RepeatAndSelect(Gaussian(1.0), 0.3, 1.0)

    class Refusing(SecureGenerator):
        def negative_binomial(self, *args, **kwargs):  # pragma: no cover - must not run
            raise AssertionError("numpy's float sampler was used for K")

        logseries = negative_binomial

    counts = [secret_run_count(selection, Refusing()) for _ in range(2000)]
    assert min(counts) >= 1
    # geometric on k >= 1 with P[K = k] ~ 0.7^k: mean 1 / 0.3
    assert abs(np.mean(counts) - 1 / 0.3) < 0.3


def test_the_refit_charges_its_own_accountant_the_discrete_mechanism_planned(data):
    # what the refit runs (recorded on the released model's own accountant) is
    # the discrete mechanism the search planned and charged for it
    X, y = data
    search = PrivateGridSearchCV(DPLogisticRegression(epsilon=1.0, classes=[0, 1]),
                                 {"alpha": [1e-3]}, accountant=BudgetAccountant(),
                                 secure_mode=True, refit=True)
    search.fit(X, y)
    (spend,) = search.best_estimator_.accountant.spends
    (charged,) = search.accountant.spends
    refits = charged.mechanism.mechanisms[1]  # Composed([selection, AnyOf(refits)])
    assert spend.mechanism in refits.mechanisms
    assert all(type(leaf) is DiscreteGaussian for leaf in _leaves(spend.mechanism))

"""The budget planner (issue 41): its figure is what the accountant records."""

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import (
    GridSearchCV,
    RandomizedSearchCV,
    ShuffleSplit,
    cross_val_score,
    cross_validate,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdp import BudgetAccountant, BudgetError, DPLinearSVC, DPLogisticRegression
from skdp.datasets import documented_bounds
from skdp.model_selection import (
    PrivateGridSearchCV,
    PrivateRandomizedSearchCV,
    planned_privacy,
)
from skdp.preprocessing import BoundedScaler, DPStandardScaler

BOUNDS = documented_bounds("breast_cancer")


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return BoundedScaler(BOUNDS).fit_transform(X), y


def _clf(**kw):
    return DPLogisticRegression(epsilon=0.5, classes=[0, 1], **kw)


@pytest.mark.parametrize("cv", [3, 5])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_planned_grid_search_is_what_the_accountant_records(cancer, cv, n_jobs):
    X, y = cancer
    acc = BudgetAccountant()
    # alpha changes the solver's plan (its number of steps): every fit is planned
    search = GridSearchCV(_clf(accountant=acc), {"alpha": [1e-4, 1e-2]}, cv=cv,
                          n_jobs=n_jobs)
    planned = planned_privacy(search, X, y)
    assert planned == planned_privacy(search, shape=X.shape)  # the shape is enough
    search.fit(X, y)
    assert len(acc.spends) == 2 * cv + 1  # every fold of every candidate, and the refit
    assert planned == acc.spent()


@pytest.mark.parametrize("refit", [False, True])
def test_planned_under_gaussian_composition(cancer, refit):
    X, y = cancer
    acc = BudgetAccountant(delta=1e-3, composition="gaussian")
    search = GridSearchCV(_clf(accountant=acc), {"alpha": [1e-4, 1e-2]}, cv=3, refit=refit)
    planned = planned_privacy(search, X, y)
    search.fit(X, y)
    if refit:
        # the refit is the chosen candidate's: the planner counts the dearest one
        assert planned[0] >= acc.spent()[0] and planned[0] == pytest.approx(
            acc.spent()[0], rel=1e-9)
    else:
        assert planned == acc.spent()
    assert planned[0] < 0.5 * 7  # far below basic composition


def test_an_epsilon_grid_counts_the_dearest_refit_and_sizes_a_budget_for_any_n_jobs(cancer):
    X, y = cancer
    grid = {"epsilon": [0.5, 1.0, 2.0]}
    planned = planned_privacy(GridSearchCV(_clf(), grid, cv=3), X, y,
                              accountant=BudgetAccountant())
    assert planned[0] == pytest.approx(3 * 3.5 + 2.0)
    # the case: a budget of 6 lets n_jobs=1 and n_jobs=2 refuse different fits;
    # a budget sized by the planner lets every fit and the refit through, in any order
    acc = BudgetAccountant(epsilon=planned[0], delta=planned[1])
    search = GridSearchCV(_clf(accountant=acc), grid, cv=3, n_jobs=2,
                          error_score="raise").fit(X, y)
    assert len(acc.spends) == 10 and acc.spent()[0] <= planned[0]
    assert hasattr(search, "best_estimator_")


def test_planned_randomized_search(cancer):
    X, y = cancer
    acc = BudgetAccountant()
    dists = {"epsilon": stats.uniform(0.2, 1.0), "alpha": [1e-4, 1e-2]}
    search = RandomizedSearchCV(_clf(accountant=acc), dists, n_iter=3, cv=3, refit=False,
                                random_state=0)
    planned = planned_privacy(search, X, y)
    search.fit(X, y)
    assert planned == acc.spent()
    with pytest.raises(ValueError, match="int random_state"):
        planned_privacy(search.set_params(random_state=None), X, y)
    # a list grid drawn in full needs no seed
    search = RandomizedSearchCV(_clf(), {"alpha": [1e-4, 1e-2]}, n_iter=2, cv=3)
    assert planned_privacy(search, X, y, accountant=BudgetAccountant())[0] == pytest.approx(
        3.5)


def test_planned_cross_validation_and_pipelines(cancer):
    X, y = cancer
    raw = load_breast_cancer().data
    acc = BudgetAccountant()
    pipe = make_pipeline(DPStandardScaler(BOUNDS, epsilon=0.2, accountant=acc),
                         DPLinearSVC(epsilon=0.4, classes=[0, 1], accountant=acc))
    planned = planned_privacy(pipe, raw, y, cv=4)
    cross_validate(pipe, raw, y, cv=4)
    assert planned == acc.spent() == pytest.approx((2.4, 8e-5))
    acc = BudgetAccountant()
    est = _clf(batch_size=64, accountant=acc)  # DP-SGD: the sampling rate depends on n
    splitter = ShuffleSplit(3, test_size=0.3, random_state=0)
    planned = planned_privacy(est, X, y, cv=splitter)
    cross_val_score(est, X, y, cv=splitter)
    assert planned == acc.spent()
    # cv=None: one fit
    acc = BudgetAccountant()
    assert planned_privacy(est.set_params(accountant=acc), X, y) == (0.5, 1e-5)


@pytest.mark.parametrize("refit", [False, True])
def test_planned_private_searches_equal_their_charge(cancer, refit):
    X, y = cancer
    raw = load_breast_cancer().data
    searches = [
        (PrivateGridSearchCV(_clf(), {"alpha": [1e-4, 1e-2]}, refit=refit, random_state=0), X),
        (PrivateRandomizedSearchCV(
            make_pipeline(DPStandardScaler(BOUNDS, epsilon=0.2), _clf()),
            {"dplogisticregression__alpha": stats.loguniform(1e-5, 1e-1)}, n_iter=3,
            refit=refit, random_state=0), raw),
    ]
    for search, data in searches:
        acc = BudgetAccountant()
        search.set_params(accountant=acc)
        planned = planned_privacy(search, data, y)
        assert acc.spends == []  # planning charges nothing
        search.fit(data, y)
        assert planned == search.privacy_spent_ == acc.spent()
    with pytest.raises(ValueError, match=r"PrivateRandomizedSearchCV\(random_state=None\)"):
        planned_privacy(searches[1][0].set_params(random_state=None), raw, y)


def test_planner_errors_say_what_to_pass(cancer):
    X, y = cancer
    with pytest.raises(ValueError, match="pass the data X or its shape"):
        planned_privacy(_clf())
    with pytest.raises(ValueError, match="classes=None"):
        planned_privacy(DPLogisticRegression(), shape=X.shape)
    with pytest.raises(TypeError, match="charges no accountant"):
        planned_privacy(GridSearchCV(StandardScaler(), {"with_mean": [True]}), X, y)
    with pytest.raises(ValueError, match="need the data"):
        planned_privacy(_clf(), shape=X.shape, cv=ShuffleSplit(3))
    with pytest.raises(ValueError, match="epsilon must be"):
        planned_privacy(GridSearchCV(_clf(), {"epsilon": [-1.0]}), X, y)
    with pytest.raises(BudgetError):  # the search would be refused the same way
        planned_privacy(PrivateGridSearchCV(_clf(), {"alpha": [1e-4]}), X, y,
                        accountant=BudgetAccountant(delta=1e-3, composition="gaussian"))


def test_a_seed_shared_by_fits_on_the_default_accountant_plans_infinity(cancer):
    X, y = cancer
    search = GridSearchCV(_clf(random_state=0), {"alpha": [1e-4]}, cv=3)
    assert planned_privacy(search, X, y)[0] == np.inf  # as the default accountant reports
    assert np.isfinite(planned_privacy(search, X, y, accountant=BudgetAccountant())[0])

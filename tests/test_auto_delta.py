"""delta='auto' (issue 41): min(1e-5, 1/(10 n)) from the public n, charged and shown.

A default fit on 300,000 rows used to charge delta=1e-5 > 1/n and warn that the
guarantee is void; the default now resolves below 1/n for every n.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skdp import (
    BudgetAccountant,
    DPLinearSVC,
    DPLogisticRegression,
    DPMatrixSensing,
    PrivacyWarning,
    make_matrix_sensing,
)
from skdp.accounting import get_epsilon
from skdp.model_selection import PrivateGridSearchCV
from skdp.preprocessing import DPStandardScaler
from skdp.validation import resolve_delta


def _rows(n, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    return X, (X[:, 0] > 0).astype(int)


def test_resolve_delta_rule():
    assert resolve_delta("auto", 1) == 1e-5
    assert resolve_delta("auto", 10_000) == 1e-5
    assert resolve_delta("auto", 10_001) == pytest.approx(1 / 100_010)
    assert resolve_delta("auto", 300_000) == pytest.approx(1 / 3_000_000)
    for n in (1, 99, 10_000, 123_457, 10**8):
        assert resolve_delta("auto", n) <= min(1e-5, 1 / (10 * n))
    assert resolve_delta(0, 300_000) == 0.0 and resolve_delta(0.25, 3) == 0.25


@pytest.mark.parametrize("cls", [DPLogisticRegression, DPLinearSVC, DPMatrixSensing,
                                  DPStandardScaler])
def test_default_is_auto_and_clone_keeps_it(cls):
    est = cls(bounds=(-1, 1)) if cls is DPStandardScaler else cls()
    assert est.get_params()["delta"] == "auto"
    assert clone(est).get_params()["delta"] == "auto"


@pytest.mark.parametrize("make", [
    lambda acc: DPLogisticRegression(classes=[0, 1], max_iter=3, accountant=acc,
                                     random_state=0),
    lambda acc: DPLinearSVC(classes=[0, 1], max_iter=3, accountant=acc, random_state=0),
    lambda acc: DPStandardScaler(bounds=(-1, 1), accountant=acc, random_state=0),
])
def test_default_fit_on_300000_rows_does_not_void_the_guarantee(make):
    n = 300_000
    X, y = _rows(n)
    acc = BudgetAccountant()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # no "the guarantee is void"
        est = make(acc).fit(X, y)
    expected = min(1e-5, 1 / (10 * n))
    assert est.privacy_spent_ == (1.0, expected)
    assert acc.spends[0].delta == expected and acc.spent() == (1.0, expected)
    assert est.get_params()["delta"] == "auto"  # the parameter is left untouched
    if hasattr(est, "n_iter_"):
        # the noise was calibrated at the resolved delta, not at 1e-5
        assert get_epsilon(acc.spends[0].mechanism, expected) == pytest.approx(1.0, rel=1e-3)


def test_small_data_keeps_1e5_and_delta_zero_is_pure():
    X, y = _rows(500)
    acc = BudgetAccountant()
    est = DPLogisticRegression(classes=[0, 1], accountant=acc, random_state=0).fit(X, y)
    assert est.privacy_spent_ == (1.0, 1e-5)
    pure = DPLogisticRegression(delta=0, classes=[0, 1], accountant=acc,
                                random_state=0).fit(X, y)
    assert pure.privacy_spent_ == (1.0, 0.0)


def test_matrix_sensing_auto_delta_is_resolved():
    X, y, _ = make_matrix_sensing(n_samples=20_000, shape=(3, 3), rank=1, random_state=0)
    acc = BudgetAccountant()
    est = DPMatrixSensing(rank=1, shape=(3, 3), max_iter=2, accountant=acc,
                          random_state=0).fit(X, y)
    assert est.privacy_spent_ == (1.0, 1 / 200_000) == acc.spent()


def test_explicit_delta_above_one_over_n_still_warns():
    X, y = _rows(300_000)
    with pytest.warns(PrivacyWarning, match="guarantee is void.*delta='auto'"):
        DPLogisticRegression(delta=1e-5, classes=[0, 1], max_iter=2,
                             accountant=BudgetAccountant(), random_state=0).fit(X, y)


def test_invalid_delta_names_auto():
    X, y = _rows(50)
    with pytest.raises(ValueError, match="'auto'"):
        DPLogisticRegression(delta="none", classes=[0, 1]).fit(X, y)


def test_searches_charge_the_resolved_deltas():
    X, y = _rows(30_000)
    acc = BudgetAccountant()
    search = PrivateGridSearchCV(DPLogisticRegression(classes=[0, 1], max_iter=3),
                                 {"epsilon": [0.5, 1.0]}, accountant=acc, random_state=0)
    search.fit(X, y)
    n_train = search.n_train_
    assert search.privacy_spent_[1] == pytest.approx(1 / (10 * n_train))
    assert acc.spent() == search.privacy_spent_

    acc = BudgetAccountant()
    grid = GridSearchCV(DPLogisticRegression(classes=[0, 1], max_iter=3, accountant=acc,
                                             random_state=None),
                        {"epsilon": [0.5, 1.0]}, cv=3)
    grid.fit(X, y)
    assert grid.best_estimator_.get_params()["delta"] == "auto"
    # 3 folds x 2 epsilons on 20,000 rows, then the refit on 30,000
    deltas = sorted(s.delta for s in acc.spends)
    assert deltas == pytest.approx([1 / 300_000] + [1 / 200_000] * 6)

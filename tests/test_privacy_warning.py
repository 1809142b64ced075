"""delta above 1/n voids the guarantee: every charged fit warns, and only then."""

import warnings

import numpy as np
import pytest

import skdp
import skdp.datasets
import skdp.exceptions
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, PrivacyWarning
from skdp.model_selection import PrivateGridSearchCV
from skdp.preprocessing import DPStandardScaler


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 3))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("make", [
    lambda delta, acc: DPLogisticRegression(delta=delta, classes=[0, 1], accountant=acc,
                                            random_state=0),
    lambda delta, acc: DPLinearSVC(delta=delta, classes=[0, 1], accountant=acc,
                                   random_state=0),
    lambda delta, acc: skdp.DPLinearRegression(delta=delta, accountant=acc, random_state=0),
    lambda delta, acc: DPStandardScaler(bounds=(-1, 1), delta=delta, accountant=acc,
                                        random_state=0),
])
def test_delta_above_one_over_n_warns(make, data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0, delta=0.5)
    with pytest.warns(PrivacyWarning, match=r"larger than 1/n_samples = 0.005") as record:
        make(0.01, acc).fit(X, y)
    assert record[0].filename == __file__  # points at the user's call
    assert len(acc.spends) == 1            # a warning, not a refusal
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        make(1.0 / 200, acc).fit(X, y)    # delta = 1/n exactly: no warning
        make(0.0, acc).fit(X, y)


def test_make_matrix_sensing_is_importable_from_the_package():
    X, y, X_star = skdp.make_matrix_sensing(n_samples=10, shape=(3, 3), rank=1,
                                            random_state=0)
    assert X.shape == (10, 9) and y.shape == (10,) and X_star.shape == (3, 3)
    assert skdp.datasets.make_matrix_sensing is skdp.make_matrix_sensing


# -- releases documented in the README, now also said at run time (issue 38, item 8) --
def _warnings_of(kind, record):
    return [w for w in record if issubclass(w.category, PrivacyWarning) and kind in str(w.message)]


@pytest.mark.parametrize("make", [
    lambda **kw: DPLogisticRegression(accountant=BudgetAccountant(), **kw),
    lambda **kw: DPLinearSVC(accountant=BudgetAccountant(), **kw),
    lambda **kw: PrivateGridSearchCV(DPLogisticRegression(**kw), {"alpha": [1e-4, 1e-2]},
                                     accountant=BudgetAccountant()),
])
def test_labels_read_from_y_warn_and_name_the_fix(make, data):
    X, y = data
    with pytest.warns(PrivacyWarning, match=r"classes=None.*released.*classes=\[") as record:
        make().fit(X, y)
    assert len(_warnings_of("classes=None", record)) == 1  # the search's trials say nothing
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        make(classes=[0, 1]).fit(X, y)  # the public label set: nothing to say


@pytest.mark.parametrize("make", [
    lambda: DPLogisticRegression(classes=[0, 1], random_state=0),
    lambda: DPStandardScaler(bounds=(-1, 1), random_state=0),
    lambda: PrivateGridSearchCV(DPLogisticRegression(classes=[0, 1]), {"alpha": [1e-4]},
                                random_state=0),
])
def test_seeded_fit_on_the_default_accountant_warns_once(make, data, monkeypatch):
    monkeypatch.setattr(skdp.exceptions, "_seed_replay_warned", False, raising=False)
    X, y = data
    with pytest.warns(PrivacyWarning, match=r"default accountant.*inf.*accountant=.*"
                                            r"random_state=None") as record:
        make().fit(X, y)
    assert len(_warnings_of("default accountant", record)) == 1
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        make().fit(X, y)  # once per process
        monkeypatch.setattr(skdp.exceptions, "_seed_replay_warned", False, raising=False)
        make().set_params(accountant=BudgetAccountant()).fit(X, y)  # its own accountant
        make().set_params(random_state=None).fit(X, y)             # fresh noise

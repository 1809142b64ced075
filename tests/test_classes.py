"""The public label set ``classes=`` of the private classifiers (issue 10, item 1).

With ``classes=None`` the label set is read from y, so a label held by one
record shows in ``classes_``; ``classes=`` makes the label set public input,
checked before any privacy is spent.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression

CLASSIFIERS = [DPLogisticRegression, DPLinearSVC]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=240, n_features=5, n_informative=4,
                               n_redundant=0, n_classes=3, random_state=0)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def _fit(cls, X, y, **params):
    params = {"accountant": BudgetAccountant(), "random_state": 0, "max_iter": 20, **params}
    return cls(**params).fit(X, y)


class _Unreadable:
    """Has a shape (metadata) but raises if its values are read."""

    shape = (240, 5)

    def __array__(self, *args, **kwargs):
        raise AssertionError("the data was read")

    def __len__(self):
        return 240


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_classes_is_the_given_set_even_when_a_class_is_missing(cls, data):
    X, y = data  # labels 0, 1, 2; class 3 never occurs
    est = _fit(cls, X, y, classes=[3, 1, 0, 2])
    np.testing.assert_array_equal(est.classes_, [0, 1, 2, 3])
    assert est.coef_.shape == (4, X.shape[1])
    assert est.intercept_.shape == (4,)
    assert est.decision_function(X).shape == (len(X), 4)
    assert set(np.unique(est.predict(X))) <= {0, 1, 2, 3}
    if hasattr(est, "predict_proba"):
        proba = est.predict_proba(X)
        assert proba.shape == (len(X), 4)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_two_given_classes_fit_a_binary_model_with_string_labels(cls, data):
    X, y = data
    labels = np.where(y == 0, "no", "yes")
    est = _fit(cls, X, pd.Series(labels), classes=["yes", "no"])
    np.testing.assert_array_equal(est.classes_, ["no", "yes"])
    assert est.coef_.shape == (1, X.shape[1]) and est.intercept_.shape == (1,)
    assert set(est.predict(X)) <= {"no", "yes"}
    assert est.score(X, labels) > 0.6
    # the label set is public: y with one label present is fine
    only_yes = _fit(cls, X[y != 0], labels[y != 0], classes=["no", "yes"])
    np.testing.assert_array_equal(only_yes.classes_, ["no", "yes"])
    assert only_yes.coef_.shape == (1, X.shape[1])


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_given_classes_equal_to_the_labels_present_change_nothing(cls, data):
    X, y = data
    a = _fit(cls, X, y)
    b = _fit(cls, X, y, classes=np.array([2, 0, 1]))
    np.testing.assert_array_equal(a.classes_, b.classes_)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_a_label_outside_classes_raises_before_any_charge(cls, data):
    X, y = data
    labels = np.array(["low", "mid", "secret-label"])[y]
    acc = BudgetAccountant()
    est = cls(classes=["low", "mid"], accountant=acc, random_state=0)
    with pytest.raises(ValueError, match="y contains labels that are not in classes=") as err:
        est.fit(X, labels)
    assert len(acc.spends) == 0
    # the message quotes neither the private label nor how many records hold it
    message = str(err.value)
    assert "secret" not in message
    assert str(int(np.sum(y == 2))) not in message
    assert err.value.__cause__ is None and err.value.__suppress_context__
    assert not hasattr(est, "classes_")
    # a label of another type is outside the set too
    with pytest.raises(ValueError, match="not in classes="):
        est.fit(X, y)
    assert len(acc.spends) == 0


@pytest.mark.parametrize("classes", [[0, 0, 1], [1], [], [[0, 1], [2, 3]], "ab", [0, "a"],
                                     [0.0, np.nan], [None, 1]])
@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_invalid_classes_raise_naming_the_parameter_before_reading_data(cls, classes):
    acc = BudgetAccountant()
    est = cls(classes=classes, accountant=acc)
    with pytest.raises(ValueError, match=r"^classes must .*classes=\[0, 1\]"):
        est.fit(_Unreadable(), np.arange(240) % 2)
    assert len(acc.spends) == 0
    assert est.classes is classes  # stored untouched


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_a_label_held_by_one_record_is_public_only_without_classes(cls, data):
    X, y = data
    y = y.copy()
    y[-1] = 7  # one record holds label 7
    # classes=None: the label set is read from y and reveals the record
    # (documented in the class docstring)
    assert 7 in _fit(cls, X, y).classes_
    assert 7 not in _fit(cls, X[:-1], y[:-1]).classes_
    # classes given: neighbouring data sets give the same public label set
    with_record = _fit(cls, X, y, classes=[0, 1, 2, 7])
    without_record = _fit(cls, X[:-1], y[:-1], classes=[0, 1, 2, 7])
    np.testing.assert_array_equal(with_record.classes_, without_record.classes_)
    assert with_record.coef_.shape == without_record.coef_.shape == (4, X.shape[1])


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_one_class_present_is_an_error_only_without_classes(cls, data):
    X, _ = data
    y = np.ones(len(X), dtype=int)
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match="at least 2 classes"):
        cls(accountant=acc).fit(X, y)
    assert len(acc.spends) == 0
    est = _fit(cls, X, y, classes=[0, 1])
    np.testing.assert_array_equal(est.classes_, [0, 1])


@pytest.mark.parametrize("cls", CLASSIFIERS)
def test_classes_is_a_parameter(cls):
    classes = ["b", "a"]
    est = cls(classes=classes)
    assert est.get_params()["classes"] is classes
    assert clone(est).get_params()["classes"] == classes
    assert "classes=" in repr(est)

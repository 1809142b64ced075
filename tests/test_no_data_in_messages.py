"""No message or warning skdp emits quotes a value of the data (issue 38, item 5).

Distinctive poison values (a string cell, an out-of-set label, NaN and
infinity at a known row) are fed to every estimator, scaler and search, dense,
sparse and as a DataFrame; the poison must appear in no exception message
(chained causes and contexts included, and the printed traceback) and in no
warning.
"""

import traceback
import warnings

import dask.array as da
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.model_selection import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdp.preprocessing import BoundedScaler, DPBoundsScaler, DPStandardScaler
from skdp.validation import redact_data_errors

N, D, ROW, COLUMN = 200, 4, 173, 2
SECRET, LABEL = "SECRET-1234", 7331
POISON = (SECRET, str(LABEL), "7.331", str(ROW))  # 7331 in scientific notation too


def _clean():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(N, D))
    return X, (X[:, 0] > 0).astype(int)


def _estimators():
    acc = BudgetAccountant
    return {
        "logistic": lambda: DPLogisticRegression(classes=[0, 1], accountant=acc()),
        "logistic-no-classes": lambda: DPLogisticRegression(accountant=acc()),
        "svc": lambda: DPLinearSVC(classes=[0, 1], accountant=acc()),
        "matrix-sensing": lambda: DPMatrixSensing(shape=(2, 2), rank=1, accountant=acc()),
        "standard-scaler": lambda: DPStandardScaler(bounds=(-1, 1), accountant=acc()),
        "bounded-scaler": lambda: BoundedScaler(bounds=(-1, 1)),
        "bounds-scaler": lambda: DPBoundsScaler(accountant=acc()),
        "grid-search": lambda: PrivateGridSearchCV(
            DPLogisticRegression(classes=[0, 1]), {"alpha": [1e-4, 1e-2]}, accountant=acc()),
        "randomized-search": lambda: PrivateRandomizedSearchCV(
            DPLinearSVC(classes=[0, 1]), {"alpha": [1e-4, 1e-2]}, n_iter=2,
            accountant=acc()),
    }


def _poisoned_X(case):
    X, _ = _clean()
    if case == "string":
        X = X.astype(object)
        X[ROW, COLUMN] = SECRET
    elif case == "string-frame":
        X = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)]).astype(object)
        X.iloc[ROW, COLUMN] = SECRET
    elif case in ("nan", "inf", "nan-sparse", "inf-sparse"):
        X = X.copy()
        X[ROW, COLUMN] = np.nan if case.startswith("nan") else np.inf
        if case.endswith("sparse"):
            X = sp.csr_matrix(X)
    elif case == "nan-frame":
        X = pd.DataFrame(X, columns=[f"f{j}" for j in range(D)])
        X.iloc[ROW, COLUMN] = np.nan
    elif case == "one-dimensional":
        X = X[:, COLUMN].copy()
        X[ROW] = LABEL  # printed by scikit-learn's "Expected 2D array" message
    elif case == "complex":
        X = X.astype(complex)
        X[ROW, COLUMN] = LABEL + 1j
    return X


def _poisoned_y(case, regression):
    _, y = _clean()
    if case == "label":
        y = y.copy()
        y[ROW] = LABEL
    elif case == "string-y":
        y = y.astype(object)
        y[ROW] = SECRET
    elif case == "nan-y":
        y = y.astype(float)
        y[ROW] = np.nan
    return y


def _texts(error):
    """Every message reachable from an exception: itself and its whole chain of
    causes and contexts (suppressed or not), as the traceback would print them."""
    texts, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        texts += traceback.format_exception_only(error)  # with its notes
        error = error.__cause__ or error.__context__
    return texts


def _check_quiet(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except Exception as error:  # noqa: BLE001 - every error is inspected
            texts = _texts(error)
        else:
            texts = []
    texts += [str(w.message) for w in caught]
    for text in texts:
        for poison in POISON:
            assert poison not in text, text
    return texts


X_CASES = ["string", "string-frame", "nan", "inf", "nan-sparse", "inf-sparse", "nan-frame",
           "one-dimensional", "complex"]
Y_CASES = ["label", "string-y", "nan-y"]


@pytest.mark.parametrize("case", X_CASES + Y_CASES)
@pytest.mark.parametrize("name", sorted(_estimators()))
def test_fit_errors_and_warnings_quote_no_value(name, case):
    estimator = _estimators()[name]()
    regression = name == "matrix-sensing"
    X = _poisoned_X(case) if case in X_CASES else _clean()[0]
    y = _poisoned_y(case, regression) if case in Y_CASES else _clean()[1]
    if regression:
        y = y.astype(float) if case != "string-y" else y
    texts = _check_quiet(lambda: estimator.fit(X, y))
    accepted = (case in Y_CASES and name.endswith("scaler")) or (  # y is ignored
        case == "label" and name in ("logistic-no-classes", "matrix-sensing"))
    assert accepted or texts, "poisoned input must be refused"


@pytest.mark.parametrize("case", X_CASES)
@pytest.mark.parametrize("name", sorted(_estimators()))
def test_predict_and_transform_errors_quote_no_value(name, case):
    X, y = _clean()
    estimator = _estimators()[name]().fit(X, y.astype(float) if name == "matrix-sensing" else y)
    method = getattr(estimator, "predict", None) or estimator.transform
    texts = _check_quiet(lambda: method(_poisoned_X(case)))
    assert texts, "poisoned input must be refused"


@pytest.mark.parametrize("case", ["string", "nan", "inf"])
def test_dask_block_errors_quote_no_value(case):
    X = _poisoned_X(case)
    _, y = _clean()
    Xd, yd = da.from_array(X, chunks=(50, D)), da.from_array(y, chunks=(50,))
    import dask

    with dask.config.set(scheduler="synchronous"):
        texts = _check_quiet(lambda: DPLogisticRegression(
            classes=[0, 1], accountant=BudgetAccountant()).fit(Xd, yd))
    assert texts


@pytest.mark.parametrize("case, kind, where", [
    ("string", "a string that is not a number", "column 2"),
    ("string-frame", "a string that is not a number", "column 2 ('f2')"),
    ("nan", "NaN", "column 2"),
    ("inf", "infinity or a value too large for float64", "column 2"),
    ("nan-sparse", "NaN", "column 2"),
    ("nan-frame", "NaN", "column 2 ('f2')"),
])
def test_the_message_names_the_kind_and_the_column(case, kind, where):
    with pytest.raises(ValueError) as info:
        DPLogisticRegression(classes=[0, 1], accountant=BudgetAccountant()).fit(
            _poisoned_X(case), _clean()[1])
    assert f"contains {kind} (in {where})" in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None


def test_the_wrapper_keeps_the_type_and_drops_the_chain():
    def check(X):
        raise TypeError(f"float() argument must be a string or a real number, not {X!r}")

    with pytest.raises(TypeError) as info:
        redact_data_errors(check, names=("X",))(SECRET)
    assert info.value.__context__ is None and info.value.__suppress_context__


def test_a_string_in_y_is_named_as_y():
    X, y = _clean()
    y = y.astype(object)
    y[ROW] = SECRET
    with pytest.raises(ValueError, match=r"Input y contains a string that is not a number\.") \
            as info:
        DPMatrixSensing(shape=(2, 2), rank=1, accountant=BudgetAccountant()).fit(X, y)
    assert SECRET not in str(info.value)

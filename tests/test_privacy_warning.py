"""delta above 1/n voids the guarantee: every charged fit warns, and only then."""

import warnings

import numpy as np
import pytest

import skdp
import skdp.datasets
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, PrivacyWarning
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

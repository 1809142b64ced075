"""The shared private linear model (issue 40): results unchanged, docstrings whole."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

import skdp
from skdp import BudgetAccountant
from skdp._docstrings import PARAMETERS, fill_doc
from skdp._private_linear import PrivateLinearModel

# Coefficients of commit d223eda (before the split into a linear model and a
# label layer), on this data, printed with repr: the refactor must reproduce
# them (it did bitwise, here and on 588 fits of 6 solvers x 2 estimators x
# binary/multiclass x dense/CSR x float32/64 x 2 seeds). rtol 1e-9 leaves room
# for another BLAS only.
PINNED = [
    ("DPLogisticRegression", {"solver": "gd"}, "bin", "dense", np.float64, 0,
     [3.644483585322519, 1.2596456170779886, -2.342709681376125], [0.02330412627653862]),
    ("DPLogisticRegression", {"solver": "line_search"}, "multi", "dense", np.float64, 3,
     [-31.222058626173617, -11.77838529228905, 14.936284757191252],
     [-49.998792375223864, -41.84415714202118]),
    ("DPLinearSVC", {"solver": "preconditioned_gd"}, "multi", "csr", np.float32, 3,
     [-2.6068643357646835, -3.313498170100993, 0.5130967762822832],
     [-0.7251591268853625, -0.4578083752958416]),
    ("DPLinearSVC", {"solver": "gd", "loss": "hinge"}, "bin", "csr", np.float64, 1,
     [5.382670829199856, 1.7312327579362274, -2.96210618514866], [-0.07621975423116949]),
    ("DPLogisticRegression", {"solver": "second_order"}, "bin", "dense", np.float32, 0,
     [6.540674906370452, 3.4443738039005645, -3.9752809392910837], [-0.12309941685425779]),
]


def _data():
    rng = np.random.default_rng(0)
    n, d = 700, 6
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    w = rng.normal(size=d)
    y2 = (X @ w + 0.1 * rng.normal(size=n) > 0).astype(int)
    y3 = np.digitize(X @ w, [-0.2, 0.2])
    return X, y2, y3


@pytest.mark.parametrize("name, params, labels, fmt, dtype, seed, coef, intercept", PINNED)
def test_classifier_coefficients_are_those_before_the_split(name, params, labels, fmt, dtype,
                                                            seed, coef, intercept):
    X, y2, y3 = _data()
    y = y2 if labels == "bin" else y3
    X = X.astype(dtype)
    if fmt == "csr":
        X = sp.csr_matrix(X)
    model = getattr(skdp, name)(random_state=seed, accountant=BudgetAccountant(),
                                classes=sorted(set(y)), **params).fit(X, y)
    np.testing.assert_allclose(model.coef_[0, :3], coef, rtol=1e-9, atol=0)
    np.testing.assert_allclose(model.intercept_[:2], intercept, rtol=1e-9, atol=0)


ESTIMATORS = [skdp.DPLogisticRegression, skdp.DPLinearSVC, skdp.DPLinearRegression]


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_the_linear_estimators_share_one_private_linear_model(Estimator):
    assert issubclass(Estimator, PrivateLinearModel)
    for hook in ("_public_loss", "_bind_loss", "_set_coef", "_linear_predictor"):
        assert hook not in vars(Estimator) or hook == "_set_coef"


@pytest.mark.parametrize("Estimator", ESTIMATORS + [skdp.DPMatrixSensing])
def test_shared_docstring_entries_are_filled_in(Estimator):
    doc = Estimator.__doc__
    assert re.search(r"^ *\{\{\w+\}\}$", doc, re.MULTILINE) is None
    entry = "\n".join("    " + line if line else line
                      for line in PARAMETERS["secure_mode"].splitlines())
    assert doc.count(entry) == 1


def test_fill_doc_refuses_an_unknown_placeholder():
    def f():
        """Text.

        Parameters
        ----------
        {{no_such_entry}}
        """
    with pytest.raises(KeyError):
        fill_doc(f)


def _indented(name):
    return "\n".join("    " + line if line else line for line in PARAMETERS[name].splitlines())


@pytest.mark.parametrize("Estimator", ESTIMATORS)
def test_the_linear_models_share_their_common_entries(Estimator):
    doc = Estimator.__doc__
    names = ["epsilon", "solver", "fit_intercept", "clip_norm", "verbose",
             "feature_names_in_", "fit_record_"]
    if Estimator is not skdp.DPLinearSVC:  # its own max_iter and solver_params notes
        names += ["max_iter", "solver_params", "run_controls"]
    for name in names:
        assert doc.count(_indented(name)) == 1, name


def test_lines_under_a_placeholder_follow_the_shared_entry():
    doc = skdp.DPLinearRegression.__doc__
    assert _indented("solver") + "\n        Every solver whose needs a smooth convex loss" in doc
    assert _indented("run_controls") in doc


def test_a_placeholder_takes_one_word_for_the_entry():
    def f():
        """Text.

        Parameters
        ----------
        {{scaler_fit_returns:Foo}}
        """
    doc = fill_doc(f).__doc__
    assert "        self : Foo\n            The fitted scaler." in doc
    assert "$arg" not in doc and "{{" not in doc
    from skdp.preprocessing import DPBoundsScaler, DPStandardScaler

    for scaler in (DPBoundsScaler, DPStandardScaler):
        assert f"self : {scaler.__name__}\n" in scaler.fit.__doc__
        assert "{{" not in scaler.__doc__ and "    n_samples_seen_ : int\n" in scaler.__doc__

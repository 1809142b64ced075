"""What one fit will charge, found from public quantities before any data is read.

Every charged skdp object (an estimator or a transformer with
:class:`~skdp._base.AccountedMixin`) charges its accountant before it reads
a value of the data, and what it charges is a function of public
quantities only (parameters, n, the number of features, the public label
set). :func:`planned_charges` finds them without the data: an skdp
estimator's is its solver's plan of the public problem (as its ``fit``
charges it); any other charged step (a private scaler) is found by a *dry
run*, a clone fitted on an array of zeros of the data's shape with a
scratch accountant that records each charge. Either way the charges are
the ``(epsilon, delta, mechanism)`` a fit on the real data passes to
``BudgetAccountant.charge``, and no private value is touched. An estimator
whose fit charges more than its solver's plan (or charges it otherwise)
defines ``_planned_charges(n_samples, n_features, labels)``, returning that
list, and the planner uses it.

:func:`check_search_pipeline` is the rule the private searches apply to a
``Pipeline``: each step before the last must learn nothing from the data
(an allow-list by type, with checks of the parameters) or be charged.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Binarizer, FunctionTransformer, Normalizer, OneHotEncoder

from ._base import AccountedMixin, PrivateEstimatorMixin
from .accounting import BudgetAccountant
from .preprocessing import BoundedScaler

__all__ = ["planned_charges", "check_search_pipeline", "final_estimator", "charged_steps"]

#: numpy ufuncs a FunctionTransformer may apply inside a private search: element-wise
#: (one record's output depends on that record only) and finite on every finite input,
#: so no later validation can fail on the transformed data after the search's charge
TOTAL_UFUNCS = (np.absolute, np.negative, np.positive, np.sign, np.tanh, np.arctan,
                np.arcsinh, np.cbrt, np.rint, np.floor, np.ceil, np.trunc, np.sin, np.cos)

_LEARNS_SCALE = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler",
                 "QuantileTransformer", "PowerTransformer", "KBinsDiscretizer")


class _Captured(Exception):
    """Raised by :class:`_ChargeRecorder` at the charge of a final estimator's dry run."""


class _ChargeRecorder(BudgetAccountant):
    """A scratch accountant (unlimited) that keeps every charge; with ``stop`` it raises
    at the first one, so the fit ends before its solver runs."""

    def __init__(self, stop):
        super().__init__()
        self.stop = stop
        self.charges = []

    def charge(self, epsilon, delta, mechanism=None, label=None, *, seed_key=None):
        self.charges.append((float(epsilon), float(delta), mechanism))
        if self.stop:
            raise _Captured
        return super().charge(epsilon, delta, mechanism, label)


def final_estimator(estimator):
    """The last step of a ``Pipeline`` (the estimator itself otherwise)."""
    return estimator.steps[-1][1] if isinstance(estimator, Pipeline) else estimator


def charged_steps(estimator):
    """``(parameter prefix, step)`` of every charged object in ``estimator``."""
    if isinstance(estimator, Pipeline):
        return [(f"{name}__", step) for name, step in estimator.steps
                if isinstance(step, AccountedMixin)]
    return [("", estimator)] if isinstance(estimator, AccountedMixin) else []


def _zeros(n_samples, n_features, sparse, dtype):
    """A public stand-in of the data's shape (all zeros; pages are mapped lazily)."""
    if sparse:
        return sp.csr_matrix((n_samples, n_features), dtype=dtype)
    return np.zeros((n_samples, n_features), dtype=dtype)


def _dry_fit(step, X, y, stop):
    """Fit a clone of ``step`` on the stand-in ``X`` with a recorder; (charges, fitted)."""
    recorder = _ChargeRecorder(stop)
    model = clone(step)
    params = model.get_params(deep=False)
    model.set_params(accountant=recorder,
                     **({"random_state": None} if "random_state" in params else {}),
                     **({"verbose": 0} if "verbose" in params else {}))
    with warnings.catch_warnings():
        # the real fit gives its own warnings; the dry run's would repeat them
        warnings.simplefilter("ignore")
        try:
            model.fit(X, y)
        except _Captured:
            pass
    return recorder.charges, model


def _estimator_charge(estimator, n_samples, n_features, labels):
    """``(epsilon, delta, mechanism)`` an skdp estimator's fit charges: its solver's plan
    from the public :class:`~skdp.solvers.ProblemSpec` (no fit, no data)."""
    from .solvers import get_solver

    estimator = clone(estimator)
    # the mechanism its fit charges (the discrete form in secure mode)
    mechanism = estimator._planned_mechanism(n_samples, n_features, labels)
    solver = get_solver(estimator._resolve_solver(n_samples, n_features))
    spec = estimator._problem_spec(solver, n_samples, n_features, labels)
    return float(spec.epsilon), float(spec.delta), mechanism


def planned_charges(estimator, n_samples, n_features, labels=None, *, sparse=False,
                    dtype=np.float64):
    """The charges one ``fit`` of ``estimator`` on data of this shape makes, in order.

    Parameters
    ----------
    estimator : estimator
        A charged skdp object, or a ``Pipeline`` whose charged steps are skdp
        objects (other steps charge nothing; they are fitted on zeros to
        learn the width they pass on).
    n_samples, n_features : int
        The public shape of the data the fit sees.
    labels : array-like or None
        The public label set (classifiers); the stand-in ``y`` cycles
        through it. None: a ``y`` of zeros.
    sparse : bool, default=False
        Whether the data is a sparse matrix (a solver may plan differently).
    dtype : numpy dtype, default=float64
        The data's float dtype.

    Returns
    -------
    charges : list of (epsilon, delta, mechanism)
        What each charged fit passes to ``BudgetAccountant.charge``.
    """
    X = _zeros(n_samples, n_features, sparse, dtype)
    y = (np.zeros(n_samples) if labels is None
         else np.resize(np.asarray(labels), n_samples))
    steps = estimator.steps if isinstance(estimator, Pipeline) else [("", estimator)]
    charges = []
    for i, (name, step) in enumerate(steps):
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        last = i == len(steps) - 1
        if last and hasattr(step, "_planned_charges"):
            charges += list(step._planned_charges(n_samples, X.shape[1], labels))
        elif isinstance(step, PrivateEstimatorMixin) and last:
            charges.append(_estimator_charge(step, n_samples, X.shape[1], labels))
        elif isinstance(step, AccountedMixin):
            made, model = _dry_fit(step, X, y, stop=last)
            charges += made
        elif last:
            break  # a final step that charges nothing
        else:
            model = clone(step)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y)
        if not last:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                X = model.transform(X)
            if sp.issparse(X):
                X = X.tocsr()
    return charges


# -- the rule of the private searches -------------------------------------------
def _free_step_problem(step):
    """Why ``step`` may learn from the data without a charge (None: it learns nothing)."""
    kind = type(step)
    if kind is BoundedScaler or kind in (Normalizer, Binarizer):
        return None  # public bounds; row-wise maps with public parameters
    if kind is OneHotEncoder:
        if isinstance(step.categories, str):
            return ("learns its categories from the data (categories='auto'); pass the "
                    "public categories explicitly, categories=[[...], ...]")
        if step.min_frequency is not None or step.max_categories is not None:
            return ("counts category frequencies in the data (min_frequency / "
                    "max_categories); leave both None")
        if step.handle_unknown != "ignore":
            return (f"with handle_unknown={step.handle_unknown!r} raises or warns during a "
                    "trial when the data holds a value outside categories (an event that "
                    "depends on the data, after the search's charge); pass "
                    "handle_unknown='ignore'")
        if step.drop is not None:
            return ("with drop set warns during a trial, naming the columns where the data "
                    "holds a value outside categories; pass drop=None")
        return None
    if kind is FunctionTransformer:
        if step.func is not None and not any(step.func is f for f in TOTAL_UFUNCS):
            names = ", ".join(f"np.{f.__name__}" for f in TOTAL_UFUNCS)
            return (f"applies a function the search cannot check (it may read other rows "
                    f"or produce values the next step rejects); use func=None or one of "
                    f"{names}, or apply the function to X before the search (a map of "
                    "each record on its own costs nothing)")
        if step.kw_args:
            return "passes kw_args to its function; use kw_args=None"
        if step.check_inverse and step.func is not None and step.inverse_func is not None:
            return ("checks inverse_func on the data at fit and warns depending on it; "
                    "pass check_inverse=False")
        return None
    name = kind.__name__
    if name in ("Pipeline", "FeatureUnion", "ColumnTransformer"):
        return ("is a composite the search does not look into; flatten its steps into "
                "the search's pipeline, or apply it to X before the search if it learns "
                "nothing from the data")
    if name in _LEARNS_SCALE:
        use = ("skdp.preprocessing.BoundedScaler with public bounds (free), or a charged "
               "skdp scaler (skdp.preprocessing.DPStandardScaler)")
    else:
        use = ("a step that learns nothing from the data (BoundedScaler, OneHotEncoder "
               "with public categories, Normalizer, Binarizer, FunctionTransformer with a "
               "numpy ufunc) or a charged skdp step; or fit it on public data and apply "
               "it to X before the search")
    return f"learns from the data without a privacy charge; use instead {use}"


def check_search_pipeline(owner, estimator):
    """Refuse a ``Pipeline`` a private search cannot charge in full (before any charge).

    Steps before the last must each learn nothing from the data (see
    :func:`_free_step_problem`) or be charged skdp objects; the last step
    is checked by the search.
    """
    if not isinstance(estimator, Pipeline):
        return
    if estimator.memory is not None:
        raise TypeError(
            f"{owner}: the Pipeline has memory set; caching writes fitted steps (and the "
            "private data they were fitted on) to disk and reuses them across trials. "
            "Pass memory=None.")
    for name, step in estimator.steps[:-1]:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        if isinstance(step, PrivateEstimatorMixin):
            raise TypeError(
                f"{owner}: pipeline step {name!r} ({type(step).__name__}) is a private "
                "estimator; it can only be the last step.")
        if isinstance(step, AccountedMixin):
            continue  # charged: its cost is planned and included in the search's charge
        problem = _free_step_problem(step)
        if problem is not None:
            raise TypeError(
                f"{owner}: pipeline step {name!r} ({type(step).__name__}) {problem}. "
                "Nothing was charged.")

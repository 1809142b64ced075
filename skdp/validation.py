"""Declarative parameter constraints, checked before a fit is charged.

Public so that a solver written outside skdp can declare its options'
constraints the way the built-in ones do (``Solver.option_constraints``).

Every estimator parameter and every solver option is declared once, next to
its owner, as a list of acceptable forms (any one of them will do)::

    _parameter_constraints = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "data_norm": [None, Interval(Real, 0, None, closed="neither")],
        "learning_rate": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
    }

and :func:`validate_params` checks a dict of values against it, raising a
ValueError that names the parameter, the value and what is accepted. The
checks read parameters only, never data, so a bad value costs no privacy.
scikit-learn's own validator lives in a private module; this is skdp's.

The data itself is validated by scikit-learn's checks, run through
:func:`redact_data_errors`: their errors name what is wrong (the kind of
value, the column when it is public) but never quote a value of the data or
its row, which are private.

The checks of single arguments outside the estimators live here too (one
home for validation): :func:`check_epsilon`, :func:`check_delta` and
:func:`check_budget_value` for the accounting, :func:`make_rng` for data
generators. This module imports nothing from skdp, so every floor, the
accounting included, can use it.
"""

import functools
import math
import re
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array as _sklearn_check_array
from sklearn.utils.multiclass import (
    check_classification_targets as _sklearn_check_classification_targets,
)
from sklearn.utils.validation import column_or_1d as _sklearn_column_or_1d
from sklearn.utils.validation import validate_data as _sklearn_validate_data

__all__ = [
    "POSITIVE",
    "NONNEGATIVE",
    "POSITIVE_INT",
    "UNIT_INTERVAL_RIGHT_OPEN",
    "UNIT_INTERVAL_OPEN",
    "RANDOM_STATE",
    "Interval",
    "StrOptions",
    "InstanceOf",
    "Boolean",
    "Callable",
    "validate_params",
    "redact_data_errors",
    "AUTO_DELTA_CAP",
    "DELTA",
    "resolve_delta",
    "AUTO_ALPHA_CAP",
    "ALPHA",
    "resolve_alpha",
    "check_number",
    "check_epsilon",
    "check_delta",
    "check_budget_value",
    "make_rng",
]


class Interval:
    """A finite number in an interval.

    Parameters
    ----------
    kind : {numbers.Real, numbers.Integral}
        ``Integral`` accepts integers only; ``Real`` any real number (bools
        are never numbers here).
    low, high : float or None
        Bounds; None is unbounded on that side.
    closed : {'left', 'right', 'both', 'neither'}, default='left'
        Which bounds belong to the interval.
    """

    def __init__(self, kind, low, high, *, closed="left"):
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    def accepts(self, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            return False
        value = float(value)
        if not math.isfinite(value):
            return False
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self):
        what = "an integer" if self.kind is Integral else "a finite number"
        left = "[" if self.closed in ("left", "both") else "("
        right = "]" if self.closed in ("right", "both") else ")"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        if self.high is None and self.low is not None:
            op = ">=" if left == "[" else ">"
            return f"{what} {op} {self.low:g}"
        return f"{what} in {left}{low}, {high}{right}"


class StrOptions:
    """One of a set of strings.

    Parameters
    ----------
    options : iterable of str
        The accepted strings, compared exactly (case-sensitive); stored as a
        frozenset. Any other value, including a non-string, is rejected.
    """

    def __init__(self, options):
        self.options = frozenset(options)

    def accepts(self, value):
        return isinstance(value, str) and value in self.options

    def __str__(self):
        return "one of " + ", ".join(repr(o) for o in sorted(self.options))


class InstanceOf:
    """An instance of one of the given types.

    Parameters
    ----------
    *types : type
        The accepted types; a value is accepted if ``isinstance(value, types)``
        holds for at least one of them.
    name : str or None, default=None
        How the constraint is described in error messages (for example
        ``"a numpy RandomState or Generator"``); None describes it as
        ``"an instance of <type> or <type>"`` from the types' names.
    """

    def __init__(self, *types, name=None):
        self.types, self.name = types, name

    def accepts(self, value):
        return isinstance(value, self.types)

    def __str__(self):
        return self.name or "an instance of " + " or ".join(t.__name__ for t in self.types)


class _BooleanConstraint:
    """A boolean: ``True`` or ``False`` (a Python or a numpy bool).

    Integers such as 0 and 1 are not accepted. Use the module-level instance
    :data:`Boolean` in a constraints list.
    """

    def accepts(self, value):
        return isinstance(value, (bool, np.bool_))

    def __str__(self):
        return "True or False"


class _CallableConstraint:
    """Any callable object (a function, a method, a class, ...).

    Use the module-level instance :data:`Callable` in a constraints list.
    """

    def accepts(self, value):
        return callable(value)

    def __str__(self):
        return "a callable"


Boolean = _BooleanConstraint()
Callable = _CallableConstraint()


#: the largest delta that ``delta='auto'`` resolves to
AUTO_DELTA_CAP = 1e-5


def resolve_delta(delta, n_samples):
    """The delta a fit on ``n_samples`` records is charged, from the public n.

    ``delta='auto'`` resolves to ``min(1e-5, 1 / (10 n))``. A mechanism that
    publishes each record with probability ``delta`` is (0, delta)-DP and
    releases ``n delta`` records on average, so a delta at or above
    ``1 / n`` voids the guarantee; ``1 / (10 n)`` keeps that expectation at
    0.1 record whatever n, and the cap 1e-5 keeps the usual figure for
    small data sets (it is the smaller one up to n = 10,000). Every
    estimator and private search of skdp reads its delta through this
    function, so what is charged, what ``privacy_spent_`` shows and what a
    budget planner computes agree.

    Parameters
    ----------
    delta : 'auto' or float
        The ``delta`` parameter, already validated (a float in [0, 1)).
    n_samples : int
        The number of records the fit or query sees (public under zero-out
        neighbours).

    Returns
    -------
    float
        ``min(1e-5, 1 / (10 n_samples))`` for 'auto' (n taken as at least 1),
        else ``float(delta)`` (0 still means pure epsilon-DP).

    Examples
    --------
    >>> from skdp.validation import resolve_delta
    >>> resolve_delta("auto", 1_000), resolve_delta("auto", 300_000)
    (1e-05, 3.3333333333333335e-07)
    >>> resolve_delta(0.0, 300_000)
    0.0
    """
    if isinstance(delta, str) and delta == "auto":
        return min(AUTO_DELTA_CAP, 1.0 / (10.0 * max(int(n_samples), 1)))
    return float(delta)


#: ``alpha='auto'``'s cap: SGDClassifier's default, and scikit-learn's C=1 on 10,000 rows
AUTO_ALPHA_CAP = 1e-4


def resolve_alpha(alpha, n_samples):
    """The penalty strength a fit on ``n_samples`` records uses, from the public n.

    ``alpha='auto'`` resolves to ``min(1e-4, 1 / n)``: the ridge of
    scikit-learn's ``LogisticRegression(C=1.0)`` and ``LinearSVC(C=1.0)``
    (``C`` multiplies a sum, ``alpha`` a mean: ``alpha = 1 / (C n)``), at most
    1e-4 (the SGDClassifier default, used up to n = 10,000). A fixed 1e-4 biases
    large fits towards small weights: on ill-conditioned features the
    bias, not the noise, was most of the gap to the non-private model
    (``benchmarks/results/proxy_imbalanced.md``). n is public under
    zero-out neighbours, so the rule reads no data.

    Parameters
    ----------
    alpha : 'auto' or float
        The ``alpha`` parameter, already validated.
    n_samples : int
        The number of records the fit sees.

    Returns
    -------
    float
        ``min(1e-4, 1 / n_samples)`` for 'auto' (n taken as at least 1), else
        ``float(alpha)``.

    Examples
    --------
    >>> from skdp.validation import resolve_alpha
    >>> resolve_alpha("auto", 1_000), resolve_alpha("auto", 50_000)
    (0.0001, 2e-05)
    >>> resolve_alpha(0.01, 50_000)
    0.01
    """
    if isinstance(alpha, str) and alpha == "auto":
        return min(AUTO_ALPHA_CAP, 1.0 / max(int(n_samples), 1))
    return float(alpha)


#: the constraint of an estimator's ``alpha`` parameter where 'auto' is offered
ALPHA = [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")]


#: the constraint of an estimator's ``delta`` parameter: 'auto' or a float in [0, 1)
DELTA = [StrOptions({"auto"}), Interval(Real, 0, 1, closed="left")]


def _describe(constraint):
    return "None" if constraint is None else str(constraint)


def validate_params(owner, values, constraints, *, hints=None):
    """Check every value against its declared constraints.

    Parameters
    ----------
    owner : str
        Who the values belong to (an estimator or a solver), for messages.
    values : dict
        Name -> value; names without a constraint are not checked here.
    constraints : dict
        Name -> list of acceptable forms: None (the value None), a
        constraint object (:class:`Interval`, :class:`StrOptions`,
        :class:`InstanceOf`, :data:`Boolean`, :data:`Callable`).
    hints : dict or None
        Name -> extra sentence appended to that parameter's error.

    Raises
    ------
    ValueError
        For the first value that no declared form accepts.
    """
    for name, accepted in constraints.items():
        if name not in values:
            continue
        value = values[name]
        if any((c is None and value is None) or (c is not None and c.accepts(value))
               for c in accepted):
            continue
        forms = " or ".join(_describe(c) for c in accepted)
        hint = (hints or {}).get(name, "")
        raise ValueError(f"{owner}: {name} must be {forms}, got {value!r}.{hint}")


# Forms shared by several owners.
POSITIVE = Interval(Real, 0, None, closed="neither")
NONNEGATIVE = Interval(Real, 0, None, closed="left")
POSITIVE_INT = Interval(Integral, 1, None, closed="left")
NONNEGATIVE_INT = Interval(Integral, 0, None, closed="left")
AT_LEAST_ONE = Interval(Real, 1, None, closed="left")
UNIT_INTERVAL_RIGHT_OPEN = Interval(Real, 0, 1, closed="left")
UNIT_INTERVAL_OPEN = Interval(Real, 0, 1, closed="neither")
RANDOM_STATE = [None, Interval(Integral, 0, None, closed="left"),
                InstanceOf(np.random.RandomState, np.random.Generator,
                           name="a numpy RandomState or Generator")]


# -- the data: third-party checks whose errors quote no value ---------------
#: messages about a value of a given kind: (pattern, the kind, the remedy)
_VALUE_KINDS = (
    (re.compile(r"could not convert|invalid literal|Unable to parse", re.I),
     "a string that is not a number",
     "skdp estimators take numbers only: encode or drop that column before fitting "
     "(e.g. with sklearn.compose.ColumnTransformer)."),
    (re.compile(r"contains NaN|Input contains NaN"),
     "NaN",
     "skdp estimators do not accept missing values: impute them (on public "
     "information) or drop those records before fitting."),
    (re.compile(r"infinity|too large", re.I),
     "infinity or a value too large for {dtype}",
     "Drop those records, or clip the features to public bounds "
     "(skdp.preprocessing.BoundedScaler) before fitting."),
    (re.compile(r"Complex data not supported"),
     "a complex number",
     "Complex data not supported: pass real numbers (e.g. the real and imaginary "
     "parts as two features)."),
)

#: parts of scikit-learn's structural messages that print the data
_DATA_DUMPS = (
    re.compile(r":?\s*array=.*?(?=\.?\s*Reshape your data)", re.S),  # 1-D / scalar input
    re.compile(r":?\s*array=.*", re.S),
    re.compile(r"`[^`]*`"),                                    # "got scalar `array(5.)`"
)


def _data_arguments(args, kwargs, names):
    """(name, value) of the data passed to a check: positional after an
    estimator (if any), then keywords."""
    values = [a for a in args if not hasattr(a, "get_params")]
    found = list(zip(names, values))
    found += [(k, kwargs[k]) for k in names if k in kwargs]
    return [(name, value) for name, value in found if value is not None]


def _column_label(X, j):
    columns = getattr(X, "columns", None)
    if columns is not None and all(isinstance(c, str) for c in columns):
        return f"column {j} ({columns[j]!r})"  # a feature name: public, like feature_names_in_
    return f"column {j}"


def _holds(values, kind):
    """Whether a 1-D array of cells holds a value of ``kind`` (vectorised)."""
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        return kind == "a string that is not a number"
    if kind == "NaN":
        return bool(np.isnan(numbers).any())
    if kind.startswith("infinity"):
        return bool(np.isinf(numbers).any())
    return False


def _locate(X, kind):
    """Where an input holds a value of ``kind``: (found, column index or None).

    Runs only after a check has failed. A 2-D input is read column by
    column (vectorised within a column) for the first such column; a 1-D
    input (y) as a whole. Never a value or a row.
    """
    try:
        if sp.issparse(X):
            if kind != "NaN" and not kind.startswith("infinity"):
                return False, None
            X = X.tocoo()
            values = np.asarray(X.data)
            bad = np.asarray(X.col)[np.isnan(values) if kind == "NaN" else np.isinf(values)]
            return (True, int(bad.min())) if bad.size else (False, None)
        frame_columns = getattr(X, "columns", None)
        if frame_columns is not None and hasattr(X, "iloc"):
            columns = (X.iloc[:, j].to_numpy() for j in range(len(frame_columns)))
        else:
            A = X if isinstance(X, np.ndarray) else np.asarray(X, dtype=object)
            if A.ndim == 1:
                return _holds(A, kind), None
            if A.ndim != 2:
                return False, None
            columns = (A[:, j] for j in range(A.shape[1]))
        for j, column in enumerate(columns):
            if _holds(column, kind):
                return True, j
    except Exception:  # where it is is a courtesy: the error is raised anyway
        return False, None
    return False, None


def _redacted(error, args, kwargs, names):
    """An error of ``error``'s type saying what ``error`` says, without data values."""
    message = str(error)
    owner = next((type(a).__name__ for a in args if hasattr(a, "get_params")), None)
    prefix = f"{owner}: " if owner else ""
    for pattern, kind, remedy in _VALUE_KINDS:
        if not pattern.search(message):
            continue
        data = _data_arguments(args, kwargs, names)
        said = re.search(r"Input (\w+) contains", message)
        name, where = (said.group(1) if said else data[0][0] if data else "the input"), ""
        for candidate, value in data:
            if said and candidate != name:
                continue
            found, j = _locate(value, kind)
            if found:
                name = candidate
                where = "" if j is None else f" (in {_column_label(value, j)})"
                break
        dtype = re.search(r"dtype\('(\w+)'\)", message)
        kind = kind.format(dtype=dtype.group(1) if dtype else "float64")
        return type(error)(f"{prefix}Input {name} contains {kind}{where}. {remedy}")
    for dump in _DATA_DUMPS:
        message = dump.sub("", message)
    return type(error)(message)


def redact_data_errors(check, names=("X", "y")):
    """Wrap a third-party data check so that its errors quote no value of the data.

    scikit-learn's and numpy's validation messages quote the offending cell
    ("could not convert string to float: 'HIV-positive: ...'") or print
    the input. The wrapped check raises an error of the same type (ValueError
    or TypeError, so scikit-learn's estimator checks still recognise it)
    naming the kind of value (a string that is not a number, NaN, infinity)
    and the column when it can be found (its index, and its name when the
    columns have string names, as ``feature_names_in_``), never the value or
    the row. The original error is not chained (``raise ... from None`` from
    outside the handler: neither ``__cause__`` nor ``__context__`` is set).

    Parameters
    ----------
    check : callable
        The check, e.g. :func:`sklearn.utils.validation.validate_data`.
    names : tuple of str, default=("X", "y")
        The names of the data arguments, in order (an estimator passed first
        is skipped).

    Returns
    -------
    checked : callable
        ``check`` with the same signature and return value.
    """
    @functools.wraps(check)
    def checked(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            error = _redacted(exc, args, kwargs, names)
        raise error from None

    return checked


# scikit-learn's data checks as skdp calls them (every fit, transform and predict)
validate_data = redact_data_errors(_sklearn_validate_data)
check_array = redact_data_errors(_sklearn_check_array, names=("X",))
column_or_1d = redact_data_errors(_sklearn_column_or_1d, names=("y",))
check_classification_targets = redact_data_errors(_sklearn_check_classification_targets,
                                                  names=("y",))


# -- checks of single arguments: the accounting's budgets, data generators' seeds ------
def check_number(value, name, owner=""):
    """``float(value)`` for a real number (not a bool), else a ValueError."""
    prefix = f"{owner}: " if owner else ""
    if isinstance(value, bool):
        raise ValueError(f"{prefix}{name} must be a number, got {value!r}.")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{prefix}{name} must be a number, got {value!r}.") from None


def check_epsilon(value, owner=""):
    """A finite epsilon > 0."""
    epsilon = check_number(value, "epsilon", owner)
    if not (epsilon > 0 and math.isfinite(epsilon)):
        prefix = f"{owner}: " if owner else ""
        raise ValueError(f"{prefix}epsilon must be > 0 and finite, got {value!r}.")
    return epsilon


def check_delta(value, owner="", *, name="delta"):
    """A delta in [0, 1)."""
    delta = check_number(value, name, owner)
    if not (0.0 <= delta < 1.0):
        prefix = f"{owner}: " if owner else ""
        raise ValueError(f"{prefix}{name} must be in [0, 1), got {value!r}.")
    return delta


def check_budget_value(value, name, *, upper):
    """A budget value of a BudgetAccountant, checked: in [0, ``upper``], not NaN."""
    value = check_number(value, name, "BudgetAccountant")
    if math.isnan(value) or value < 0 or value > upper:
        bound = "[0, 1]" if upper == 1.0 else "(0, inf]"
        raise ValueError(f"BudgetAccountant: {name} must be in {bound}, got {value!r}.")
    return value


def make_rng(random_state):
    """One ``numpy.random.Generator`` from a scikit-learn style ``random_state``.

    Used by data generators such as :func:`skdp.matrix_sensing.make_matrix_sensing`;
    the noise of a private fit comes from :mod:`skdp._seeding` instead.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1, size=4))
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    raise ValueError(
        f"random_state must be None, an int, a numpy RandomState or Generator, "
        f"got {random_state!r}."
    )

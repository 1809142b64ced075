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
"""

import math
from numbers import Integral, Real

import numpy as np

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
UNIT_INTERVAL_RIGHT_OPEN = Interval(Real, 0, 1, closed="left")
UNIT_INTERVAL_OPEN = Interval(Real, 0, 1, closed="neither")
RANDOM_STATE = [None, Interval(Integral, 0, None, closed="left"),
                InstanceOf(np.random.RandomState, np.random.Generator,
                           name="a numpy RandomState or Generator")]

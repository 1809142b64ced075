"""Parameter validation shared by the estimators (no scikit-learn private API)."""

import numbers

import numpy as np

__all__ = [
    "check_positive",
    "check_nonnegative",
    "check_delta",
    "check_bool",
    "check_optional_int",
    "make_rng",
]


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_positive(name, value, *, allow_none=False, finite=True, hint=""):
    """Raise ValueError unless ``value`` is a real number > 0 (or None if allowed)."""
    if value is None and allow_none:
        return None
    if not _is_real(value) or not value > 0 or (finite and not np.isfinite(value)):
        kind = "a finite number > 0" if finite else "a number > 0"
        if allow_none:
            kind += " or None"
        raise ValueError(f"{name} must be {kind}, got {value!r}.{hint}")
    return float(value)


def check_nonnegative(name, value):
    """Raise ValueError unless ``value`` is a finite real number >= 0."""
    if not _is_real(value) or not value >= 0 or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}.")
    return float(value)


def check_delta(delta):
    """Raise ValueError unless 0 <= delta < 1."""
    if not _is_real(delta) or not 0 <= delta < 1:
        raise ValueError(
            f"delta must be a number in [0, 1), got {delta!r}. Use delta=0 for pure "
            "epsilon-DP, or a value well below 1/n_samples (e.g. 1e-5)."
        )
    return float(delta)


def check_bool(name, value):
    """Raise ValueError unless ``value`` is a bool (or numpy bool)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def check_optional_int(name, value, minimum=1):
    """Raise ValueError unless ``value`` is None or an int >= ``minimum``."""
    if value is None:
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be None or an integer >= {minimum}, got {value!r}.")
    return int(value)


def make_rng(random_state):
    """One ``numpy.random.Generator`` from a scikit-learn style ``random_state``.

    None draws fresh operating-system entropy (the noise is then
    unpredictable, as privacy requires); an int seeds reproducibly; a
    ``RandomState`` or ``Generator`` instance is used as a seed source.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1, size=4))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    raise ValueError(
        f"random_state must be None, an int, a numpy RandomState or Generator, "
        f"got {random_state!r}."
    )

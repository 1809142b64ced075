"""Argument checks shared by the accounting modules (one place, one wording)."""

import math

__all__ = ["check_number", "check_epsilon", "check_delta", "check_budget_value"]


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

"""The base class of the mechanism descriptions and the checks of their arguments."""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Iterable

__all__ = ["Mechanism"]


def _real(value: Any, name: str, owner: str, *, positive: bool = True) -> float:
    """Validate a finite real number (> 0 if ``positive`` else >= 0)."""
    # float (and numpy's float64) first: the abstract Real check costs more
    # than the rest, and mechanisms are built at every step of a fit
    if not isinstance(value, float) and (isinstance(value, bool)
                                         or not isinstance(value, numbers.Real)):
        raise ValueError(
            f"{owner}: {name} must be a real number, got {value!r} "
            f"({type(value).__name__})."
        )
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{owner}: {name} must be finite, got {value!r}.")
    if positive and value <= 0:
        raise ValueError(f"{owner}: {name} must be > 0, got {value!r}.")
    if not positive and value < 0:
        raise ValueError(f"{owner}: {name} must be >= 0, got {value!r}.")
    return value


def _count(value: Any, name: str, owner: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(
            f"{owner}: {name} must be an integer >= {minimum}, got {value!r} "
            f"({type(value).__name__})."
        )
    value = int(value)
    if value < minimum:
        raise ValueError(f"{owner}: {name} must be >= {minimum}, got {value}.")
    return value


def _probability(value: Any, name: str, owner: str) -> float:
    """Validate a probability in (0, 1]."""
    p = _real(value, name, owner)
    if p > 1:
        raise ValueError(f"{owner}: {name} must be in (0, 1], got {p!r}.")
    return p


def _mechanism(value: Any, owner: str) -> "Mechanism":
    if not isinstance(value, Mechanism):
        raise ValueError(
            f"{owner}: expected a Mechanism (Gaussian, Laplace, PureDP, ZCDP, "
            f"SparseVector, GaussianSparseVector, FilteredRDP, PoissonSampled, Composed or "
            f"Repeated), got {value!r}."
        )
    return value


def _mechanism_tuple(value: Any, owner: str) -> tuple:
    if isinstance(value, Mechanism) or not isinstance(value, Iterable):
        raise ValueError(f"{owner}: mechanisms must be an iterable of Mechanism, got {value!r}.")
    value = tuple(value)
    for m in value:
        _mechanism(m, owner)
    return value


class Mechanism:
    """Base class of all mechanism descriptions.

    Subclasses are frozen, slotted dataclasses holding only accounting
    fields.  Use :func:`skdp.accounting.get_epsilon` or
    :func:`skdp.accounting.get_rdp` to evaluate their privacy cost.
    """

    __slots__ = ()

    def to_dict(self) -> dict:
        """Return a JSON-compatible description of the mechanism.

        Returns
        -------
        d : dict
            ``{"type": <class name>, <field>: <value>, ...}``; nested
            mechanisms are nested dictionaries.  :func:`mechanism_from_dict`
            inverts it.
        """
        out = {"type": type(self).__name__}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, Mechanism):
                value = value.to_dict()
            elif isinstance(value, tuple):
                value = [m.to_dict() for m in value]
            out[field.name] = value
        return out

    def __reduce__(self):
        # Explicit pickling support: frozen slotted dataclasses could not be
        # unpickled by default on some Python 3.10 releases.
        return (type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self)))

"""What a plan provides for: the error of a query beyond it, and the count of its single queries."""

from collections import Counter

from ..accounting import Composed, Repeated

__all__ = ["QueryBudgetError"]


class QueryBudgetError(RuntimeError):
    """A solver asked for a query that its plan (what was charged) does not cover."""


def _leaves(mechanism, count=1, out=None):
    """Multiset of the single queries a mechanism tree provides for."""
    if out is None and not isinstance(mechanism, (Repeated, Composed)):
        out = Counter()  # one query (most batches)
        out[mechanism] = count
        return out
    out = Counter() if out is None else out
    if isinstance(mechanism, Repeated):
        return _leaves(mechanism.mechanism, count * mechanism.count, out)
    if isinstance(mechanism, Composed):
        for child in mechanism.mechanisms:
            _leaves(child, count, out)
        return out
    out[mechanism] += count
    return out

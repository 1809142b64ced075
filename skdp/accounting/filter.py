r"""Privacy filters: run adaptively chosen mechanisms within a budget fixed in advance.

A fit whose queries are chosen as it runs (how many line-search attempts,
which budget the next gradient gets) cannot name its mechanism before it
starts. It charges its whole (epsilon, delta) to the
:class:`~skdp.accounting.BudgetAccountant` up front and then asks a
:class:`PrivacyFilter` before every query whether that query still fits. The
filter's answer depends only on the costs of earlier queries, which are
functions of released outputs, so asking costs nothing.

Two filters, each a theorem about *adaptively chosen* costs:

- ``delta > 0``: an RDP filter at one Rényi order :math:`\alpha`, fixed before
  any data is read. Mechanisms are admitted while the sum of their RDP at
  :math:`\alpha` stays at most :math:`B = \varepsilon - c(\alpha, \delta)`, where
  :math:`c` is the RDP-to-DP conversion term of
  :func:`~skdp.accounting.rdp_to_epsilon`. The run is then
  :math:`(\alpha, B)`-RDP (Feldman and Zrnic 2021, Theorem 3.1), hence
  (epsilon, delta)-DP. One order is used, not "any order with budget left"
  (paper 002's rule, which no theorem covers).
- ``delta = 0``: a pure-DP filter. Pure-DP mechanisms are admitted while their
  epsilons sum to at most epsilon (basic composition is a valid filter:
  Rogers, Roth, Ullman and Vadhan 2016).

References
----------
.. [1] V. Feldman and T. Zrnic, "Individual Privacy Accounting via a Rényi
   Filter", NeurIPS 2021.
.. [2] R. Rogers, A. Roth, J. Ullman and S. Vadhan, "Privacy Odometers and
   Filters: Pay-as-you-Go Composition", NeurIPS 2016.
"""

import functools
import math

import numpy as np

from ..validation import check_delta, check_epsilon
from .accountant import BudgetError
from .mechanisms import Composed, FilteredRDP, Mechanism, PureDP
from .discrete import is_secure_accounting
from .epsilon_delta import get_epsilon
from .rdp import DEFAULT_ORDERS, get_rdp, rdp_to_epsilon

__all__ = ["PrivacyFilter", "best_order"]


def _conversion(order, delta):
    """The term an (order, r)-RDP guarantee adds to r to give epsilon at delta (>= 0)."""
    return _conversion_of(float(order), float(delta))


@functools.lru_cache(maxsize=8192)  # a pure function of public numbers, asked per order per fit
def _conversion_of(order, delta):
    return rdp_to_epsilon([0.0], [order], delta)


def best_order(mechanism, delta, orders=DEFAULT_ORDERS):
    """The Rényi order at which ``mechanism`` converts to the smallest epsilon at ``delta``.

    Parameters
    ----------
    mechanism : Mechanism
        A planned (non-adaptive) mechanism, built from public quantities.
    delta : float
        Target delta in (0, 1).
    orders : array-like, default=DEFAULT_ORDERS
        The candidate Rényi orders, each > 1 (the default grid is
        :data:`skdp.accounting.rdp.DEFAULT_ORDERS`, 1.01 to 10000).

    Returns
    -------
    order : float
        The order of ``orders`` minimising ``R(order) + c(order, delta)``,
        with ``R`` the mechanism's RDP curve and ``c`` the RDP-to-DP
        conversion term of :func:`~skdp.accounting.rdp_to_epsilon`. It
        depends on public quantities only, so choosing it costs nothing.

    Raises
    ------
    ValueError
        If ``delta`` is 0 or the mechanism has no finite RDP at any order.
    """
    delta = check_delta(delta, "best_order")
    if delta == 0:
        raise ValueError("best_order: delta must be > 0 (pure DP has no Rényi order).")
    a = np.asarray(orders, dtype=float)
    rdp = get_rdp(mechanism, orders=a)
    eps = np.array([r + _conversion(o, delta) for r, o in zip(rdp, a)])
    if not np.any(np.isfinite(eps)):
        raise ValueError(f"best_order: {mechanism!r} has no finite RDP at these orders.")
    return float(a[int(np.nanargmin(np.where(np.isfinite(eps), eps, np.inf)))])


class PrivacyFilter:
    r"""Admit adaptively chosen mechanisms while their total fits (epsilon, delta).

    Parameters
    ----------
    epsilon : float
        The budget, > 0: what the fit charged to its accountant.
    delta : float
        In [0, 1). 0 makes a pure-DP filter (every admitted mechanism must be
        pure DP); otherwise an RDP filter at ``order``.
    order : float or None, default=None
        The Rényi order :math:`\alpha > 1` of an RDP filter, chosen from public
        quantities before any data is read (see :meth:`for_plan`). Required
        when ``delta > 0``, ignored when ``delta = 0``.

    Attributes
    ----------
    budget : float
        The filter's budget in its currency: RDP at ``order``
        (:math:`\varepsilon - c(\alpha, \delta)`), or epsilon for a pure filter.
    spent : float
        The sum of the admitted costs, in the same currency.
    admitted : list of Mechanism
        What was admitted, in order.

    Notes
    -----
    An RDP filter at :math:`\alpha` admits a mechanism of RDP :math:`r_t` at
    :math:`\alpha` only if :math:`\sum_{s \le t} r_s \le B`, so the adaptive run
    is :math:`(\alpha, B)`-RDP whatever the choices (Feldman and Zrnic 2021,
    Theorem 3.1), and :math:`B + c(\alpha, \delta) = \varepsilon`. The charge
    that stands for the whole run is :attr:`mechanism`.

    Examples
    --------
    >>> from skdp.accounting import Gaussian, PrivacyFilter, get_epsilon
    >>> f = PrivacyFilter(1.0, 1e-5, order=20)
    >>> n = 0
    >>> while f.admits(Gaussian(20.0)):
    ...     f.spend(Gaussian(20.0))
    ...     n += 1
    >>> n, get_epsilon(f.mechanism, 1e-5) <= 1.0
    (24, True)
    """

    def __init__(self, epsilon, delta, order=None):
        self.epsilon = check_epsilon(epsilon, "PrivacyFilter")
        self.delta = check_delta(delta, "PrivacyFilter")
        if self.delta == 0:
            self.order = None
            self.budget = self.epsilon
        else:
            if order is None or isinstance(order, bool) or not float(order) > 1:
                raise ValueError(
                    f"PrivacyFilter: with delta > 0 the filter needs a Rényi order > 1 fixed "
                    f"before the data is read, got order={order!r}; use "
                    "PrivacyFilter.for_plan(planned_mechanism, epsilon, delta) to pick it."
                )
            self.order = float(order)
            self.budget = self.epsilon - _conversion(self.order, self.delta)
            if not self.budget > 0:
                raise ValueError(
                    f"PrivacyFilter: at order {self.order:g} and delta={self.delta:g} the "
                    f"conversion alone costs more than epsilon={self.epsilon:g}; choose a "
                    "larger order, a larger delta or a larger epsilon."
                )
        self._costs = []
        self.admitted = []
        self._cost_cache = {}

    @classmethod
    def for_plan(cls, planned, epsilon, delta):
        """A filter at the order where the planned (public) run converts best.

        Parameters
        ----------
        planned : Mechanism
            What the fit plans to run if nothing adapts, built from public
            quantities only.
        epsilon : float
            The filter's budget, > 0: what the fit charged to its accountant.
        delta : float
            In [0, 1); 0 makes a pure-DP filter (no order is chosen).

        Returns
        -------
        PrivacyFilter
            A filter at :func:`best_order` of ``planned`` at ``delta`` (a
            pure-DP filter when ``delta`` is 0).
        """
        order = None if delta == 0 else best_order(planned, delta)
        return cls(epsilon, delta, order)

    @property
    def mechanism(self):
        """The charge standing for everything the filter may admit.

        ``FilteredRDP(order, budget)`` for an RDP filter, ``PureDP(epsilon)``
        for a pure one: (epsilon, delta)-DP in both cases.
        """
        if self.order is None:
            return PureDP(self.epsilon)
        return FilteredRDP(self.order, self.budget)

    def cost(self, mechanism):
        """The cost of ``mechanism`` in the filter's currency (inf if it has none).

        Parameters
        ----------
        mechanism : Mechanism
            A candidate query (or batch of queries), described from public
            quantities.

        Returns
        -------
        float
            Its RDP at the filter's order, or for a pure-DP filter its pure
            epsilon (``inf`` for a mechanism that is not pure DP).
        """
        if not isinstance(mechanism, Mechanism):
            raise ValueError(f"PrivacyFilter: expected a Mechanism, got {mechanism!r}.")
        # a solver asks for the same few mechanisms at every step: each cost is
        # computed once per filter (and per accounting: secure mode discretizes)
        key = (mechanism, is_secure_accounting())  # mechanisms are frozen dataclasses
        if key not in self._cost_cache:
            self._cost_cache[key] = self._compute_cost(mechanism)
        return self._cost_cache[key]

    def _compute_cost(self, mechanism):
        if self.order is None:
            return get_epsilon(mechanism, 0.0)  # finite only for pure-DP mechanisms
        return float(get_rdp(mechanism, orders=[self.order])[0])

    @property
    def spent(self):
        return math.fsum(self._costs)

    @property
    def remaining(self):
        """What is left, in the filter's currency (>= 0)."""
        return max(0.0, self.budget - self.spent)

    def _fits(self, cost):
        # no slack in the unsafe direction
        return math.isfinite(cost) and math.fsum(self._costs + [cost]) <= self.budget

    def admits(self, mechanism):
        """Whether ``mechanism`` fits in what is left.

        Nothing is recorded; the answer depends only on the costs of what
        was admitted before, so asking costs no privacy.

        Parameters
        ----------
        mechanism : Mechanism
            The candidate, as for :meth:`cost`.

        Returns
        -------
        bool
            True if its cost is finite and the admitted costs plus it stay
            within ``budget``.
        """
        return self._fits(self.cost(mechanism))

    def spend(self, mechanism):
        """Admit ``mechanism`` and record its cost.

        Parameters
        ----------
        mechanism : Mechanism
            What is about to run; appended to ``admitted``.

        Raises
        ------
        BudgetError
            If it does not fit; nothing is recorded then.
        """
        cost = self.cost(mechanism)
        if not self._fits(cost):
            raise BudgetError(
                f"PrivacyFilter: {mechanism!r} costs {cost:.6g} but only "
                f"{self.remaining:.6g} of {self.budget:.6g} is left"
                + ("" if self.order is None else f" (RDP at order {self.order:g})")
                + ". Nothing was recorded."
            )
        self._costs.append(cost)
        self.admitted.append(mechanism)

    def spent_epsilon(self):
        """Epsilon at the filter's delta of what was admitted (<= epsilon).

        A function of the admitted costs only, so of released outputs: it
        may be reported.

        Returns
        -------
        float
            0 when nothing was admitted; the sum of the admitted epsilons for
            a pure-DP filter; else the epsilon at ``delta`` of the admitted
            mechanisms composed (:func:`~skdp.accounting.get_epsilon`); capped
            at ``epsilon`` in both cases.
        """
        if not self.admitted:
            return 0.0
        if self.order is None:
            return min(self.epsilon, self.spent)
        return min(self.epsilon, get_epsilon(Composed(self.admitted), self.delta))

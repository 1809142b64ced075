r"""The (epsilon, delta) of a mechanism tree: one dispatcher over the accounting methods.

:func:`get_epsilon` reports the best *valid* epsilon among RDP
(:mod:`skdp.accounting.rdp`), the exact analytic Gaussian mechanism (a
composition of Gaussians without sampling is one Gaussian), basic composition
of pure-DP mechanisms, and privacy loss distributions
(:mod:`skdp.accounting.pld`; sampled and heterogeneous compositions);
:func:`get_delta` does the same the other way round.
"""

from __future__ import annotations

import math

from scipy import optimize, special

from . import pld
from ..validation import check_delta
from .discrete import as_run
from .mechanisms import Mechanism
from .rdp import DEFAULT_ORDERS, Cost, mechanism_cost, orders_key, rdp_to_delta, rdp_to_epsilon

__all__ = ["get_epsilon", "get_delta", "analytic_gaussian_epsilon", "gaussian_log_delta",
           "EPSILON_METHODS"]

def gaussian_log_delta(eps: float, mu: float) -> float:
    """log delta(eps) of a Gaussian with sensitivity / std ``mu`` (Balle & Wang)."""
    la = special.log_ndtr(mu / 2 - eps / mu)
    lb = special.log_ndtr(-mu / 2 - eps / mu) + eps
    if lb >= la:
        return -math.inf
    return float(la + math.log1p(-math.exp(lb - la)))


def analytic_gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest eps with delta(eps) <= delta for the Gaussian with ratio ``mu``.

    Solved by Brent's method; the returned value is nudged up until
    delta(eps) <= delta holds, so it is never below the exact epsilon.
    """
    if mu == 0:
        return 0.0
    log_target = math.log(delta)

    def f(eps):
        return gaussian_log_delta(eps, mu) - log_target

    if f(0.0) <= 0:
        return 0.0
    # zCDP bound (rho = mu^2 / 2) is a valid upper end of the bracket.
    hi = mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta))
    while f(hi) > 0:
        hi *= 2
    eps = optimize.brentq(f, 0.0, hi, xtol=1e-13, rtol=1e-13, maxiter=500)
    step = 1e-12 * max(1.0, eps)
    while f(eps) > 0:
        eps += step
        step *= 2
    return float(eps)


EPSILON_METHODS = ("auto", "rdp", "analytic", "pure", "pld")
# "auto" skips PLD accounting for trees with more distinct parts than this
# (each part is its own distribution to discretise and compose); every other
# method stays available, so the result is still a valid bound.
_AUTO_PLD_MAX_PARTS = 16
# Shares of delta tried for the PLD part when a tree also has parts that only
# RDP can account for (any share is valid; the smallest epsilon is kept).
_PLD_DELTA_SHARES = (0.5, 0.9, 0.1)


def _epsilon_of_cost(cost: Cost, delta: float, orders: tuple, method: str = "auto") -> float:
    candidates = []
    if method in ("auto", "pure"):
        if cost.is_pure:
            candidates.append(cost.pure)
        elif method == "pure":
            raise ValueError(
                "method='pure' needs a mechanism made only of pure-DP parts "
                "(Laplace, PureDP, SparseVector, and sampled or composed forms of them)."
            )
    if method in ("auto", "analytic"):
        if cost.is_gaussian:
            if delta > 0:
                candidates.append(analytic_gaussian_epsilon(math.sqrt(cost.gauss), delta))
        elif cost.is_hybrid:
            if delta > 0:
                candidates.append(
                    analytic_gaussian_epsilon(math.sqrt(cost.gauss), delta) + cost.pure)
        elif method == "analytic":
            raise ValueError(
                "method='analytic' needs a composition of unsampled Gaussian mechanisms "
                "(optionally plus pure-DP mechanisms)."
            )
    if method in ("auto", "rdp") and delta > 0:
        candidates.append(rdp_to_epsilon(cost.rdp, orders, delta))
    return min(candidates) if candidates else math.inf


def _check_method(method):
    if method not in EPSILON_METHODS:
        raise ValueError(f"method must be one of {EPSILON_METHODS}, got {method!r}.")


def get_epsilon(mechanism: Mechanism, delta: float, *, method: str = "auto",
                orders=DEFAULT_ORDERS) -> float:
    r"""Epsilon of a mechanism at a given delta.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism tree.
    delta : float
        Target delta in [0, 1).
    method : {"auto", "rdp", "analytic", "pure", "pld"}, default="auto"
        - ``"auto"``: the smallest of the valid bounds below that apply
          (PLD only at delta > 0, for trees that are not all unsampled
          Gaussians, which are exact already, and with at most 16 distinct
          parts).
        - ``"rdp"``: RDP curve and the tight conversion (``inf`` at delta 0).
        - ``"analytic"``: a tree of unsampled Gaussians is exactly one
          Gaussian with :math:`z = (\sum_t z_t^{-2})^{-1/2}`; its exact
          epsilon by the analytic Gaussian mechanism [2]_.  Pure-DP parts
          beside the Gaussians are added by basic composition.
        - ``"pure"``: basic composition of pure-DP parts (valid at every
          delta >= 0; Poisson-sampled parts amplified by
          :math:`\log(1 + q(e^\varepsilon - 1))`).
        - ``"pld"``: privacy loss distributions
          (:mod:`skdp.accounting.pld`): the tightest for sampled and
          heterogeneous compositions; parts with no PLD form (``ZCDP``,
          ``GaussianSparseVector``, ``FilteredRDP``) are accounted by RDP
          and added by basic composition.  Needs delta > 0.
    orders : array-like, default=DEFAULT_ORDERS
        Rényi orders used by the RDP route.

    Returns
    -------
    epsilon : float
        An epsilon such that the mechanism is (epsilon, delta)-DP, never
        below the exact value of the method used; ``inf`` if none applies
        (e.g. a Gaussian at delta 0).

    Raises
    ------
    ValueError
        Bad delta or method, or a method that does not apply to the tree.

    References
    ----------
    .. [1] C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020.
    .. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy", ICML 2018.

    Examples
    --------
    >>> from skdp.accounting import Gaussian, Repeated, get_epsilon
    >>> round(get_epsilon(Repeated(Gaussian(20.0), 200), 1e-5), 3)
    2.943
    """
    mechanism = as_run(mechanism, "get_epsilon")  # validated; discretized in secure mode
    delta = check_delta(delta)
    _check_method(method)
    key = orders_key(orders)
    cost = mechanism_cost(mechanism, key)
    if method == "pld":
        if delta == 0:
            raise ValueError("method='pld' needs delta > 0; use method='pure' for delta=0.")
        eps = _pld_epsilon(mechanism, delta, key)
        return math.inf if eps is None else eps
    eps = _epsilon_of_cost(cost, delta, key, method)
    if method == "auto" and delta > 0 and not cost.is_gaussian:
        pld_eps = _pld_epsilon(mechanism, delta, key, max_parts=_AUTO_PLD_MAX_PARTS)
        if pld_eps is not None:
            eps = min(eps, pld_eps)
    return eps


def _pld_epsilon(mechanism: Mechanism, delta: float, orders: tuple, max_parts=None):
    """Epsilon by PLD for the parts that have a PLD form, by RDP for the rest.

    The two parts compose by basic composition (epsilons add, deltas add);
    the delta is shared by each of ``_PLD_DELTA_SHARES`` and the smallest
    total kept.  None when no part has a PLD form, the PLD part has more than
    ``max_parts`` distinct parts, or its grid is too wide.
    """
    pld_part, rdp_part = pld.split_for_pld(mechanism)
    if pld_part is None or (max_parts is not None
                            and pld.distinct_parts(pld_part) > max_parts):
        return None
    if rdp_part is None:
        return pld.pld_epsilon(pld_part, delta)
    rest = mechanism_cost(rdp_part, orders)
    best = None
    for share in _PLD_DELTA_SHARES:
        first = pld.pld_epsilon(pld_part, delta * share)
        if first is None:
            return None
        total = first + _epsilon_of_cost(rest, delta * (1 - share), orders)
        best = total if best is None else min(best, total)
    return best


def _delta_of_cost(cost: Cost, epsilon: float, orders: tuple) -> float:
    candidates = [rdp_to_delta(cost.rdp, orders, epsilon)]
    if cost.is_pure:
        candidates.append(0.0 if epsilon >= cost.pure else 1.0)
    if cost.is_gaussian or cost.is_hybrid:
        rest = epsilon - cost.pure
        if rest >= 0:
            candidates.append(math.exp(gaussian_log_delta(rest, math.sqrt(cost.gauss))))
    return max(0.0, min(candidates))


def get_delta(mechanism: Mechanism, epsilon: float, *, orders=DEFAULT_ORDERS) -> float:
    r"""Delta of a mechanism at a given epsilon.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism tree.
    epsilon : float
        Target epsilon >= 0.
    orders : array-like, default=DEFAULT_ORDERS
        Rényi orders used by the RDP route.

    Returns
    -------
    delta : float
        The smallest valid delta among the RDP conversion
        :math:`\min_\alpha e^{(\alpha-1)(R(\alpha)-\varepsilon)}
        (1-1/\alpha)^{\alpha-1}/\alpha`, the analytic Gaussian (for trees of
        unsampled Gaussians) and basic pure composition.
    """
    mechanism = as_run(mechanism, "get_delta")  # validated; discretized in secure mode
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon must be a number >= 0, got {epsilon!r}.") from None
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}.")
    key = orders_key(orders)
    cost = mechanism_cost(mechanism, key)
    delta = _delta_of_cost(cost, epsilon, key)
    if (not cost.is_gaussian and pld.split_for_pld(mechanism)[1] is None
            and pld.distinct_parts(mechanism) <= _AUTO_PLD_MAX_PARTS):
        pld_delta = pld.pld_delta(mechanism, epsilon)
        if pld_delta is not None:
            delta = min(delta, pld_delta)
    return delta

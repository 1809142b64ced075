"""Gaussian differential privacy (mu-GDP): epsilon of a mu and mu of a budget.

The accountant composes Gaussian mechanisms by adding their mu^2 (Dong, Roth
& Su 2019); these two conversions to and from (epsilon, delta) are exact
(the analytic Gaussian of Balle & Wang 2018). Public so that a budget can be
split by mu^2 outside the accountant (``skdp.preprocessing.split_budget``).
"""

import math

from .epsilon_delta import analytic_gaussian_epsilon

__all__ = ["gdp_epsilon", "gdp_mu_budget"]


def gdp_epsilon(mu2: float, delta: float) -> float:
    """Exact epsilon of a mu-GDP release at ``delta`` (analytic Gaussian)."""
    mu = math.sqrt(mu2)
    if not math.isfinite(mu):
        return math.inf
    return analytic_gaussian_epsilon(mu, delta)


def gdp_mu_budget(epsilon: float, delta: float) -> float:
    """Largest mu whose Gaussian is (epsilon, delta)-DP (bisection on log mu)."""
    if not math.isfinite(epsilon):
        return math.inf

    def fits(mu):
        return analytic_gaussian_epsilon(mu, delta) <= epsilon

    lo = hi = 1.0
    while fits(hi):
        lo, hi = hi, hi * 2
    while not fits(lo):
        lo, hi = lo / 2, lo
        if lo < 1e-300:
            return 0.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if not lo < mid < hi:
            break
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo

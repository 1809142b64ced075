r"""Spends and how they add up: the record of one charge and the two composition rules.

A :class:`Spend` is one charge recorded by a
:class:`~skdp.accounting.BudgetAccountant`. :class:`Tally` keeps the
running totals of a list of spends under ``composition='basic'`` (the
claimed epsilons and deltas add up; Rogers, Roth, Ullman & Vadhan 2016) or
``composition='gaussian'`` (every spend a mu-Gaussian-DP release, the mu's
composing as :math:`\mu^2 = \sum_i \mu_i^2`, quoted at the budget's
delta; Dong, Roth & Su 2022; Smith & Thakurta 2022). Both are valid privacy
filters; the rules in full are on the accounting page of the user guide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from scipy import special

from ..validation import check_delta, check_epsilon
from .mechanisms import Composed, Gaussian, Laplace, Mechanism, PureDP, Repeated
from .epsilon_delta import get_epsilon
from .gdp import gdp_epsilon, gdp_mu_budget
from .rdp import DEFAULT_ORDERS_KEY, mechanism_cost

__all__ = ["BudgetError", "Spend", "Tally", "make_spend", "fmt_budget", "mu_of_pure",
           "gdp_mu2", "mechanism_mu2", "gdp_epsilon", "gdp_mu_budget", "SLACK", "CLAIM_RTOL"]

#: relative slack of the budget comparisons (floating-point sums only)
SLACK = 1e-9
#: a spend's claimed epsilon may undercut its mechanism's epsilon by this much
CLAIM_RTOL = 1e-6


class BudgetError(ValueError):
    """A privacy spend that does not fit in the budget, or cannot be recorded.

    Raised before anything is recorded: the accountant is unchanged.
    """


@dataclass(frozen=True)
class Spend:
    """One recorded charge.

    Parameters
    ----------
    epsilon : float
        The epsilon charged.
    delta : float
        The delta charged.
    mechanism : Mechanism or None
        What was run, if known.  Under ``composition='gaussian'`` it gives
        the spend's Gaussian-DP parameter.
    label : str or None
        Free text (e.g. the estimator and solver).
    seed_key : str or None
        Opaque digest of the seed the spend's noise was drawn from, given by
        the caller (None: fresh entropy).
    seed_index : int or None
        With a ``seed_key``: the number of spends already recorded on the
        accountant with the same key when this one was recorded (0, 1, ...);
        always 0 on the process default accountant (replay mode).  None
        without a key.
    """

    epsilon: float
    delta: float
    mechanism: Optional[Mechanism] = None
    label: Optional[str] = None
    seed_key: Optional[str] = None
    seed_index: Optional[int] = None


def fmt_budget(eps: float, delta: float) -> str:
    return f"(epsilon={eps:.6g}, delta={delta:.6g})"


# -- Gaussian differential privacy -----------------------------------------------
def mu_of_pure(eps: float) -> float:
    """Smallest mu such that every eps-DP mechanism is mu-GDP.

    mu = 2 Phi^{-1}(e^eps / (1 + e^eps)) (Dong, Roth & Su 2022), computed as
    -2 Phi^{-1}(1 / (1 + e^eps)) for precision, and padded up by a few ulps.
    Valid: the trade-off curves G_mu and f_{eps,0} are equal at 0, at 1 and
    at f_{eps,0}'s kink alpha* = 1 / (1 + e^eps), where G_mu(alpha*) =
    Phi(-mu/2) = alpha*; G_mu is convex and f_{eps,0} is linear on [0,
    alpha*] and on [alpha*, 1], so G_mu <= f_{eps,0} everywhere.  Tight:
    randomized response is eps-DP with trade-off exactly f_{eps,0}, and any
    smaller mu puts G_mu above it at alpha*.
    """
    if eps == 0:
        return 0.0
    mu = -2.0 * float(special.ndtri(special.expit(-eps)))
    return mu * (1 + 1e-12) if math.isfinite(mu) else math.inf


def gdp_mu2(spend: Spend) -> Optional[float]:
    """mu^2 of a spend under Gaussian DP, or None if it has no GDP form."""
    if spend.mechanism is None:
        return mu_of_pure(spend.epsilon) ** 2 if spend.delta == 0 else None
    return mechanism_mu2(spend.mechanism)


def mechanism_mu2(mechanism: Mechanism) -> Optional[float]:
    """mu^2 of a mechanism under Gaussian DP, part by part, or None if it has no GDP form.

    A Gaussian of noise multiplier z is exactly (1/z)-GDP; a Laplace or
    pure-DP part of epsilon e is mu_e-GDP (:func:`mu_of_pure`); parts
    composed (``Composed``, ``Repeated``) add their mu^2, which is GDP
    composition (valid under adaptive choice).  Mapping each pure part on
    its own is what keeps a fit of many small Laplace steps cheap:
    mu_e^2 grows like (pi/2) e^2, so the sum over the parts is far below
    mu^2 of their summed epsilon.  Any other node is mapped whole from its
    cost (unsampled Gaussian parts plus one pure-DP epsilon), or has no GDP
    form (Poisson-sampled, zCDP, ...).
    """
    if isinstance(mechanism, Gaussian):
        z = mechanism.noise_multiplier
        return 1.0 / (z * z)
    if isinstance(mechanism, (Laplace, PureDP)):
        return mu_of_pure(mechanism.epsilon) ** 2
    if isinstance(mechanism, Composed):
        parts = [mechanism_mu2(child) for child in mechanism.mechanisms]
        return None if any(p is None for p in parts) else math.fsum(parts)
    if isinstance(mechanism, Repeated):
        part = mechanism_mu2(mechanism.mechanism)
        return None if part is None else part * mechanism.count
    cost = mechanism_cost(mechanism, DEFAULT_ORDERS_KEY)
    if cost.other:
        return None
    mu2 = cost.gauss
    if cost.pure > 0:
        mu2 += mu_of_pure(cost.pure) ** 2
    return mu2


class Tally:
    """Running totals of a list of spends under one composition rule.

    'basic': (fsum of epsilons, fsum of deltas).  'gaussian': mu^2 is the
    fsum of the spends' mu_i^2, converted at the budget delta.  Both are
    non-decreasing as spends are added (a correctly rounded sum of more
    non-negative terms is never smaller); the reported Gaussian epsilon is
    also floored at the largest value reported so far, so root-finding
    round-off can never make it step back.
    """

    def __init__(self, composition: str, budget_epsilon: float, budget_delta: float,
                 replay: bool):
        self.composition = composition
        self.budget_epsilon = budget_epsilon
        self.budget_delta = budget_delta
        self.mu_budget = None  # 'gaussian': the budget as a GDP mu (computed when needed)
        self.replay = replay
        self.spends = []
        self.eps, self.deltas, self.mu2 = [], [], []
        self.no_gdp = False
        self.key_counts = {}
        self.shared_seed = False
        self.floor = 0.0

    def seed_index(self, key: Optional[str]) -> Optional[int]:
        if key is None:
            return None
        return 0 if self.replay else self.key_counts.get(key, 0)

    def add(self, spend: Spend) -> None:
        self.spends.append(spend)
        self.eps.append(spend.epsilon)
        self.deltas.append(spend.delta)
        if self.composition == "gaussian":
            mu2 = gdp_mu2(spend)
            if mu2 is None:  # only from hand-edited or unreadable ledger rows
                self.no_gdp = True
            else:
                self.mu2.append(mu2)
        if spend.seed_key is not None:
            count = self.key_counts.get(spend.seed_key, 0)
            self.shared_seed = self.shared_seed or count > 0
            self.key_counts[spend.seed_key] = count + 1

    def totals(self, extra: Optional[Spend] = None, *, extra_mu2: Optional[float] = None):
        """(epsilon, delta) of the recorded spends, plus ``extra`` if given."""
        n = len(self.spends) + (extra is not None)
        shared = self.replay and (self.shared_seed or (
            extra is not None and extra.seed_key is not None
            and extra.seed_key in self.key_counts))
        if self.composition == "basic":
            eps = self.eps + [extra.epsilon] if extra is not None else self.eps
            deltas = self.deltas + [extra.delta] if extra is not None else self.deltas
            total = (math.fsum(eps), math.fsum(deltas))
        elif n == 0:
            total = (0.0, 0.0)
        else:
            mu2 = self.mu2 + [extra_mu2] if extra is not None else self.mu2
            eps = math.inf if self.no_gdp else gdp_epsilon(math.fsum(mu2), self.budget_delta)
            eps = max(eps, self.floor)
            if extra is None:
                self.floor = eps
            total = (eps, self.budget_delta)
        if shared:
            # Replay mode: two fits with one seed drew the same noise, so
            # they never compose as independent releases.
            total = (math.inf, total[1])
        return total

    def left(self):
        """What is left of the budget: ``BudgetAccountant.remaining`` from these spends."""
        eps, delta = self.totals()
        if self.composition == "gaussian":
            if not math.isfinite(self.budget_epsilon):
                return math.inf, self.budget_delta
            if not math.isfinite(eps):
                return 0.0, self.budget_delta
            if self.mu_budget is None:
                self.mu_budget = gdp_mu_budget(self.budget_epsilon, self.budget_delta)
            mu_b = self.mu_budget
            left = mu_b * mu_b - math.fsum(self.mu2)
            if left <= mu_b * mu_b * SLACK:
                return 0.0, self.budget_delta
            return gdp_epsilon(left, self.budget_delta), self.budget_delta
        left_eps, left_delta = self.budget_epsilon - eps, self.budget_delta - delta
        # Differences within the comparison slack are rounding noise.
        if math.isfinite(self.budget_epsilon) and left_eps <= self.budget_epsilon * SLACK:
            left_eps = 0.0
        if math.isnan(left_eps):  # inf - inf: replay mode on an unlimited budget
            left_eps = math.inf
        if left_delta <= self.budget_delta * SLACK + 1e-15:
            left_delta = 0.0
        return left_eps, left_delta

    def verify_fits(self, spend: Spend) -> None:
        """Raise :class:`BudgetError` (saying what is left) unless ``spend`` fits the budget."""
        extra_mu2 = None
        if self.composition == "gaussian":
            extra_mu2 = gdp_mu2(spend)
            if extra_mu2 is None:
                what = f" ({spend.label})" if spend.label else ""
                if spend.mechanism is None:
                    why = ("it has delta > 0 and no mechanism, so its privacy curve is "
                           "unknown (only pure epsilon-DP spends, delta=0, may omit the "
                           "mechanism). Pass the mechanism that is run, or")
                else:
                    why = (f"its mechanism {spend.mechanism!r} has a part that is neither an "
                           "unsampled Gaussian nor pure DP (Poisson-sampled, zCDP, ...), "
                           "which has no Gaussian-DP bound here. For such fits")
                raise BudgetError(
                    f"This spend{what} {fmt_budget(spend.epsilon, spend.delta)} cannot be charged "
                    f"to a BudgetAccountant with composition='gaussian': {why} use "
                    "BudgetAccountant(composition='basic'), where each spend counts at its "
                    "claimed (epsilon, delta). Nothing was recorded."
                )
        eps, delta = self.totals()
        new_eps, new_delta = self.totals(spend, extra_mu2=extra_mu2)
        fits_eps = new_eps <= self.budget_epsilon * (1 + SLACK) + 1e-12
        # A delta budget of 1 constrains nothing (every mechanism is (0, 1)-DP).
        fits_delta = self.budget_delta >= 1.0 or new_delta <= self.budget_delta * (1 + SLACK) + 1e-15
        if fits_eps and fits_delta:
            return
        what = f" ({spend.label})" if spend.label else ""
        if self.composition == "gaussian":
            left = self.left()
            rule = (" (composition='gaussian': totals are the composed Gaussian-DP epsilon "
                    "at the budget delta)")
        else:
            left = (max(0.0, self.budget_epsilon - eps), max(0.0, self.budget_delta - delta))
            rule = ""
        over = " and ".join(n for n, ok in (("epsilon", fits_eps), ("delta", fits_delta)) if not ok)
        raise BudgetError(
            f"Privacy budget exceeded ({over}): this spend{what} asks for "
            f"{fmt_budget(spend.epsilon, spend.delta)}; already spent {fmt_budget(eps, delta)} in "
            f"{len(self.spends)} spend(s) of the budget {fmt_budget(self.budget_epsilon, self.budget_delta)}"
            f"{rule}; left {fmt_budget(*left)}; with this spend the total would be "
            f"{fmt_budget(new_eps, new_delta)}. Nothing was recorded. To fix: ask for at most what "
            "is left (smaller epsilon/delta), or use a BudgetAccountant with a larger budget."
        )


def make_spend(epsilon, delta, mechanism, label, seed_key) -> Spend:
    epsilon = check_epsilon(epsilon, "spend")
    delta = check_delta(delta, "spend")
    if mechanism is not None:
        if not isinstance(mechanism, Mechanism):
            raise ValueError(f"spend: mechanism must be a Mechanism or None, got {mechanism!r}.")
        own = get_epsilon(mechanism, delta)
        if own > epsilon * (1 + CLAIM_RTOL) + 1e-12:
            raise ValueError(
                f"spend: the mechanism {mechanism!r} is only ({own:.6g}, {delta:.6g})-DP, but the "
                f"spend claims epsilon={epsilon:.6g}. Charge at least {own:.6g}, or calibrate the "
                "noise with skdp.accounting.calibrate for the claimed budget."
            )
    if label is not None and not isinstance(label, str):
        label = str(label)
    if seed_key is not None and not isinstance(seed_key, str):
        raise ValueError(
            f"charge: seed_key must be a str (a digest of the seed) or None, got {seed_key!r}.")
    return Spend(epsilon, delta, mechanism, label, seed_key)

"""Find the noise that makes a mechanism tree exactly (epsilon, delta)-DP."""

from __future__ import annotations

import math
from typing import Callable

from scipy import optimize

from .mechanisms import Mechanism
from ..validation import check_delta, check_epsilon
from .epsilon_delta import EPSILON_METHODS, get_epsilon

__all__ = ["calibrate"]

_CAP = 1e8


def calibrate(make_mechanism: Callable[[float], Mechanism], epsilon: float, delta: float, *,
              lower: float = 1e-3, upper: float | None = None, tol: float = 1e-4,
              method: str = "auto") -> float:
    r"""Smallest noise multiplier whose mechanism is (epsilon, delta)-DP.

    Parameters
    ----------
    make_mechanism : callable
        ``make_mechanism(noise_multiplier) -> Mechanism``; the mechanism's
        epsilon must decrease as the noise multiplier grows (e.g.
        ``lambda z: Repeated(PoissonSampled(q, Gaussian(z)), steps)``, or
        ``lambda b: Repeated(Laplace(b), steps)`` for pure DP).
    epsilon : float
        Target epsilon, > 0 and finite.
    delta : float
        Target delta in [0, 1); 0 asks for pure DP.
    lower : float, default=1e-3
        Smallest noise multiplier considered (> 0).  If it already meets the
        target it is returned.
    upper : float or None, default=None
        Largest noise multiplier considered; None means search up to 1e8.
    tol : float, default=1e-4
        Relative tolerance on the noise multiplier: the result is at most a
        factor ``1 + tol`` above the smallest valid one.
    method : {"auto", "rdp", "analytic", "pure", "pld"}, default="auto"
        Passed to :func:`~skdp.accounting.get_epsilon`.

    Returns
    -------
    noise_multiplier : float
        The conservative end of the final bracket: its mechanism's epsilon is
        always <= ``epsilon`` (never above the target).

    Raises
    ------
    ValueError
        If ``epsilon <= 0``, ``delta`` is outside [0, 1), the bounds are
        invalid, or no noise multiplier up to the upper bound reaches the
        target (e.g. a Gaussian mechanism with ``delta=0``).

    Notes
    -----
    The bracket is found by doubling or halving from 1 (clipped to
    ``[lower, upper]``), or, for ``method`` 'auto' and 'pld', by steps of
    1.25 down from the RDP calibration (an upper end, RDP being never
    tighter), then bisected on :math:`\log z`.  Each probe builds a
    fresh mechanism and evaluates it with the same accountant code that
    charges it, so the calibrated mechanism passes the budget check.

    Examples
    --------
    >>> from skdp.accounting import Gaussian, Repeated, calibrate, get_epsilon
    >>> z = calibrate(lambda z: Repeated(Gaussian(z), 100), 1.0, 1e-5)
    >>> get_epsilon(Repeated(Gaussian(z), 100), 1e-5) <= 1.0
    True
    """
    if not callable(make_mechanism):
        raise ValueError(f"calibrate: make_mechanism must be callable, got {make_mechanism!r}.")
    epsilon = check_epsilon(epsilon, "calibrate")
    delta = check_delta(delta, "calibrate")
    if method not in EPSILON_METHODS:
        raise ValueError(f"calibrate: method must be one of {EPSILON_METHODS}, got {method!r}.")
    lower = float(lower)
    if not (lower > 0 and math.isfinite(lower)):
        raise ValueError(f"calibrate: lower must be > 0 and finite, got {lower!r}.")
    cap = _CAP if upper is None else float(upper)
    if not (cap >= lower):
        raise ValueError(f"calibrate: upper ({upper!r}) must be >= lower ({lower!r}).")
    tol = float(tol)
    if not (tol > 0):
        raise ValueError(f"calibrate: tol must be > 0, got {tol!r}.")

    probes = {}

    def eps_of(z: float) -> float:
        if z not in probes:
            mechanism = make_mechanism(z)
            if not isinstance(mechanism, Mechanism):
                raise ValueError(
                    f"calibrate: make_mechanism({z!r}) returned {mechanism!r}, not a Mechanism.")
            probes[z] = get_epsilon(mechanism, delta, method=method)
        return probes[z]

    z, factor = min(max(1.0, lower), cap), 2.0
    if method in ("auto", "pld") and delta > 0:
        # RDP is never tighter than PLD: its (cheap) calibration is a valid
        # upper end, and the PLD root is near it, so the slow PLD probes stay
        # away from tiny noise multipliers (whose distributions are wide).
        try:
            z_rdp = calibrate(make_mechanism, epsilon, delta, lower=lower, upper=upper,
                              tol=tol, method="rdp")
        except ValueError:
            pass
        else:
            z, factor = z_rdp, 1.25
    if eps_of(z) <= epsilon:
        hi = z
        while True:
            if hi <= lower:
                return lower
            lo = max(hi / factor, lower)
            if eps_of(lo) > epsilon:
                break
            hi = lo
    else:
        lo = z
        while True:
            if lo >= cap:
                raise ValueError(
                    f"calibrate: no noise multiplier up to {cap:g} reaches epsilon={epsilon:g} "
                    f"at delta={delta:g} (epsilon there is {eps_of(cap):g}). "
                    + ("With delta=0 only pure-DP mechanisms (Laplace, PureDP, SparseVector) "
                       "can reach a finite epsilon; Gaussian mechanisms need delta > 0."
                       if delta == 0 else
                       "Raise epsilon or delta, or reduce the number of steps.")
                )
            hi = min(lo * 2, cap)
            if eps_of(hi) <= epsilon:
                break
            lo = hi
    # Invariant: eps_of(lo) > epsilon >= eps_of(hi).  Brent's method on
    # log(epsilon) against log(z) (nearly linear) finds the root in a few
    # probes; bisection on log z finishes whatever it leaves, and only a
    # probed point meeting the target is ever returned.
    log_target = math.log(epsilon)

    def g(u):
        z = lo if u == u_lo else hi if u == u_hi else math.exp(u)
        return math.log(max(eps_of(z), 1e-300)) - log_target

    while hi > lo * (1 + tol) and not math.isfinite(eps_of(lo)):
        mid = math.sqrt(lo * hi)
        if eps_of(mid) <= epsilon:
            hi = mid
        else:
            lo = mid
    if hi > lo * (1 + tol):
        u_lo, u_hi = math.log(lo), math.log(hi)
        xtol = math.log1p(tol) / 4
        try:
            root = math.exp(optimize.brentq(g, u_lo, u_hi, xtol=xtol, maxiter=100) + xtol)
        except (ValueError, RuntimeError):  # pragma: no cover - non-monotone epsilon
            root = None
        if root is not None and lo < root < hi:
            eps_of(root)
        # Shrink the bracket to the closest probes on each side.
        for z, e in probes.items():
            if lo < z < hi:
                if e <= epsilon:
                    hi = z
                else:
                    lo = z
    while hi > lo * (1 + tol):
        mid = math.sqrt(lo * hi)
        if eps_of(mid) <= epsilon:
            hi = mid
        else:
            lo = mid
    return hi

r"""Mironov's floating-point attack on the Laplace mechanism, against the release door.

A floating-point Laplace sampler does not output the real-valued Laplace law:
it outputs one of finitely many doubles, a sparse and irregular subset of
the doubles, and the set reachable from an exact value :math:`x` depends on
the low bits of :math:`x` (Mironov 2012, "On significance of the least
significant bits for differential privacy", CCS). numpy's
``Generator.laplace(0, b)``, the sampler of the door's floating-point path,
draws a 53-bit uniform :math:`U = j\,2^{-53}` (``j`` the top 53 bits of a
64-bit word, ``j = 0`` rejected) and returns

.. math::

    n_j = \begin{cases} 0 + b \log(U + U) & U < 1/2,\\
                        0 - b \log(2 - U - U) & U \ge 1/2,\end{cases}

each operation rounded to the nearest double; the door then releases
:math:`y = \mathrm{fl}(n_j + x)`. Given :math:`y` and a candidate :math:`x`,
the attack decides whether some ``j`` maps to :math:`y` (the set of doubles
:math:`n` with :math:`\mathrm{fl}(n + x) = y` is an interval, found by
bisection on the ordered doubles; :math:`j \mapsto n_j` is non-decreasing,
so the first ``j`` with :math:`n_j` in it is found by bisection too). Between
neighbouring candidates :math:`x_0, x_1` it answers the one whose support
contains :math:`y` when only one does, and the nearer one otherwise.

An :math:`\varepsilon`-DP release lets no test between two neighbours
succeed (with the secret equally likely to be either) with probability
above :math:`e^\varepsilon / (1 + e^\varepsilon)`
(:func:`success_bound`). The float path's release of ``0`` or ``1`` with
sensitivity 1 is broken far beyond that; the secure path's releases (exact
multiples of a public grid, discrete noise) leave the support test nothing
to read.

This module samples nothing: it replays numpy's arithmetic on given bits
(:func:`numpy_laplace_from_raw`, checked against numpy in the tests) and
tests outputs the door already released.
"""

import math
import struct

import numpy as np

from .audit import clopper_pearson

__all__ = [
    "numpy_laplace_from_raw",
    "noise_interval",
    "in_float_laplace_support",
    "mironov_guess",
    "success_bound",
    "run_attack",
]

_TWO_53 = 1 << 53
_INV_TWO_53 = 1.0 / 9007199254740992.0
_SIGN = 1 << 63
_MAX_ORDERED = 0x7FEFFFFFFFFFFFFF  # the largest finite double's bits


def _laplace_at(j, scale):
    """numpy's ``random_laplace(loc=0, scale)`` for the 53-bit uniform ``j * 2**-53``."""
    u = j * _INV_TWO_53
    if u >= 0.5:
        return 0.0 - scale * math.log(2.0 - u - u)
    return 0.0 + scale * math.log(u + u)


def numpy_laplace_from_raw(raw, scale):
    """Replay ``Generator.laplace(0, scale)`` from the bit generator's raw 64-bit words.

    Parameters
    ----------
    raw : array-like of uint64
        Consecutive outputs of the bit generator (``random_raw``), none whose
        top 53 bits are all zero (numpy rejects that draw and takes the next).
    scale : float
        The Laplace scale ``b > 0``.

    Returns
    -------
    ndarray of float64
        The doubles numpy's sampler returns for these words, bit for bit.
    """
    raw = np.asarray(raw, dtype=np.uint64)
    return np.array([_laplace_at(int(word) >> 11, float(scale)) for word in raw.ravel()],
                    dtype=np.float64).reshape(raw.shape)


def _ordered(value):
    # doubles to integers in the same order (both zeros map to 0)
    bits = struct.unpack("<q", struct.pack("<d", value))[0]
    return bits if bits >= 0 else -(bits & ~_SIGN)


def _from_ordered(key):
    bits = key if key >= 0 else (-key) | _SIGN
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _first(low, high, predicate):
    """The least integer in ``[low, high]`` where a monotone ``predicate`` holds, else None."""
    if not predicate(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if predicate(middle):
            high = middle
        else:
            low = middle + 1
    return low


def noise_interval(y, x):
    """The doubles ``n`` with ``fl(n + x) == y``: a closed interval, or None.

    Parameters
    ----------
    y, x : float
        A released double and a candidate exact value.

    Returns
    -------
    (low, high) : tuple of float, or None
        The least and the largest such double (``n -> fl(n + x)`` is
        non-decreasing, so the set is an interval); None if it is empty.
    """
    y, x = float(y), float(x)
    low = _first(-_MAX_ORDERED, _MAX_ORDERED, lambda k: _from_ordered(k) + x >= y)
    if low is None or _from_ordered(low) + x != y:
        return None
    above = _first(low, _MAX_ORDERED, lambda k: _from_ordered(k) + x > y)
    high = _MAX_ORDERED if above is None else above - 1
    return _from_ordered(low), _from_ordered(high)


def in_float_laplace_support(y, x, scale):
    """Whether the door's float path can release ``y`` from the exact value ``x``.

    Parameters
    ----------
    y : float
        The released value.
    x : float
        A candidate exact value.
    scale : float
        The Laplace scale the door used (``noise_multiplier * sensitivity``).

    Returns
    -------
    bool
        True if some 53-bit uniform makes numpy's Laplace sampler return a
        double ``n`` with ``fl(n + x) == y``.
    """
    interval = noise_interval(y, x)
    if interval is None:
        return False
    low, high = interval
    scale = float(scale)
    first = _first(1, _TWO_53 - 1, lambda j: _laplace_at(j, scale) >= low)
    if first is None:
        return False
    # j -> n_j is non-decreasing when log is; a few neighbours guard against
    # a libm log that is not monotone to the last bit
    return any(low <= _laplace_at(j, scale) <= high
               for j in range(max(first - 4, 1), min(first + 5, _TWO_53)))


def mironov_guess(y, x0, x1, scale):
    """The attack's guess of the exact value behind a release: 0 for ``x0``, 1 for ``x1``.

    Parameters
    ----------
    y : float
        The released value.
    x0, x1 : float
        The two neighbouring candidate exact values.
    scale : float
        The Laplace scale of the release.

    Returns
    -------
    guess : int
        The candidate whose float support alone contains ``y``; when both or
        neither do, the nearer candidate (ties: 0).
    decided_by_support : bool
        Whether exactly one support contained ``y``.
    """
    in0 = in_float_laplace_support(y, x0, scale)
    in1 = in_float_laplace_support(y, x1, scale)
    if in0 != in1:
        return (0 if in0 else 1), True
    return (0 if abs(y - x0) <= abs(y - x1) else 1), False


def success_bound(epsilon):
    r"""The best success rate of any test between neighbours under epsilon-DP.

    With the secret equally likely to be either neighbour, an
    :math:`\varepsilon`-DP release lets a test be right with probability at
    most :math:`e^\varepsilon / (1 + e^\varepsilon)` (Kairouz, Oh and
    Viswanath 2015: its false-positive and false-negative rates satisfy
    :math:`\alpha + e^\varepsilon \beta \ge 1`).

    Parameters
    ----------
    epsilon : float
        The pure-DP epsilon of the release.

    Returns
    -------
    float
    """
    return 1.0 / (1.0 + math.exp(-float(epsilon)))


def run_attack(release_once, x0, x1, scale, epsilon, n_trials, seed, alpha=0.05):
    """Play the distinguishing game ``n_trials`` times and score the attack.

    Parameters
    ----------
    release_once : callable
        ``exact -> released float``: one release of the exact value through
        the door (the caller chooses the path: float or secure).
    x0, x1 : float
        Neighbouring exact values.
    scale : float
        The float Laplace scale the attack assumes.
    epsilon : float
        The epsilon the release claims.
    n_trials : int
        Number of games.
    seed : int
        Seed of the secret bits (the challenger's coin, not the noise).
    alpha : float, default=0.05
        Error of the two-sided Clopper-Pearson interval.

    Returns
    -------
    dict
        ``successes``, ``n_trials``, ``success_rate``, ``ci`` (two-sided
        interval), ``bound`` (:func:`success_bound`), ``epsilon_lower`` (the
        epsilon the interval's lower end certifies, ``log(p / (1 - p))``),
        ``by_support`` (fraction of games decided by the support test).
    """
    secrets = np.random.default_rng(seed).integers(0, 2, size=int(n_trials))
    candidates = (float(x0), float(x1))
    successes = by_support = 0
    for secret in secrets:
        y = float(release_once(candidates[secret]))
        guess, decided = mironov_guess(y, candidates[0], candidates[1], scale)
        successes += int(guess == secret)
        by_support += int(decided)
    lower, upper = clopper_pearson(successes, int(n_trials), alpha)
    lower, upper = float(lower), float(upper)
    return {
        "successes": successes,
        "n_trials": int(n_trials),
        "success_rate": successes / int(n_trials),
        "ci": (lower, upper),
        "bound": success_bound(epsilon),
        "epsilon_lower": math.log(lower / (1 - lower)) if 0.5 < lower < 1 else (
            math.inf if lower >= 1 else 0.0),
        "by_support": by_support / int(n_trials),
    }

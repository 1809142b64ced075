r"""Privacy loss distributions: the tightest known (epsilon, delta) of sampled mechanisms.

The privacy loss of a pair of output distributions :math:`(P, Q)` is
:math:`L = \log(P(o) / Q(o))` for :math:`o \sim P`; its distribution (the PLD)
gives the hockey-stick divergence exactly,

.. math::

    \delta(\varepsilon) = \mathbb{E}_P\big[(1 - e^{\varepsilon - L})_+\big],

and the PLD of a composition is the convolution of the PLDs (Koskela et al.
2020; Meiser and Mohammadi 2018; Doroshenko et al. 2022).

Everything here is an upper bound by construction:

- **Discretisation** (connect the dots, Doroshenko et al. 2022): a
  mechanism's PLD is replaced by the distribution on the grid
  :math:`\{k h\}` whose privacy profile :math:`\delta(x)`, as a function of
  :math:`x = e^\varepsilon`, is the piecewise-linear interpolation of the
  exact profile at the grid points.  The exact profile is convex in
  :math:`x`, so the interpolation lies above it at every epsilon: the
  discrete pair dominates the mechanism, and compositions of dominating
  pairs dominate the composition (Zhu, Dong and Wang 2022, Theorem 10).
  Every grid gives an upper bound; the error is second order in the grid.
  :func:`get_epsilon` tries the grids 1e-2, 3e-3, 1e-3, 3e-4, 1e-4 in turn and
  stops when the change between two grids shows the error of the last one
  below 0.1% of epsilon; the reference epsilons of Google's dp-accounting
  (PLD accountant, grid 1e-4) are matched to 0.5%.
- **Truncation**: after every operation, the upper tail of at most
  ``tail_mass`` (1e-15) is moved to :math:`L = +\infty` and the lower tail of
  at most ``tail_mass`` up to the first kept point, and losses are kept
  within :math:`\pm 700` the same way.  A mechanism's own range is cut where
  its profile is below 1e-17 (Gaussian parts: :math:`\pm 8.5` standard
  deviations of the loss), the mass above going to :math:`+\infty`.  Mass
  only ever moves up, so delta is never lowered; each such move raises
  delta by at most the mass moved.
- **Round-off**: an FFT convolution leaves errors of about
  :math:`u \|a\|_2 \|b\|_2` per entry (:math:`u` the machine epsilon).
  Tails below that level are indistinguishable from noise and would widen
  the support at every step: the lower one moves up to the first entry above
  it, the upper one to :math:`+\infty` (mass only moves up, so this is safe
  whatever the level; it costs tightness only at deltas near the mass moved,
  about 1e-12 per composition).  Round-off in the entries kept is not
  bounded rigorously; it is about 1e-16 of the largest mass, far below every
  delta a user can ask for.

Neighbouring datasets are add/remove (equivalently zero-out) neighbours; a
Poisson-sampled mechanism has different PLDs for "remove" :math:`(qA + (1-q)B,
B)` and "add" :math:`(B, qA + (1 - q)B)` (Zhu, Dong and Wang 2022, Theorem
11), so every distribution here is a pair, and its epsilon is the larger of
the two directions' epsilons.  Mechanisms with no PLD form (``ZCDP``,
``GaussianSparseVector``, ``FilteredRDP``, and sampled mechanisms that
contain one) are left to the RDP accountant: :func:`split_for_pld` separates
them, and :func:`~skdp.accounting.get_epsilon` composes the two parts
soundly (epsilons add, deltas add).

References
----------
.. [1] V. Doroshenko, B. Ghazi, P. Kamath, R. Kumar and P. Manurangsi,
   "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
   Distributions", PETS 2022.
.. [2] Y. Zhu, J. Dong and Y.-X. Wang, "Optimal Accounting of Differential
   Privacy via Characteristic Function", AISTATS 2022.
.. [3] A. Koskela, J. Jälkö and A. Honkela, "Computing Tight Differential
   Privacy Guarantees Using FFT", AISTATS 2020.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import fft as sp_fft
from scipy import special

from .mechanisms import (
    Activated,
    Composed,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonSampled,
    PureDP,
    Repeated,
    SparseVector,
)

__all__ = ["DEFAULT_GRID", "PrivacyLossDistribution", "split_for_pld"]

DEFAULT_GRID = 1e-4
_TAIL_MASS = 1e-15
# Gaussian loss range: +- this many standard deviations (Phi(-8.5) = 9.5e-18).
_GAUSS_SDS = 8.5
# Largest grid a single distribution may span (beyond it the mechanism's
# epsilon is far outside any useful range and PLD accounting is skipped).
_MAX_POINTS = 1 << 22
# Losses are kept within +-_LOSS_CAP (e^700 is still a float): above it mass
# goes to +inf, below it up to -_LOSS_CAP (both only raise delta).
_LOSS_CAP = 700.0


class _TooWide(ValueError):
    """The distribution would need more than ``_MAX_POINTS`` grid points."""

    def __init__(self):
        super().__init__(
            "the privacy loss distribution would need more than 4 million grid points "
            "(epsilon far above any useful value, or a grid too fine for it); use a coarser "
            "grid or method='rdp'.")


# ---------------------------------------------------------------------------
# One direction: a discrete privacy loss distribution.
# ---------------------------------------------------------------------------

class _Discrete:
    """Masses ``probs[i]`` at losses ``(start + i) * grid`` and ``inf_mass`` at +inf."""

    __slots__ = ("grid", "start", "probs", "inf_mass")

    def __init__(self, grid, start, probs, inf_mass):
        self.grid = grid
        self.start = int(start)
        self.probs = probs
        self.inf_mass = float(inf_mass)

    @property
    def losses(self):
        return (self.start + np.arange(self.probs.size)) * self.grid

    # -- composition ------------------------------------------------------
    def compose(self, other: "_Discrete") -> "_Discrete":
        a, b = self.probs, other.probs
        size = a.size + b.size - 1
        if size > _MAX_POINTS:
            raise _TooWide
        total_a, total_b = a.sum() + self.inf_mass, b.sum() + other.inf_mass
        inf = self.inf_mass * total_b + other.inf_mass * (total_a - self.inf_mass)
        if min(a.size, b.size) <= 64:
            probs = np.convolve(a, b)
        else:
            n = sp_fft.next_fast_len(size, real=True)
            probs = sp_fft.irfft(sp_fft.rfft(a, n) * sp_fft.rfft(b, n), n)[:size]
            np.maximum(probs, 0.0, out=probs)
            # Tails below the FFT's round-off level are indistinguishable from
            # noise and would widen the support at every step: the lower one
            # moves up to the first entry above that level, the upper one to
            # +inf (mass only moves up: safe whatever the level).
            floor = np.finfo(float).eps * math.sqrt(float(np.dot(a, a)) * float(np.dot(b, b)))
            above = np.flatnonzero(probs >= floor)
            if above.size:
                first, last = above[0], above[-1] + 1
                inf += float(probs[last:].sum())
                probs[first] += probs[:first].sum()
                start = self.start + other.start + first
                return _Discrete(self.grid, start, probs[first:last].copy(), inf)._truncated()
        np.maximum(probs, 0.0, out=probs)
        return _Discrete(self.grid, self.start + other.start, probs, inf)._truncated()

    def self_compose(self, count: int) -> "_Discrete":
        result, power = None, self
        while True:
            if count & 1:
                result = power if result is None else result.compose(power)
            count >>= 1
            if not count:
                return result
            power = power.compose(power)

    def _truncated(self) -> "_Discrete":
        p = self.probs
        cap = int(_LOSS_CAP / self.grid)
        if self.start > cap:
            return _Discrete(self.grid, cap, np.zeros(1), self.inf_mass + float(p.sum()))
        if self.start + p.size - 1 < -cap:
            return _Discrete(self.grid, -cap, np.array([p.sum()]), self.inf_mass)
        if self.start < -cap or self.start + p.size - 1 > cap:
            lo = min(max(-cap - self.start, 0), p.size - 1)
            hi = max(min(cap - self.start + 1, p.size), lo + 1)
            kept = p[lo:hi].copy()
            kept[0] += p[:lo].sum()
            return _Discrete(self.grid, self.start + lo, kept,
                             self.inf_mass + float(p[hi:].sum()))._truncated()
        lower = np.cumsum(p)
        first = int(np.searchsorted(lower, _TAIL_MASS, side="right"))
        upper = np.cumsum(p[::-1])
        last = p.size - int(np.searchsorted(upper, _TAIL_MASS, side="right"))
        first = min(first, max(last - 1, 0))
        if first == 0 and last == p.size:
            return self
        kept = p[first:last].copy()
        inf = self.inf_mass + float(p[last:].sum())
        if first > 0:
            kept[0] += lower[first - 1]
        return _Discrete(self.grid, self.start + first, kept, inf)

    # -- hockey-stick divergence ------------------------------------------
    def _suffix_sums(self):
        """Suffix sums S_k = sum_{i>=k} p_i and T_k = sum_{i>=k} p_i e^{-L_i} (length n+1)."""
        p = self.probs
        s = np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])
        t = np.concatenate([np.cumsum((p * np.exp(-self.losses))[::-1])[::-1], [0.0]])
        return s, t

    def delta(self, epsilon):
        """delta(epsilon) = inf_mass + sum_{L_i > eps} p_i (1 - e^{eps - L_i}), vectorised."""
        eps = np.asarray(epsilon, dtype=float)
        s, t = self._suffix_sums()
        k = np.searchsorted(self.losses, eps, side="right")
        with np.errstate(over="ignore", invalid="ignore"):
            out = self.inf_mass + s[k] - np.exp(np.minimum(eps, _LOSS_CAP + 1)) * t[k]
        out = np.where(k >= self.probs.size, self.inf_mass, out)
        return np.clip(np.nan_to_num(out, nan=1.0), 0.0, 1.0)

    def epsilon(self, delta: float) -> float:
        """Smallest epsilon >= 0 with delta(epsilon) <= delta (exact for this distribution)."""
        if self.inf_mass > delta:
            return math.inf
        losses = self.losses
        s, t = self._suffix_sums()
        # delta at each grid loss (non-increasing in the index).
        at = self.inf_mass + s[1:] - np.exp(losses) * t[1:]
        k = int(np.searchsorted(-at, -delta, side="left"))  # first index with at <= delta
        if k >= losses.size:
            return max(0.0, float(losses[-1]))
        # On (L_{k-1}, L_k]: delta(eps) = inf + S_k - e^eps T_k; solve for delta.
        head = self.inf_mass + s[k] - delta
        eps = float(losses[k]) if t[k] <= 0 or head <= 0 else math.log(head / t[k])
        if not math.isfinite(eps) or not np.all(np.isfinite(at)):
            return math.inf  # overflow somewhere: no PLD answer (never a small one)
        eps = min(eps, float(losses[k]))
        step = 1e-12 * max(1.0, abs(eps))
        while float(self.delta(eps)) > delta:
            eps += step
            step *= 2
        return max(0.0, eps)

    def profile_excess(self, epsilon):
        r"""r(eps) = delta(eps) - (1 - e^eps)_+, vectorised (see :func:`_connect_the_dots`)."""
        eps = np.asarray(epsilon, dtype=float)
        return np.maximum(self.delta(eps) + np.minimum(np.expm1(eps), 0.0), 0.0)

    @property
    def support(self):
        return (self.start * self.grid, (self.start + self.probs.size - 1) * self.grid)


def _connect_the_dots(excess, lo, hi, grid) -> _Discrete:
    r"""Discrete pessimistic PLD from the exact privacy profile (Doroshenko et al. 2022).

    ``excess(eps) = delta(eps) - (1 - e^eps)_+`` is the profile minus that of
    the null mechanism (computed without cancellation by each mechanism).
    In :math:`x = e^\varepsilon` the profile is convex; a distribution with
    masses :math:`p_i` at the grid losses :math:`\varepsilon_i` has a
    piecewise-linear profile whose slope jumps by :math:`p_i e^{-\varepsilon_i}`
    at :math:`x_i`, so interpolating the exact profile at the grid gives
    :math:`p_i = x_i(\sigma_i - \sigma_{i-1})` from the chord slopes
    :math:`\sigma` (from :math:`(0, 1)` below the grid, flat above it, where
    the remaining :math:`\delta(\varepsilon_{max})` goes to :math:`+\infty`).
    The null part :math:`(1 - x)_+` only adds its kink: mass 1 at loss 0.
    """
    # Below the range the profile is the chord from (0, 1), above it flat: both
    # lie above the exact profile, so the range may be cut anywhere.
    first = min(math.floor(max(lo, -_LOSS_CAP) / grid), 0)
    last = max(math.ceil(min(hi, _LOSS_CAP) / grid), 0)
    if last - first + 1 > _MAX_POINTS:
        raise _TooWide
    idx = np.arange(first, last + 1)
    eps = idx * grid
    r = np.asarray(excess(eps), dtype=float)
    x = np.exp(eps)
    slopes = np.empty(idx.size + 1)
    slopes[0] = r[0] / x[0]
    slopes[1:-1] = np.diff(r) / (x[:-1] * math.expm1(grid))
    slopes[-1] = 0.0
    probs = x * np.diff(slopes)
    probs[-first] += 1.0
    if not (np.all(np.isfinite(probs)) and math.isfinite(r[-1])):
        raise _TooWide
    np.maximum(probs, 0.0, out=probs)
    return _Discrete(grid, first, probs, max(float(r[-1]), 0.0))._truncated()


# ---------------------------------------------------------------------------
# Profiles of the base mechanisms (the excess r, for epsilon >= 0 the profile
# itself; symmetric pairs satisfy r(eps) = e^eps delta(-eps) for eps < 0).
# ---------------------------------------------------------------------------

def _symmetric(delta_nonneg):
    def excess(eps):
        eps = np.asarray(eps, dtype=float)
        pos = delta_nonneg(np.abs(eps))
        return np.where(eps >= 0, pos, np.exp(np.minimum(eps, 0.0)) * pos)
    return excess


def _gaussian_delta(mu):
    # Balle & Wang: delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu).
    def delta(eps):
        la = special.log_ndtr(mu / 2 - eps / mu)
        lb = special.log_ndtr(-mu / 2 - eps / mu) + eps
        with np.errstate(invalid="ignore", over="ignore"):
            out = np.exp(la) * -np.expm1(np.minimum(lb - la, 0.0))
        return np.nan_to_num(out, nan=0.0)
    return delta


def _laplace_delta(lam):
    # Sensitivity 1, scale 1/lam: delta(eps) = 1 - e^{(eps - lam)/2} on [0, lam].
    def delta(eps):
        return np.where(eps < lam, -np.expm1((np.minimum(eps, lam) - lam) / 2), 0.0)
    return delta


def _pure_delta(eps0):
    # Randomised response, the dominating pair of every eps0-DP mechanism.
    def delta(eps):
        return np.where(eps < eps0, -np.expm1(np.minimum(eps, eps0) - eps0) * special.expit(eps0),
                        0.0)
    return delta


class _Profile:
    """A pair's exact profile excess in both directions, with their loss ranges."""

    __slots__ = ("remove", "add", "remove_range", "add_range")

    def __init__(self, remove, add, remove_range, add_range):
        self.remove, self.add = remove, add
        self.remove_range, self.add_range = remove_range, add_range

    @classmethod
    def symmetric(cls, delta_nonneg, half_range):
        excess = _symmetric(delta_nonneg)
        rng = (-half_range[0], half_range[1])
        return cls(excess, excess, rng, rng)

    def activated(self, p: float) -> "_Profile":
        r"""Run with probability p by a released coin: the excess scales by p in both
        directions (the idle branch's excess is 0), over the same loss range."""
        inner_remove, inner_add = self.remove, self.add

        def remove(eps):
            return p * inner_remove(eps)

        def add(eps):
            return p * inner_add(eps)

        if inner_add is inner_remove:
            add = remove
        return _Profile(remove, add, self.remove_range, self.add_range)

    def sampled(self, q: float) -> "_Profile":
        r"""Poisson subsampling at rate q (remove: (qA+(1-q)B, B); add: (B, qA+(1-q)B))."""
        log1mq = math.log1p(-q)
        inner_remove, inner_add = self.remove, self.add

        def remove(eps):
            # e^eps > 1-q: r = q r_AB(log(1 + (e^eps - 1)/q)); else 0.
            eps = np.asarray(eps, dtype=float)
            em1 = np.expm1(eps)
            ok = em1 > -q
            inner = np.log1p(np.where(ok, em1, 0.0) / q)
            return np.where(ok, q * inner_remove(inner), 0.0)

        def add(eps):
            # e^eps (1-q) < 1: r = f r_BA(eps + log q - log f), f = 1 - e^eps (1-q); else 0.
            eps = np.asarray(eps, dtype=float)
            f = -np.expm1(np.minimum(eps + log1mq, 0.0))
            ok = f > 0
            safe_f = np.where(ok, f, 1.0)
            inner = eps + math.log(q) - np.log(safe_f)
            return np.where(ok, safe_f * inner_add(inner), 0.0)

        (rlo, rhi), (alo, ahi) = self.remove_range, self.add_range
        remove_range = (math.log1p(q * math.expm1(rlo)), math.log1p(q * math.expm1(min(rhi, 700))))
        add_range = (-math.log1p(q * math.expm1(min(-alo, 700))),
                     -math.log1p(q * math.expm1(-ahi)))
        return _Profile(remove, add, remove_range, add_range)


def _leaf_profile(m: Mechanism):
    """The exact profile of a leaf mechanism, or None if it has no PLD form."""
    if isinstance(m, Gaussian):
        mu = 1.0 / m.noise_multiplier
        half = mu * mu / 2 + _GAUSS_SDS * mu
        return _Profile.symmetric(_gaussian_delta(mu), (half, half))
    if isinstance(m, Laplace):
        lam = 1.0 / m.noise_multiplier
        return _Profile.symmetric(_laplace_delta(lam), (lam, lam))
    if isinstance(m, (PureDP, SparseVector)):
        eps0 = m.epsilon if isinstance(m, PureDP) else m.epsilon_1 + m.epsilon_2
        return _Profile.symmetric(_pure_delta(eps0), (eps0, eps0))
    return None


def _merged_gaussian(parts: dict):
    """The one Gaussian that the unsampled Gaussians among ``parts`` compose into, or None.

    A composition of Gaussians with multipliers z_t is exactly one Gaussian
    with multiplier (sum 1/z_t^2)^(-1/2).
    """
    inverse_square = 0.0
    for part, count in parts.items():
        if isinstance(part, Gaussian):
            if part.noise_multiplier < 1e-6:  # no useful PLD (epsilon in the millions)
                raise _TooWide
            inverse_square += count / part.noise_multiplier ** 2
    return Gaussian(inverse_square ** -0.5) if inverse_square > 0 else None


# ---------------------------------------------------------------------------
# Mechanism trees -> pairs of discrete distributions.
# ---------------------------------------------------------------------------

def _has_pld(m: Mechanism) -> bool:
    if isinstance(m, Composed):
        return all(_has_pld(c) for c in m.mechanisms)
    if isinstance(m, (Repeated, PoissonSampled, Activated)):
        return _has_pld(m.mechanism)
    return _leaf_profile(m) is not None


def split_for_pld(mechanism: Mechanism):
    """Split a tree into the parts with a PLD form and the rest (for RDP).

    Parameters
    ----------
    mechanism : Mechanism
        The tree to split. :class:`Composed` and :class:`Repeated` nodes are
        flattened (repetition counts are kept); every other node goes whole
        to the PLD part if all of it has a PLD form, else to the RDP part.

    Returns
    -------
    pld_part, rdp_part : Mechanism or None
        Two compositions whose composition is ``mechanism`` (up to order);
        None for an empty part.  Only compositions are split: a sampled
        mechanism with one part lacking a PLD form goes to the RDP part whole.
    """
    pld, rdp = [], []

    def walk(m, count):
        if isinstance(m, Repeated):
            if m.count:
                walk(m.mechanism, count * m.count)
            return
        if isinstance(m, Composed):
            for child in m.mechanisms:
                walk(child, count)
            return
        (pld if _has_pld(m) else rdp).append(m if count == 1 else Repeated(m, count))

    walk(mechanism, 1)

    def pack(parts):
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else Composed(parts)

    return pack(pld), pack(rdp)


def _groups(m: Mechanism, count: int = 1, out=None) -> dict:
    """The non-composite parts of a tree with their run counts (insertion-ordered)."""
    out = {} if out is None else out
    if isinstance(m, Repeated):
        if m.count:
            _groups(m.mechanism, count * m.count, out)
    elif isinstance(m, Composed):
        for child in m.mechanisms:
            _groups(child, count, out)
    elif (isinstance(m, PoissonSampled) and m.rate >= 1.0
          or isinstance(m, Activated) and m.probability >= 1.0):
        _groups(m.mechanism, count, out)  # no sampling, always active
    else:
        out[m] = out.get(m, 0) + count
    return out


def _compose_pairs(a, b):
    if a is None:
        return b
    remove = a[0].compose(b[0])
    symmetric = a[1] is a[0] and b[1] is b[0]
    return remove, remove if symmetric else a[1].compose(b[1])


@functools.lru_cache(maxsize=32)
def _pair(m: Mechanism, grid: float):
    """(remove, add) discrete distributions of a tree with a PLD form (None: no cost)."""
    groups = _groups(m)
    parts = [(part, count) for part, count in groups.items() if not isinstance(part, Gaussian)]
    gaussian = _merged_gaussian(groups)
    if gaussian is not None:
        parts.insert(0, (gaussian, 1))
    result = None
    for part, count in parts:
        one = _leaf_pair(part, grid)
        if one is None:  # pragma: no cover - _has_pld admitted the tree
            raise ValueError(f"no PLD form for {part!r}")
        if count > 1:
            remove = one[0].self_compose(count)
            one = (remove, remove if one[1] is one[0] else one[1].self_compose(count))
        result = _compose_pairs(result, one)
    return result


def distinct_parts(m: Mechanism) -> int:
    return len(_groups(m))


@functools.lru_cache(maxsize=64)
def _leaf_pair(m: Mechanism, grid: float):
    profile = _profile(m, grid)
    if profile is None:
        return None
    remove = _connect_the_dots(profile.remove, *profile.remove_range, grid)
    if profile.add is profile.remove:
        return remove, remove
    return remove, _connect_the_dots(profile.add, *profile.add_range, grid)


def _profile(m: Mechanism, grid: float):
    leaf = _leaf_profile(m)
    if leaf is not None:
        return leaf
    if isinstance(m, PoissonSampled):  # rate < 1: _groups unwraps rate 1
        base = _inner_profile(m.mechanism, grid)
        return None if base is None else base.sampled(m.rate)
    if isinstance(m, Activated):  # probability < 1: _groups unwraps probability 1
        base = _inner_profile(m.mechanism, grid)
        return None if base is None else base.activated(m.probability)
    return None  # Composed / Repeated trees are composed as distributions in _pair


def _inner_profile(inner: Mechanism, grid: float):
    """The profile of the mechanism inside a wrapper (None: no cost)."""
    parts = _groups(inner)
    if not parts:
        return None
    if all(isinstance(part, Gaussian) for part in parts):
        inner = _merged_gaussian(parts)
    base = _profile(inner, grid)
    if base is None:
        pair = _pair(inner, grid)
        if pair is None:
            return None
        remove, add = pair
        base = _Profile(remove.profile_excess, add.profile_excess,
                        remove.support, add.support)
    return base


class PrivacyLossDistribution:
    r"""The privacy loss distributions of a mechanism tree, in both directions.

    Parameters
    ----------
    mechanism : Mechanism
        A tree whose every part has a PLD form: :class:`Gaussian`,
        :class:`Laplace`, :class:`PureDP` and :class:`SparseVector` (both as
        randomised response, which dominates every pure-DP mechanism), and
        :class:`PoissonSampled`, :class:`Composed` and :class:`Repeated` of
        them.  Use :func:`split_for_pld` for trees with other parts.
    grid : float, default=1e-4
        The loss discretisation interval :math:`h`.

    Notes
    -----
    Every quantity is an upper bound on the exact one (see the module
    docstring): :meth:`delta` never under-reports, :meth:`epsilon` is the
    smallest epsilon at which the pessimistic distributions meet ``delta``.

    Examples
    --------
    >>> from skdp.accounting import Gaussian, PoissonSampled, Repeated
    >>> from skdp.accounting.pld import PrivacyLossDistribution
    >>> pld = PrivacyLossDistribution(Repeated(PoissonSampled(0.01, Gaussian(1.0)), 1000))
    >>> round(pld.epsilon(1e-5), 2)
    1.83
    """

    def __init__(self, mechanism: Mechanism, grid: float = DEFAULT_GRID):
        if not isinstance(mechanism, Mechanism):
            raise ValueError(f"PrivacyLossDistribution: expected a Mechanism, got {mechanism!r}.")
        grid = float(grid)
        if not (0 < grid <= 0.1):
            raise ValueError(f"PrivacyLossDistribution: grid must be in (0, 0.1], got {grid!r}.")
        if not _has_pld(mechanism):
            raise ValueError(
                f"PrivacyLossDistribution: {mechanism!r} has a part with no PLD form (ZCDP, "
                "GaussianSparseVector or FilteredRDP); split it with split_for_pld and account "
                "for that part by RDP.")
        self.mechanism = mechanism
        self.grid = grid
        self._directions = _pair(mechanism, grid)

    @classmethod
    def _from_pair(cls, pair, grid, mechanism):
        self = cls.__new__(cls)
        self.mechanism, self.grid, self._directions = mechanism, grid, pair
        return self

    def compose(self, other: "PrivacyLossDistribution") -> "PrivacyLossDistribution":
        """The distribution of running both mechanisms (convolution in each direction).

        Parameters
        ----------
        other : PrivacyLossDistribution
            The second mechanism's distribution, on the same ``grid``.

        Returns
        -------
        PrivacyLossDistribution
            The distribution of ``Composed([self.mechanism, other.mechanism])``.

        Raises
        ------
        ValueError
            If the two distributions use different grids.
        """
        if other.grid != self.grid:
            raise ValueError("compose: the two distributions use different grids.")
        mech = Composed([self.mechanism, other.mechanism])
        if self._directions is None or other._directions is None:
            return self._from_pair(self._directions or other._directions, self.grid, mech)
        pair = tuple(a.compose(b) for a, b in zip(self._directions, other._directions))
        return self._from_pair(pair, self.grid, mech)

    def self_compose(self, count: int) -> "PrivacyLossDistribution":
        """The distribution of ``count`` runs (by repeated squaring).

        Parameters
        ----------
        count : int
            Number of runs, >= 0 (0 gives the distribution of no release).

        Returns
        -------
        PrivacyLossDistribution
            The distribution of ``Repeated(self.mechanism, count)``.
        """
        mech = Repeated(self.mechanism, count)
        if self._directions is None or count == 0:
            return self._from_pair(None, self.grid, mech)
        pair = tuple(d.self_compose(count) for d in self._directions)
        return self._from_pair(pair, self.grid, mech)

    def delta(self, epsilon: float) -> float:
        """Largest of the two directions' delta at ``epsilon``.

        Parameters
        ----------
        epsilon : float
            The epsilon at which the hockey-stick divergence is evaluated.

        Returns
        -------
        float
            An upper bound on the mechanism's delta at ``epsilon`` (never
            under-reported; 0 for a mechanism that releases nothing).
        """
        if self._directions is None:
            return 0.0
        return float(max(d.delta(float(epsilon)) for d in self._directions))

    def epsilon(self, delta: float) -> float:
        """Largest of the two directions' epsilon at ``delta`` (``inf`` if unreachable).

        Parameters
        ----------
        delta : float
            Target delta in (0, 1).

        Returns
        -------
        float
            The smallest epsilon at which both pessimistic distributions
            reach ``delta``: an upper bound on the mechanism's epsilon;
            ``inf`` if ``delta`` is below the mass at infinite loss.
        """
        if self._directions is None:
            return 0.0
        return max(d.epsilon(float(delta)) for d in self._directions)


# Grids tried by pld_epsilon, coarse to fine.  Connect-the-dots' error is
# second order in the grid (about 11 times smaller at each step of this
# ladder), so the change from one grid to the next estimates the next one's
# error; the ladder stops when that estimate is below 0.1% of epsilon.
_GRID_LADDER = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4)
_LADDER_RTOL = 1e-3


def _smallest_on_ladder(evaluate, converged):
    """Smallest ``evaluate(grid)`` over the ladder, coarse to fine, until ``converged``.

    Every grid gives a valid upper bound; grids too wide for the mechanism
    are skipped.  None if every grid is.
    """
    best = previous = None
    for grid in _GRID_LADDER:
        try:
            value = evaluate(grid)
        except _TooWide:
            continue
        best = value if best is None else min(best, value)
        if previous is not None and converged(previous, value):
            break
        previous = value
    return best


@functools.lru_cache(maxsize=512)
def pld_epsilon(mechanism: Mechanism, delta: float):
    """Epsilon of a tree with a PLD form at ``delta``; None if every grid is too wide.

    The grids of ``_GRID_LADDER`` are tried coarse to fine until two
    successive epsilons agree to the second-order error estimate.
    """
    return _smallest_on_ladder(
        lambda grid: PrivacyLossDistribution(mechanism, grid).epsilon(delta),
        lambda coarse, fine: coarse - fine <= 10 * (_LADDER_RTOL * fine + 1e-7))


def pld_delta(mechanism: Mechanism, epsilon: float):
    """Delta of a tree with a PLD form at ``epsilon``; None if every grid is too wide.

    The grids of ``_GRID_LADDER`` are tried coarse to fine until two
    successive deltas agree to 1%.
    """
    return _smallest_on_ladder(
        lambda grid: PrivacyLossDistribution(mechanism, grid).delta(epsilon),
        lambda coarse, fine: coarse - fine <= 1e-2 * fine)

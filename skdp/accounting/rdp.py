r"""Rényi DP curves of mechanisms, their composition, and the RDP conversion.

Every mechanism gets a Rényi differential privacy (RDP) curve on a grid of
orders; curves of composed mechanisms add.  A curve converts to
(epsilon, delta)-DP with the tight conversion of Canonne, Kamath and
Steinke / Balle et al.:

.. math::

    \varepsilon(\delta) = \min_\alpha \Big[ R(\alpha) + \log\frac{\alpha-1}{\alpha}
    - \frac{\log\delta + \log\alpha}{\alpha - 1} \Big].

:func:`~skdp.accounting.get_epsilon` (module
:mod:`skdp.accounting.epsilon_delta`) compares this route with the others.

Neighbouring datasets are zero-out neighbours (one record replaced by a null
record that contributes nothing; Kairouz et al. 2021): n is public, and
Poisson-sampled accounting equals that of add/remove-one.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
from scipy import special

from ..validation import check_delta
from .discrete import DiscreteGaussian, DiscreteLaplace, as_run
from . import mechanisms as mech

__all__ = ["DEFAULT_ORDERS", "DEFAULT_ORDERS_KEY", "get_rdp", "rdp_to_epsilon", "rdp_to_delta",
           "Cost", "mechanism_cost", "orders_key"]


def _default_orders() -> np.ndarray:
    near_one = 1.0 + np.arange(1, 10) / 100.0  # 1.01 .. 1.09
    low = np.round(1.0 + np.arange(1, 100) / 10.0, 10)  # 1.1 .. 10.9
    mid = np.arange(11, 65, dtype=float)  # 11 .. 64
    high = np.array(
        [72, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896,
         1024, 1280, 1536, 2048, 2560, 3072, 4096, 5120, 6144, 8192, 10000],
        dtype=float,
    )
    orders = np.concatenate([near_one, low, mid, high])
    orders.setflags(write=False)
    return orders


DEFAULT_ORDERS = _default_orders()
"""numpy.ndarray: the default grid of Rényi orders.

1.01 to 1.09 (step 0.01), 1.1 to 10.9 (step 0.1), every integer 11 to 64,
then 72 ... 10000 sparser; 189 orders.  Orders near 1 convert large epsilons,
orders up to 1e4 convert small epsilons and small deltas.
"""

DEFAULT_ORDERS_KEY = tuple(float(a) for a in DEFAULT_ORDERS)

# Integer orders up to this bound get the general Poisson-subsampling bound
# of Zhu & Wang; larger orders fall back to the unamplified curve.
_ZW_MAX_ORDER = 512
# Fractional sampled-Gaussian series: at most this many terms per series.
_SERIES_MAX_TERMS = 1 << 15
# ... stopping once the tail bound is below this fraction of A - 1 (the bound
# is then added, so the value is at most this much too high, never too low).
_SERIES_RTOL = math.log(1e-5)
_SERIES_ROUNDOFF = 4e-15


def orders_key(orders) -> tuple:
    if orders is None or orders is DEFAULT_ORDERS:
        return DEFAULT_ORDERS_KEY
    arr = np.atleast_1d(np.asarray(orders, dtype=float))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"orders must be a non-empty 1-d sequence of numbers > 1, got {orders!r}.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1):
        raise ValueError(f"orders must be finite and > 1, got {orders!r}.")
    return tuple(float(a) for a in arr)


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


# ---------------------------------------------------------------------------
# Elementary curves (vectorised over an array of orders ``a``).
# ---------------------------------------------------------------------------

def _log_expm1(x):
    """log(exp(x) - 1) for x >= 0, stable for tiny and huge x."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return x + np.log(-np.expm1(-x))


def _signed_logsumexp(x: np.ndarray, b: np.ndarray, axis: int = -1):
    """log|sum(b * exp(x))| and its sign along ``axis`` (b in {-1, 0, 1})."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.sum(b * np.exp(x - m), axis=axis)
    with np.errstate(divide="ignore"):
        out = np.log(np.abs(s)) + np.squeeze(m, axis=axis)
    return out, np.sign(s)


def _rdp_gaussian(z: float, a: np.ndarray) -> np.ndarray:
    return a / (2.0 * z * z)


def _rdp_laplace(eps: float, a: np.ndarray) -> np.ndarray:
    # Mironov 2017, Table II, in the log domain: no overflow for large a * eps,
    # and log(a / (2a - 1)) = -log1p((a - 1) / a) keeps precision near a = 1.
    lp = np.logaddexp(-np.log1p((a - 1) / a) + (a - 1) * eps,
                      np.log((a - 1) / (2 * a - 1)) - a * eps)
    return np.clip(lp / (a - 1), 0.0, eps)


def _rdp_pure(eps: float, a: np.ndarray) -> np.ndarray:
    # Tight RDP of an eps-DP mechanism (randomized response is the worst case):
    # eps - log((1 + e^-eps) / (1 + e^-(2a-1)eps)) / (a - 1).
    if eps == 0:
        return np.zeros_like(a)
    r = eps - (np.log1p(np.exp(-eps)) - np.log1p(np.exp(-(2 * a - 1) * eps))) / (a - 1)
    return np.clip(r, 0.0, np.minimum(eps, a * eps * eps / 2.0))


def _segments(alphas: np.ndarray, start: int):
    """Flat index arrays for terms k = start..alpha of each integer order."""
    alphas = alphas.astype(np.int64)
    lengths = alphas - start + 1
    seg = np.repeat(np.arange(alphas.size), lengths)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    k = np.arange(lengths.sum()) - np.repeat(offsets, lengths) + start
    return seg, k, offsets


def _segment_logsumexp(x: np.ndarray, offsets: np.ndarray, seg: np.ndarray) -> np.ndarray:
    m = np.maximum.reduceat(x, offsets)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = np.log(np.add.reduceat(np.exp(x - m_safe[seg]), offsets)) + m_safe
    out = np.where(np.isposinf(m), np.inf, out)
    return np.where(np.isneginf(m), -np.inf, out)


def _log_binom(a, k):
    return special.gammaln(a + 1) - special.gammaln(k + 1) - special.gammaln(a - k + 1)


@functools.lru_cache(maxsize=64)
def _int_layout(alphas: tuple):
    """Flat layout of the terms k = 2..alpha of each integer order (cached)."""
    al = np.asarray(alphas, dtype=float)
    seg, k, offsets = _segments(al, 2)
    a = al[seg]
    kf = k.astype(float)
    log_binom = _log_binom(a, kf)
    for arr in (a, kf, log_binom, offsets, k, seg):
        arr.setflags(write=False)
    return a, kf, k, log_binom, offsets, seg


def _sg_log_a_int(q: float, sigma: float, alphas) -> np.ndarray:
    """log A_alpha of the sampled Gaussian at integer orders (exact).

    A_alpha = sum_k C(alpha,k) (1-q)^(alpha-k) q^k exp((k^2-k)/(2 sigma^2));
    the k = 0, 1 terms and the binomial identity give
    A_alpha - 1 = sum_{k>=2} C(alpha,k) (1-q)^(alpha-k) q^k expm1((k^2-k)/(2 sigma^2)),
    a sum of positive terms, summed in the log domain.
    """
    alphas = tuple(float(x) for x in np.asarray(alphas, dtype=float))
    if not alphas:
        return np.zeros(0)
    a, kf, _, log_binom, offsets, seg = _int_layout(alphas)
    log_terms = (log_binom + kf * math.log(q) + (a - kf) * math.log1p(-q)
                 + _log_expm1((kf * kf - kf) / (2 * sigma * sigma)))
    return np.logaddexp(0.0, _segment_logsumexp(log_terms, offsets, seg))


def _sg_log_a_frac(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    """log A_alpha of the sampled Gaussian at fractional orders.

    The two-series expansion of Mironov, Talwar & Zhang (2019), Section 3.3:
    split the integral at z0 = sigma^2 log(1/q - 1) + 1/2, expand
    ((1-q) mu0 + q mu1)^alpha by the generalised binomial theorem on each
    side, and integrate each term in closed form with the normal CDF.  Terms
    are signed (binomial coefficients alternate past alpha); both series are
    summed with a signed log-sum-exp, block by block, until the remaining
    tail is negligible; a bound on the tail is then added so truncation
    never lowers the value.
    """
    alphas = np.asarray(alphas, dtype=float)
    n = alphas.size
    log_q, log_1mq = math.log(q), math.log1p(-q)
    z0 = sigma * sigma * (log_1mq - log_q) + 0.5
    inv = 1.0 / (2 * sigma * sigma)
    acc_val = np.full(n, -np.inf)
    acc_sign = np.ones(n)
    tail = np.full(n, np.inf)
    todo = np.arange(n)
    start, stop = 0, 64
    while todo.size:
        a = alphas[todo][:, None]
        i = np.arange(start, stop, dtype=float)[None, :]
        j = a - i
        log_c = _log_binom(a, i)
        sign = special.gammasgn(a - i + 1)
        s0 = (log_c + i * log_q + j * log_1mq + (i * i - i) * inv
              + special.log_ndtr((z0 - i) / sigma))
        s1 = (log_c + j * log_q + i * log_1mq + (j * j - j) * inv
              + special.log_ndtr((j - z0) / sigma))
        blk_val, blk_sign = _signed_logsumexp(
            np.concatenate([s0, s1], axis=1), np.concatenate([sign, sign], axis=1))
        val, sgn = _signed_logsumexp(np.stack([acc_val[todo], blk_val], axis=1),
                                     np.stack([acc_sign[todo], blk_sign], axis=1))
        acc_val[todo], acc_sign[todo] = val, sgn
        # Tail bound: beyond the last terms the magnitudes decay at least like
        # i^-(alpha+1), so the tail is at most (1 + N/alpha) times the largest
        # of the last few terms.
        last = np.maximum(s0[:, -8:].max(axis=1), s1[:, -8:].max(axis=1))
        tail[todo] = last + np.log1p(stop / alphas[todo])
        with np.errstate(over="ignore"):
            scale = np.log(np.abs(np.expm1(val)) + 1e-300)
        converged = (sgn > 0) & ((tail[todo] < _SERIES_RTOL + scale) | (tail[todo] < -60))
        if stop >= _SERIES_MAX_TERMS:
            converged[:] = True
        todo = todo[~converged]
        start, stop = stop, 2 * stop
    with np.errstate(invalid="ignore"):
        out = np.where(acc_sign > 0, np.logaddexp(acc_val, tail), np.inf)
    # Round-off of the signed sum is a few ulps of A (about 1): pad for it.
    return np.maximum(out, 0.0) + _SERIES_ROUNDOFF


@functools.lru_cache(maxsize=256)
def _sampled_gaussian_rdp(q: float, sigma: float, orders: tuple) -> np.ndarray:
    a = np.asarray(orders, dtype=float)
    rdp = np.empty(a.size)
    is_int = a == np.round(a)
    int_orders = a[is_int]
    if int_orders.size:
        rdp[is_int] = _sg_log_a_int(q, sigma, int_orders) / (int_orders - 1)
    frac = ~is_int
    if frac.any():
        af = a[frac]
        log_a = _sg_log_a_frac(q, sigma, af)
        # log A_alpha is convex in alpha (a log-moment generating function) and
        # log A_1 = 0: the chord between neighbouring integers bounds it above.
        lo, hi = np.floor(af), np.ceil(af)
        needed = np.unique(np.concatenate([lo[lo >= 2], hi]))
        table = dict(zip(needed.tolist(), _sg_log_a_int(q, sigma, needed).tolist()))
        log_lo = np.array([table.get(x, 0.0) for x in lo.tolist()])
        log_hi = np.array([table[x] for x in hi.tolist()])
        chord = (hi - af) * log_lo + (af - lo) * log_hi
        rdp[frac] = np.minimum(log_a, chord) / (af - 1)
    # Sampling never hurts: the plain Gaussian curve is an upper bound.
    rdp = np.minimum(np.maximum(rdp, 0.0), a / (2 * sigma * sigma))
    return _readonly(rdp)


def _zhu_wang_rdp(q: float, inner, orders: tuple) -> np.ndarray:
    """General upper bound for Poisson subsampling (Zhu & Wang 2019, Thm 6).

    For integer alpha >= 2 and any mechanism with RDP curve eps(.):
    A <= (1-q)^(alpha-1) (1 + (alpha-1) q) + C(alpha,2) q^2 (1-q)^(alpha-2) e^eps(2)
         + 3 sum_{l>=3} C(alpha,l) q^l (1-q)^(alpha-l) e^((l-1) eps(l)).
    As for the sampled Gaussian, A - 1 is a sum of positive terms.  A
    fractional order uses the next integer (RDP increases with the order);
    orders above ``_ZW_MAX_ORDER`` keep the unamplified curve.
    """
    a = np.asarray(orders, dtype=float)
    unamplified = mechanism_cost(inner, orders).rdp
    ceil = np.maximum(np.ceil(a), 2.0)
    use = ceil <= _ZW_MAX_ORDER
    out = np.array(unamplified, dtype=float)
    if not use.any():
        return out
    targets = np.unique(ceil[use])
    kmax = int(targets.max())
    inner_int = mechanism_cost(inner, tuple(float(x) for x in range(2, kmax + 1))).rdp
    eps_at = np.concatenate([[0.0, 0.0], inner_int])  # eps_at[l] for l >= 2
    al, kf, k, log_binom, offsets, seg = _int_layout(tuple(targets.tolist()))
    e = eps_at[k]
    with np.errstate(over="ignore", invalid="ignore"):
        x = (kf - 1) * e
        # l = 2: C q^2 (1-q)^(a-2) (e^eps(2) - 1); l >= 3: ... (3 e^x - 1).
        log_factor = np.where(
            k == 2, _log_expm1(x),
            math.log(3.0) + x + np.log1p(-np.exp(-x) / 3.0))
        log_factor = np.where(np.isposinf(x), np.inf, log_factor)
        log_terms = log_binom + kf * math.log(q) + (al - kf) * math.log1p(-q) + log_factor
    log_a = np.logaddexp(0.0, _segment_logsumexp(log_terms, offsets, seg))
    bound = dict(zip(targets.tolist(), (log_a / (targets - 1)).tolist()))
    zw = np.array([bound.get(c, np.inf) for c in ceil.tolist()])
    out[use] = np.minimum(out[use], zw[use])
    return out


# ---------------------------------------------------------------------------
# Cost of a mechanism tree.
# ---------------------------------------------------------------------------

class Cost(NamedTuple):
    """Everything the conversions need about a mechanism tree.

    rdp    RDP curve on the orders.
    gauss  sum of 1 / z^2 over its unsampled Gaussian parts.
    pure   sum of the pure epsilons of its pure-DP parts.
    other  True if some part is neither (zCDP, sampled Gaussian, ...).
    """

    rdp: np.ndarray
    gauss: float
    pure: float
    other: bool

    @property
    def is_pure(self) -> bool:
        return not self.other and self.gauss == 0

    @property
    def is_gaussian(self) -> bool:
        return not self.other and self.pure == 0 and self.gauss > 0

    @property
    def is_hybrid(self) -> bool:
        return not self.other and self.pure > 0 and self.gauss > 0

    def __add__(self, other):  # noqa: D105
        return Cost(self.rdp + other.rdp, self.gauss + other.gauss,
                     self.pure + other.pure, self.other or other.other)

    def scaled(self, count: int) -> "Cost":
        if count == 0:
            return Cost(np.zeros_like(self.rdp), 0.0, 0.0, False)
        return Cost(self.rdp * count, self.gauss * count, self.pure * count, self.other)


def _zero_cost(orders: tuple) -> Cost:
    return Cost(np.zeros(len(orders)), 0.0, 0.0, False)


def _pure_cost(eps: float, orders: tuple) -> Cost:
    return Cost(_rdp_pure(eps, np.asarray(orders)), 0.0, eps, False)


@functools.lru_cache(maxsize=4096)
def mechanism_cost(mechanism: mech.Mechanism, orders: tuple) -> Cost:
    c = _compute_cost(mechanism, orders)
    return Cost(_readonly(np.array(c.rdp, dtype=float)), float(c.gauss), float(c.pure), bool(c.other))


def _compute_cost(m: mech.Mechanism, orders: tuple) -> Cost:
    a = np.asarray(orders, dtype=float)
    if isinstance(m, mech.Gaussian):
        z = m.noise_multiplier
        return Cost(_rdp_gaussian(z, a), 1.0 / (z * z), 0.0, False)
    if isinstance(m, mech.Laplace):
        eps = 1.0 / m.noise_multiplier
        return Cost(_rdp_laplace(eps, a), 0.0, eps, False)
    if isinstance(m, DiscreteGaussian):  # zCDP only (CKS20 Thm 14): no analytic/PLD route
        return Cost(_rdp_gaussian(m.noise_multiplier, a), 0.0, 0.0, True)
    if isinstance(m, (mech.PureDP, DiscreteLaplace)):
        return _pure_cost(m.epsilon, orders)
    if isinstance(m, mech.ZCDP):
        if m.rho == 0:
            return _zero_cost(orders)
        return Cost(a * m.rho, 0.0, 0.0, True)
    if isinstance(m, mech.SparseVector):
        eps = m.epsilon_1 + m.epsilon_2
        if m.rdp_bound == "paper002":
            rdp = _rdp_laplace(m.epsilon_1, a) + _rdp_laplace(m.epsilon_2, a)
            return Cost(rdp, 0.0, eps, False)
        return _pure_cost(eps, orders)
    if isinstance(m, mech.GaussianSparseVector):
        with np.errstate(divide="ignore"):
            rdp = (math.log(m.max_queries) / (a - 1) + a / m.threshold_multiplier ** 2
                   + 2.0 * a / m.query_multiplier ** 2)
        return Cost(rdp, 0.0, 0.0, True)
    if isinstance(m, mech.FilteredRDP):
        # Rényi divergences are non-decreasing in the order: the bound at
        # ``order`` holds at every order below it, and nothing is known above
        return Cost(np.where(a <= m.order, m.rdp, np.inf), 0.0, 0.0, True)
    if isinstance(m, mech.Composed):
        total = _zero_cost(orders)
        for child in m.mechanisms:
            total = total + mechanism_cost(child, orders)
        return total
    if isinstance(m, mech.Repeated):
        return mechanism_cost(m.mechanism, orders).scaled(m.count)
    if isinstance(m, mech.PoissonSampled):
        return _sampled_cost(m, orders)
    if isinstance(m, mech.Activated):
        return _activated_cost(m, orders)
    if isinstance(m, mech.AnyOf):
        costs = [mechanism_cost(child, orders) for child in m.mechanisms]
        return Cost(np.max([c.rdp for c in costs], axis=0), max(c.gauss for c in costs),
                     max(c.pure for c in costs), any(c.other for c in costs))
    if isinstance(m, mech.RepeatAndSelect):
        return _repeat_and_select_cost(m, orders)
    raise NotImplementedError(
        f"The accountant does not support the mechanism {type(m).__name__} ({m!r}); "
        "supported: Gaussian, Laplace, DiscreteGaussian, DiscreteLaplace, PureDP, ZCDP, "
        "SparseVector, GaussianSparseVector, FilteredRDP, PoissonSampled, Activated, "
        "Composed, Repeated, AnyOf, RepeatAndSelect."
    )


def _activated_cost(m: mech.Activated, orders: tuple) -> Cost:
    inner = mechanism_cost(m.mechanism, orders)
    p = m.probability
    if p == 1.0 or (not inner.other and inner.gauss == 0 and inner.pure == 0):
        return inner
    a = np.asarray(orders, dtype=float)
    # log((1 - p) + p exp((a - 1) R)) / (a - 1), without overflow (R may be inf)
    with np.errstate(over="ignore", invalid="ignore"):
        rdp = np.logaddexp(math.log1p(-p), math.log(p) + (a - 1) * inner.rdp) / (a - 1)
    rdp = np.where(np.isinf(inner.rdp), np.inf, rdp)
    # the worst branch keeps the inner pure epsilon (exact for pure DP)
    return Cost(np.minimum(rdp, inner.rdp), 0.0, inner.pure, inner.other or not inner.is_pure)


def _repeat_and_select_cost(m: mech.RepeatAndSelect, orders: tuple) -> Cost:
    """Papernot and Steinke (ICLR 2022), Theorem 2, at every order; see RepeatAndSelect."""
    inner = mechanism_cost(m.mechanism, orders)
    a = np.asarray(orders, dtype=float)
    eta, log_inv_gamma = m.shape, -math.log(m.gamma)
    # the lambda-hat term, minimised over lambda-hat in {1} and the orders
    with np.errstate(invalid="ignore"):
        hat = (1 + eta) * ((1 - 1 / a) * inner.rdp + log_inv_gamma / a)
    hat = np.where(np.isnan(hat), np.inf, hat)
    best_hat = min((1 + eta) * log_inv_gamma, float(np.min(hat)))
    rdp = inner.rdp + best_hat + math.log(m.mean_runs) / (a - 1)
    # letting both orders grow: a pure epsilon-DP run gives (2 + eta) epsilon
    pure = (2 + eta) * inner.pure if inner.is_pure else 0.0
    return Cost(rdp, 0.0, pure, not inner.is_pure or inner.pure == 0)


def _sampled_cost(m: mech.PoissonSampled, orders: tuple) -> Cost:
    inner = mechanism_cost(m.mechanism, orders)
    q = m.rate
    if q == 1.0:
        return inner
    if not inner.other and inner.gauss == 0 and inner.pure == 0:
        return _zero_cost(orders)
    a = np.asarray(orders, dtype=float)
    if inner.is_gaussian:
        # Any composition of Gaussians on one sample is a single Gaussian.
        sigma = inner.gauss ** -0.5
        return Cost(_sampled_gaussian_rdp(q, sigma, orders), 0.0, 0.0, True)
    zw = _zhu_wang_rdp(q, m.mechanism, orders)
    if inner.is_pure:
        # Amplification by Poisson subsampling of a pure-DP mechanism.
        eps = math.log1p(q * math.expm1(inner.pure))
        return Cost(np.minimum(_rdp_pure(eps, a), zw), 0.0, eps, False)
    return Cost(zw, 0.0, 0.0, True)


# ---------------------------------------------------------------------------
# Conversions.
# ---------------------------------------------------------------------------

def rdp_to_epsilon(rdp, orders, delta: float) -> float:
    r"""Convert an RDP curve to epsilon at a given delta.

    Parameters
    ----------
    rdp : array-like
        RDP values :math:`R(\alpha)` at ``orders`` (``inf`` allowed).
    orders : array-like
        The orders :math:`\alpha > 1`.
    delta : float
        Target delta in (0, 1).

    Returns
    -------
    epsilon : float
        :math:`\max\{0, \min_\alpha [R(\alpha) + \log(1 - 1/\alpha) -
        (\log\delta + \log\alpha)/(\alpha - 1)]\}`; ``inf`` if delta is 0.

    References
    ----------
    .. [1] C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
       Differential Privacy", NeurIPS 2020, Proposition 12.
    .. [2] B. Balle, G. Barthe, M. Gaboardi, J. Hsu and T. Sato, "Hypothesis
       Testing Interpretations and Rényi Differential Privacy", AISTATS 2020.
    """
    delta = check_delta(delta)
    if delta == 0:
        return math.inf
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    eps = np.where(np.isnan(eps), np.inf, eps)
    return max(0.0, float(np.min(eps)))


def rdp_to_delta(rdp, orders, epsilon: float) -> float:
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        log_delta = (a - 1) * (r - epsilon + np.log1p(-1.0 / a)) - np.log(a)
    log_delta = np.where(np.isnan(log_delta), np.inf, log_delta)
    return float(min(1.0, math.exp(min(0.0, float(np.min(log_delta))))))


def get_rdp(mechanism: mech.Mechanism, orders=DEFAULT_ORDERS) -> np.ndarray:
    r"""Rényi DP curve of a mechanism.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism tree.
    orders : array-like of float, default=DEFAULT_ORDERS
        Orders :math:`\alpha > 1` (integer and fractional).

    Returns
    -------
    rdp : ndarray of shape (len(orders),)
        :math:`R(\alpha)` such that the mechanism is
        :math:`(\alpha, R(\alpha))`-RDP at each order (may be ``inf``).

    Notes
    -----
    - Gaussian: :math:`\alpha / (2z^2)`.  ZCDP: :math:`\alpha\rho`.
    - Laplace: Mironov's closed form [1]_.
    - PureDP and SparseVector (default bound): the tight bound for a generic
      pure-DP mechanism, :math:`\varepsilon - \log\frac{1+e^{-\varepsilon}}
      {1+e^{-(2\alpha-1)\varepsilon}} / (\alpha - 1)` [4]_.
    - PoissonSampled(Gaussian): exact numerical RDP [2]_ (binomial expansion
      at integer orders, two-series expansion at fractional ones).
    - PoissonSampled(other): see :class:`~skdp.accounting.PoissonSampled`.
    - Composed / Repeated: curves add.

    References
    ----------
    .. [1] I. Mironov, "Rényi Differential Privacy", CSF 2017.
    .. [2] I. Mironov, K. Talwar and L. Zhang, "Rényi Differential Privacy of
       the Sampled Gaussian Mechanism", arXiv:1908.10530, 2019.
    .. [3] Y. Zhu and Y.-X. Wang, "Poisson Subsampled Rényi Differential
       Privacy", ICML 2019.
    .. [4] M. Bun and T. Steinke, "Concentrated Differential Privacy", TCC 2016.
    """
    mechanism = as_run(mechanism, "get_rdp")  # validated; discretized in secure mode
    return np.array(mechanism_cost(mechanism, orders_key(orders)).rdp)

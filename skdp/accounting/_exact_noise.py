r"""Exact discrete Laplace and discrete Gaussian samplers (secure mode's noise).

Only the release door (:mod:`skdp.accounting.release`) calls this module.

The samplers are Algorithms 1-3 of Canonne, Kamath and Steinke (2020):
Bernoulli(exp(-gamma)) for a rational gamma by the alternating series,
the discrete Laplace of rational scale ``t / s`` by a geometric number of
Bernoulli(exp(-1)) successes on top of a uniform remainder, and the
discrete Gaussian by rejection from the discrete Laplace. Every step is
integer arithmetic (numpy int64 / uint64; Python integers where a value
would not fit); no floating-point number is computed on the way. The
random bits are the operating system's CSPRNG (:func:`os.urandom`; the
secret number of runs of a private selection through :mod:`secrets`, which
reads it too). A uniform integer below ``m`` takes the low
``bit_length(m - 1)`` bits of a word and is rejected when it is >= m, so it
is exactly uniform.

Every Bernoulli draw is a lazy comparison: a uniform U in [0, 1) is read a
byte at a time and compared with the exact base-256 digits of the
probability, until a byte differs (after one byte with probability 255/256).
For a ratio ``n / m`` of integers the digits come from integer division;
for ``exp(-w)``, ``w`` an integer, from an integer bracket of ``e``
(computed once). The geometric number of Bernoulli(exp(-1)) successes is
drawn by inversion: the number of thresholds ``exp(-v)`` above one uniform.
This costs about one random byte a Bernoulli, against a word and a
rejection for a uniform integer, and needs no division by a per-value
denominator.

The samplers are vectorised over coordinates: each loop runs over
rejection rounds (or tied bytes) on the coordinates still pending, never
over coordinates (every round leaves a constant fraction of them pending,
so the number of rounds grows like the logarithm of the size). The
truncated negative binomial draw of a selection's number of runs is one
value, drawn in Python integers.

References
----------
C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
Differential Privacy", NeurIPS 2020 (arXiv:2004.00010), Algorithms 1, 2, 3.
N. Papernot and T. Steinke, "Hyperparameter Tuning with Renyi Differential
Privacy", ICLR 2022 (the truncated negative binomial law).
"""

import bisect
import functools
import math
import os
import secrets
from fractions import Fraction

import numpy as np

__all__ = ["random_words", "uniform_below", "bernoulli_exp", "discrete_laplace",
           "discrete_gaussian", "truncated_negative_binomial"]

# every modulus handed to uniform_below stays below this (room for K * d)
_LIMIT = 1 << 62
# every denominator of a lazy Bernoulli comparison stays below this (256 m < 2**63)
_RATIO_LIMIT = 1 << 55
# Laplace proposals per discrete Gaussian draw asked for in a round (about
# 1 / 0.63 for the Laplace step times 1 / 0.76 for the Gaussian one)
_GAUSSIAN_OVERSAMPLE = 2.15


def random_words(size, dtype=np.uint64):
    """``size`` independent uniform unsigned words (uint8 to uint64) from the OS CSPRNG."""
    dtype = np.dtype(dtype)
    return np.frombuffer(os.urandom(dtype.itemsize * int(size)), dtype=dtype).copy()


def uniform_below(m, size):
    """``size`` independent uniform integers in ``[0, m)`` (int64), ``1 <= m < 2**62``.

    Rejection from the low bits of CSPRNG words: the mask ``2^b - 1`` with
    ``b = bit_length(m - 1)`` keeps a word with probability > 1/2; the kept
    words fill the output in order (they are i.i.d. uniform below ``m``).
    """
    m, size = int(m), int(size)
    if not 1 <= m < _LIMIT:
        raise ValueError("uniform_below: the bound must be in [1, 2**62).")
    word = next(w for w in (np.uint8, np.uint16, np.uint32, np.uint64)
                if m - 1 <= np.iinfo(w).max)
    mask = word((1 << (m - 1).bit_length()) - 1)
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        # about need / P[kept] words: the kept ones fill the slots in one round mostly
        u = random_words(need * (int(mask) + 1) // m + need // 32 + 16, word) & mask
        u = u[u < m][:need] if (m - 1) != int(mask) else u[:need]
        out[filled:filled + u.size] = u
        filled += u.size
    return out


def _random_bytes(size):
    """``size`` uniform bytes (uint8) from the OS CSPRNG."""
    return random_words(size, np.uint8)


def _bernoulli_ratio(n, m):
    """Bernoulli(n_i / m) for an int64 array ``0 <= n_i <= m``, ``1 <= m < 2**55`` (int or array).

    A lazy comparison of a uniform U in [0, 1), drawn a byte at a time, with
    the base-256 expansion of ``n / m``, in integer multiplications: with
    ``s = 256 r`` (``r`` the current remainder, first ``n``) and ``W`` the
    next byte of U, ``(W + 1) m <= s`` means U is below ``n / m`` whatever
    its later bytes (a success), ``W m > s`` means it is above (a failure),
    and otherwise (``W = floor(s / m)``, probability <= 1/256) the comparison
    goes on with the remainder ``s - W m``. Exactly Bernoulli(n / m); about
    one byte per draw, no division.
    """
    n = np.asarray(n, dtype=np.int64).ravel()
    if np.ndim(m) == 0:
        # one denominator: the digit floor(256 r / m) by one division
        m = int(m)
        digit = (n << 8) // m
        w = _random_bytes(n.size)
        result = w < digit
        tie = np.flatnonzero(w == digit)
        if tie.size:  # the same comparison on the remainders, with U's next bytes
            result[tie] = _bernoulli_ratio((n[tie] << 8) - digit[tie] * m, m)
        return result
    result = np.zeros(n.size, dtype=bool)
    pending = None  # all positions, in the first round
    r = n
    scalar = False
    mm = int(m) if scalar else np.asarray(m, dtype=np.int64).ravel()
    while r.size:
        s = r << 8
        wm = _random_bytes(r.size).astype(np.int64) * mm
        success = wm + mm <= s
        tie = wm <= s
        tie &= ~success
        if pending is None:
            result[success] = True
            pending = np.flatnonzero(tie)
        else:
            result[pending[success]] = True
            pending = pending[tie]
        r = (s - wm)[tie]
        if not scalar:
            mm = mm[tie]
    return result


@functools.lru_cache(maxsize=1024)
def _exp_floor(w, bits):
    """``floor(exp(-w) * 2**bits)`` for an integer ``w >= 1``, exactly (integers only).

    ``e`` is bracketed by integer bounds ``E_lo <= e 2^P <= E_hi`` from its
    series; then ``2^(bits + P w) / E^w`` brackets the target, and ``P`` grows
    until both ends have the same floor (``exp(-w)`` is irrational, so they
    eventually do).
    """
    precision = bits + 64
    while True:
        one = 1 << precision
        total, term, k = 0, one, 0
        while term:
            total += term
            k += 1
            term //= k
        e_lo, e_hi = total, total + k + 2  # k floors lost <= 1 each; the tail <= 2 / k!
        numerator = 1 << (bits + precision * w)
        low, high = numerator // e_hi ** w, numerator // e_lo ** w
        if low == high:
            return low
        precision *= 2


# Bernoulli(exp(-w)) for w = 1.._EXP_TABLE_MAX by lazy comparison with the
# first _EXP_TABLE_BYTES bytes of exp(-w) (exact integers, computed once)
_EXP_TABLE_MAX = 64
_EXP_TABLE_BYTES = 16


@functools.lru_cache(maxsize=None)
def _exp_bytes(nbytes):
    """Table ``(w, j) -> byte j of exp(-w)`` in base 256, ``w`` in [0, _EXP_TABLE_MAX]."""
    table = np.zeros((_EXP_TABLE_MAX + 1, nbytes), dtype=np.int64)
    for w in range(1, _EXP_TABLE_MAX + 1):
        value = _exp_floor(w, 8 * nbytes)
        table[w] = [(value >> (8 * (nbytes - 1 - j))) & 255 for j in range(nbytes)]
    return table


def _bernoulli_exp_integer(w, start=0):
    """Bernoulli(exp(-w_i)) for an int64 array ``1 <= w_i <= _EXP_TABLE_MAX``.

    A uniform U in [0, 1) drawn a byte at a time is compared with the exact
    base-256 expansion of ``exp(-w)`` (success when U is below it); the
    expansion is extended exactly when a value ties on every tabled byte.
    ``start > 0``: U's first ``start`` bytes are known to equal the
    expansion's (the comparison goes on from byte ``start``).
    """
    w = np.asarray(w, dtype=np.int64).ravel()
    result = np.zeros(w.size, dtype=bool)
    pending = np.arange(w.size)
    nbytes = _EXP_TABLE_BYTES
    table = _exp_bytes(nbytes)
    j = int(start)
    while pending.size:
        while j >= nbytes:  # a tie on every tabled byte (probability 2**-128): more bytes
            nbytes *= 2
            table = _exp_bytes(nbytes)
        digit = table[w[pending], j]
        u = _random_bytes(pending.size).astype(np.int64)
        result[pending[u < digit]] = True
        pending = pending[u == digit]
        j += 1
    return result


def _bernoulli_exp_fraction(n, d):
    """Bernoulli(exp(-n_i / d)) for an int64 array ``0 <= n_i <= d`` (CKS20 Alg. 1, gamma <= 1).

    K = 1; while Bernoulli(gamma / K): K += 1; return K odd. Bernoulli(n / (d K))
    is a lazy comparison (:func:`_bernoulli_ratio`), or Bernoulli(n / d) and
    Bernoulli(1 / K) together when ``d K`` is beyond its range.
    """
    n = np.asarray(n, dtype=np.int64).ravel()
    d = int(d)
    if d >= _RATIO_LIMIT:
        raise ValueError("bernoulli_exp: the denominator is too large for the sampler.")
    result = np.empty(n.size, dtype=bool)
    pending, values = np.arange(n.size), n
    k = 1
    while pending.size:
        if d * k < _RATIO_LIMIT:
            success = _bernoulli_ratio(values, d * k)
        else:
            success = (_bernoulli_ratio(values, d)
                       & _bernoulli_ratio(np.ones(values.size, np.int64), k))
        result[pending[~success]] = (k % 2 == 1)
        pending, values = pending[success], values[success]
        k += 1
    return result


def _bernoulli_exp_whole(whole):
    """Bernoulli(exp(-w_i)) for an int64 array ``w_i >= 0``: tabled factors of at most
    exp(-_EXP_TABLE_MAX), all of which must succeed."""
    whole = np.asarray(whole, dtype=np.int64).ravel()
    result = np.ones(whole.size, dtype=bool)
    remaining = whole.copy()
    pending = np.flatnonzero(remaining > 0)
    while pending.size:
        step = np.minimum(remaining[pending], _EXP_TABLE_MAX)
        success = _bernoulli_exp_integer(step)
        result[pending[~success]] = False
        remaining[pending] -= step
        pending = pending[success & (remaining[pending] > 0)]
    return result


def _bernoulli_exp_common(n, d):
    """Bernoulli(exp(-n_i / d)) for an int64 array ``n >= 0`` and one denominator ``d``."""
    result = np.empty(n.size, dtype=bool)
    large = np.flatnonzero(n >= d)
    if large.size:  # gamma >= 1: the integer part first
        whole, rest = np.divmod(n[large], d)
        survive = _bernoulli_exp_whole(whole)
        small = np.ones(n.size, dtype=bool)
        small[large] = False
        small = np.flatnonzero(small)
        result[large[~survive]] = False
        result[small] = _bernoulli_exp_fraction(n[small], d)
        kept = large[survive]
        result[kept] = _bernoulli_exp_fraction(rest[survive], d)
    else:
        result[:] = _bernoulli_exp_fraction(n, d)
    return result


def _failures_before_success(size):
    """``size`` draws of V with ``P[V >= v] = exp(-v)``: the number of Bernoulli(exp(-1))
    successes before the first failure.

    By inversion with one uniform U: V is the number of thresholds
    ``exp(-1) > exp(-2) > ...`` above U. U's first byte settles every
    threshold whose first base-256 digit differs from it; a threshold it ties
    with is settled by U's next bytes (lazily, against the exact digits), and
    the first byte 0, which ties with every threshold from ``exp(-6)`` on
    (probability 1/256), by U's first 16 bytes against them as integers.
    """
    above, tied = _first_byte_counts()
    w = _random_bytes(size)
    v = above[w]  # thresholds surely above U
    ties = tied[w]
    single = np.flatnonzero(ties == 1)
    if single.size:
        v[single] += _bernoulli_exp_integer(v[single] + 1, start=1)
    for i in np.flatnonzero(ties > 1):
        v[i] = _failures_after_first_byte(int(w[i]))
    return v


@functools.lru_cache(maxsize=None)
def _first_byte_counts():
    """For each first byte of U: how many thresholds ``exp(-v)`` have a larger first
    digit (surely above U), and how many the same one (tied)."""
    digits = _exp_bytes(_EXP_TABLE_BYTES)[1:, 0]
    byte = np.arange(256)
    above = (digits[None, :] > byte[:, None]).sum(axis=1).astype(np.int64)
    tied = (digits[None, :] == byte[:, None]).sum(axis=1).astype(np.int64)
    return above, tied


@functools.lru_cache(maxsize=8)
def _thresholds(nbytes):
    """``floor(exp(-v) 256^nbytes)`` for v = 64, 63, ..., 1 (increasing)."""
    return tuple(_exp_floor(v, 8 * nbytes) for v in range(_EXP_TABLE_MAX, 0, -1))


def _failures_after_first_byte(first):
    """V of :func:`_failures_before_success` given U's first byte, from U's later bytes."""
    nbytes = _EXP_TABLE_BYTES
    u = int.from_bytes(bytes([first]) + os.urandom(nbytes - 1), "big")
    while True:
        thresholds = _thresholds(nbytes)
        at = bisect.bisect_left(thresholds, u)
        if at == len(thresholds) or thresholds[at] != u:  # else a tie on every byte: more
            count = len(thresholds) - at  # the thresholds above U
            if count < _EXP_TABLE_MAX:
                return count
            # U < exp(-64): V >= 64, and V - 64 is a fresh draw (the law is memoryless)
            return count + int(_failures_before_success(1)[0])
        u = (u << (8 * nbytes)) | int.from_bytes(os.urandom(nbytes), "big")
        nbytes *= 2


def bernoulli_exp(n, d):
    """Bernoulli(exp(-n_i / d_i)) for integer arrays ``n >= 0``, ``d >= 1`` (CKS20 Alg. 1).

    ``exp(-gamma) = exp(-floor(gamma)) exp(-(gamma - floor(gamma)))``: a
    Bernoulli of each factor, both of which must succeed (the integer part
    by the exact expansion of ``exp(-w)``, the fractional one by the
    alternating series).

    Parameters
    ----------
    n, d : array-like of int
        Numerators and denominators (int64, or Python integers of any size
        in an object array: their quotient and remainder are taken exactly);
        ``d < 2**55``.

    Returns
    -------
    ndarray of bool
    """
    n = np.asarray(n)
    d = np.broadcast_to(np.asarray(d), n.shape)
    shape = n.shape
    if n.dtype == object or d.dtype == object:
        whole = np.array([int(a) // int(b) for a, b in zip(n.ravel(), d.ravel())], dtype=object)
        rest = np.array([int(a) % int(b) for a, b in zip(n.ravel(), d.ravel())], dtype=np.int64)
        d = np.array([int(b) for b in d.ravel()], dtype=np.int64)
        # a remaining count beyond 2**62 is a rejection with certainty up to
        # exp(-2**62), which the loop would reach anyway: it is capped only to fit
        whole = np.array([min(int(w), _LIMIT) for w in whole], dtype=np.int64)
    else:
        n = n.astype(np.int64).ravel()
        d = d.astype(np.int64).ravel()
        if n.size and (n.min() < 0 or d.min() < 1):
            raise ValueError("bernoulli_exp: needs n >= 0 and d >= 1.")
        if d.size and d.min() == d.max():
            return _bernoulli_exp_common(n, int(d[0])).reshape(shape)
        whole, rest = np.divmod(n, d)
    result = _bernoulli_exp_whole(whole)
    alive = np.flatnonzero(result)
    # one vectorised run per distinct denominator
    for denominator in np.unique(d[alive]):
        group = alive[d[alive] == denominator]
        result[group] = _bernoulli_exp_fraction(rest[group], int(denominator))
    return result.reshape(shape)


def _fill(shape, accepted, oversample):
    """An int64 array of ``shape`` filled with i.i.d. accepted proposals.

    ``accepted(m)`` runs ``m`` independent proposals and returns the accepted
    ones (each an exact draw of the target law); slots are filled in order,
    ``oversample`` times the missing count proposed per round, so the number
    of rounds stays small. Which proposals fill the slots does not depend on
    their values, so the slots are i.i.d. draws of the target law.
    """
    total = int(np.prod(shape, dtype=np.int64))
    out = np.empty(total, dtype=np.int64)
    filled = 0
    while filled < total:
        need = total - filled
        values = accepted(int(need * oversample) + 8)[:need]
        out[filled:filled + values.size] = values
        filled += values.size
    return out.reshape(shape)


def _check_positive_int(value, name):
    if isinstance(value, (bool, np.bool_)) or int(value) != value or int(value) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")
    return int(value)


def _laplace_proposals(t, s, m):
    """The accepted ones of ``m`` proposals of CKS20 Alg. 2: i.i.d. discrete Laplace draws."""
    u = uniform_below(t, m)
    u = u[_bernoulli_exp_fraction(u, t)]
    x = (u + t * _failures_before_success(u.size)) // s
    negative = np.unpackbits(_random_bytes((u.size + 7) // 8))[:u.size].astype(bool)
    keep = ~(negative & (x == 0))  # -0 is rejected: 0 is drawn once, not twice
    return np.where(negative, -x, x)[keep]


def discrete_laplace(t, size, s=1):
    r"""Exact draws of the discrete Laplace law of scale ``t / s`` (CKS20 Alg. 2).

    :math:`P[Y = y] \propto \exp(-|y| s / t)` on the integers.

    Parameters
    ----------
    t, s : int
        Positive integers (the scale is the rational ``t / s``), ``t < 2**61``.
    size : int or tuple of int
        Output shape.

    Returns
    -------
    ndarray of int64
    """
    t = _check_positive_int(t, "discrete_laplace: t")
    s = _check_positive_int(s, "discrete_laplace: s")
    if t >= _LIMIT // 2:
        raise ValueError("discrete_laplace: t must be < 2**61.")
    shape = (size,) if np.ndim(size) == 0 else tuple(size)

    return _fill(shape, lambda m: _laplace_proposals(t, s, m), 1.8)


def discrete_gaussian(sigma2, size):
    r"""Exact draws of the discrete Gaussian of variance parameter ``sigma2`` (CKS20 Alg. 3).

    :math:`P[Y = y] \propto \exp(-y^2 / (2\sigma^2))` on the integers.
    Proposals ``Y`` from the discrete Laplace of integer scale ``t`` are
    accepted with probability
    :math:`\exp(-(|Y| - \sigma^2/t)^2 / (2\sigma^2))`, which gives the law
    for every ``t > 0``; ``t = sigma`` when ``sigma`` is an integer (the
    acceptance exponent then has the small denominator :math:`2\sigma^2`),
    else ``t = floor(sigma) + 1`` as in the paper.

    Parameters
    ----------
    sigma2 : int or fractions.Fraction
        :math:`\sigma^2 > 0`, rational.
    size : int or tuple of int
        Output shape.

    Returns
    -------
    ndarray of int64
    """
    sigma2 = Fraction(sigma2)
    if not sigma2 > 0:
        raise ValueError("discrete_gaussian: sigma2 must be > 0.")
    p, q = sigma2.numerator, sigma2.denominator
    root = math.isqrt(p // q)
    t = root if (q == 1 and root * root == p) else math.isqrt(p // q) + 1
    t = max(t, 1)
    # gamma = (|Y| - p/(q t))^2 / (2 p/q) = a^2 / den with a = q t |Y| - p
    if q == 1 and p == t * t:  # integer sigma = t: gamma = (|Y| - t)^2 / (2 t^2)
        factor, offset, den = 1, t, 2 * t * t
    else:
        factor, offset, den = q * t, p, 2 * p * q * t * t
    if den >= _RATIO_LIMIT:
        raise ValueError("discrete_gaussian: sigma2 is too large or its denominator too "
                         "fine for the sampler (keep the acceptance denominator below 2**55).")
    shape = (size,) if np.ndim(size) == 0 else tuple(size)

    def accepted(m):
        y = _laplace_proposals(t, 1, m)
        magnitude = np.abs(y)
        if magnitude.max(initial=0) < (1 << 30) // factor and offset < (1 << 30):
            a = factor * magnitude - offset  # a^2 < 2**62
            accept = _bernoulli_exp_common(a * a, den)
        else:  # Python integers for the (rare, or huge-parameter) large values
            a = [factor * int(v) - offset for v in magnitude]
            accept = bernoulli_exp(np.array([x * x for x in a], dtype=object),
                                   np.full(len(a), den, dtype=np.int64))
        return y[accept]

    return _fill(shape, accepted, _GAUSSIAN_OVERSAMPLE)


def _geometric_count(numerator, denominator):
    """Successes of Bernoulli(q) before the first failure, ``q = numerator / denominator``
    (each an exact uniform integer below the denominator, from the OS CSPRNG through
    :mod:`secrets`, compared with the numerator): ``P[G = g] = q^g (1 - q)``."""
    count = 0
    while secrets.randbelow(denominator) < numerator:
        count += 1
    return count


def truncated_negative_binomial(shape, gamma):
    r"""One exact draw of the number of runs ``K >= 1`` of a repeat-and-select selection.

    :math:`P[K = k] \propto (1 - \gamma)^k \binom{k + \eta - 1}{k}` for
    :math:`k \ge 1` (Papernot and Steinke 2022), ``shape`` :math:`= \eta \ge 0`,
    ``gamma`` :math:`\in (0, 1)`; both are floats, hence exact dyadic
    rationals, and every step below is an exact Bernoulli of a rational:

    - :math:`\eta = 0` (logarithmic law, :math:`\propto q^k / k`,
      :math:`q = 1 - \gamma`): ``1 + G`` with ``G`` geometric of ratio ``q``,
      kept with probability ``1 / (1 + G)``;
    - :math:`\eta = m + f > 0` (``m`` an integer, ``0 <= f < 1``): the
      untruncated negative binomial of shape :math:`\eta` is the sum of ``m``
      geometric counts and one of shape ``f``, whose law
      :math:`\propto q^k \prod_{i \le k} (i - 1 + f) / i` is a geometric
      count ``k`` kept with probability :math:`\prod_{i \le k} (i - 1 + f) / i
      \le 1`; a sum of 0 is rejected (the truncation to ``K >= 1``).

    Parameters
    ----------
    shape : float
        :math:`\eta \ge 0`.
    gamma : float
        :math:`\gamma \in (0, 1)`.

    Returns
    -------
    int
    """
    gamma, shape = Fraction(gamma), Fraction(shape)
    if not (0 < gamma < 1 and shape >= 0):
        raise ValueError("truncated_negative_binomial: needs 0 < gamma < 1 and shape >= 0.")
    q = 1 - gamma
    qn, qd = q.numerator, q.denominator
    if shape == 0:
        while True:
            k = 1 + _geometric_count(qn, qd)
            if secrets.randbelow(k) == 0:
                return k
    whole = math.floor(shape)
    fn, fd = (shape - whole).numerator, (shape - whole).denominator
    while True:
        k = sum(_geometric_count(qn, qd) for _ in range(whole))
        if fn:
            while True:
                extra = _geometric_count(qn, qd)
                # Bernoulli((i - 1 + f) / i) for i = 1..extra, all successes
                if all(secrets.randbelow(i * fd) < (i - 1) * fd + fn
                       for i in range(1, extra + 1)):
                    break
            k += extra
        if k >= 1:
            return k

r"""Exact discrete Laplace and discrete Gaussian samplers (secure mode's noise).

Only the release door (:mod:`skdp.accounting.release`) calls this module.

The samplers are Algorithms 1-3 of Canonne, Kamath and Steinke (2020):
Bernoulli(exp(-gamma)) for a rational gamma by the alternating series,
the discrete Laplace of rational scale ``t / s`` by a geometric number of
Bernoulli(exp(-1)) successes on top of a uniform remainder, and the
discrete Gaussian by rejection from the discrete Laplace. Every step is
integer arithmetic (numpy int64 / uint64; Python integers where a value
would not fit); no floating-point number is computed on the way. The
random bits are the operating system's CSPRNG (:func:`os.urandom`), turned
into uint64 words; a uniform integer below ``m`` takes the low
``bit_length(m - 1)`` bits of a word and is rejected when it is >= m, so
it is exactly uniform.

The samplers are vectorised over coordinates: each loop runs over
rejection rounds on the coordinates still pending, never over coordinates
(every round leaves a constant fraction of them pending, so the number of
rounds grows like the logarithm of the size).

References
----------
C. Canonne, G. Kamath and T. Steinke, "The Discrete Gaussian for
Differential Privacy", NeurIPS 2020 (arXiv:2004.00010), Algorithms 1, 2, 3.
"""

import math
import os
from fractions import Fraction

import numpy as np

__all__ = ["random_words", "uniform_below", "bernoulli_exp", "discrete_laplace",
           "discrete_gaussian"]

# every modulus handed to uniform_below stays below this (room for K * d)
_LIMIT = 1 << 62
# candidate words drawn per pending value and round of uniform_below
_CANDIDATES = 2
# Bernoulli(exp(-1)) trials drawn per pending value and round of a geometric count
_TRIALS = 2


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
        u = random_words(need + need // _CANDIDATES + 16, word) & mask
        u = u[u < m][:need] if (m - 1) != int(mask) else u[:need]
        out[filled:filled + u.size] = u
        filled += u.size
    return out


def _bernoulli_exp_fraction(n, d):
    """Bernoulli(exp(-n_i / d)) for an int64 array ``0 <= n_i <= d`` (CKS20 Alg. 1, gamma <= 1).

    K = 1; while Bernoulli(gamma / K): K += 1; return K odd. Bernoulli(n / (d K))
    is ``uniform_below(d K) < n``.
    """
    n = np.asarray(n, dtype=np.int64).ravel()
    d = int(d)
    result = np.empty(n.size, dtype=bool)
    pending = np.arange(n.size)
    k = 1
    while pending.size:
        if d * k >= _LIMIT:
            raise ValueError("bernoulli_exp: the denominator is too large for the sampler.")
        success = uniform_below(d * k, pending.size) < n[pending]
        result[pending[~success]] = (k % 2 == 1)
        pending = pending[success]
        k += 1
    return result


def _bernoulli_exp_minus_one(size):
    return _bernoulli_exp_fraction(np.ones(size, np.int64), 1)


def _failures_before_success(size):
    """Number of Bernoulli(exp(-1)) successes before the first failure, ``size`` times.

    ``_TRIALS`` trials per pending count and round; a count whose trials all
    succeeded adds them and goes on (i.i.d. trials: the law of the sequential loop).
    """
    v = np.zeros(size, dtype=np.int64)
    live = np.arange(size)
    while live.size:
        trials = _bernoulli_exp_minus_one(live.size * _TRIALS).reshape(live.size, _TRIALS)
        leading = np.where(trials.all(axis=1), _TRIALS, trials.argmin(axis=1))
        v[live] += leading
        live = live[leading == _TRIALS]
    return v


def bernoulli_exp(n, d):
    """Bernoulli(exp(-n_i / d_i)) for integer arrays ``n >= 0``, ``d >= 1`` (CKS20 Alg. 1).

    ``floor(gamma)`` Bernoulli(exp(-1)) trials must all succeed, then one
    Bernoulli(exp(-(gamma - floor(gamma)))).

    Parameters
    ----------
    n, d : array-like of int
        Numerators and denominators (int64, or Python integers of any size
        in an object array: their quotient and remainder are taken exactly).

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
        whole, rest = np.divmod(n, d)
    result = np.ones(whole.size, dtype=bool)
    pending = np.flatnonzero(whole > 0)
    remaining = whole.copy()
    columns = np.arange(_TRIALS)
    while pending.size:
        # up to _TRIALS of each value's remaining Bernoulli(exp(-1)) trials per round
        trials = _bernoulli_exp_minus_one(pending.size * _TRIALS).reshape(-1, _TRIALS)
        used = columns < remaining[pending, None]
        failed = (used & ~trials).any(axis=1)
        result[pending[failed]] = False
        pending = pending[~failed]
        remaining[pending] -= _TRIALS
        pending = pending[remaining[pending] > 0]
    alive = np.flatnonzero(result)
    # one vectorised run per distinct denominator (one in the samplers' use)
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

    def accepted(m):
        u = uniform_below(t, m)
        u = u[_bernoulli_exp_fraction(u, t)]
        x = (u + t * _failures_before_success(u.size)) // s
        negative = (random_words(u.size, np.uint8) & np.uint8(1)).astype(bool)
        keep = ~(negative & (x == 0))  # -0 is rejected: 0 is drawn once, not twice
        return np.where(negative, -x, x)[keep]

    return _fill(shape, accepted, 1.8)


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
    if den >= _LIMIT // 64:
        raise ValueError("discrete_gaussian: sigma2 is too large or its denominator too "
                         "fine for the sampler (keep the acceptance denominator below 2**56).")
    shape = (size,) if np.ndim(size) == 0 else tuple(size)

    def accepted(m):
        y = discrete_laplace(t, m)
        magnitude = np.abs(y)
        if magnitude.max(initial=0) < (1 << 30) // factor and offset < (1 << 30):
            a = factor * magnitude - offset  # a^2 < 2**62
            accept = bernoulli_exp(a * a, den)
        else:  # Python integers for the (rare, or huge-parameter) large values
            a = [factor * int(v) - offset for v in magnitude]
            accept = bernoulli_exp(np.array([x * x for x in a], dtype=object),
                                   np.full(len(a), den, dtype=np.int64))
        return y[accept]

    return _fill(shape, accepted, 1.5)

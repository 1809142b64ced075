"""The exact samplers of secure mode against their exact laws (chi-square).

The samplers draw from the OS CSPRNG, which cannot be seeded: every test
here is a test of a random sample, and a correct sampler fails each of its
about 20 assertions with probability 1e-6 (the p-value threshold below):
about 1 in 50,000 runs of this file fails falsely (at 1e-4, 1 in 500, a CI
run failed on a correct sampler: p = 2.7e-5 for uniform_below at 1000).
A wrong law fails it with certainty at these sample sizes:
``test_chi_square_detects_a_wrong_scale`` shows that a 5 % error in the
variance is caught below the threshold from a fifth of the draws.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from skdp.accounting._exact_noise import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    uniform_below,
)

P_THRESHOLD = 1e-6
N_DRAWS = 1_000_000


def _pmf(log_weight, radius):
    support = np.arange(-radius, radius + 1)
    w = np.exp(log_weight(support) - log_weight(np.zeros(1))[0])
    return support, w / w.sum()


def _chi_square_p(draws, support, pmf):
    """p-value of the chi-square test, tails merged into bins of expected count >= 20."""
    expected = pmf * draws.size
    keep = expected >= 20
    lo, hi = support[keep].min(), support[keep].max()
    inner = (support >= lo) & (support <= hi)
    observed = np.bincount(np.clip(draws, lo - 1, hi + 1) - (lo - 1),
                           minlength=hi - lo + 3).astype(float)
    exp_bins = np.concatenate([[expected[support < lo].sum()], expected[inner],
                               [expected[support > hi].sum()]])
    exp_bins *= draws.size / exp_bins.sum()
    mask = exp_bins > 0
    return stats.chisquare(observed[mask], exp_bins[mask]).pvalue


def _laplace_log_weight(scale):
    return lambda y: -np.abs(y) / scale


def _gaussian_log_weight(sigma2):
    return lambda y: -(y.astype(float) ** 2) / (2 * sigma2)


@pytest.mark.parametrize("t, s", [(3, 1), (7, 2)])
def test_discrete_laplace_matches_its_pmf(t, s):
    draws = discrete_laplace(t, N_DRAWS, s=s)
    assert draws.dtype == np.int64
    support, pmf = _pmf(_laplace_log_weight(t / s), 40 * t)
    assert _chi_square_p(draws, support, pmf) > P_THRESHOLD


@pytest.mark.parametrize("sigma2", [9, Fraction(7, 3), 2500])
def test_discrete_gaussian_matches_its_pmf(sigma2):
    draws = discrete_gaussian(sigma2, N_DRAWS)
    assert draws.dtype == np.int64
    radius = int(12 * math.sqrt(float(sigma2))) + 5
    support, pmf = _pmf(_gaussian_log_weight(float(sigma2)), radius)
    assert _chi_square_p(draws, support, pmf) > P_THRESHOLD


def test_chi_square_detects_a_wrong_scale():
    # the test has power: the law of sigma^2 = 9 is rejected as sigma^2 = 9.45
    # (a 5 % error) from a fifth of the draws
    draws = discrete_gaussian(9, N_DRAWS // 5)
    support, pmf = _pmf(_gaussian_log_weight(9.45), 60)
    assert _chi_square_p(draws, support, pmf) < P_THRESHOLD


def test_uniform_below_is_uniform_for_every_word_size():
    for bound in (3, 255, 256, 1000, 70_000, 2**33 + 1):
        draws = uniform_below(bound, N_DRAWS)
        assert draws.min() >= 0 and draws.max() < bound
        k = min(bound, 10)
        counts = np.bincount(draws * k // bound, minlength=k)
        # the bins hold floor/ceil(bound / k) values each
        sizes = np.bincount(np.arange(bound, dtype=np.int64) * k // bound, minlength=k) \
            if bound < 10**6 else np.full(k, bound / k)
        assert stats.chisquare(counts, sizes / sizes.sum() * draws.size).pvalue > P_THRESHOLD


def test_bernoulli_exp_frequencies():
    # gamma = 0.3, 1, 2.5 and a huge gamma (Python-integer path)
    n = np.repeat(np.array([3, 1, 5]), 200_000)
    d = np.repeat(np.array([10, 1, 2]), 200_000)
    hits = bernoulli_exp(n, d).reshape(3, -1).sum(axis=1)
    for count, gamma in zip(hits, (0.3, 1.0, 2.5)):
        assert stats.binomtest(int(count), 200_000, math.exp(-gamma)).pvalue > P_THRESHOLD
    huge = np.array([10**30] * 5, dtype=object)
    assert not bernoulli_exp(huge, np.full(5, 3)).any()


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="integer >= 1"):
        discrete_laplace(0, 3)
    with pytest.raises(ValueError, match="integer >= 1"):
        discrete_laplace(1.5, 3)
    with pytest.raises(ValueError, match="sigma2 must be > 0"):
        discrete_gaussian(0, 3)
    with pytest.raises(ValueError, match="the bound"):
        uniform_below(0, 3)


def _normal_bin_masses(edges, sigma):
    # a discrete Gaussian of large sigma: the mass of the integers in [a, b)
    # is the normal mass of [a - 1/2, b - 1/2) up to O(exp(-2 pi^2 sigma^2))
    return np.diff(stats.norm.cdf((edges - 0.5) / sigma))


@pytest.mark.parametrize("sigma", [2**22 + 12345, 1000])
def test_discrete_gaussian_at_the_doors_scale(sigma):
    # the door's noise scales in grid units are up to 2**24: the lazy
    # comparisons and the integer-part table are exercised at that size
    draws = discrete_gaussian(sigma * sigma, N_DRAWS)
    edges = np.concatenate([[-10**12], np.round(np.linspace(-5, 5, 101) * sigma), [10**12]])
    observed = np.histogram(draws, bins=edges)[0]
    expected = _normal_bin_masses(edges, sigma)
    expected *= draws.size / expected.sum()
    keep = expected >= 20
    observed = np.concatenate([observed[keep], [observed[~keep].sum()]])
    expected = np.concatenate([expected[keep], [expected[~keep].sum()]])
    assert stats.chisquare(observed, expected).pvalue > P_THRESHOLD


def test_discrete_laplace_at_the_doors_scale():
    t = 2**22 + 12345
    draws = discrete_laplace(t, N_DRAWS)
    edges = np.concatenate([[-10**12], np.round(np.linspace(-8, 8, 161) * t), [10**12]])
    observed = np.histogram(draws, bins=edges)[0]
    # P[|Y| >= k] of the discrete Laplace of scale t, q = exp(-1/t): bins [a, b)
    q = math.exp(-1 / t)

    def below(k):  # P[Y < k] for integer k
        k = np.asarray(k, dtype=float)
        neg = np.exp(np.minimum(k - 1, 0) / t) / (1 + q)  # P[Y <= k - 1] for k <= 0
        pos = 1 - np.exp(-np.maximum(k, 0) / t) / (1 + q)  # for k >= 1
        return np.where(k <= 0, neg, pos)

    expected = np.diff(below(edges))
    expected *= draws.size / expected.sum()
    assert stats.chisquare(observed, expected).pvalue > P_THRESHOLD


def test_lazy_bernoulli_of_a_ratio():
    from skdp.accounting._exact_noise import _bernoulli_ratio
    # every success of 1/512 and 1/65793 (base-256 digits 0, 128 and 0, 0, 255...)
    # comes after a tie on the first byte(s); an exact 0 and 1, a denominator
    # near the limit, per-value denominators
    cases = [(1, 512), (1, 65793), (0, 7), (7, 7), (2**54 // 3, 2**54 + 1), (85, 256)]
    for n, m in cases:
        hits = _bernoulli_ratio(np.full(2_000_000, n, dtype=np.int64), m).sum()
        p = n / m
        if p in (0.0, 1.0):
            assert hits == 2_000_000 * p
        else:
            assert stats.binomtest(int(hits), 2_000_000, p).pvalue > P_THRESHOLD
    n = np.repeat(np.array([1, 5, 2], dtype=np.int64), 200_000)
    m = np.repeat(np.array([512, 9, 3], dtype=np.int64), 200_000)
    hits = _bernoulli_ratio(n, m).reshape(3, -1).sum(axis=1)
    for count, p in zip(hits, (1 / 512, 5 / 9, 2 / 3)):
        assert stats.binomtest(int(count), 200_000, p).pvalue > P_THRESHOLD


def test_exp_table_is_exact():
    from skdp.accounting._exact_noise import _exp_floor
    # floor(exp(-w) 2^bits) against an independent Fraction bracket of exp(-w)
    for w, bits in [(1, 64), (7, 128), (64, 200)]:
        terms = [Fraction((-w) ** k, math.factorial(k)) for k in range(4 * w + 80)]
        value = sum(terms)  # alternating tail far below 2**-bits
        assert _exp_floor(w, bits) == math.floor(value * 2**bits)


def test_bernoulli_exp_beyond_the_table():
    # gamma = 64.5 and 65: exp(-gamma) ~ 1e-28, never a success in 10^5 draws;
    # gamma = 0 always succeeds
    n = np.array([129] * 50_000 + [65] * 50_000 + [0] * 1000)
    d = np.array([2] * 50_000 + [1] * 50_000 + [5] * 1000)
    hits = bernoulli_exp(n, d)
    assert not hits[:100_000].any() and hits[100_000:].all()


def test_geometric_count_by_inversion():
    from skdp.accounting._exact_noise import (
        _failures_after_first_byte,
        _failures_before_success,
    )
    # P[V = v] = exp(-v) (1 - exp(-1)): the count of Bernoulli(exp(-1)) successes
    draws = _failures_before_success(N_DRAWS)
    support = np.arange(0, 40)
    pmf = np.exp(-support) * (1 - math.exp(-1))
    assert _chi_square_p(draws, support, pmf) > P_THRESHOLD
    # the path of a first byte 0 (U < 1/256, every threshold from exp(-6) on
    # tied): V >= 5 and P[V >= v | U < 1/256] = 256 exp(-v) for v >= 6
    slow = np.array([_failures_after_first_byte(0) for _ in range(20_000)])
    assert slow.min() >= 5
    support = np.arange(5, 40)
    tail = np.minimum(256 * np.exp(-support.astype(float)), 1.0)
    pmf = tail - np.append(tail[1:], 0.0)
    assert _chi_square_p(slow, support, pmf / pmf.sum()) > P_THRESHOLD


@pytest.mark.parametrize("shape, gamma", [(0.0, 0.2), (1.0, 0.3), (0.5, 0.25), (2.5, 0.4)])
def test_truncated_negative_binomial_matches_its_pmf(shape, gamma):
    # the secret number of runs of a private search in secure mode:
    # P[K = k] ~ (1 - gamma)^k C(k + shape - 1, k) for k >= 1 (logarithmic for shape 0)
    from skdp.accounting._exact_noise import truncated_negative_binomial
    draws = np.array([truncated_negative_binomial(shape, gamma) for _ in range(10_000)])
    assert draws.min() >= 1
    k = np.arange(1, 200)
    if shape == 0:
        log_w = k * math.log1p(-gamma) - np.log(k)
    else:
        log_w = (k * math.log1p(-gamma) + np.array([math.lgamma(j + shape) for j in k])
                 - np.array([math.lgamma(j + 1) for j in k]))
    pmf = np.exp(log_w - log_w.max())
    assert _chi_square_p(draws, k, pmf / pmf.sum()) > P_THRESHOLD

"""composition='gaussian' maps pure-DP (Laplace) parts to Gaussian DP tightly and validly."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from skdp.accounting import BudgetAccountant, Laplace, PureDP, Repeated
from skdp.accounting._composition import mu_of_pure as _mu_of_pure


def _mu_pure_reference(eps):
    # Dong, Roth & Su 2022: eps-DP implies mu-GDP with G_mu(alpha*) = alpha*,
    # alpha* = 1 / (1 + e^eps) the kink of f_{eps,0}.
    return -2.0 * stats.norm.ppf(1.0 / (1.0 + math.exp(eps)))


def _gdp_epsilon_reference(mu, delta):
    # delta(eps) of mu-GDP (Dong, Roth & Su 2022, Corollary 2.13), solved for eps.
    def excess(eps):
        return (stats.norm.cdf(-eps / mu + mu / 2)
                - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta)
    return optimize.brentq(excess, 0.0, 100.0, xtol=1e-14, rtol=1e-13)


def _tradeoff_pure(eps, alpha):
    return np.maximum.reduce([np.zeros_like(alpha), 1 - math.exp(eps) * alpha,
                              math.exp(-eps) * (1 - alpha)])


def _tradeoff_gdp(mu, alpha):
    return stats.norm.cdf(stats.norm.isf(alpha) - mu)


@pytest.mark.parametrize("eps", [1e-4, 0.01, 0.3, 1.0, 3.0, 10.0])
def test_pure_dp_to_gdp_is_valid_everywhere_and_tight_at_the_kink(eps):
    mu = _mu_of_pure(eps)
    assert mu == pytest.approx(_mu_pure_reference(eps), rel=1e-9)
    alpha = np.concatenate([np.logspace(-12, -1, 2000), np.linspace(0.1, 1, 2000)])
    # Valid: the GDP trade-off curve lies below the eps-DP one everywhere.
    assert np.all(_tradeoff_gdp(mu, alpha) <= _tradeoff_pure(eps, alpha) + 1e-12)
    # Tight: a slightly smaller mu rises above it at the kink.
    kink = np.array([1.0 / (1.0 + math.exp(eps))])
    assert _tradeoff_gdp(mu * (1 - 1e-4), kink)[0] > _tradeoff_pure(eps, kink)[0]


def _exact_delta_of_pure_composition(eps_part, count, eps):
    # Worst case of count eps_part-DP mechanisms: randomized response composed
    # (Kairouz, Oh & Viswanath 2015); its privacy loss is (2k - count) eps_part
    # with k ~ Binomial(count, e^eps_part / (1 + e^eps_part)).
    k = np.arange(count + 1)
    p = math.exp(eps_part) / (1 + math.exp(eps_part))
    loss = (2 * k - count) * eps_part
    return float(np.sum(stats.binom.pmf(k, count, p) * np.maximum(0.0, -np.expm1(eps - loss))))


def test_laplace_fit_is_charged_part_by_part():
    # One fit at (1, 0): 100 Laplace steps of epsilon 0.01, as DPLogisticRegression
    # runs with delta=0; it used to be charged as one 1-DP release (5.58 at 1e-5).
    mechanism = Repeated(Laplace(100.0), 100)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-5, composition="gaussian")
    acc.spend(1.0, 0.0, mechanism)
    eps, delta = acc.spent()
    mu = math.sqrt(100) * _mu_pure_reference(0.01)
    assert eps == pytest.approx(_gdp_epsilon_reference(mu, 1e-5), rel=1e-6)
    assert eps == pytest.approx(0.4357, abs=1e-3)
    assert delta == 1e-5
    # Valid: the exact worst case of 100 0.01-DP releases is within (eps, 1e-5).
    assert _exact_delta_of_pure_composition(0.01, 100, eps) <= 1e-5
    # PureDP parts are mapped the same way, and the part-free spend as one release.
    same = BudgetAccountant(epsilon=10.0, delta=1e-5, composition="gaussian")
    same.spend(1.0, 0.0, Repeated(PureDP(0.01), 100))
    assert same.spent() == (eps, delta)
    whole = BudgetAccountant(epsilon=10.0, delta=1e-5, composition="gaussian")
    whole.spend(1.0, 0.0)
    assert whole.spent()[0] == pytest.approx(
        _gdp_epsilon_reference(_mu_pure_reference(1.0), 1e-5), rel=1e-6)
    assert _exact_delta_of_pure_composition(1.0, 1, whole.spent()[0]) <= 1e-5

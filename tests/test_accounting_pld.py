"""Accounting by privacy loss distributions (skdp.accounting.pld)."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from skdp.accounting import (
    ZCDP,
    BudgetAccountant,
    Composed,
    Gaussian,
    GaussianSparseVector,
    Laplace,
    PoissonSampled,
    PureDP,
    Repeated,
    SparseVector,
    calibrate,
    get_delta,
    get_epsilon,
)
from skdp.accounting.pld import PrivacyLossDistribution, split_for_pld
from skdp.testing.audit import audit_scores

# The issue's table: Google dp-accounting's PLD accountant, same mechanism and delta.
ISSUE_ROWS = [
    # q, noise multiplier, steps, delta, PLD epsilon
    (0.00427, 1.1, 14062, 1e-5, 2.382),
    (0.0147, 1.331, 2290, 1e-5, 2.597),
    (0.00174, 1.428, 1370, 1e-8, 0.262),
    (0.000871, 1.21, 218, 1e-8, 0.081),
    (0.000375, 2.149, 275, 1e-8, 0.014),
]


def _sampled(q, z, steps):
    return Repeated(PoissonSampled(q, Gaussian(z)), steps)


@pytest.mark.parametrize("q, z, steps, delta, reference", ISSUE_ROWS)
def test_issue_table_reproduced(q, z, steps, delta, reference):
    eps = get_epsilon(_sampled(q, z, steps), delta)
    assert reference * 0.99 <= eps <= reference * 1.01
    assert eps < get_epsilon(_sampled(q, z, steps), delta, method="rdp")


# The PLD column of ../shared/reference_accounting.md (dp-accounting 0.6.0).
REFERENCE = [
    (Gaussian(1.0), 1e-5, 4.3772),
    (Repeated(Gaussian(5.0), 100), 1e-5, 9.9973),
    (Repeated(Gaussian(20.0), 200), 1e-5, 2.9432),
    (Repeated(Gaussian(20.0), 200), 1e-8, 3.9425),
    (_sampled(0.01, 1.0, 1000), 1e-5, 1.8282),
    (_sampled(256 / 60000, 1.1, 14062), 1e-5, 2.3817),
    (_sampled(0.1, 0.8, 100), 1e-6, 12.5253),
    (Repeated(Laplace(10.0), 100), 1e-6, 4.6927),
    (Composed([Repeated(Gaussian(10.0), 50), Repeated(Laplace(20.0), 10)]), 1e-5, 3.0235),
]


@pytest.mark.parametrize("mechanism, delta, reference", REFERENCE,
                         ids=[f"ref{i}" for i in range(len(REFERENCE))])
@pytest.mark.parametrize("method", ["auto", "pld"])
def test_reference_accounting_pld_column(mechanism, delta, reference, method):
    eps = get_epsilon(mechanism, delta, method=method)
    assert reference * 0.99 <= eps <= reference * 1.01


# -- soundness against exact values ------------------------------------------------
def _gaussian_delta(eps, mu):
    return stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)


def _sampled_gaussian_exact_delta(eps, q, z):
    """One sampled Gaussian step, both directions (Zhu, Dong and Wang 2022), by quadrature."""
    mu = 1.0 / z
    remove = q * _gaussian_delta(math.log1p(math.expm1(eps) / q), mu) if math.expm1(eps) > -q \
        else -math.expm1(eps)
    f = 1 - math.exp(eps) * (1 - q)
    add = f * _gaussian_delta(eps + math.log(q) - math.log(f), mu) if f > 0 else 0.0
    return max(remove, add)


@pytest.mark.parametrize("q, z", [(0.01, 1.0), (0.2, 0.7), (0.5, 2.0), (0.001, 0.5)])
@pytest.mark.parametrize("eps", [0.0, 0.05, 0.5, 2.0])
def test_single_sampled_gaussian_never_below_exact(q, z, eps):
    pld = PrivacyLossDistribution(PoissonSampled(q, Gaussian(z)))
    exact = _sampled_gaussian_exact_delta(eps, q, z)
    assert pld.delta(eps) >= exact * (1 - 1e-9) - 1e-15
    assert pld.delta(eps) <= exact * 1.01 + 1e-12


@pytest.mark.parametrize("z, steps, delta", [(20.0, 200, 1e-5), (1.0, 1, 1e-5), (0.5, 3, 1e-8),
                                             (3.0, 1000, 1e-10), (2.0, 7, 1e-3)])
def test_full_batch_gaussian_unchanged_and_pld_above_it(z, steps, delta):
    mechanism = Repeated(Gaussian(z), steps)
    exact = get_epsilon(mechanism, delta, method="analytic")
    assert get_epsilon(mechanism, delta) == exact  # auto stays exact
    pld = get_epsilon(mechanism, delta, method="pld")
    assert exact <= pld <= exact * 1.002 + 1e-6


def test_laplace_never_below_exact():
    # one Laplace step, scale 1/lam: delta(eps) = 1 - e^{(eps - lam)/2} on [0, lam]
    for lam in (0.1, 1.0, 3.0):
        for delta in (1e-6, 1e-3, 0.1):
            exact = max(0.0, lam + 2 * math.log1p(-delta))
            pld = get_epsilon(Laplace(1 / lam), delta, method="pld")
            assert exact - 1e-12 <= pld <= exact + 2e-4


# -- properties ---------------------------------------------------------------
@pytest.mark.parametrize("mechanism", [
    PoissonSampled(0.05, Gaussian(1.3)),
    Laplace(3.0),
    PoissonSampled(0.1, Composed([Gaussian(2.0), SparseVector(0.1, 0.2)])),
], ids=["sampled-gaussian", "laplace", "sampled-heterogeneous"])
def test_k_compositions_equal_the_k_fold(mechanism):
    k = 13
    one = PrivacyLossDistribution(mechanism)
    chained = one
    for _ in range(k - 1):
        chained = chained.compose(one)
    folded = one.self_compose(k)
    tree = PrivacyLossDistribution(Repeated(mechanism, k))
    for delta in (1e-3, 1e-6):
        eps = folded.epsilon(delta)
        assert chained.epsilon(delta) == pytest.approx(eps, rel=1e-6, abs=1e-9)
        assert tree.epsilon(delta) == pytest.approx(eps, rel=1e-6, abs=1e-9)
    for eps in (0.0, 0.3, 1.0):
        assert chained.delta(eps) == pytest.approx(folded.delta(eps), rel=1e-6, abs=1e-13)


GRID = [
    _sampled(0.01, 1.0, 100),
    _sampled(0.001, 0.8, 3000),
    _sampled(0.3, 2.0, 50),
    _sampled(0.05, 5.0, 10),
    Repeated(Laplace(5.0), 20),
    Repeated(PoissonSampled(0.05, Laplace(1.0)), 200),
    Repeated(PureDP(0.3), 10),
    Repeated(PoissonSampled(0.02, PureDP(1.0)), 500),
    Repeated(SparseVector(0.05, 0.05), 30),
    Composed([Repeated(Gaussian(10.0), 50), Repeated(Laplace(20.0), 10)]),
    Repeated(PoissonSampled(0.01, Composed([Gaussian(1.5), Gaussian(3.0)])), 400),
    Repeated(PoissonSampled(0.02, Composed([Gaussian(1.5), SparseVector(0.2, 0.2)])), 100),
]


@pytest.mark.parametrize("mechanism", GRID, ids=[f"m{i}" for i in range(len(GRID))])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_pld_never_above_rdp(mechanism, delta):
    pld = get_epsilon(mechanism, delta, method="pld")
    rdp = get_epsilon(mechanism, delta, method="rdp")
    assert pld <= rdp
    assert get_epsilon(mechanism, delta) <= pld + 1e-12  # auto keeps the best


def test_heterogeneous_batch_is_composed_tightly():
    # a sampled Gaussian gradient plus an AboveThreshold search on the same batch
    gradient = Gaussian(1.2)
    search = SparseVector(0.05, 0.05)
    both = Repeated(PoissonSampled(0.01, Composed([gradient, search])), 500)
    alone = Repeated(PoissonSampled(0.01, gradient), 500)
    eps = get_epsilon(both, 1e-5, method="pld")
    assert get_epsilon(alone, 1e-5, method="pld") < eps < get_epsilon(both, 1e-5, method="rdp")
    assert get_epsilon(both, 1e-5) == eps


def test_parts_without_pld_form_go_to_rdp():
    sampled = _sampled(0.01, 1.0, 1000)
    tree = Composed([sampled, ZCDP(1e-4), GaussianSparseVector(30.0, 30.0, 2)])
    pld_part, rdp_part = split_for_pld(tree)
    assert pld_part == sampled
    assert set(rdp_part.mechanisms) == {ZCDP(1e-4), GaussianSparseVector(30.0, 30.0, 2)}
    eps = get_epsilon(tree, 1e-5)
    assert get_epsilon(sampled, 1e-5) < eps < get_epsilon(tree, 1e-5, method="rdp")
    # a sampled mechanism with a part lacking a PLD form goes to RDP whole
    mixed = PoissonSampled(0.1, Composed([Gaussian(1.0), ZCDP(0.01)]))
    assert split_for_pld(mixed) == (None, mixed)
    assert get_epsilon(mixed, 1e-5) == get_epsilon(mixed, 1e-5, method="rdp")
    with pytest.raises(ValueError, match="no PLD form"):
        PrivacyLossDistribution(mixed)


def test_get_delta_uses_pld():
    mechanism = _sampled(256 / 60000, 1.1, 14062)
    delta = get_delta(mechanism, 2.3817 * 1.01)
    assert delta <= 1e-5
    # RDP gives epsilon 2.597 at delta 1e-5, so its delta at 2.5 is above 1e-5
    assert get_delta(mechanism, 2.5) < 1e-5


# -- calibration ----------------------------------------------------------------
def test_calibration_is_conservative_and_needs_less_noise():
    def make(z):
        return _sampled(256 / 32561, z, 1272)

    z_pld = calibrate(make, 1.0, 1e-5)
    z_rdp = calibrate(make, 1.0, 1e-5, method="rdp")
    assert get_epsilon(make(z_pld), 1e-5) <= 1.0
    assert get_epsilon(make(z_pld), 1e-5, method="pld") <= 1.0
    assert get_epsilon(make(z_pld * 0.999), 1e-5, method="pld") > 1.0 * 0.999
    assert z_pld < 0.96 * z_rdp


def test_accountant_charges_a_pld_calibrated_run():
    mechanism = _sampled(0.01, calibrate(lambda z: _sampled(0.01, z, 500), 0.8, 1e-6), 500)
    accountant = BudgetAccountant(1.0, 1e-5)
    accountant.spend(0.8, 1e-6, mechanism=mechanism)
    with pytest.raises(ValueError, match="only"):
        BudgetAccountant(1.0, 1e-5).spend(0.7, 1e-6, mechanism=mechanism)


# -- audit ----------------------------------------------------------------------
def _audit_sampled_gaussian(z, q, steps, delta, claim, seed):
    rng = np.random.default_rng(seed)
    n = 100_000
    out = rng.normal(0.0, z, (n, steps)).max(axis=1)
    inside = (rng.binomial(1, q, (n, steps)) + rng.normal(0.0, z, (n, steps))).max(axis=1)
    return audit_scores(out, inside, delta, claimed_epsilon=claim)


def test_audit_of_pld_calibrated_sampled_gaussian():
    q, steps, eps, delta = 0.5, 4, 1.0, 1e-5
    z = calibrate(lambda z: _sampled(q, z, steps), eps, delta)
    assert z < calibrate(lambda z: _sampled(q, z, steps), eps, delta, method="rdp")
    assert _audit_sampled_gaussian(z, q, steps, delta, eps, seed=0).epsilon_lower_bound < eps
    # a deliberately under-noised variant (a third of the noise) is caught
    caught = _audit_sampled_gaussian(z / 3, q, steps, delta, eps, seed=1)
    assert caught.epsilon_lower_bound > eps


def test_exact_single_step_matches_quadrature():
    # independent computation of the sampled Gaussian's delta by numerical integration
    q, z, eps = 0.2, 0.9, 0.4
    a, b = stats.norm(1.0, z), stats.norm(0.0, z)

    def hockey(p, r):
        return integrate.quad(lambda o: max(p(o) - math.exp(eps) * r(o), 0.0), -12, 13,
                             points=[0.5], limit=200)[0]

    mix = lambda o: q * a.pdf(o) + (1 - q) * b.pdf(o)  # noqa: E731
    exact = max(hockey(mix, b.pdf), hockey(b.pdf, mix))
    pld = PrivacyLossDistribution(PoissonSampled(q, Gaussian(z))).delta(eps)
    # the quadrature itself is accurate to about 1e-8 (relative)
    assert exact * (1 - 1e-7) <= pld <= exact * 1.001
    assert pld == pytest.approx(_sampled_gaussian_exact_delta(eps, q, z), rel=1e-9)


# -- edge cases found by review ------------------------------------------------------
def test_rate_one_is_no_sampling():
    inner = Composed([Gaussian(1.0), Laplace(1.0)])
    for method in ("auto", "pld"):
        for tree, same in ((PoissonSampled(1.0, inner), inner),
                           (Repeated(PoissonSampled(1.0, inner), 3), Repeated(inner, 3)),
                           (PoissonSampled(0.5, Composed([PoissonSampled(1.0, inner)])),
                            PoissonSampled(0.5, inner))):
            assert get_epsilon(tree, 1e-5, method=method) == pytest.approx(
                get_epsilon(same, 1e-5, method=method))
    assert get_epsilon(PoissonSampled(1.0, inner), 1e-5) > get_epsilon(Gaussian(1.0), 1e-5)
    assert get_delta(PoissonSampled(1.0, inner), 0.1) > 0.3


@pytest.mark.parametrize("mechanism, at_least", [
    (PureDP(709.8), 709.8 * 0.999),
    (Laplace(1 / 709.8), 709.8 * 0.999),
    (Repeated(PureDP(10.0), 100), 999.0),
    (Composed([Gaussian(0.0325), SparseVector(0.01, 0.01)]), 500.0),
    (Composed([Repeated(Gaussian(1.0), 1000), Laplace(100.0)]), 500.0),
    (Composed([Gaussian(1e-7), Laplace(1.0)]), 1e6),
], ids=["pure-709", "laplace-709", "pure-x100", "gaussian-0.03+svt", "gaussian-x1000+laplace",
        "tiny-z"])
def test_extreme_parameters_never_give_a_small_epsilon(mechanism, at_least):
    assert get_epsilon(mechanism, 1e-5) >= at_least
    pld = get_epsilon(mechanism, 1e-5, method="pld")
    assert pld >= at_least and not math.isnan(pld)


def test_get_delta_agrees_with_get_epsilon():
    mechanism = _sampled(1e-4, 0.6, 10000)
    eps = get_epsilon(mechanism, 1e-8)
    assert eps < get_epsilon(mechanism, 1e-8, method="rdp")
    assert get_delta(mechanism, eps) <= 1e-8 * (1 + 1e-6)

"""Mechanisms, RDP curves, conversions and calibration (skdp.accounting).

Reference figures come from ``shared/reference_accounting.md`` (Google
dp-accounting 0.6.0, add/remove neighbours).
"""

import dataclasses
import json
import math
import pickle
import time

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import integrate, stats

from skdp.accounting import (
    DEFAULT_ORDERS,
    Composed,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonSampled,
    PureDP,
    Repeated,
    SparseVector,
    ZCDP,
    calibrate,
    get_delta,
    get_epsilon,
    get_rdp,
    mechanism_from_dict,
    noise_mechanism,
    rdp_to_epsilon,
)

# ---------------------------------------------------------------------------
# Reference table: (mechanism, delta, dp-accounting RDP eps, PLD eps).
# ---------------------------------------------------------------------------
REFERENCE = {
    "gaussian z=1 x1": (Gaussian(1.0), 1e-5, 4.7285, 4.3772),
    "gaussian z=5 x100": (Repeated(Gaussian(5.0), 100), 1e-5, 10.7255, 9.9973),
    "gaussian z=20 x200": (Repeated(Gaussian(20.0), 200), 1e-5, 3.1890, 2.9432),
    "gaussian z=20 x200 delta=1e-8": (Repeated(Gaussian(20.0), 200), 1e-8, 4.1601, 3.9425),
    "poisson q=0.01 z=1 x1000": (
        Repeated(PoissonSampled(0.01, Gaussian(1.0)), 1000), 1e-5, 2.1014, 1.8282),
    "poisson q=256/60000 z=1.1 x14062": (
        Repeated(PoissonSampled(256 / 60000, Gaussian(1.1)), 14062), 1e-5, 2.5966, 2.3817),
    "poisson q=0.1 z=0.8 x100": (
        Repeated(PoissonSampled(0.1, Gaussian(0.8)), 100), 1e-6, 13.9504, 12.5253),
    "laplace b=10 x100": (Repeated(Laplace(10.0), 100), 1e-6, 4.9842, 4.6927),
    "gaussian z=10 x50 + laplace b=20 x10": (
        Composed([Repeated(Gaussian(10.0), 50), Repeated(Laplace(20.0), 10)]),
        1e-5, 3.2750, 3.0235),
}

ALL_MECHANISMS = [
    Gaussian(1.5),
    Laplace(2.0),
    PureDP(0.3),
    ZCDP(0.05),
    SparseVector(0.2, 0.3),
    SparseVector(0.2, 0.3, count=3),
    SparseVector(0.1, 0.1, rdp_bound="paper002"),
    PoissonSampled(0.01, Gaussian(1.1)),
    PoissonSampled(0.5, Laplace(3.0)),
    Composed([Gaussian(2.0), Laplace(5.0)]),
    Composed([]),
    Repeated(Gaussian(4.0), 10),
    Repeated(Laplace(4.0), 0),
    Composed([Repeated(PoissonSampled(0.1, Composed([Gaussian(3.0), SparseVector(0.1, 0.1)])), 5),
              ZCDP(0.01)]),
]


def _rr_rdp(eps, a):
    """Rényi divergence of randomized response, computed directly."""
    p = math.exp(eps) / (1 + math.exp(eps))
    return math.log(p ** a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


def _quad_sampled_gaussian_rdp(q, sigma, a):
    """RDP of the sampled Gaussian by numerical integration of A - 1.

    A - 1 = E_{z ~ N(0, sigma^2)}[(1 - q + q exp((2z - 1) / (2 sigma^2)))^a - 1]; the
    trapezoid rule on a fine grid is spectrally accurate for this smooth,
    rapidly decaying integrand.
    """
    z = np.linspace(-40 * sigma - 5, a + 40 * sigma + 5, 400_001)
    r = np.log1p(q * np.expm1((2 * z - 1) / (2 * sigma ** 2)))
    f = stats.norm.pdf(z, 0, sigma) * np.expm1(a * r)
    return math.log1p(np.trapezoid(f, z)) / (a - 1)


# ---------------------------------------------------------------------------
# Mechanism objects.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("mech", ALL_MECHANISMS, ids=repr)
def test_mechanism_json_round_trip(mech):
    text = json.dumps(mech.to_dict())
    back = mechanism_from_dict(json.loads(text))
    assert back == mech
    assert hash(back) == hash(mech)
    assert type(back) is type(mech)


@pytest.mark.parametrize("mech", ALL_MECHANISMS, ids=repr)
def test_mechanism_immutable_hashable_picklable(mech):
    assert isinstance(mech, Mechanism)
    assert not hasattr(mech, "__dict__")  # slotted
    field = dataclasses.fields(mech)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(mech, field, 1.0)
    assert pickle.loads(pickle.dumps(mech)) == mech
    assert {mech: 1}[mech] == 1


def test_composed_accepts_any_iterable_and_stores_tuple():
    gen = (Gaussian(z) for z in (1.0, 2.0))
    c = Composed(gen)
    assert isinstance(c.mechanisms, tuple)
    assert c == Composed([Gaussian(1.0), Gaussian(2.0)]) == Composed((Gaussian(1.0), Gaussian(2.0)))
    assert hash(c) == hash(Composed([Gaussian(1.0), Gaussian(2.0)]))


def test_numbers_are_normalised():
    assert Gaussian(np.float32(2.0)) == Gaussian(2)
    assert isinstance(Gaussian(2).noise_multiplier, float)
    assert Repeated(Gaussian(1.0), np.int64(3)).count == 3
    assert Gaussian(2.0) != Laplace(2.0)


@pytest.mark.parametrize("delta, rate", [(1e-5, 1.0), (0.0, 1.0), (1e-5, 0.25), (0.0, 0.25)])
def test_noise_mechanism_gives_equal_mechanisms_for_every_number_type_and_refuses_bad_ones(
        delta, rate):
    # the mechanisms of a fit's steps are built once per value and shared
    make = noise_mechanism(delta, rate)
    base = Laplace if delta == 0 else Gaussian
    want = base(2.0) if rate >= 1 else PoissonSampled(rate, base(2.0))
    for z in (2.0, np.float64(2.0), np.float32(2.0), 2, np.int64(2)):
        assert make(z) == want and make(z) == make(2.0)
        assert isinstance((make(z).mechanism if rate < 1 else make(z)).noise_multiplier, float)
    for bad in (0.0, -1.0, float("nan"), float("inf"), np.float64("nan"), "2", True,
                np.array([2.0])):
        with pytest.raises(ValueError, match="noise_multiplier"):
            make(bad)


@pytest.mark.parametrize("build, match", [
    (lambda: Gaussian(0.0), "noise_multiplier must be > 0"),
    (lambda: Gaussian(-1.0), "noise_multiplier must be > 0"),
    (lambda: Gaussian(float("nan")), "finite"),
    (lambda: Gaussian(float("inf")), "finite"),
    (lambda: Gaussian("1"), "real number"),
    (lambda: Gaussian(True), "real number"),
    (lambda: Laplace(0.0), "Laplace: noise_multiplier must be > 0"),
    (lambda: PureDP(-0.1), "PureDP: epsilon must be >= 0"),
    (lambda: ZCDP(-1e-3), "ZCDP: rho must be >= 0"),
    (lambda: SparseVector(0.0, 1.0), "epsilon_1 must be > 0"),
    (lambda: SparseVector(1.0, -1.0), "epsilon_2 must be > 0"),
    (lambda: SparseVector(1.0, 1.0, count=0), "count must be >= 1"),
    (lambda: SparseVector(1.0, 1.0, rdp_bound="exact"), "rdp_bound must be one of"),
    (lambda: SparseVector(1.0, 1.0, count=2, rdp_bound="paper002"), "count=1"),
    (lambda: PoissonSampled(0.0, Gaussian(1.0)), "rate must be > 0"),
    (lambda: PoissonSampled(1.5, Gaussian(1.0)), r"rate must be in \(0, 1\]"),
    (lambda: PoissonSampled(0.5, 1.0), "expected a Mechanism"),
    (lambda: Composed(Gaussian(1.0)), "iterable of Mechanism"),
    (lambda: Composed([Gaussian(1.0), "x"]), "expected a Mechanism"),
    (lambda: Repeated(Gaussian(1.0), -1), "count must be >= 0"),
    (lambda: Repeated(Gaussian(1.0), 2.5), "count must be an integer"),
    (lambda: Repeated("x", 2), "expected a Mechanism"),
])
def test_bad_mechanism_arguments(build, match):
    with pytest.raises(ValueError, match=match):
        build()


@pytest.mark.parametrize("d, match", [
    ({"type": "Nope"}, "unknown mechanism type 'Nope'"),
    ({"noise_multiplier": 1.0}, "'type' key"),
    ({"type": "Gaussian", "noise_multiplier": 1.0, "extra": 1}, "unknown fields"),
    ({"type": "Gaussian"}, "cannot build Gaussian"),
    ({"type": "Composed", "mechanisms": 3}, "must be a list"),
])
def test_mechanism_from_dict_errors(d, match):
    with pytest.raises(ValueError, match=match):
        mechanism_from_dict(d)


def test_sparse_vector_conventions():
    # Paper 004: threshold Lap(2 lambda Delta), queries Lap(4 lambda Delta), 1/lambda-DP.
    lam = 5.0
    svt = SparseVector.from_noise_scales(2 * lam, 4 * lam)
    assert svt == SparseVector(1 / (2 * lam), 1 / (2 * lam))
    assert svt.epsilon == pytest.approx(1 / lam)
    assert svt.threshold_scale == pytest.approx(2 * lam)
    assert svt.query_scale == pytest.approx(4 * lam)
    # Paper 002, Algorithm 1: eps1 = eps/2 (threshold Lap(1/eps1)), eps2 = eps/4
    # (queries Lap(1/eps2)); Theorem 1 says eps-DP.
    eps_bt = 0.4
    svt = SparseVector.from_noise_scales(1 / (eps_bt / 2), 1 / (eps_bt / 4))
    assert svt.epsilon == pytest.approx(eps_bt)
    # count c: query scale 2c / eps_2, same total.
    svt = SparseVector(0.1, 0.2, count=4)
    assert svt.query_scale == pytest.approx(40.0)
    assert get_epsilon(svt, 0.0) == pytest.approx(0.3)


# ---------------------------------------------------------------------------
# RDP curves.
# ---------------------------------------------------------------------------
def test_default_orders_grid():
    o = DEFAULT_ORDERS
    assert o.min() < 1.02 and o.max() >= 1e4
    assert np.all(o > 1) and len(np.unique(o)) == len(o)
    assert set(range(2, 65)) <= set(o.tolist())
    assert np.sum((o > 1) & (o < 2)) >= 15
    with pytest.raises(ValueError):
        o[0] = 3.0  # read-only


def test_gaussian_and_zcdp_curves():
    a = np.array([1.5, 2.0, 10.0, 1000.0])
    assert_allclose(get_rdp(Gaussian(2.0), a), a / 8)
    assert_allclose(get_rdp(ZCDP(0.3), a), 0.3 * a)
    assert_allclose(get_rdp(ZCDP(0.0), a), 0.0)


@pytest.mark.parametrize("b", [0.5, 2.0, 20.0])
def test_laplace_curve_matches_numerical_divergence(b):
    orders = [1.01, 1.5, 2.0, 7.5, 32.0]
    ours = get_rdp(Laplace(b), orders)
    for a, r in zip(orders, ours):
        def f(x):
            return np.exp(a * stats.laplace.logpdf(x, 0, b) + (1 - a) * stats.laplace.logpdf(x, 1, b))
        tail = 60 * b
        val = sum(integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-12)[0]
                  for lo, hi in [(-tail, 0), (0, 1), (1, 1 + tail)])
        assert r == pytest.approx(math.log(val) / (a - 1), rel=1e-8, abs=1e-13)
    # Large orders tend to the pure epsilon, never above it.
    big = get_rdp(Laplace(b), [1e4])[0]
    assert 0.99 / b <= big <= 1 / b


@pytest.mark.parametrize("eps", [0.01, 0.5, 3.0])
def test_pure_dp_curve_is_randomized_response(eps):
    orders = np.array([1.01, 1.3, 2.0, 5.0, 64.0])
    ours = get_rdp(PureDP(eps), orders)
    assert_allclose(ours, [_rr_rdp(eps, a) for a in orders], rtol=1e-9)
    assert np.all(ours <= np.minimum(eps, orders * eps ** 2 / 2) + 1e-15)
    assert_allclose(get_rdp(PureDP(0.0), orders), 0.0)


def test_composition_adds_and_repeats_scale():
    a = DEFAULT_ORDERS
    g, lap = Gaussian(3.0), Laplace(4.0)
    assert_allclose(get_rdp(Composed([g, lap, g]), a), 2 * get_rdp(g, a) + get_rdp(lap, a))
    assert_allclose(get_rdp(Repeated(Composed([g, lap]), 7), a),
                    7 * (get_rdp(g, a) + get_rdp(lap, a)))
    assert_allclose(get_rdp(Repeated(g, 0), a), 0.0)
    assert_allclose(get_rdp(Composed([]), a), 0.0)


def test_sampled_gaussian_rate_one_is_plain_gaussian():
    assert_allclose(get_rdp(PoissonSampled(1.0, Gaussian(1.3))), get_rdp(Gaussian(1.3)))
    assert get_epsilon(PoissonSampled(1.0, Gaussian(1.3)), 1e-5) == get_epsilon(Gaussian(1.3), 1e-5)


def test_sampled_gaussian_integer_orders_exact():
    q, sigma = 0.05, 1.2
    orders = [2, 3, 5, 8, 13]
    ours = get_rdp(PoissonSampled(q, Gaussian(sigma)), orders)
    for a, r in zip(orders, ours):
        total = math.fsum(math.comb(a, k) * (1 - q) ** (a - k) * q ** k
                          * math.exp((k * k - k) / (2 * sigma ** 2)) for k in range(a + 1))
        assert r == pytest.approx(math.log(total) / (a - 1), rel=1e-10)


@pytest.mark.parametrize("q, sigma", [(0.01, 1.0), (256 / 60000, 1.1), (0.1, 0.8), (0.5, 2.0)])
def test_sampled_gaussian_fractional_orders_match_integration(q, sigma):
    orders = [1.05, 1.5, 2.5, 7.3]
    ours = get_rdp(PoissonSampled(q, Gaussian(sigma)), orders)
    for a, r in zip(orders, ours):
        ref = _quad_sampled_gaussian_rdp(q, sigma, a)
        # Exact up to the (added, conservative) truncation bound.
        assert ref * (1 - 1e-8) <= r <= ref * (1 + 1e-4) + 1e-15


def test_sampled_gaussian_fractional_interpolates_integers():
    q, sigma = 0.02, 0.9
    fine = np.round(np.arange(2.0, 6.0001, 0.05), 10)
    r = get_rdp(PoissonSampled(q, Gaussian(sigma)), fine)
    # RDP is non-decreasing in the order; (a - 1) R(a) = log A_a is convex.
    assert np.all(np.diff(r) >= -1e-12)
    log_a = (fine - 1) * r
    assert np.all(np.diff(log_a, 2) >= -1e-9)
    # Smooth: no jump between the integer (exact sum) and fractional (series) paths.
    step = np.diff(r)
    ratio = step[1:] / step[:-1]
    assert np.all((ratio > 0.95) & (ratio < 1.2))
    # Below 2 as well, towards 0 at order 1.
    near = get_rdp(PoissonSampled(q, Gaussian(sigma)), [1.01, 1.1, 1.5, 1.9, 2.0])
    assert np.all(np.diff(near) > 0)


def test_sampled_gaussian_bounded_by_plain_and_monotone_in_rate():
    base = get_rdp(Gaussian(1.0))
    prev = np.zeros_like(base)
    for q in (0.001, 0.01, 0.1, 0.5, 0.9):
        r = get_rdp(PoissonSampled(q, Gaussian(1.0)))
        assert np.all(r <= base + 1e-12)
        assert np.all(r >= prev - 1e-12)
        prev = r


def test_sampled_composition_of_gaussians_is_one_gaussian():
    inner = Composed([Gaussian(3.0), Repeated(Gaussian(4.0), 3)])
    z_eff = (1 / 9 + 3 / 16) ** -0.5
    assert_allclose(get_rdp(PoissonSampled(0.05, inner)),
                    get_rdp(PoissonSampled(0.05, Gaussian(z_eff))), rtol=1e-12)


def test_sampled_gaussian_rdp_speed():
    times = []
    for z in (1.01234, 1.04321, 0.95678):  # fresh values: no cache hit
        t0 = time.perf_counter()
        get_epsilon(Repeated(PoissonSampled(256 / 60000, Gaussian(z)), 14062), 1e-5,
                    method="rdp")
        times.append(time.perf_counter() - t0)
    assert min(times) < 0.05


def test_sampled_pure_mechanisms():
    q, b = 0.1, 2.0
    m = PoissonSampled(q, Laplace(b))
    amplified = math.log1p(q * math.expm1(1 / b))
    assert get_epsilon(m, 0.0) == pytest.approx(amplified)
    assert get_epsilon(Repeated(m, 10), 0.0) == pytest.approx(10 * amplified)
    r = get_rdp(m)
    assert np.all(r <= get_rdp(Laplace(b)) + 1e-12)
    assert np.all(r <= get_rdp(PureDP(amplified)) + 1e-12)
    assert get_epsilon(Repeated(m, 100), 1e-6) < 100 * amplified


def test_sampled_mixed_uses_general_bound():
    inner = Composed([Gaussian(2.0), SparseVector(0.2, 0.2)])
    q = 0.05
    r = get_rdp(PoissonSampled(q, inner), [2.0, 3.0, 1.5, 20000.0])
    unamplified = get_rdp(inner, [2.0, 3.0, 1.5, 20000.0])
    # Order 2: log(1 + q^2 (e^eps(2) - 1)), Zhu & Wang 2019, tight at order 2.
    assert r[0] == pytest.approx(math.log1p(q ** 2 * math.expm1(unamplified[0])))
    assert r[1] < unamplified[1]
    assert r[2] == pytest.approx(r[0])  # order 1.5 uses order 2 (monotonicity)
    assert r[3] == pytest.approx(unamplified[3])  # beyond the bound's range: unamplified
    assert math.isfinite(get_epsilon(Repeated(PoissonSampled(q, inner), 50), 1e-5))
    assert math.isfinite(get_epsilon(PoissonSampled(0.1, ZCDP(0.5)), 1e-5))


def test_sparse_vector_curves():
    svt = SparseVector(0.3, 0.2)
    assert_allclose(get_rdp(svt), get_rdp(PureDP(0.5)))
    paper = SparseVector(0.3, 0.2, rdp_bound="paper002")
    assert_allclose(get_rdp(paper), get_rdp(Laplace(1 / 0.3)) + get_rdp(Laplace(1 / 0.2)))
    assert np.all(get_rdp(paper) <= get_rdp(svt) + 1e-12)
    assert get_epsilon(paper, 0.0) == get_epsilon(svt, 0.0) == pytest.approx(0.5)


def test_unknown_mechanism_is_named():
    class Mystery(Mechanism):
        __slots__ = ()

    with pytest.raises(NotImplementedError, match="Mystery"):
        get_epsilon(Mystery(), 1e-5)
    with pytest.raises(ValueError, match="expected a Mechanism"):
        get_rdp("gaussian")


def test_bad_orders():
    for orders in ([1.0, 2.0], [0.5], [], [np.nan]):
        with pytest.raises(ValueError, match="orders"):
            get_rdp(Gaussian(1.0), orders)


# ---------------------------------------------------------------------------
# Conversion to (epsilon, delta).
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(REFERENCE))
def test_reference_table(name):
    mech, delta, rdp_ref, pld_ref = REFERENCE[name]
    eps_rdp = get_epsilon(mech, delta, method="rdp")
    eps_auto = get_epsilon(mech, delta)
    # RDP route: within 1% of dp-accounting's RDP accountant (ours may be a
    # little lower: finer orders), and still above the near-exact PLD figure.
    assert eps_rdp == pytest.approx(rdp_ref, rel=0.01)
    assert eps_rdp >= pld_ref * (1 - 0.002)
    # Best valid bound: never below PLD (minus its discretisation error).
    assert eps_auto >= pld_ref * (1 - 0.002)
    assert eps_auto <= eps_rdp
    if name.startswith("gaussian z") and "laplace" not in name:
        # Unsampled Gaussians: exact analytic Gaussian, equal to PLD.
        assert eps_auto == pytest.approx(pld_ref, abs=6e-4)


def test_acceptance_mnist_dpsgd():
    mech = Repeated(PoissonSampled(256 / 60000, Gaussian(1.1)), 14062)
    assert 2.55 <= get_epsilon(mech, 1e-5, method="rdp") <= 2.60
    # PLD (the default for sampled runs): dp-accounting's PLD accountant gives 2.3817
    assert 2.3817 * 0.99 <= get_epsilon(mech, 1e-5) <= 2.3817 * 1.01


def _analytic_delta(eps, z):
    return stats.norm.cdf(1 / (2 * z) - eps * z) - math.exp(eps) * stats.norm.cdf(-1 / (2 * z) - eps * z)


@pytest.mark.parametrize("z, steps, delta", [(20.0, 200, 1e-5), (1.0, 1, 1e-5), (0.5, 3, 1e-8),
                                             (50.0, 10, 1e-3), (3.0, 1000, 1e-10)])
def test_analytic_gaussian_is_exact(z, steps, delta):
    mech = Repeated(Gaussian(z), steps)
    eps = get_epsilon(mech, delta, method="analytic")
    z_eff = z / math.sqrt(steps)
    if eps > 0:
        assert _analytic_delta(eps, z_eff) <= delta  # valid
        assert _analytic_delta(eps * (1 - 1e-9) - 1e-12, z_eff) > delta  # tight
    assert get_epsilon(mech, delta) == eps
    assert get_epsilon(Gaussian(z_eff), delta) == pytest.approx(eps, rel=1e-10)


def test_analytic_gaussian_reference_value():
    assert get_epsilon(Repeated(Gaussian(20.0), 200), 1e-5) == pytest.approx(2.943, abs=5e-4)


def test_gaussian_tree_collapses():
    tree = Composed([Gaussian(3.0), Repeated(Composed([Gaussian(4.0), Gaussian(5.0)]), 6)])
    z_eff = (1 / 9 + 6 / 16 + 6 / 25) ** -0.5
    assert get_epsilon(tree, 1e-6) == pytest.approx(get_epsilon(Gaussian(z_eff), 1e-6), rel=1e-10)
    assert get_epsilon(tree, 1e-6) < get_epsilon(tree, 1e-6, method="rdp")


def test_hybrid_gaussian_plus_pure():
    tree = Composed([Repeated(Gaussian(50.0), 10), PureDP(0.05)])
    auto = get_epsilon(tree, 1e-5)
    split = get_epsilon(Repeated(Gaussian(50.0), 10), 1e-5) + 0.05
    assert auto == pytest.approx(min(split, get_epsilon(tree, 1e-5, method="rdp"),
                                     get_epsilon(tree, 1e-5, method="pld")))
    assert auto < split  # the PLD composes the Gaussian and pure parts tightly
    assert get_epsilon(tree, 1e-5, method="analytic") == pytest.approx(split)


def test_delta_zero():
    assert get_epsilon(Gaussian(1.0), 0.0) == math.inf
    assert get_epsilon(PoissonSampled(0.1, Gaussian(1.0)), 0.0) == math.inf
    assert get_epsilon(Repeated(Laplace(10.0), 7), 0.0) == pytest.approx(0.7)
    assert get_epsilon(Composed([PureDP(0.1), SparseVector(0.2, 0.3)]), 0.0) == pytest.approx(0.6)
    assert get_epsilon(Repeated(Laplace(10.0), 7), 0.0, method="rdp") == math.inf
    assert get_epsilon(Composed([]), 0.0) == 0.0
    assert get_epsilon(Composed([]), 1e-5) == 0.0


def test_pure_composition_valid_at_any_delta():
    m = Repeated(Laplace(1.0), 3)
    assert get_epsilon(m, 1e-5) <= 3.0
    assert get_epsilon(m, 1e-5, method="pure") == pytest.approx(3.0)


def test_method_and_delta_errors():
    with pytest.raises(ValueError, match="method"):
        get_epsilon(Gaussian(1.0), 1e-5, method="exact")
    with pytest.raises(ValueError, match="pld"):
        get_epsilon(Gaussian(1.0), 0.0, method="pld")
    with pytest.raises(ValueError, match="analytic"):
        get_epsilon(Laplace(1.0), 1e-5, method="analytic")
    with pytest.raises(ValueError, match="pure"):
        get_epsilon(Gaussian(1.0), 1e-5, method="pure")
    for bad in (-1e-9, 1.0, 2.0, "small", None, True, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            get_epsilon(Gaussian(1.0), bad)
    with pytest.raises(ValueError, match="expected a Mechanism"):
        get_epsilon(1.0, 1e-5)


def test_epsilon_never_negative_and_monotone():
    assert get_epsilon(Gaussian(1e6), 0.5) == 0.0
    assert rdp_to_epsilon(np.zeros(3), [2.0, 3.0, 4.0], 0.9) == 0.0
    zs = np.geomspace(0.6, 20, 25)
    eps = [get_epsilon(Repeated(PoissonSampled(0.02, Gaussian(z)), 500), 1e-6) for z in zs]
    assert np.all(np.diff(eps) < 0)


@pytest.mark.parametrize("mech", [
    Repeated(Gaussian(3.0), 20),
    Repeated(PoissonSampled(0.01, Gaussian(1.0)), 1000),
    Repeated(Laplace(10.0), 100),
    Composed([Repeated(Gaussian(10.0), 50), Repeated(Laplace(20.0), 10)]),
], ids=repr)
def test_get_delta_consistent_with_get_epsilon(mech):
    for delta in (1e-5, 1e-8):
        eps = get_epsilon(mech, delta)
        assert get_delta(mech, eps) <= delta * (1 + 1e-6)
        assert get_delta(mech, eps * 0.9) > delta


def test_get_delta_pure_and_errors():
    assert get_delta(Repeated(Laplace(10.0), 5), 0.5) == 0.0
    assert get_delta(Gaussian(1.0), 0.0) > 0
    with pytest.raises(ValueError, match="epsilon"):
        get_delta(Gaussian(1.0), -1.0)


# ---------------------------------------------------------------------------
# Calibration.
# ---------------------------------------------------------------------------
MAKERS = {
    "gaussian x100": (lambda z: Repeated(Gaussian(z), 100), (1e-5, 1e-8)),
    "poisson 0.01 x1000": (lambda z: Repeated(PoissonSampled(0.01, Gaussian(z)), 1000), (1e-5, 1e-8)),
    "laplace x50": (lambda z: Repeated(Laplace(z), 50), (0.0,)),
}
CAL_CASES = [(name, d, eps) for name, (_, deltas) in MAKERS.items() for d in deltas
             for eps in (0.05, 0.5, 1.0, 8.0)]


@pytest.mark.parametrize("name, delta, epsilon", CAL_CASES)
def test_calibrate_round_trip(name, delta, epsilon):
    make = MAKERS[name][0]
    z = calibrate(make, epsilon, delta)
    achieved = get_epsilon(make(z), delta)
    assert achieved <= epsilon
    assert achieved >= epsilon * (1 - 0.005)
    # Smallest within the tolerance: a little less noise misses the target.
    assert get_epsilon(make(z / (1 + 1e-4)), delta) > epsilon


def test_calibrate_reproduces_reference_noise():
    make = lambda z: Repeated(PoissonSampled(256 / 60000, Gaussian(z)), 14062)
    target = get_epsilon(make(1.1), 1e-5)
    assert calibrate(make, target, 1e-5) == pytest.approx(1.1, rel=2e-4)


def test_calibrate_lower_and_upper():
    make = lambda z: Repeated(Gaussian(z), 10)
    assert calibrate(make, 1e6, 1e-5, lower=0.5) == 0.5
    with pytest.raises(ValueError, match="no noise multiplier up to 2"):
        calibrate(make, 0.01, 1e-5, upper=2.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0, delta=1e-5), "epsilon must be > 0"),
    (dict(epsilon=-1.0, delta=1e-5), "epsilon must be > 0"),
    (dict(epsilon=float("inf"), delta=1e-5), "finite"),
    (dict(epsilon=1.0, delta=1.0), "delta"),
    (dict(epsilon=1.0, delta=-0.1), "delta"),
    (dict(epsilon=1.0, delta=1e-5, lower=0.0), "lower"),
    (dict(epsilon=1.0, delta=1e-5, lower=2.0, upper=1.0), "upper"),
    (dict(epsilon=1.0, delta=1e-5, tol=0.0), "tol"),
])
def test_calibrate_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        calibrate(lambda z: Gaussian(z), **kwargs)


def test_calibrate_unreachable_gaussian_pure_dp():
    with pytest.raises(ValueError, match="delta=0"):
        calibrate(lambda z: Repeated(Gaussian(z), 10), 1.0, 0.0)


def test_calibrate_bad_callable():
    with pytest.raises(ValueError, match="callable"):
        calibrate(Gaussian(1.0), 1.0, 1e-5)
    with pytest.raises(ValueError, match="not a Mechanism"):
        calibrate(lambda z: z, 1.0, 1e-5)

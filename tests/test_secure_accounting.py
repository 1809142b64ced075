"""The accounting of secure mode's discrete mechanisms, and an independent cross-check.

OpenDP (a test dependency, the ``test`` extra) maps the discrete Gaussian to
its zCDP rho and the discrete Laplace to its pure epsilon with code written
independently of skdp's; the charges must agree within 1 %.
"""

import math

import pytest

from skdp.accounting import (
    BudgetAccountant,
    Composed,
    DiscreteGaussian,
    DiscreteLaplace,
    Gaussian,
    GaussianSparseVector,
    Laplace,
    PoissonSampled,
    Repeated,
    RepeatAndSelect,
    SparseVector,
    calibrate,
    discretize,
    get_epsilon,
    get_rdp,
    mechanism_from_dict,
    secure_accounting,
)

dp = pytest.importorskip(
    "opendp.prelude", reason="the cross-check needs the optional package opendp "
    "(pip install opendp, part of the 'test' extra)")
dp.enable_features("contrib")


def _opendp_gaussian(scale):
    return dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)),
                              dp.l2_distance(T=int), scale=float(scale))


@pytest.mark.parametrize("scale, sensitivity", [(10.0, 3), (2.5, 1), (400.0, 7)])
def test_discrete_gaussian_rho_matches_opendp(scale, sensitivity):
    rho = _opendp_gaussian(scale).map(sensitivity)
    ours = get_rdp(DiscreteGaussian(scale / sensitivity), orders=[2.0, 50.0])
    assert ours[0] / 2 == pytest.approx(rho, rel=1e-2)
    assert ours[1] / 50 == pytest.approx(rho, rel=1e-2)


@pytest.mark.parametrize("scale, sensitivity, delta", [(10.0, 3, 1e-5), (2.5, 1, 1e-6),
                                                       (40.0, 1, 1e-9)])
def test_discrete_gaussian_epsilon_matches_opendp(scale, sensitivity, delta):
    profile = dp.c.make_zCDP_to_approxDP(_opendp_gaussian(scale)).map(sensitivity)
    ours = get_epsilon(DiscreteGaussian(scale / sensitivity), delta)
    assert ours == pytest.approx(profile.epsilon(delta), rel=1e-2)
    assert ours >= profile.epsilon(delta) * (1 - 1e-9)  # never below the tight conversion


def test_composed_discrete_gaussians_match_opendp():
    scales = (5.0, 8.0, 13.0)
    rho = sum(_opendp_gaussian(s).map(2) for s in scales)
    ours = get_rdp(Composed(tuple(Repeated(DiscreteGaussian(s / 2), 3) for s in scales)),
                   orders=[3.0])[0] / 3
    assert ours == pytest.approx(3 * rho, rel=1e-2)


@pytest.mark.parametrize("scale, sensitivity", [(10.0, 3), (1.0, 1)])
def test_discrete_laplace_epsilon_matches_opendp(scale, sensitivity):
    meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)),
                             dp.l1_distance(T=int), scale=scale)
    ours = get_epsilon(DiscreteLaplace(scale / sensitivity), 0.0)
    assert ours == pytest.approx(meas.map(sensitivity), rel=1e-2)


def test_discrete_gaussian_takes_no_continuous_shortcut():
    # the analytic Gaussian (and PLD) hold for the continuous Gaussian only:
    # the discrete one is charged through its zCDP curve, hence a bit more
    for tree in (Gaussian(3.0), Repeated(Gaussian(20.0), 50),
                 Composed((Gaussian(4.0), Gaussian(9.0)))):
        discrete = discretize(tree)
        assert get_epsilon(discrete, 1e-5) == pytest.approx(
            get_epsilon(tree, 1e-5, method="rdp"), rel=1e-12)
        assert get_epsilon(discrete, 1e-5) > get_epsilon(tree, 1e-5) * 1.02


def test_sampled_discrete_gaussian_uses_the_general_subsampling_bound():
    tree = Repeated(PoissonSampled(0.01, Gaussian(1.0)), 100)
    sampled = get_epsilon(discretize(tree), 1e-5)
    assert get_epsilon(tree, 1e-5) < sampled < get_epsilon(Repeated(Gaussian(1.0), 100), 1e-5)


def test_secure_accounting_calibrates_the_discrete_noise():
    make = lambda z: Repeated(Gaussian(z), 100)  # noqa: E731
    z_float = calibrate(make, 1.0, 1e-5)
    with secure_accounting():
        z = calibrate(make, 1.0, 1e-5)
        assert get_epsilon(make(z), 1e-5) <= 1.0
    assert get_epsilon(discretize(make(z)), 1e-5) <= 1.0
    assert get_epsilon(discretize(make(z_float)), 1e-5) > 1.0  # the float noise is too small
    assert z > z_float


def test_pure_dp_calibration_is_unchanged_in_secure_mode():
    make = lambda b: Repeated(Laplace(b), 10)  # noqa: E731
    with secure_accounting():
        b = calibrate(make, 1.0, 0.0)
    assert get_epsilon(discretize(make(b)), 0.0) <= 1.0
    assert b == pytest.approx(10.0, rel=1e-3)


def test_discretize_maps_the_leaves_and_refuses_what_has_no_secure_form():
    tree = Composed((PoissonSampled(0.5, Gaussian(2.0)), Repeated(Laplace(3.0), 2),
                     SparseVector(1.0, 1.0)))
    assert discretize(tree) == Composed((PoissonSampled(0.5, DiscreteGaussian(2.0)),
                                         Repeated(DiscreteLaplace(3.0), 2),
                                         SparseVector(1.0, 1.0)))
    with pytest.raises(ValueError, match="Gaussian sparse vector"):
        discretize(Repeated(GaussianSparseVector(1.0, 1.0, 3), 2))
    # the selection keeps its form around the discrete run (the door draws K exactly)
    assert discretize(RepeatAndSelect(Gaussian(1.0), 0.5, 2.0)) == \
        RepeatAndSelect(DiscreteGaussian(1.0), 0.5, 2.0)


def test_discrete_mechanisms_round_trip_through_the_ledger(tmp_path):
    tree = Repeated(DiscreteGaussian(2.0), 3)
    assert mechanism_from_dict(tree.to_dict()) == tree
    accountant = BudgetAccountant(10.0, 1e-3, ledger=str(tmp_path / "ledger.db"))
    eps = get_epsilon(tree, 1e-5)
    accountant.charge(eps, 1e-5, mechanism=tree)
    again = BudgetAccountant(10.0, 1e-3, ledger=str(tmp_path / "ledger.db"))
    assert again.spends[0].mechanism == tree
    assert math.isfinite(again.spent()[0])

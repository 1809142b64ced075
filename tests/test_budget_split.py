"""split_budget (issue 41): per-step epsilons that share a Gaussian-DP budget by mu^2."""

import numpy as np
import pytest

from skdp import BudgetAccountant, DPLogisticRegression
from skdp.accounting import BudgetError
from skdp.preprocessing import DPBoundsScaler, split_budget


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1.0, 10.0, 100.0, 0.1]
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("total, shares", [(1.0, (0.3, 0.7)), (0.5, (0.1, 0.2, 0.7)),
                                           (4.0, (0.5, 0.5))])
def test_the_steps_spend_the_budget_under_gaussian_composition(total, shares):
    epsilons = split_budget(total, 1e-5, shares)
    assert len(epsilons) == len(shares)
    # more than their share of a sum of epsilons, less than the total each
    assert all(share * total < e < total for e, share in zip(epsilons, shares))
    accountant = BudgetAccountant(epsilon=total, delta=1e-5, composition="gaussian")
    X, y = _data()
    for e in epsilons[:-1]:
        DPBoundsScaler(epsilon=e, delta=1e-5, accountant=accountant, random_state=0).fit(X)
    DPLogisticRegression(epsilon=epsilons[-1], delta=1e-5, classes=[0, 1],
                         accountant=accountant, random_state=0).fit(X, y)
    assert accountant.spent()[0] == pytest.approx(total, rel=1e-4)
    assert accountant.spent()[0] <= total * (1 + 1e-9)
    # and nothing more fits
    with pytest.raises(BudgetError):
        DPBoundsScaler(epsilon=0.01, delta=1e-5, accountant=accountant).fit(X)


def test_the_whole_budget_to_one_step_is_the_budget():
    (e,) = split_budget(1.0, 1e-5, (1.0,))
    assert e == pytest.approx(1.0, rel=1e-8) and e <= 1.0


def test_under_basic_composition_the_same_epsilons_add_up_to_more():
    epsilons = split_budget(1.0, 1e-5, (0.3, 0.7))
    assert [round(e, 3) for e in epsilons] == [0.518, 0.822]
    accountant = BudgetAccountant(epsilon=1.0)
    X, _ = _data()
    DPBoundsScaler(epsilon=epsilons[0], delta=1e-5, accountant=accountant).fit(X)
    with pytest.raises(BudgetError):
        DPBoundsScaler(epsilon=epsilons[1], delta=1e-5, accountant=accountant).fit(X)


@pytest.mark.parametrize("args, match", [
    ((0.0, 1e-5, (1.0,)), "epsilon must be"),
    ((float("inf"), 1e-5, (1.0,)), "epsilon must be"),
    ((1.0, 0.0, (1.0,)), "delta must be in"),
    ((1.0, 1e-5, ()), "shares must be"),
    ((1.0, 1e-5, (0.6, 0.6)), "shares must be"),
    ((1.0, 1e-5, (-0.1, 0.5)), "shares must be"),
    ((1.0, 1e-5, "ab"), "shares must be"),
])
def test_bad_arguments_say_what_is_wrong(args, match):
    with pytest.raises(ValueError, match=match):
        split_budget(*args)

"""Per-example Hessian clipping: its bound holds for confident predictions, and tiny rows
do not warn (review of stop 57, findings A-F1 and A-F3)."""

import warnings

import numpy as np
import pytest

from skdp import BudgetAccountant, DPLinearSVC
from skdp.losses import LinearDesign
from skdp.losses.logistic import MultinomialLogisticLoss


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("margin", [19.0, 37.0, 200.0, 700.0])
def test_a_confident_multinomial_example_is_clipped_to_the_hessian_bound(fit_intercept,
                                                                          margin):
    # ||diag(p) - p p^T||_F was computed as s2 - 2 sum p^3 + s2^2, which cancels to 0
    # for a confident row: its Hessian went unclipped, 2e4 times the bound at margin 37
    rng = np.random.default_rng(0)
    n, d, K = 200, 4, 3
    X = rng.normal(size=(n, d)) * 0.5
    Y = np.eye(K)[rng.integers(0, K, n)]
    X[0] = 0.0
    X[0, 0] = 1e10                     # one large (finite, not extreme) row
    W = np.zeros((d + 1, K))
    W[0, 0] = margin / 1e10            # its class 0 ahead by the margin
    W = W if fit_intercept else W[:d]
    clip = 1.0
    with_row = MultinomialLogisticLoss(LinearDesign(X, fit_intercept, None), Y)
    without = MultinomialLogisticLoss(LinearDesign(X[1:], fit_intercept, None), Y[1:])
    change = with_row.hessian(W, clip) - without.hessian(W, clip)
    assert np.linalg.norm(change) <= clip * (1 + 1e-9)
    V = rng.normal(size=W.shape)
    V /= np.linalg.norm(V)
    moved = with_row.hessian_matvec(W, V, clip) - without.hessian_matvec(W, V, clip)
    assert np.linalg.norm(moved) <= clip * (1 + 1e-9)


def test_a_tiny_row_does_not_make_the_hessian_clip_warn():
    # the clip limit hessian_clip / ||x||^2 overflows for a row of norm below ~1e-154:
    # the warning came after the charge and told whether such a record is in the data
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0).astype(int)
    X[0] *= 1e-160
    model = DPLinearSVC(epsilon=5.0, classes=[0, 1], loss="sigmoid", fit_intercept=False,
                        solver="second_order", random_state=0, accountant=BudgetAccountant())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model.fit(X, y)

"""DPLinearSVC and the hinge-family losses."""

import functools
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import Normalizer

from conftest import load_adult, load_reuters
from skdp import BudgetAccountant, DPLinearSVC
from skdp.losses import HINGE_LOSSES, HingeLoss, LinearDesign, SmoothHingeLoss, SquaredHingeLoss
from skdp.solvers import available_solvers

SEEDS = range(5)


# -- the losses ---------------------------------------------------------------------
def _loss(cls, m, **kw):
    """A loss at margins ``m`` (one feature equal to m, label +1, W = 1).

    Reads the per-example derivative ``_residuals`` directly: the public
    methods only return sums over examples, and this unit test pins the
    derivative at each margin, kinks included.
    """
    design = LinearDesign(np.asarray(m, dtype=float)[:, None], fit_intercept=False)
    loss = cls(design, np.ones(len(m)), **kw)
    W = np.array([1.0])
    grads = loss._residuals(design.decision(W), loss.y)
    return loss, loss.loss_values(W), grads


@pytest.mark.parametrize("h", [0.5, 1.0, 1.5, 3.0])
def test_smooth_hinge_matches_its_definition(h):
    m = np.linspace(-4, 3, 141)
    _, values, grads = _loss(SmoothHingeLoss, m, smoothing=h)
    expected = np.where(m >= 1, 0.0, np.where(m > 1 - h, (1 - m) ** 2 / (2 * h), 1 - m - h / 2))
    np.testing.assert_allclose(values, expected, atol=1e-12)
    hinge = np.maximum(0.0, 1 - m)
    assert np.all(values <= hinge + 1e-12) and np.all(values >= hinge - h / 2 - 1e-12)
    assert np.all(np.abs(grads) <= 1.0)
    # derivative by finite differences, and curvature at most 1/h
    eps = 1e-6
    _, vp, _ = _loss(SmoothHingeLoss, m + eps, smoothing=h)
    _, vm, _ = _loss(SmoothHingeLoss, m - eps, smoothing=h)
    np.testing.assert_allclose(grads, (vp - vm) / (2 * eps), atol=1e-5)
    slopes = np.diff(grads) / np.diff(m)
    assert slopes.max() <= 1 / h + 1e-9


def test_hinge_and_squared_hinge_values_and_derivatives():
    m = np.array([-2.0, 0.0, 0.5, 0.999, 1.0, 2.0])
    loss, values, grads = _loss(HingeLoss, m)
    np.testing.assert_allclose(values, np.maximum(0, 1 - m))
    np.testing.assert_allclose(grads, [-1, -1, -1, -1, 0, 0])   # subgradient 0 at the kink
    assert loss.capabilities == {"gradient", "gradient_difference", "grouped_gradient",
                                 "values", "convex"}
    assert loss.smoothness() is None
    loss, values, grads = _loss(SquaredHingeLoss, m)
    np.testing.assert_allclose(values, np.maximum(0, 1 - m) ** 2)
    np.testing.assert_allclose(grads, -2 * np.maximum(0, 1 - m))
    assert loss.capabilities == {"gradient", "gradient_difference", "grouped_gradient",
                                 "values", "smooth", "convex", "hessian"}
    assert loss.curvature_bound == 2.0


def test_smooth_losses_have_public_smoothness():
    X = np.ones((3, 2))
    design = LinearDesign(X, fit_intercept=True, data_norm=1.0)
    assert SquaredHingeLoss(design, np.ones(3)).smoothness() == pytest.approx(2.0 * 2)
    assert SmoothHingeLoss(design, np.ones(3), smoothing=0.5).smoothness() == pytest.approx(2 / 0.5)
    with pytest.raises(ValueError, match="smoothing"):
        SmoothHingeLoss(design, np.ones(3), smoothing=0.0)


def _per_example_grads(loss, W, X, S, fit_intercept):
    """Brute force: per-example gradient matrices ``r_i (x) [x_i, 1]``, flattened."""
    Xa = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
    Z = Xa @ W
    R = S * loss._dloss(S * Z)
    if R.ndim == 1:
        return R[:, None] * Xa
    return np.einsum("ik,ij->ijk", R, Xa).reshape(len(X), -1)


@pytest.mark.parametrize("name", sorted(HINGE_LOSSES))
@pytest.mark.parametrize("n_outputs", [None, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_clipped_gradient_sum_clips_each_example_as_a_whole(name, n_outputs, sparse):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 5))
    X[rng.random(X.shape) < 0.3] = 0.0
    if n_outputs is None:
        S = rng.choice([-1.0, 1.0], size=40)
        W = rng.normal(size=6)
    else:
        S = -np.ones((40, n_outputs))
        S[np.arange(40), rng.integers(0, n_outputs, 40)] = 1.0
        W = rng.normal(size=(6, n_outputs))
    design = LinearDesign(sp.csr_matrix(X) if sparse else X, fit_intercept=True)
    loss = HINGE_LOSSES[name](design, S)
    G = _per_example_grads(loss, W, X, S, fit_intercept=True)
    C = 0.7
    norms = np.linalg.norm(G, axis=1)
    expected = (G * np.minimum(1.0, C / np.where(norms > 0, norms, 1))[:, None]).sum(axis=0)
    got = loss.clipped_grad_sum(W, C)
    np.testing.assert_allclose(got.ravel(), expected, atol=1e-10)
    # L1 clipping (pure DP): the whole example's gradient in L1
    norms1 = np.abs(G).sum(axis=1)
    expected1 = (G * np.minimum(1.0, C / np.where(norms1 > 0, norms1, 1))[:, None]).sum(axis=0)
    np.testing.assert_allclose(loss.clipped_grad_sum(W, C, norm=1).ravel(), expected1, atol=1e-10)


# -- the estimator ------------------------------------------------------------------
@pytest.fixture(scope="module")
def binary_data():
    # non-private LinearSVC: 0.838 on the training set
    X, y = make_classification(n_samples=1000, n_features=8, n_informative=4,
                               class_sep=2.0, flip_y=0.0, random_state=0)
    return Normalizer().fit_transform(X), y


def test_capabilities_follow_the_loss():
    # what the loss states, and the solvers it admits (public API)
    base = {"gradient", "gradient_difference", "grouped_gradient", "values", "convex"}
    assert HINGE_LOSSES["hinge"].capabilities == base
    for loss in ("squared_hinge", "smooth_hinge"):
        assert HINGE_LOSSES[loss].capabilities == base | {"smooth", "hessian"}
    assert available_solvers(DPLinearSVC(loss="hinge")) == ["dual_averaging", "gd", "line_search"]
    smooth_only = set(available_solvers(DPLinearSVC())) - set(
        available_solvers(DPLinearSVC(loss="hinge")))
    assert "gd" in available_solvers(DPLinearSVC(loss="hinge"))
    for name in smooth_only:
        with pytest.raises(ValueError, match="not available"):
            DPLinearSVC(loss="hinge", solver=name).fit(np.eye(2), [0, 1])


@pytest.mark.parametrize("params, match", [
    ({"loss": "log"}, "loss must be one of"),
    ({"loss": None}, "loss must be one of"),
    ({"smoothing": 0.0}, "smoothing must be"),
    ({"smoothing": "1"}, "smoothing must be"),
    ({"smoothing": np.inf}, "smoothing must be"),
])
def test_bad_parameters_raise_and_cost_nothing(binary_data, params, match):
    X, y = binary_data
    acc = BudgetAccountant()
    with pytest.raises(ValueError, match=match):
        DPLinearSVC(accountant=acc, **params).fit(X, y)
    assert acc.spends == []


@pytest.mark.parametrize("loss", sorted(set(HINGE_LOSSES) - {"sigmoid"}))
def test_each_loss_learns_binary(binary_data, loss):
    X, y = binary_data
    est = DPLinearSVC(loss=loss, epsilon=2.0, random_state=0).fit(X, y)
    assert est.coef_.shape == (1, X.shape[1]) and est.intercept_.shape == (1,)
    assert est.solver_ == "gd" and 10 <= est.n_iter_ <= 500  # sized from the budget
    assert est.score(X, y) > 0.8   # 0.84 / 0.83 / 0.835
    scores = est.decision_function(X)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(scores > 0).astype(int)])


def test_sigmoid_loss_learns_adult_with_gd(adult):
    # the bounded non-convex loss needs data: on the 1000-row data above a
    # noisy walk can end in a flat basin; on Adult it learns (see DPLinearSVC)
    X_tr, y_tr, X_te, y_te = adult
    scores = [DPLinearSVC(loss="sigmoid", random_state=s).fit(X_tr, y_tr).score(X_te, y_te)
              for s in range(3)]
    assert np.mean(scores) >= 0.83, scores   # 0.8355 over 5 seeds


def test_same_seed_same_model_and_string_labels(binary_data):
    X, y = binary_data
    labels = np.array(["no", "yes"])[y]
    a = DPLinearSVC(random_state=3).fit(X, labels)
    b = DPLinearSVC(random_state=3).fit(X, labels)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert set(a.predict(X)) <= {"no", "yes"}


def test_multiclass_is_one_mechanism_for_all_classes():
    X, y = load_iris(return_X_y=True)
    X = Normalizer().fit_transform(X - X.mean(axis=0))
    acc = BudgetAccountant()
    est = DPLinearSVC(epsilon=2.0, accountant=acc, random_state=0).fit(X, y)
    assert est.coef_.shape == (3, 4) and est.decision_function(X).shape == (150, 3)
    assert est.score(X, y) > 0.7
    # one spend, of the same mechanism as a binary fit of the same size:
    # the classes share the budget instead of splitting epsilon
    assert len(acc.spends) == 1
    binary = BudgetAccountant()
    DPLinearSVC(epsilon=2.0, accountant=binary, random_state=0).fit(X, y > 0)
    assert acc.spent() == pytest.approx(binary.spent())
    assert est.privacy_spent_ == (2.0, 1e-5)


def test_pure_dp_runs(binary_data):
    X, y = binary_data
    est = DPLinearSVC(delta=0.0, epsilon=2.0, random_state=0).fit(X, y)
    assert est.score(X, y) > 0.7   # 0.77: Laplace noise in d + 1 coordinates


def test_hinge_step_defaults_and_overrides(binary_data):
    X, y = binary_data
    # the hinge has no smoothness constant: gd gets a public default step ...
    assert DPLinearSVC(loss="hinge").fit(X, y).solver_params_ == {
        "learning_rate": 8.0, "average": 0.5}
    assert DPLinearSVC().fit(X, y).solver_params_ == {"learning_rate": "auto",
                                                      "average": "auto"}
    # ... which needs data_norm; without it the step must be given
    with pytest.raises(ValueError, match="learning_rate"):
        DPLinearSVC(loss="hinge", data_norm=None).fit(X, y)
    est = DPLinearSVC(loss="hinge", data_norm=None, random_state=0,
                      solver_params={"learning_rate": 4.0}).fit(X, y)
    assert est.score(X, y) > 0.8
    assert DPLinearSVC(max_iter=7).fit(X, y).n_iter_ == 7


# -- acceptance on real data --------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _adult_accuracy(loss):
    X_tr, y_tr, X_te, y_te = load_adult()
    return tuple(DPLinearSVC(loss=loss, epsilon=1.0, delta=1e-5, random_state=s)
                 .fit(X_tr, y_tr).score(X_te, y_te) for s in SEEDS)


def test_adult_default_accuracy():
    """Adult, unit-norm rows, epsilon 1, defaults: mean over 5 seeds >= 0.840 (0.8504)."""
    assert DPLinearSVC().loss == "smooth_hinge"
    accuracy = np.mean(_adult_accuracy("smooth_hinge"))
    assert accuracy >= 0.840, accuracy


def test_default_loss_is_within_noise_of_the_best_on_adult_validation():
    """Evidence for the default, on a validation split of Adult's training part (eps 1).

    Measured (5 seeds): hinge (gd) 0.8432, smooth_hinge (preconditioned_gd)
    0.8427, squared_hinge 0.8391; the smoothed hinge also offers the smooth
    solvers and fits in 30 steps.
    """
    X, y, _, _ = load_adult()
    X_in, X_val, y_in, y_val = train_test_split(X, y, test_size=0.25, random_state=0,
                                                stratify=y)
    means = {loss: np.mean([DPLinearSVC(loss=loss, epsilon=1.0, random_state=s)
                            .fit(X_in, y_in).score(X_val, y_val) for s in SEEDS])
             for loss in ("hinge", "smooth_hinge", "squared_hinge")}
    assert means["smooth_hinge"] >= max(means.values()) - 2e-3, means
    assert means["smooth_hinge"] >= means["squared_hinge"], means


def test_reuters_accuracy_without_densifying():
    """Reuters (8315 sparse features), epsilon 1: mean over 5 seeds >= 0.955 (the measured
    means: docs/solvers/preconditioned.md, "High dimension")."""
    X_tr, y_tr, X_te, y_te = load_reuters()
    assert sp.issparse(X_tr) and set(np.unique(y_tr)) == {-1.0, 1.0}
    dense_bytes = X_tr.shape[0] * X_tr.shape[1] * 8
    accuracies = []
    for seed in SEEDS:
        tracemalloc.start()
        try:
            est = DPLinearSVC(epsilon=1.0, random_state=seed).fit(X_tr, y_tr)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < dense_bytes / 10, (peak, dense_bytes)   # never an n x d array
        accuracies.append(est.score(X_te, y_te))
    assert np.mean(accuracies) >= 0.955, accuracies

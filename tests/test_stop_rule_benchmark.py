"""``benchmarks/stop_rule.py``: its criteria, its recorder, and its copies of a fitted model."""

import numpy as np
import pytest
from sklearn.preprocessing import normalize

from conftest import load_benchmark_script
from skdp import BudgetAccountant, DPLogisticRegression
from skdp.solvers.preconditioned import DEFAULT_STEPS, PreconditionedGD


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("stop_rule")


def test_the_criteria_read_consecutive_iterates_and_stop_at_the_first_settled_step(bench):
    points = [np.zeros(2), np.array([1.0, 0.0]), np.array([2.0, 0.0]), np.array([2.0, 0.02]),
              np.array([2.0, 0.021])]
    step = bench.criterion(points, "step")
    assert step[0] == 1.0                                        # W_1 against W_0 = 0
    assert step[1] == pytest.approx(0.5)
    assert step[3] == pytest.approx(0.001 / np.hypot(2.0, 0.021))
    direction = bench.criterion(points, "direction")
    assert direction[0] == np.inf                                # W_0 = 0 has no direction
    assert direction[1] == pytest.approx(0.0)                    # a longer W, same direction
    assert direction[2] == pytest.approx(1 - 2.0 / np.hypot(2.0, 0.02))
    # the direction settles at step 2 although W doubled; the size settles only at step 4
    assert bench.stop_step(points, "direction", 1e-9) == 2
    assert bench.stop_step(points, "step", 0.005) == 4           # step 3 moved by 0.01
    assert bench.stop_step(points, "step", 1e-6) is None
    assert bench.stop_step(points, "direction", 1e-9, first=3) is None   # 3: 5e-5 > 1e-9


def test_the_recorder_sees_every_queried_point_and_leaves_the_solver_as_it_was(bench):
    rng = np.random.default_rng(0)
    X = normalize(rng.normal(size=(3000, 4)))
    y = X[:, 0] + 0.3 * rng.normal(size=3000) > 0

    def fit():
        return DPLogisticRegression(epsilon=1.0, random_state=0, solver="preconditioned_gd",
                                    accountant=BudgetAccountant()).fit(X, y)

    solve = PreconditionedGD.solve
    with bench.recorded_points() as fits:
        recorded = fit()
    assert PreconditionedGD.solve is solve
    plain = fit()
    np.testing.assert_array_equal(recorded.coef_, plain.coef_)   # recording changes nothing
    (points, final), = fits
    assert len(points) == DEFAULT_STEPS and not points[0].any()
    # the copy at the returned coefficients predicts as the fitted model does
    copy = bench.at(recorded, final, final)
    np.testing.assert_allclose(copy.decision_function(X), recorded.decision_function(X),
                               rtol=1e-12, atol=1e-12)
    assert copy.coef_.shape == recorded.coef_.shape
    # at an earlier point the copy differs, the fitted model does not change
    early = bench.at(recorded, points[3], final)
    assert not np.allclose(early.coef_, recorded.coef_)
    np.testing.assert_array_equal(recorded.coef_, plain.coef_)


def test_a_rule_is_kept_only_if_it_loses_no_score_and_no_log_loss(bench, monkeypatch):
    monkeypatch.setattr(bench, "RULES", (("a", "step", 0.1), ("b", "step", 0.2)))
    cells = [("s", 1e5, {"a": (10.0, 0.90), "b": (5.0, 0.90)}, 0.90),
             ("s", 1e6, {"a": (10.0, 0.95), "b": (5.0, 0.95)}, 0.95)]
    losses = [{"eps": 1.0, "30 steps": 0.15, "a": 0.15, "b": 0.19}]
    assert bench.kept(cells, losses) == ["a"]                    # b: probabilities worse
    cells[0][2]["a"] = (10.0, 0.8999)
    assert bench.kept(cells, losses) == []                       # a: one cell lower
    cells[0][2]["a"] = (10.0, 0.90)
    for cell in cells:
        cell[2]["a"] = (30.0, cell[2]["a"][1])
    assert bench.kept(cells, losses) == []                       # a never stops early

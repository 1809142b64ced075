"""``benchmarks/step_rule.py``: its choice rule, and the solver follows its choice (none)."""

import re
from pathlib import Path

from conftest import load_benchmark_script


def _cell(level, **scores):
    return ("set", level, {int(k[1:]): v for k, v in scores.items()})


def test_the_rule_takes_the_smallest_threshold_then_the_fewest_steps(monkeypatch):
    bench = load_benchmark_script("step_rule")
    monkeypatch.setattr(bench, "STEPS", (10, 20))
    monkeypatch.setattr(bench, "LEVELS", (1e5, 1e6))
    cells = [_cell(5e4, T10=0.80, T20=0.90, T30=0.91),     # below every threshold
             _cell(2e5, T10=0.84, T20=0.85, T30=0.85),     # 20 holds from 1e5, 10 does not
             _cell(2e6, T10=0.95, T20=0.95, T30=0.94)]
    assert bench.choose(cells) == (1e5, 20)
    cells[1] = _cell(2e5, T10=0.85, T20=0.85, T30=0.85)     # now both hold: the fewer steps
    assert bench.choose(cells) == (1e5, 10)
    cells[2] = _cell(2e6, T10=0.93, T20=0.93, T30=0.94)     # no candidate holds at 2e6
    assert bench.choose(cells) is None


def test_no_step_rule_held_so_the_full_mode_keeps_its_steps_at_large_n_times_epsilon():
    # the results file chose no pair once the two added sets were in: the solver must
    # then take DEFAULT_STEPS whatever n * epsilon (here 5000 x 200 = 1e6)
    import numpy as np
    from sklearn.preprocessing import normalize

    from skdp import BudgetAccountant, DPLogisticRegression
    from skdp.solvers import preconditioned as pc

    text = (Path(__file__).resolve().parents[1] / "benchmarks" / "results"
            / "step_rule.md").read_text()
    assert re.search(r"^Chosen: none ", text, re.M) is not None
    assert f"| T = {pc.DEFAULT_STEPS} |" in text         # the reference is the full mode's T
    rng = np.random.default_rng(0)
    X = normalize(rng.normal(size=(5000, 4)))
    y = X[:, 0] + 0.3 * rng.normal(size=5000) > 0
    model = DPLogisticRegression(epsilon=200.0, random_state=0, solver="preconditioned_gd",
                                 accountant=BudgetAccountant()).fit(X, y)
    assert model.n_iter_ == pc.DEFAULT_STEPS

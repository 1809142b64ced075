"""``benchmarks/reuters_seeds.py`` summarises the defaults' scores over seeds."""

import numpy as np
import pytest
from conftest import load_benchmark_script


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("reuters_seeds")


def test_summary_row_reports_blocks_of_five_and_how_many_reach_the_target(bench):
    scores = np.array([0.96] * 5 + [0.97] * 5 + [0.95, 0.96, 0.97, 0.96, 0.96])
    row = bench.summary_row("DPLogisticRegression", scores, 0.962, 0.9661)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "DPLogisticRegression"
    se = scores.std(ddof=1) / np.sqrt(15)
    assert cells[1] == f"{scores.mean():.4f} +- {se:.4f}"
    assert cells[2] == f"{scores.std(ddof=1):.4f}"
    assert cells[4] == "0.9600, 0.9700, 0.9600"
    assert cells[5] == "0.962: 1 of 3"
    assert cells[6] == "0.9661"


@pytest.mark.heavy
def test_seed_scores_are_the_defaults_test_accuracy_per_seed(bench):
    from skdp import BudgetAccountant, DPLogisticRegression

    X, y, Xt, yt = bench.load_svmlight("reuters")
    got = bench.seed_scores(DPLogisticRegression, X, y, Xt, yt, [3])
    expected = DPLogisticRegression(epsilon=1.0, random_state=3,
                                    accountant=BudgetAccountant()).fit(X, y).score(Xt, yt)
    assert got.tolist() == [expected]

"""``benchmarks/demo_splits.py`` refits the demo's own pipelines, split 0 being the README's."""

import numpy as np
import pytest
from conftest import load_benchmark_script
from sklearn.model_selection import train_test_split

from skdp.accounting import BudgetAccountant
from skdp.demo import demo_tasks


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("demo_splits")


def test_split_zero_is_the_demos_split_and_each_cell_a_mean_over_seeds(bench):
    data, name, loader, private, public, _ = demo_tasks()[0]
    assert (data, name) == ("breast_cancer", "DPLogisticRegression")
    scores, base = bench.split_scores(loader, private, public, splits=[0, 3], seeds=2,
                                      epsilons=[0.5, 2.0])
    assert scores.shape == (2, 2) and base.shape == (2,)
    X_tr, X_te, y_tr, y_te = train_test_split(*loader(), test_size=0.3, random_state=0)
    expected = np.mean([private(2.0, seed, BudgetAccountant()).fit(X_tr, y_tr).score(X_te, y_te)
                        for seed in range(2)])
    assert scores[0, 1] == expected
    assert base[0] == public().fit(X_tr, y_tr).score(X_te, y_te)
    # another split scores other rows
    assert scores[1, 1] != scores[0, 1] or base[1] != base[0]


@pytest.mark.heavy
def test_the_table_has_a_row_per_classifier_task(bench, capsys):
    bench.main(["--splits", "2", "--seeds", "1", "--out", "-"])
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| breast_cancer")
            or line.startswith("| digits")]
    assert len(rows) == 8  # four tasks, in the table and again for split 0 alone
    assert "matrix_sensing" not in out

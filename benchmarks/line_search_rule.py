"""line_search's high-dimension rule (``gradient_noise_cap``): validation runs.

Run by hand (a few minutes on 2 cores)::

    python benchmarks/line_search_rule.py

Each data set's *training* file (rows scaled to unit L2 norm) is split again, a
quarter held out (``train_test_split(test_size=0.25, random_state=0,
stratify=y)``); the test files are never read. Mean validation accuracy over
seeds 0-2 of ``DPLogisticRegression`` and ``DPLinearSVC`` with
``solver='line_search'`` for several caps (None: the rule off), Reuters at
epsilon 1 and Adult at epsilon 0.1 and 1, and debiasing alone (cap None,
``armijo_norm='debiased'``). Writes ``benchmarks/results/line_search_rule.md``.
"""

import sys
from pathlib import Path

import numpy as np

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accelerated_rule import validation_split  # noqa: E402

SETTINGS = [("cap 0.15", {"gradient_noise_cap": 0.15}),
            ("cap 0.25", {"gradient_noise_cap": 0.25}),
            ("cap 0.5", {"gradient_noise_cap": 0.5}),
            ("cap None", {"gradient_noise_cap": None}),
            ("cap None, debiased", {"gradient_noise_cap": None, "armijo_norm": "debiased"})]


def main(seeds=range(3)):
    print("| data | eps | estimator | majority | " + " | ".join(s for s, _ in SETTINGS) + " |")
    print("|---|---|---|---|" + "---|" * len(SETTINGS))
    for name, epsilons in (("reuters", (1.0,)), ("adult", (0.1, 1.0))):
        X, Xv, y, yv = validation_split(name)
        majority = max(np.mean(yv == c) for c in np.unique(yv))
        for eps in epsilons:
            for Est in (DPLogisticRegression, DPLinearSVC):
                cells = [np.mean([Est(epsilon=eps, solver="line_search", solver_params=params,
                                      random_state=s, accountant=BudgetAccountant())
                                  .fit(X, y).score(Xv, yv) for s in seeds])
                         for _, params in SETTINGS]
                print(f"| {name} | {eps:g} | {Est.__name__} | {majority:.4f} | "
                      + " | ".join(f"{c:.4f}" for c in cells) + " |", flush=True)


if __name__ == "__main__":
    from results_file import RESULTS, write_results

    with write_results(RESULTS / "line_search_rule.md", "python benchmarks/line_search_rule.py",
                       head=True):
        main()

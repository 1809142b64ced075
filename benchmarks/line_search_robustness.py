"""No step size to tune: line_search vs gd over data_norm x alpha on Adult (issue 12).

    python benchmarks/line_search_robustness.py [--seeds 3] [--epsilon 1.0]

DPLogisticRegression at its defaults except ``data_norm`` in {0.25, 1, 4} and
``alpha`` in {1e-5, 1e-3}, solvers ``line_search`` and ``gd``, test accuracy
on Adult (rows of unit L2 norm), mean over seeds; beside them the accuracy of
the non-private optimum of the same model (scikit-learn, same rows, same
penalty), so the spread of each solver can be read against the spread of
the models themselves. Prints a markdown table and writes it to
``benchmarks/results/line_search_robustness.md``. Run by hand (about 3 min).
"""

import argparse
import sys
import itertools

import numpy as np
from sklearn.linear_model import LogisticRegression

from benchmark_data import load_adult
from skdp import BudgetAccountant, DPLogisticRegression
from skdp.validation import resolve_delta

GRID = list(itertools.product([0.25, 1.0, 4.0], [1e-5, 1e-3]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args(argv)
    X, y, Xt, yt = load_adult()
    n = X.shape[0]
    rows = {}
    for data_norm, alpha in GRID:
        acc = {}
        for solver in ("line_search", "gd"):
            acc[solver] = float(np.mean([
                DPLogisticRegression(solver=solver, epsilon=args.epsilon, data_norm=data_norm,
                                     alpha=alpha, random_state=s,
                                     accountant=BudgetAccountant()).fit(X, y).score(Xt, yt)
                for s in range(args.seeds)]))
        scale = min(1.0, data_norm)  # rows of norm 1 clipped to data_norm
        acc["optimum"] = LogisticRegression(C=1.0 / (alpha * n), max_iter=5000).fit(
            X * scale, y).score(Xt * scale, yt)
        rows[data_norm, alpha] = acc
    print(f"Adult, epsilon = {args.epsilon:g}, delta = {resolve_delta('auto', n):.2g} "
          f"(delta='auto'), mean of {args.seeds} seeds.\n")
    print("| data_norm | alpha | line_search | gd | non-private optimum of the model |")
    print("|---:|---:|---:|---:|---:|")
    for (data_norm, alpha), acc in rows.items():
        print(f"| {data_norm:g} | {alpha:g} | {acc['line_search']:.4f} | {acc['gd']:.4f} "
              f"| {acc['optimum']:.4f} |")
    for key in ("line_search", "gd", "optimum"):
        values = [acc[key] for acc in rows.values()]
        gaps = [acc["optimum"] - acc[key] for acc in rows.values()]
        print(f"\n{key}: spread {max(values) - min(values):.4f}"
              + ("" if key == "optimum" else
                 f"; gap to the optimum from {min(gaps):.4f} to {max(gaps):.4f}"))


if __name__ == "__main__":
    from results_file import RESULTS, write_results

    with write_results(RESULTS / "line_search_robustness.md",
                       ("python benchmarks/line_search_robustness.py "
                        + " ".join(sys.argv[1:])).strip(), head=True):
        main()

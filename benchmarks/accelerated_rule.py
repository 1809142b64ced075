"""How many steps the accelerated solvers take when ``max_iter`` is None: validation runs.

Run by hand (a few minutes on 2 cores)::

    python benchmarks/accelerated_rule.py                  # Adult and Reuters
    python benchmarks/accelerated_rule.py --datasets reuters
    python benchmarks/accelerated_rule.py --average        # the released tail average

Each data set's *training* part (rows scaled to unit L2 norm) is split again,
a quarter held out (stratified, ``random_state=0``); the test parts are never
read. For ``nesterov`` and ``heavy_ball``, both classifiers and epsilon 0.1,
0.3, 1 and 3 (delta='auto'), the mean validation accuracy over seeds 0-2 with
T chosen by the paper's bound (``max_iter_rule='bound'``) and with
``c * n * sqrt(rho)`` steps (at least 10) for several c: the constant of
``max_iter_rule='budget'`` (:data:`skdp.solvers.accelerated.BUDGET_STEPS_PER_RECORD`).
Prints a Markdown table per data set and the mean over all cells. With
``--average`` the columns are instead the ``average`` option (the fraction of
the last iterates whose mean is released) at the default T, all three
accelerated solvers.
"""

import argparse
import sys

import numpy as np
from sklearn.model_selection import train_test_split

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp.solvers.gd import zcdp_rho
from skdp.validation import resolve_delta
from benchmark_data import load_svmlight

N_FEATURES = {"adult": 123, "reuters": 8315}
CONSTANTS = (0.06, 0.1, 0.12, 0.24)
EPSILONS = (0.1, 0.3, 1.0, 3.0)


def budget_steps(c, n, epsilon):
    """``c * n * sqrt(rho)`` steps (at least 10), rho of the fits' own delta='auto'."""
    return max(10, round(c * n * np.sqrt(zcdp_rho(epsilon, resolve_delta("auto", n)))))


def validation_split(name):
    X, y, _, _ = load_svmlight(name)
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


AVERAGES = (0.0, 0.25, 0.5, 0.75)


def averages(datasets, seeds):
    totals = {a: [] for a in AVERAGES}
    for name in datasets:
        X, Xv, y, yv = validation_split(name)
        majority = max(np.mean(yv == c) for c in np.unique(yv))
        print(f"\n## {name}: {X.shape[0]} training rows, validation majority {majority:.4f}\n")
        print("| estimator | solver | eps | " +
              " | ".join(f"average = {a:g}" for a in AVERAGES) + " |")
        print("|---|---|---|" + "---|" * len(AVERAGES))
        for Est in (DPLogisticRegression, DPLinearSVC):
            for solver in ("nesterov", "heavy_ball", "multistage_nesterov"):
                for eps in EPSILONS:
                    cells = []
                    for a in AVERAGES:
                        accuracy = float(np.mean([
                            Est(solver=solver, epsilon=eps, solver_params={"average": a},
                                random_state=seed, accountant=BudgetAccountant())
                            .fit(X, y).score(Xv, yv) for seed in range(seeds)]))
                        totals[a].append(accuracy)
                        cells.append(f"{accuracy:.4f}")
                    print(f"| {Est.__name__} | {solver} | {eps:g} | " + " | ".join(cells) + " |",
                          flush=True)
    print("\nMean validation accuracy over all cells: " + ", ".join(
        f"average = {a:g}: {np.mean(v):.4f} (min {np.min(v):.4f})" for a, v in totals.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["adult", "reuters"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--average", action="store_true")
    args = parser.parse_args(argv)
    if args.average:
        return averages(args.datasets, args.seeds)
    totals = {c: [] for c in ("bound",) + CONSTANTS}
    for name in args.datasets:
        X, Xv, y, yv = validation_split(name)
        majority = max(np.mean(yv == c) for c in np.unique(yv))
        print(f"\n## {name}: {X.shape[0]} training rows, validation majority {majority:.4f}\n")
        print("| estimator | solver | eps | bound (T) | " +
              " | ".join(f"c = {c:g} (T)" for c in CONSTANTS) + " |")
        print("|---|---|---|---|" + "---|" * len(CONSTANTS))
        for Est in (DPLogisticRegression, DPLinearSVC):
            for solver in ("nesterov", "heavy_ball"):
                for eps in EPSILONS:
                    cells = []
                    for c in ("bound",) + CONSTANTS:
                        if c == "bound":
                            T, params = None, {"max_iter_rule": "bound"}
                        else:
                            T = budget_steps(c, X.shape[0], eps)
                            params = {}
                        models = [Est(solver=solver, epsilon=eps, max_iter=T, solver_params=params,
                                      random_state=seed, accountant=BudgetAccountant()).fit(X, y)
                                  for seed in range(args.seeds)]
                        accuracy = float(np.mean([m.score(Xv, yv) for m in models]))
                        totals[c].append(accuracy)
                        cells.append(f"{accuracy:.4f} ({models[0].n_iter_})")
                    print(f"| {Est.__name__} | {solver} | {eps:g} | " + " | ".join(cells) + " |",
                          flush=True)
    print("\nMean validation accuracy over all cells: " + ", ".join(
        f"{c if c == 'bound' else f'c = {c:g}'}: {np.mean(v):.4f}" for c, v in totals.items()))


if __name__ == "__main__":
    sys.exit(main())

"""rgda's refresh period and step in high dimension: validation runs.

Run by hand (a minute or two on 2 cores)::

    python benchmarks/rgda_rule.py

Each data set's *training* file (rows scaled to unit L2 norm) is split again,
a quarter held out (``train_test_split(test_size=0.25, random_state=0,
stratify=y)``); the test files are never read. Mean validation accuracy over
seeds 0-2 of ``solver='rgda'`` at its defaults (``refresh_every='auto'``:
q = 1 on Reuters, 10 on Adult), with the old period ``refresh_every=10``, and
with the increments' step ``1 / L`` at q = 1 (``learning_rate`` = 1 / L).
"""

import sys
from pathlib import Path

import numpy as np

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accelerated_rule import validation_split  # noqa: E402


def main(seeds=range(3)):
    print("| data | eps | estimator | majority | defaults | refresh_every=10 | "
          "q = 1, step 1 / L |")
    print("|---|---|---|---|---|---|---|")
    for name, epsilons in (("reuters", (1.0,)), ("adult", (0.1, 1.0))):
        X, Xv, y, yv = validation_split(name)
        majority = max(np.mean(yv == c) for c in np.unique(yv))
        for eps in epsilons:
            for Est in (DPLogisticRegression, DPLinearSVC):
                def score(params):
                    models = [Est(epsilon=eps, solver="rgda", solver_params=params,
                                  random_state=s, accountant=BudgetAccountant()).fit(X, y)
                              for s in seeds]
                    return np.mean([m.score(Xv, yv) for m in models]), models[0]
                default, model = score({})
                old, _ = score({"refresh_every": 10})
                # the objective's public smoothness L (unit rows plus the intercept)
                L = (0.25 if Est is DPLogisticRegression else 1.0 / 1.5) * 2.0 + model.alpha
                short, _ = score({"refresh_every": 1, "learning_rate": 1.0 / L})
                print(f"| {name} | {eps:g} | {Est.__name__} | {majority:.4f} | {default:.4f} "
                      f"| {old:.4f} | {short:.4f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())

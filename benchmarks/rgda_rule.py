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
from skdp.validation import resolve_alpha

sys.path.insert(0, str(Path(__file__).resolve().parent))
from accelerated_rule import validation_split  # noqa: E402


def public_smoothness(estimator, n_samples):
    """The objective's public smoothness L: unit rows plus the intercept, and the ridge."""
    curvature = 0.25 if isinstance(estimator, DPLogisticRegression) else 1.0 / 1.5
    return curvature * 2.0 + resolve_alpha(estimator.alpha, n_samples)


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
                L = public_smoothness(model, X.shape[0])
                short, _ = score({"refresh_every": 1, "learning_rate": 1.0 / L})
                print(f"| {name} | {eps:g} | {Est.__name__} | {majority:.4f} | {default:.4f} "
                      f"| {old:.4f} | {short:.4f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())

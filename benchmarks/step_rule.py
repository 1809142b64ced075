"""Fewer steps where the noise is small? ``preconditioned_gd``'s steps against ``n * epsilon`` (issue 43).

Run by hand (about 5 minutes on 2 cores)::

    python benchmarks/step_rule.py            # -> results/step_rule.md

The noise of each of the full preconditioner's noisy gradients is about
``z * clip_norm / n`` with ``z`` of order ``sqrt(T) / epsilon``, so ``n *
epsilon`` says how far a fit is from the non-private one; where it is large
fewer steps might do as well as 30, and each step is a pass over the data. This script measures, on validation splits of training
data only, the full preconditioner (``solver='preconditioned_gd'`` at its
defaults) at ``T`` in :data:`STEPS` against 30 steps over a range of ``n *
epsilon``:

* Adult: a quarter of its training part (stratified, ``random_state=0``, as
  ``defaults.py --tune``), both classifiers, accuracy, seeds 0-4;
* the ill-conditioned imbalanced set (``defaults.py``): rows 40,000-50,000 of
  its training part, ``DPLogisticRegression``, ROC AUC, seeds 0-4;
* ``bench_logistic.py``'s 1,000,000 x 100 training rows: fit on the first
  800,000, score on the last 200,000 (its test rows are never read),
  ``DPLogisticRegression``, delta 1e-7 as there, accuracy, seeds 0-2;
* two synthetic sets added after the first run, whose choice (10 steps from
  ``n * epsilon >= 5e5``) they were made to check: five classes
  (``make_classification(250000, 20, n_informative=10, n_classes=5,
  n_clusters_per_class=1, random_state=0)``, rows scaled to unit norm; the
  multinomial loss) and a well-separated binary set (``n_informative=15,
  n_redundant=3, class_sep=2.0, random_state=2``), each fitted on its first
  200,000 rows and scored on the last 50,000, ``DPLogisticRegression``,
  accuracy, seeds 0-2.

Rule (fixed before the run): for each candidate ``T`` and each threshold in
:data:`LEVELS`, the pair holds if in every cell whose ``n * epsilon`` is at
least the threshold the candidate's mean score is no lower than 30 steps'
(``n`` is the number of rows fitted). The chosen pair has the smallest
threshold that holds, and among those the fewest steps (line "Chosen").
With the two added sets no pair holds, so the solver keeps 30 steps
(``docs/solvers/preconditioned.md``, "Fewer steps at large n times epsilon").
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import normalize

from skdp import BudgetAccountant, DPLogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_logistic import large_data  # noqa: E402
from defaults import ESTIMATORS, validation_sets  # noqa: E402
from results_file import RESULTS, write_results  # noqa: E402

#: the candidates' steps, and the reference (the full mode's steps below the threshold)
STEPS = (10, 15, 20)
REFERENCE = 30
#: the candidate thresholds of ``n * epsilon``
LEVELS = (1e5, 2e5, 5e5, 1e6)
#: the epsilons of each set (``n * epsilon`` from about 2e4 to 2e6)
EPSILONS = {"adult": (1.0, 3.0, 5.0, 10.0, 20.0, 40.0),
            "ill-conditioned": (1.0, 3.0, 5.0, 10.0, 20.0, 40.0),
            "1e6 x 100": (0.1, 0.3, 1.0),
            "5 classes": (0.5, 2.5, 5.0),
            "binary, separated": (0.5, 2.5, 5.0)}
SEEDS = {"adult": range(5), "ill-conditioned": range(5), "1e6 x 100": range(3),
         "5 classes": range(3), "binary, separated": range(3)}
#: the added sets' ``make_classification`` parameters (250,000 x 20)
ADDED = {"5 classes": dict(n_informative=10, n_classes=5, n_clusters_per_class=1,
                           random_state=0),
         "binary, separated": dict(n_informative=15, n_redundant=3, class_sep=2.0,
                                   random_state=2)}


def added_set(name):
    """``(X_fit, X_val, y_fit, y_val)`` of an added set: rows at unit norm, 200,000 / 50,000."""
    X, y = make_classification(250_000, 20, **ADDED[name])
    X = normalize(X)
    return X[:200_000], X[200_000:], y[:200_000], y[200_000:]


def _fit(X, y, eps, seed, T, Est=DPLogisticRegression, **kw):
    # every step on all rows, as when this was measured (before the sampled
    # first steps of ``sampled_steps.py``): the file stands as written
    return Est(epsilon=eps, random_state=seed, solver="preconditioned_gd", max_iter=T,
               solver_params={"sampled_steps": 0}, accountant=BudgetAccountant(),
               **kw).fit(X, y)


def _cells(name, data):
    """``(n * epsilon, {T: mean validation score})`` of one set, one per epsilon."""
    X, Xv, y, yv = data
    for eps in EPSILONS[name]:
        scores = {}
        for T in STEPS + (REFERENCE,):
            if name == "adult":
                values = [_fit(X, y, eps, s, T, Est).score(Xv, yv)
                          for Est in ESTIMATORS for s in SEEDS[name]]
            elif name == "ill-conditioned":
                values = [roc_auc_score(yv, _fit(X, y, eps, s, T).decision_function(Xv))
                          for s in SEEDS[name]]
            elif name == "1e6 x 100":
                values = [_fit(X, y, eps, s, T, delta=1e-7).score(Xv, yv) for s in SEEDS[name]]
            else:
                classes = list(range(ADDED[name].get("n_classes", 2)))
                values = [_fit(X, y, eps, s, T, classes=classes).score(Xv, yv)
                          for s in SEEDS[name]]
            scores[T] = float(np.mean(values))
        yield eps, X.shape[0] * eps, scores


def choose(cells):
    """The pair ``(T, threshold)`` of the rule in the module's docstring, or None."""
    holding = []
    for T in STEPS:
        for level in LEVELS:
            above = [c for c in cells if c[1] >= level]
            if above and all(c[2][T] >= c[2][REFERENCE] for c in above):
                holding.append((level, T))
    return min(holding) if holding else None


def validation_data():
    """The five validation sets by name, each ``(X_fit, X_val, y_fit, y_val)``."""
    adult, synth = validation_sets()
    X, y, _, _ = large_data(1_000_000, 100)
    sets = {"adult": adult, "ill-conditioned": synth,
            "1e6 x 100": (X[:800_000], X[800_000:], y[:800_000], y[800_000:])}
    sets.update({name: added_set(name) for name in ADDED})
    return sets


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    warnings.simplefilter("ignore")
    sets = validation_data()
    steps = STEPS + (REFERENCE,)
    with write_results(RESULTS / "step_rule.md", "python benchmarks/step_rule.py"):
        print("# preconditioned_gd: steps against n * epsilon (validation only)\n")
        print("Mean validation score (the ill-conditioned set: ROC AUC; the others: "
              "accuracy) of the full preconditioner at its defaults "
              "with T steps; n is the number of rows fitted.\n")
        print("| set | eps | n * eps | " + " | ".join(f"T = {T}" for T in steps) + " |")
        print("|---|---|---|" + "---|" * len(steps))
        cells = []
        for name, data in sets.items():
            for eps, level, scores in _cells(name, data):
                cells.append((name, level, scores))
                print(f"| {name} | {eps:g} | {level:.3g} | "
                      + " | ".join(f"{scores[T]:.4f}" for T in steps) + " |", flush=True)
        chosen = choose(cells)
        print()
        if chosen is None:
            print("Chosen: none (no candidate holds at any threshold)")
        else:
            print(f"Chosen: T = {chosen[1]} from n * epsilon >= {chosen[0]:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The first steps on a Poisson sample: ``preconditioned_gd``'s wall time at large n (issue 43).

Run by hand (about 6 minutes on 2 cores)::

    python benchmarks/sampled_steps.py        # -> results/sampled_steps.md

Each of the full preconditioner's 30 steps is a pass over all n rows. Far
from the minimiser a gradient from a sample of the rows points the same way
as the full one, so the first ``k`` steps can read a Poisson sample of
expected size ``m`` (each such step charged as ``PoissonSampled(m / n,
Gaussian(z))``, the rest as before) and cost ``m / n`` of a pass; the
averaged tail (the last half of the steps) stays on every row. The sample
size grows as epsilon shrinks, ``m = max(min_rows, 1e5 / epsilon)``, so the
sampled steps' noise on their mean gradient, ``z C / m``, stays that of a
fit with ``m * epsilon >= 1e5``; no step is sampled where ``m > n / 2``.

Measured on validation splits of training data only (the sets of
``step_rule.py`` that are large enough, and one more):

* ``bench_logistic.py``'s 1,000,000 x 100 training rows: fit on the first
  800,000, score the last 200,000 (its test rows are never read), delta
  1e-7, ``DPLogisticRegression`` at epsilon 0.3 / 1 / 3 and ``DPLinearSVC``
  at epsilon 1, seeds 0-2; and the wall time of one
  ``DPLogisticRegression`` fit at epsilon 1 per candidate (median of 3);
* ``step_rule.py``'s five classes and well-separated binary sets (200,000
  rows fitted, 50,000 scored), ``DPLogisticRegression``, epsilon 1 / 2.5 /
  5, seeds 0-2;
* the ill-conditioned imbalanced generator at 600,000 rows
  (``make_ill_conditioned_classification(600_000, random_state=1)``: fit on
  the first 500,000, ROC AUC on the last 100,000), ``DPLogisticRegression``,
  epsilon 0.5 / 1, seeds 0-2.

Candidates: ``k`` in (10, 15) sampled steps and ``min_rows`` in (50,000,
100,000); the reference is the solver without sampled steps
(``sampled_steps=0``). Rule, fixed before the run: a candidate holds if in
every cell where it samples its mean validation score is at least the
reference's minus 0.0005 and (``DPLogisticRegression``) its mean
validation log-loss at most the reference's times 1.005; among those that
hold, the one that reads the fewest rows on the 1e6 set at epsilon 1 (its
steps' passes, ``30 - k (1 - m / n)``), ties to the larger ``min_rows``
(line "Chosen"). None holding leaves the solver without sampled steps.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import log_loss, roc_auc_score

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp.datasets import make_ill_conditioned_classification

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_logistic import large_data  # noqa: E402
from results_file import RESULTS, write_results  # noqa: E402
from step_rule import ADDED, added_set  # noqa: E402

#: the candidates ``(k, min_rows)``; the reference has no sampled step
CANDIDATES = [(k, rows) for k in (10, 15) for rows in (50_000, 100_000)]
REFERENCE = (0, 100_000)
ROWS_EPSILON = 100_000
MAX_RATE = 0.5
SCORE_TOLERANCE = 0.0005
LOG_LOSS_RATIO = 1.005
SEEDS = range(3)
#: per set: the estimators and epsilons of its cells, the score, delta
CELLS = {
    "1e6 x 100": [(DPLogisticRegression, (0.3, 1.0, 3.0)), (DPLinearSVC, (1.0,))],
    "5 classes": [(DPLogisticRegression, (1.0, 2.5, 5.0))],
    "binary, separated": [(DPLogisticRegression, (1.0, 2.5, 5.0))],
    "ill-conditioned, 500,000": [(DPLogisticRegression, (0.5, 1.0))],
}


def sets():
    """The validation sets by name, each ``(X_fit, X_val, y_fit, y_val)``."""
    X, y, _, _ = large_data(1_000_000, 100)
    out = {"1e6 x 100": (X[:800_000], X[800_000:], y[:800_000], y[800_000:])}
    out.update({name: added_set(name) for name in ADDED})
    X, y = make_ill_conditioned_classification(600_000, random_state=1)
    out["ill-conditioned, 500,000"] = (X[:500_000], X[500_000:], y[:500_000], y[500_000:])
    return out


def sample_rate(n, eps, min_rows):
    """The sampled steps' rate ``m / n`` (public), or None where no step is sampled."""
    q = max(min_rows, ROWS_EPSILON / eps) / n
    return q if q <= MAX_RATE else None


def fit(Est, X, y, eps, seed, candidate, name):
    k, rows = candidate
    classes = list(range(ADDED[name].get("n_classes", 2))) if name in ADDED else [0, 1]
    return Est(epsilon=eps, random_state=seed, solver="preconditioned_gd", classes=classes,
               delta=1e-7 if name == "1e6 x 100" else "auto", accountant=BudgetAccountant(),
               solver_params={"sampled_steps": k, "sample_rows": max(rows, ROWS_EPSILON / eps)}
               ).fit(X, y)


def cell(Est, data, eps, candidate, name):
    """Mean validation score and (logistic regression) log-loss over the seeds."""
    X, Xv, y, yv = data
    scores, losses = [], []
    for seed in SEEDS:
        model = fit(Est, X, y, eps, seed, candidate, name)
        if name.startswith("ill-conditioned"):
            scores.append(roc_auc_score(yv, model.decision_function(Xv)))
        else:
            scores.append(model.score(Xv, yv))
        if Est is DPLogisticRegression:
            losses.append(log_loss(yv, model.predict_proba(Xv), labels=model.classes_))
    return float(np.mean(scores)), (float(np.mean(losses)) if losses else None)


def holds(candidate, rows):
    """Whether ``candidate`` holds by the rule of the module's docstring."""
    for n, eps, results in rows:
        if sample_rate(n, eps, candidate[1]) is None:
            continue
        (score, loss), (ref_score, ref_loss) = results[candidate], results[REFERENCE]
        if score < ref_score - SCORE_TOLERANCE:
            return False
        if loss is not None and loss > ref_loss * LOG_LOSS_RATIO:
            return False
    return True


def passes(candidate, n=800_000, eps=1.0):
    q = sample_rate(n, eps, candidate[1])
    return 30 - (0 if q is None else candidate[0] * (1 - q))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    warnings.simplefilter("ignore")
    data = sets()
    everyone = [REFERENCE] + CANDIDATES
    labels = ["none"] + [f"k={k}, min {rows // 1000}k" for k, rows in CANDIDATES]
    with write_results(RESULTS / "sampled_steps.md", "python benchmarks/sampled_steps.py"):
        print("# preconditioned_gd: the first steps on a Poisson sample (validation only)\n")
        print("Mean validation score over seeds 0-2 (the ill-conditioned set: ROC AUC; the "
              "others: accuracy), and below it the mean validation log-loss "
              "(DPLogisticRegression), of the full preconditioner with k of its 30 steps on "
              "a Poisson sample of expected size m = max(min rows, 1e5 / epsilon); '-' where "
              "m > n / 2 (no step sampled: the reference's fit).\n")
        print("| set | estimator | eps | n | " + " | ".join(labels) + " |")
        print("|---|---|---|---|" + "---|" * len(everyone))
        rows = []
        for name, groups in CELLS.items():
            n = data[name][0].shape[0]
            for Est, epsilons in groups:
                for eps in epsilons:
                    results = {c: (cell(Est, data[name], eps, c, name)
                                   if c == REFERENCE or sample_rate(n, eps, c[1]) else None)
                               for c in everyone}
                    results = {c: r if r is not None else results[REFERENCE]
                               for c, r in results.items()}
                    rows.append((n, eps, results))
                    shown = [f"{results[c][0]:.4f}" if c == REFERENCE or sample_rate(n, eps, c[1])
                             else "-" for c in everyone]
                    print(f"| {name} | {Est.__name__} | {eps:g} | {n:,} | "
                          + " | ".join(shown) + " |", flush=True)
                    if Est is DPLogisticRegression:
                        shown = [f"{results[c][1]:.4f}"
                                 if c == REFERENCE or sample_rate(n, eps, c[1]) else "-"
                                 for c in everyone]
                        print("| | log-loss | | | " + " | ".join(shown) + " |", flush=True)
        print("\n### Fit wall time, 1e6 x 100 (800,000 rows), DPLogisticRegression, epsilon 1, "
              "median of 3\n")
        print("| candidate | passes over the rows | fit wall (s) |")
        print("|---|---|---|")
        X, _, y, _ = data["1e6 x 100"]
        for c, label in zip(everyone, labels):
            times = []
            for _ in range(3):
                start = time.perf_counter()
                fit(DPLogisticRegression, X, y, 1.0, 0, c, "1e6 x 100")
                times.append(time.perf_counter() - start)
            print(f"| {label} | {passes(c):.1f} | {np.median(times):.2f} |", flush=True)
        holding = [c for c in CANDIDATES if holds(c, rows)]
        print()
        for c, label in zip(CANDIDATES, labels[1:]):
            print(f"- {label}: {'holds' if c in holding else 'does not hold'}")
        print()
        if holding:
            k, rows_min = min(holding, key=lambda c: (passes(c), -c[1]))
            print(f"Chosen: k = {k} sampled steps, min rows {rows_min:,}")
        else:
            print("Chosen: none (no candidate holds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

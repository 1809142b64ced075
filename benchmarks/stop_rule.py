"""Stop ``preconditioned_gd`` early where its iterates have settled? Measured (issue 43).

Run by hand (about 4 minutes on 2 cores)::

    python benchmarks/stop_rule.py            # -> results/stop_rule.md

``step_rule.py`` found no fixed number of steps below 30 that holds on every
validation set. A stopping rule reads the iterates instead: after step ``t``
it stops if the iterate has settled, and releases ``W_t``. The iterates are
functions of the released noisy gradients and second moment, so stopping is
post-processing (the fit is still charged for 30 steps). Two criteria:

* relative step: ``||W_t - W_{t-1}|| / ||W_t|| <= tol`` (the size of the
  move, as scikit-learn's ``tol`` on the iterates);
* direction: ``1 - cos(W_t, W_{t-1}) <= tol`` (the angle only: what a
  classifier's accuracy depends on, apart from the intercept's share).

Each fit runs the solver's 30 steps once while the points at which it
queries its gradients (``W_0 .. W_29``) are recorded; every rule is then
applied to the same run, so a rule's score differs from the 30-step fit's by
where it stops, not by its noise. Sets, seeds and splits are
``step_rule.py``'s (validation splits of training data only; the 1e6 x 100
set scores the last 200,000 of its training rows), at more epsilons.

The criteria and tolerances were picked after an exploratory run on these
sets, so this is a measurement, not a selection. A rule would be kept only
if it stops early in some cell, no cell's mean score is below the 30-step
fit's and, on the 1e6 x 100 set, its validation log-loss is no higher than
the 30-step fit's (line "Kept"): the last condition is the point of this
file, since accuracy settles long before the probabilities do.
"""

import argparse
import copy
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score

from skdp import BudgetAccountant, DPLogisticRegression
from skdp.solvers.preconditioned import DEFAULT_STEPS, PreconditionedGD

sys.path.insert(0, str(Path(__file__).resolve().parent))
from defaults import ESTIMATORS  # noqa: E402
from results_file import RESULTS, write_results  # noqa: E402
from step_rule import ADDED, validation_data  # noqa: E402

#: the rules: (label, criterion, tolerance)
RULES = (("relative step <= 0.02", "step", 0.02), ("relative step <= 0.01", "step", 0.01),
         ("direction <= 3e-5", "direction", 3e-5), ("direction <= 1e-5", "direction", 1e-5))
EPSILONS = {"adult": (0.1, 0.3, 1.0, 3.0, 5.0, 10.0, 20.0, 40.0),
            "ill-conditioned": (0.1, 0.3, 1.0, 3.0, 5.0, 10.0, 20.0, 40.0),
            "1e6 x 100": (0.1, 0.3, 1.0),
            "5 classes": (0.1, 0.5, 2.5, 5.0),
            "binary, separated": (0.1, 0.5, 2.5, 5.0)}
SEEDS = {"adult": range(5), "ill-conditioned": range(5), "1e6 x 100": range(3),
         "5 classes": range(3), "binary, separated": range(3)}


@contextmanager
def recorded_points():
    """Record the points at which ``preconditioned_gd`` queries its gradients, per fit.

    Yields a list that receives, per fit, ``(points, coef)``: the points
    ``W_0 .. W_{T-1}`` and the coefficients the solver returned. The solver
    runs unchanged (only its gradient query is wrapped to copy its argument).
    """
    fits = []
    solve = PreconditionedGD.solve

    def recording_solve(self, queries, plan):
        points = []
        ask = queries.noisy_gradient

        def noisy_gradient(W, *args, **kwargs):
            points.append(np.array(W, dtype=np.float64))
            return ask(W, *args, **kwargs)

        queries.noisy_gradient = noisy_gradient
        result = solve(self, queries, plan)
        fits.append((points, np.array(result.coef, dtype=np.float64)))
        return result

    PreconditionedGD.solve = recording_solve
    try:
        yield fits
    finally:
        PreconditionedGD.solve = solve


def criterion(points, kind):
    """``c[t - 1]``: the criterion after step ``t`` (``W_t`` against ``W_{t-1}``), t >= 1."""
    out = []
    for before, after in zip(points[:-1], points[1:]):
        a, b = after.ravel(), before.ravel()
        if kind == "step":
            size = np.linalg.norm(a)
            out.append(np.linalg.norm(a - b) / size if size > 0 else np.inf)
        else:
            size = np.linalg.norm(a) * np.linalg.norm(b)
            out.append(1.0 - float(a @ b) / size if size > 0 else np.inf)
    return out


def stop_step(points, kind, tol, first=2):
    """The first step ``t >= first`` after which the criterion is at most ``tol``, or None."""
    for t, value in enumerate(criterion(points, kind), start=1):
        if t >= first and value <= tol:
            return t
    return None


def at(model, W, final):
    """A copy of ``model`` whose coefficients are the solver's ``W`` (public attributes only)."""
    W, final = np.atleast_2d(W.T).T, np.atleast_2d(final.T).T
    d = model.n_features_in_
    # the model's intercept is the intercept feature times the last row of W
    scale = np.asarray(model.intercept_).ravel() / final[d]
    other = copy.copy(model)
    other.coef_ = np.ascontiguousarray(W[:d].T).reshape(np.shape(model.coef_))
    other.intercept_ = (scale * W[d]).reshape(np.shape(model.intercept_))
    return other


def _score(name, model, Xv, yv):
    if name == "ill-conditioned":
        return roc_auc_score(yv, model.decision_function(Xv))
    return model.score(Xv, yv)


def measure(name, data):
    """Per epsilon: ``(eps, n * eps, {label: (mean steps, mean score)}, 30-step score, losses)``.

    ``losses``: the mean validation log-loss of the 30-step fit and of each
    rule's stopped fit, on the 1e6 x 100 set only (None elsewhere).
    """
    X, Xv, y, yv = data
    kw = {"delta": 1e-7} if name == "1e6 x 100" else {}
    if name in ADDED:
        kw["classes"] = list(range(ADDED[name].get("n_classes", 2)))
    estimators = ESTIMATORS if name == "adult" else (DPLogisticRegression,)
    for eps in EPSILONS[name]:
        full, rules = [], {label: ([], []) for label, _, _ in RULES}
        losses = {"30 steps": []} if name == "1e6 x 100" else None
        for Est in estimators:
            for seed in SEEDS[name]:
                with recorded_points() as fits:
                    # every step on all rows, as when this was measured (before
                    # sampled_steps.py's sampled first steps): the file stands
                    model = Est(epsilon=eps, random_state=seed, solver="preconditioned_gd",
                                solver_params={"sampled_steps": 0},
                                accountant=BudgetAccountant(), **kw).fit(X, y)
                points, final = fits[0]
                full.append(_score(name, model, Xv, yv))
                if losses is not None:
                    losses["30 steps"].append(log_loss(yv, model.predict_proba(Xv)))
                for label, kind, tol in RULES:
                    t = stop_step(points, kind, tol)
                    stopped = model if t is None else at(model, points[t], final)
                    rules[label][0].append(DEFAULT_STEPS if t is None else t)
                    rules[label][1].append(_score(name, stopped, Xv, yv))
                    if losses is not None:
                        losses.setdefault(label, []).append(
                            log_loss(yv, stopped.predict_proba(Xv)))
        summary = {label: (float(np.mean(s)), float(np.mean(v))) for label, (s, v) in rules.items()}
        yield (eps, X.shape[0] * eps, summary, float(np.mean(full)),
               None if losses is None else {k: float(np.mean(v)) for k, v in losses.items()})


def kept(cells, losses):
    """The rules that stop early somewhere and hold: no cell's mean score below 30 steps',
    no higher log-loss on 1e6 x 100 (a rule that never stops early is no rule)."""
    out = []
    for label, _, _ in RULES:
        saves = any(c[2][label][0] < DEFAULT_STEPS for c in cells)
        scores_hold = all(c[2][label][1] >= c[3] for c in cells)
        loss_holds = all(row.get(label, np.inf) <= row["30 steps"] for row in losses)
        if saves and scores_hold and loss_holds:
            out.append(label)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    warnings.simplefilter("ignore")
    sets = validation_data()
    big = sets["1e6 x 100"]
    with write_results(RESULTS / "stop_rule.md", "python benchmarks/stop_rule.py"):
        print("# preconditioned_gd: stopping where the iterates settle (validation only)\n")
        print("Mean validation score (the ill-conditioned set: ROC AUC; the others: accuracy) "
              f"of the {DEFAULT_STEPS}-step fit, and for each rule the mean step it stops "
              "at and its score minus the 30-step fit's (same runs).\n")
        print("| set | eps | n * eps | 30 steps | "
              + " | ".join(f"{label}: steps / change" for label, _, _ in RULES) + " |")
        print("|---|---|---|---|" + "---|" * len(RULES))
        cells, losses = [], []
        for name, data in sets.items():
            for eps, level, summary, full, loss in measure(name, data):
                cells.append((name, level, summary, full))
                if loss is not None:
                    losses.append(dict(loss, eps=eps))
                print(f"| {name} | {eps:g} | {level:.3g} | {full:.4f} | "
                      + " | ".join(f"{summary[label][0]:.1f} / {summary[label][1] - full:+.5f}"
                                   for label, _, _ in RULES) + " |", flush=True)
        Xf, Xv, yf, yv = big
        reference = log_loss(yv, LogisticRegression().fit(Xf, yf).predict_proba(Xv))
        print("\n### Log-loss on the 1e6 x 100 validation rows (lower is better)\n")
        print(f"scikit-learn's LogisticRegression() on the same rows: {reference:.4f}.\n")
        print("| eps | 30 steps | " + " | ".join(label for label, _, _ in RULES) + " |")
        print("|---|---|" + "---|" * len(RULES))
        for row in losses:
            print(f"| {row['eps']:g} | {row['30 steps']:.4f} | "
                  + " | ".join(f"{row[label]:.4f}" for label, _, _ in RULES) + " |")
        held = kept(cells, losses)
        print()
        print("Kept: " + (", ".join(held) if held else
                          "none (each rule lowers a cell's score, raises the log-loss "
                          "or never stops early)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

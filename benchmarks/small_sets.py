"""Private pipelines on scikit-learn's small data sets (issue 19).

For breast_cancer, wine, digits and iris (70/30 split, stratified; seed s
draws the split and the estimator's noise, each fit charged to a fresh
accountant), the table gives the mean test
accuracy over seeds of

* ``make_pipeline(BoundedScaler(documented_bounds(name)), DPxxx(epsilon=e))``
  for e in {0.5, 1, 2, 5, 10}: end-to-end private (the bounds are the data
  set's documentation, the scaler reads no value);
* the same estimator behind a ``StandardScaler`` fitted on the private
  training data (NOT private: the reference the issue compares with at eps 1);
* the non-private counterpart (``LogisticRegression`` / ``LinearSVC``)
  behind a ``StandardScaler``.

Run::

    python benchmarks/small_sets.py                 # 5 seeds, under a minute
    python benchmarks/small_sets.py --seeds 2 --out -   # quick, to stdout
    python benchmarks/small_sets.py --validation    # how gd's step rule was chosen
    python benchmarks/small_sets.py --knobs --seeds 10   # settings weighed, 3 minutes

``--validation`` re-measures the choice of ``skdp.solvers.budget_rules.STEPS_PER_RECORD``
(the constant of ``budget_max_iter``) without touching a test set: each
seed's training part is split again 70/30, the defaults are fitted on the
inner part with the constant set to each candidate, and the mean accuracy
on the inner validation part over both classifiers, the four data sets and
the five epsilons is printed per candidate.

``--knobs`` weighs each classifier's settings (``KNOBS``: averaging, step
length, smoothing, loss, clip_norm, data_norm, more steps, other solvers)
against its defaults on the same kind of inner validation splits (seeds 10
onwards, never those that chose the constant): the mean over the 20 cells
(four data sets, five epsilons), the worst cell, and DPLinearSVC's weakest
test cell of ``small_sets.md``, iris at epsilon 10. Results:
``benchmarks/results/small_sets_knobs.md``.
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from benchmark_data import load_small, write_report
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp.datasets import documented_bounds
from skdp.preprocessing import BoundedScaler

DATASETS = ("breast_cancer", "wine", "digits", "iris")
EPSILONS = (0.5, 1.0, 2.0, 5.0, 10.0)
CLASSIFIERS = {
    "DPLogisticRegression": (DPLogisticRegression, lambda: LogisticRegression(max_iter=5000)),
    "DPLinearSVC": (DPLinearSVC, lambda: LinearSVC()),
}


def split(name, seed):
    X, y = load_small(name)
    return train_test_split(X, y, test_size=0.3, random_state=seed, stratify=y)


def measure(name, estimator, seeds, epsilons=EPSILONS):
    """Mean test accuracy per column of the table, over seeds."""
    private_cls, public = CLASSIFIERS[estimator]
    bounds = documented_bounds(name)
    rows = {f"bounded eps={e:g}": [] for e in epsilons}
    rows["StandardScaler (not private) eps=1"] = []
    rows["non-private"] = []
    for seed in seeds:
        X_tr, X_te, y_tr, y_te = split(name, seed)
        for e in epsilons:
            model = make_pipeline(BoundedScaler(bounds), private_cls(
                epsilon=e, accountant=BudgetAccountant(), random_state=seed))
            rows[f"bounded eps={e:g}"].append(model.fit(X_tr, y_tr).score(X_te, y_te))
        leaky = make_pipeline(StandardScaler(), private_cls(
            epsilon=1.0, accountant=BudgetAccountant(), random_state=seed))
        rows["StandardScaler (not private) eps=1"].append(
            leaky.fit(X_tr, y_tr).score(X_te, y_te))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = make_pipeline(StandardScaler(), public()).fit(X_tr, y_tr)
        rows["non-private"].append(base.score(X_te, y_te))
    return {k: float(np.mean(v)) for k, v in rows.items()}


def inner_splits(name, seeds):
    """Each seed's training part split again 70/30: (X_in, X_val, y_in, y_val)."""
    for seed in seeds:
        X_tr, _, y_tr, _ = split(name, seed)
        yield seed, train_test_split(X_tr, y_tr, test_size=0.3, random_state=seed + 100,
                                     stratify=y_tr)


def validation(seeds, candidates=(0.3, 0.6, 1.2)):
    """Mean inner-validation accuracy of the defaults per candidate constant."""
    import skdp.solvers.budget_rules as rules

    saved = rules.STEPS_PER_RECORD
    lines = ["| STEPS_PER_RECORD | mean validation accuracy |", "|---|---|"]
    try:
        for constant in candidates:
            rules.STEPS_PER_RECORD = constant
            scores = []
            for estimator, (private_cls, _) in CLASSIFIERS.items():
                for name in DATASETS:
                    bounds = documented_bounds(name)
                    for seed, (X_in, X_val, y_in, y_val) in inner_splits(name, seeds):
                        for e in EPSILONS:
                            model = make_pipeline(BoundedScaler(bounds), private_cls(
                                epsilon=e, accountant=BudgetAccountant(), random_state=seed))
                            scores.append(model.fit(X_in, y_in).score(X_val, y_val))
            lines.append(f"| {constant:g} | {np.mean(scores):.4f} |")
            print(lines[-1], file=sys.stderr, flush=True)
    finally:
        rules.STEPS_PER_RECORD = saved
    return "\n".join(lines)


#: Settings weighed against the defaults by ``--knobs``:
#: estimator parameters, or ``steps`` (a multiple of the default fit's T,
#: at every epsilon or at ``only_eps``).
KNOBS = {
    "defaults": {},
    "average 0 (last iterate)": {"solver_params": {"average": 0.0}},
    "average 0.25": {"solver_params": {"average": 0.25}},
    "average 0.75": {"solver_params": {"average": 0.75}},
    # DPLinearSVC's default step is 4 h / (data_norm**2 + 1) = 3
    "step 2x longer (the rule halves T)": {"solver_params": {"learning_rate": 6.0},
                                           "hinge_only": True},
    "smoothing 0.5": {"smoothing": 0.5},
    "smoothing 1": {"smoothing": 1.0},
    "smoothing 3": {"smoothing": 3.0},
    "loss squared_hinge": {"loss": "squared_hinge"},
    "loss hinge": {"loss": "hinge"},
    "clip_norm 0.5": {"clip_norm": 0.5},
    "clip_norm 2": {"clip_norm": 2.0},
    "data_norm 2": {"data_norm": 2.0},
    "steps x2": {"steps": 2.0},
    "steps x2 at eps 10 only": {"steps": 2.0, "only_eps": 10.0},
    "solver heavy_ball": {"solver": "heavy_ball"},
    "solver nesterov": {"solver": "nesterov"},
}


#: Keys of the knobs written for DPLinearSVC's smoothed hinge.
HINGE_ONLY = {"smoothing", "loss", "hinge_only"}


def _knob_score(private_cls, bounds, epsilon, seed, knob, data):
    X_in, X_val, y_in, y_val = data
    params = dict(knob)
    params.pop("hinge_only", None)
    factor = params.pop("steps", 1.0)
    if params.pop("only_eps", epsilon) != epsilon:
        factor = 1.0

    def pipeline(**extra):
        return make_pipeline(BoundedScaler(bounds), private_cls(
            epsilon=epsilon, accountant=BudgetAccountant(), random_state=seed,
            **params, **extra))

    if factor != 1.0:
        default_steps = pipeline().fit(X_in, y_in)[-1].n_iter_
        model = pipeline(max_iter=max(1, round(factor * default_steps)))
    else:
        model = pipeline()
    return model.fit(X_in, y_in).score(X_val, y_val)


def knobs(seeds, estimator="DPLinearSVC"):
    """One estimator on inner validation: the grid's mean and the iris eps-10 cell per knob.

    The knobs written for the smoothed hinge (``smoothing``, ``loss``, its
    step ``learning_rate``) are skipped for DPLogisticRegression.
    """
    private_cls = CLASSIFIERS[estimator][0]
    lines = [f"| {estimator} setting | mean over the grid | worst cell | iris, eps 10 |",
             "|---|---|---|---|"]
    for label, knob in KNOBS.items():
        if private_cls is not DPLinearSVC and HINGE_ONLY & set(knob):
            continue
        cells = {}
        for name in DATASETS:
            bounds = documented_bounds(name)
            for seed, data in inner_splits(name, seeds):
                for e in EPSILONS:
                    cells.setdefault((name, e), []).append(
                        _knob_score(private_cls, bounds, e, seed, knob, data))
        means = {cell: float(np.mean(v)) for cell, v in cells.items()}
        lines.append(f"| {label} | {np.mean(list(means.values())):.4f} | "
                     f"{min(means.values()):.3f} | {means['iris', 10.0]:.3f} |")
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", default="benchmarks/results/small_sets.md",
                        help="Markdown file to write, '-' for stdout only")
    parser.add_argument("--validation", action="store_true",
                        help="re-measure gd's step-rule constant on inner validation splits")
    parser.add_argument("--knobs", action="store_true",
                        help="each classifier's settings against its defaults on inner "
                             "validation splits of seeds 10 to 9 + --seeds "
                             "(writes small_sets_knobs.md beside --out)")
    args = parser.parse_args(argv)
    seeds = range(args.seeds)
    if args.validation:
        seeds = range(min(args.seeds, 4))
        text = (f"# gd's step-rule constant on inner validation splits (seeds {list(seeds)})\n\n"
                "Command: `python benchmarks/small_sets.py --validation`; the four data sets' "
                "training parts split 70/30 again, both classifiers, every epsilon of the "
                "grid, mean accuracy on the inner validation parts.\n\n"
                + validation(seeds) + "\n")
        print(text)
        if args.out != "-":
            Path(args.out).with_name("small_sets_validation.md").write_text(text)
        return
    if args.knobs:
        seeds = range(10, 10 + args.seeds)
        text = "\n\n".join([
            f"# Settings against the defaults, inner validation ({args.seeds} seeds)",
            f"Command: `python benchmarks/small_sets.py --knobs --seeds {args.seeds}`. "
            f"Seeds {seeds[0]}-{seeds[-1]}: each seed's training part (70/30 stratified) "
            "split 70/30 again; fitted on the inner part, scored on the validation part; "
            "no test part is read. *mean over the grid*: the 20 cells (breast_cancer, "
            "wine, digits, iris; epsilon 0.5, 1, 2, 5, 10), each a mean over seeds.",
            *(knobs(seeds, estimator) for estimator in ("DPLinearSVC",
                                                        "DPLogisticRegression")),
        ]) + "\n"
        write_report(text, "-" if args.out == "-" else
                     os.path.join(os.path.dirname(args.out), "small_sets_knobs.md"))
        return
    start = time.perf_counter()
    lines = [
        f"# Private pipelines on scikit-learn's small data sets ({args.seeds} seeds)",
        "",
        "Command: `python benchmarks/small_sets.py"
        + (f" --seeds {args.seeds}" if args.seeds != 5 else "") + "`. 70/30 stratified "
        "splits; seed s draws the split and the estimator's noise; defaults otherwise "
        "(delta 1e-5). *bounded*: `make_pipeline(BoundedScaler(documented_bounds(name)), "
        "DPxxx(epsilon=e))`, private end to end. *StandardScaler*: the estimator at eps 1 "
        "behind a scaler fitted on the private data without privacy (a reference, not "
        "private). *non-private*: the scikit-learn counterpart behind a StandardScaler.",
        "",
    ]
    header = None
    for estimator in CLASSIFIERS:
        for name in DATASETS:
            result = measure(name, estimator, seeds)
            if header is None:
                header = "| estimator | data | " + " | ".join(result) + " |"
                lines += [header, "|" + "---|" * (len(result) + 2)]
            lines.append(f"| {estimator} | {name} | "
                         + " | ".join(f"{v:.3f}" for v in result.values()) + " |")
            print(lines[-1], file=sys.stderr, flush=True)
    lines += ["", f"Wall time {time.perf_counter() - start:.0f} s."]
    text = "\n".join(lines) + "\n"
    write_report(text, args.out)


if __name__ == "__main__":
    main()

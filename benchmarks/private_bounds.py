"""Private bounds on raw tables (issue 41): DPBoundsScaler against documented ranges.

For scikit-learn's raw breast_cancer, wine and digits (70/30 stratified
splits; seed s draws the split and the noise) and raw Adult (a9a's svmlight
files as loaded: 123 binary features, no normalisation; the published
train/test split, seed s draws the noise), at TOTAL epsilon 1 and delta
1e-5 per charged step, the table gives the mean test accuracy over seeds of

* *private bounds*: ``make_pipeline(DPBoundsScaler(epsilon=s),
  DPxxx(epsilon=1 - s))``, the one-line private pipeline, no public range;
* *documented bounds*: ``make_pipeline(BoundedScaler(documented),
  DPxxx(epsilon=1))``, the ranges from the data sets' documentation
  (:func:`skdp.datasets.documented_bounds`; Adult's features are documented
  as binary, range [0, 1]);
* *documented bounds, eps=1-s*: the documented-bounds pipeline with the
  model at the private pipeline's share: what the split of the budget costs
  with perfect public bounds.

Run::

    python benchmarks/private_bounds.py                 # 5 seeds, the table
    python benchmarks/private_bounds.py --validation    # how the defaults were chosen
    python benchmarks/private_bounds.py --validation --trim --total 10

``--validation`` chooses ``DPBoundsScaler``'s share ``s`` of the total and
the constants ``PENALTY``, ``DISTANCE_PENALTY`` and ``INCLUDE`` of
``skdp._private_bounds`` without a test set: each seed's training part is
split again 70/30 (Adult: its training file), the pipeline is fitted on the
inner part and scored on the inner validation part. ``--validation --trim
--total e`` weighs ``TRIM`` (a cell's cost as a share of the records) at the
chosen settings and total epsilon ``e``.
"""

import argparse
import itertools
import os
import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchmark_data import load_small, load_svmlight  # noqa: E402

import skdp._private_bounds as private_bounds  # noqa: E402
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression  # noqa: E402
from skdp.datasets import documented_bounds  # noqa: E402
from skdp.preprocessing import BoundedScaler, DPBoundsScaler  # noqa: E402

NAMES = ("breast_cancer", "wine", "digits", "adult")
TOTAL = 1.0
SHARE = 0.35  # DPBoundsScaler's share of the total (its default epsilon)
ESTIMATORS = {"DPLogisticRegression": DPLogisticRegression, "DPLinearSVC": DPLinearSVC}


def load_raw_adult():
    """a9a as loaded: CSR with 123 binary features, labels +/-1, no normalisation."""
    return load_svmlight("adult", unit_rows=False)


def documented(name):
    if name == "adult":
        return (0.0, 1.0)
    return documented_bounds(name)


def splits(name, seeds, validation=False):
    """Yield ``(seed, X_train, X_test, y_train, y_test)``; inner splits if ``validation``."""
    if name == "adult":
        X, y, Xt, yt = load_raw_adult()
    else:
        X, y = load_small(name)
    for seed in seeds:
        if name == "adult":
            X_tr, X_te, y_tr, y_te = X, Xt, y, yt
        else:
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=seed,
                                                      stratify=y)
        if validation:
            X_tr, X_te, y_tr, y_te = train_test_split(
                X_tr, y_tr, test_size=0.3, random_state=seed + 100, stratify=y_tr)
        yield seed, X_tr, X_te, y_tr, y_te


def private_pipeline(estimator, share, seed, classes):
    return make_pipeline(
        DPBoundsScaler(epsilon=share * TOTAL, accountant=BudgetAccountant(), random_state=seed),
        ESTIMATORS[estimator](epsilon=(1 - share) * TOTAL, classes=classes,
                              accountant=BudgetAccountant(), random_state=seed))


def documented_pipeline(estimator, name, seed, classes):
    return make_pipeline(BoundedScaler(documented(name)), ESTIMATORS[estimator](
        epsilon=TOTAL, classes=classes, accountant=BudgetAccountant(), random_state=seed))


def table(seeds, estimators):
    lines = [
        "| estimator | data | n_train x d | documented bounds, eps=1 | private bounds, "
        f"eps={SHARE:g} + {1 - SHARE:g} | difference | documented bounds, "
        f"eps={1 - SHARE:g} |",
        "|---|---|---|---|---|---|---|"]
    for estimator in estimators:
        for name in NAMES:
            doc, priv, exact = [], [], []
            for seed, X_tr, X_te, y_tr, y_te in splits(name, seeds):
                classes = np.unique(y_tr)  # public: the documented label set
                doc.append(documented_pipeline(estimator, name, seed, classes)
                           .fit(X_tr, y_tr).score(X_te, y_te))
                priv.append(private_pipeline(estimator, SHARE, seed, classes)
                            .fit(X_tr, y_tr).score(X_te, y_te))
                # the documented bounds with the model's share: what the split costs
                split = documented_pipeline(estimator, name, seed, classes)
                split.set_params(**{f"{split.steps[-1][0]}__epsilon": (1 - SHARE) * TOTAL})
                exact.append(split.fit(X_tr, y_tr).score(X_te, y_te))
            d, p = float(np.mean(doc)), float(np.mean(priv))
            lines.append(f"| {estimator} | {name} | {X_tr.shape[0]} x {X_tr.shape[1]} | "
                         f"{d:.3f} | {p:.3f} | {p - d:+.3f} | {np.mean(exact):.3f} |")
            print(lines[-1], flush=True)
    return lines


def row_norm_check(seeds):
    """Does a row-norm bound fix raw data? data_norm from the EXACT row-norm quantile.

    Not private (the quantile is read without noise): an optimistic upper
    bound on what ``data_norm='private'`` (a private quantile of the row
    norms) could give, against the private-bounds pipeline.
    """
    lines = ["| data | raw, data_norm=1 | raw, data_norm = exact median row norm (NOT private) "
             "| raw, data_norm = exact max row norm (NOT private) | private bounds |",
             "|---|---|---|---|---|"]
    for name in ("breast_cancer", "wine", "digits"):
        cells = [[], [], [], []]
        for seed, X_tr, X_te, y_tr, y_te in splits(name, seeds):
            classes = np.unique(y_tr)
            norms = np.linalg.norm(X_tr, axis=1)
            for cell, norm in zip(cells, (1.0, np.median(norms), norms.max())):
                cell.append(DPLogisticRegression(
                    epsilon=1 - SHARE, data_norm=float(norm), classes=classes,
                    accountant=BudgetAccountant(), random_state=seed)
                    .fit(X_tr, y_tr).score(X_te, y_te))
            cells[3].append(private_pipeline("DPLogisticRegression", SHARE, seed, classes)
                            .fit(X_tr, y_tr).score(X_te, y_te))
        lines.append(f"| {name} | " + " | ".join(f"{np.mean(c):.3f}" for c in cells) + " |")
        print(lines[-1], flush=True)
    return lines


def validation(seeds, shares=(0.25, 0.35), penalties=(1.0,), distances=(0.05, 0.1, 0.2),
               includes=(1.0, 2.0, 3.0), trims=(0.0,)):
    lines = ["| penalty | distance penalty | include | trim | share | " + " | ".join(NAMES)
             + " | mean |", "|---|---|---|---|---|" + "---|" * (len(NAMES) + 1)]
    saved = (private_bounds.PENALTY, private_bounds.DISTANCE_PENALTY,
             private_bounds.INCLUDE, private_bounds.TRIM)
    data = {name: list(splits(name, seeds, validation=True)) for name in NAMES}
    cells = [np.mean([documented_pipeline("DPLogisticRegression", name, seed, np.unique(y_tr))
                      .fit(X_tr, y_tr).score(X_te, y_te)
                      for seed, X_tr, X_te, y_tr, y_te in data[name]]) for name in NAMES]
    lines.append("| documented bounds | | | | 0 | " + " | ".join(f"{c:.3f}" for c in cells)
                 + f" | {np.mean(cells):.3f} |")
    print(lines[-1], flush=True)
    try:
        for penalty, distance, include, trim, share in itertools.product(
                penalties, distances, includes, trims, shares):
            (private_bounds.PENALTY, private_bounds.DISTANCE_PENALTY,
             private_bounds.INCLUDE, private_bounds.TRIM) = penalty, distance, include, trim
            cells = []
            for name in NAMES:
                cells.append(np.mean([
                    private_pipeline("DPLogisticRegression", share, seed, np.unique(y_tr))
                    .fit(X_tr, y_tr).score(X_te, y_te)
                    for seed, X_tr, X_te, y_tr, y_te in data[name]]))
            lines.append(f"| {penalty:g} | {distance:g} | {include:g} | {trim:g} | {share:g} | "
                         + " | ".join(f"{c:.3f}" for c in cells)
                         + f" | {np.mean(cells):.3f} |")
            print(lines[-1], flush=True)
    finally:
        (private_bounds.PENALTY, private_bounds.DISTANCE_PENALTY,
         private_bounds.INCLUDE, private_bounds.TRIM) = saved
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--validation", action="store_true")
    parser.add_argument("--total", type=float, default=1.0,
                        help="with --validation --trim: the pipeline's total epsilon")
    parser.add_argument("--trim", action="store_true",
                        help="with --validation: the trimming share at the chosen settings")
    parser.add_argument("--estimators", default="DPLogisticRegression,DPLinearSVC")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "private_bounds.md"))
    args = parser.parse_args(argv)
    global TOTAL
    TOTAL = args.total
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    if args.validation:
        lines = validation(range(10, 10 + args.seeds), **(
            {"shares": (0.35,), "distances": (0.1,), "includes": (2.0,),
             "trims": (0.0, 0.01, 0.03)} if args.trim else {}))
        title = "# Private bounds: choosing the share and the penalty on validation splits"
        command = f"python benchmarks/private_bounds.py --validation --seeds {args.seeds}"
        if args.trim:
            command += f" --trim --total {TOTAL:g}"
            title += f" (total epsilon {TOTAL:g})"
        args.out = args.out.replace(
            ".md", f"_trim_total{TOTAL:g}.md" if args.trim else "_validation.md")
    else:
        lines = table(range(args.seeds), args.estimators.split(","))
        lines += ["", "## Is a private row-norm bound needed?", "",
                  f"DPLogisticRegression at epsilon {1 - SHARE:g} on the raw features with "
                  "`data_norm` set from the exact (NOT private) row norms of the training "
                  "part, against the private-bounds pipeline at the same total:", "",
                  *row_norm_check(range(args.seeds))]
        title = f"# Private bounds on raw tables ({args.seeds} seeds, total epsilon 1)"
        command = "python benchmarks/private_bounds.py"
    bullets = ["* " + " ".join(b.split()).replace("``", "`").replace(":func:", "")
               for b in __doc__.split("\n\n")[2][2:].split("\n* ")]
    text = "\n".join([title, "", f"Command: `{command}`. " + " ".join(
        __doc__.split("\n\n")[1].split()), "", *bullets, "", *lines, "",
        f"Wall time {time.perf_counter() - start:.0f} s.", ""])
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""Private bounds on raw tables (issue 41): DPBoundsScaler against documented ranges.

For scikit-learn's raw breast_cancer, wine and digits (70/30 stratified
splits; seed s draws the split and the noise) and raw Adult (a9a's svmlight
files as loaded: 123 binary features, no normalisation; the published
train/test split, seed s draws the noise), at a TOTAL epsilon of 1 shown by
the pipeline's own accountant (delta='auto' of the training n, 1e-5 here
except Adult's 3.1e-6), the table gives the mean test accuracy over seeds of

* *private bounds*: ``make_pipeline(DPBoundsScaler(epsilon=e_b),
  DPxxx(epsilon=e_m))``, the one-line private pipeline, no public range;
  with ``--composition gaussian`` (the default) its accountant composes the
  two Gaussian steps as Gaussian DP and ``e_b, e_m = split_budget(1, delta,
  (s, 1 - s))`` share ``mu^2``; with ``--composition basic``, ``e_b = s``
  and ``e_m = 1 - s`` add up;
* *documented bounds*: ``make_pipeline(BoundedScaler(documented),
  DPxxx(epsilon=1))``, the ranges from the data sets' documentation
  (:func:`skdp.datasets.documented_bounds`; Adult's features are documented
  as binary, range [0, 1]);
* *documented bounds, model eps*: the documented-bounds pipeline with the
  model at the private pipeline's ``e_m``: what the split of the budget
  costs with perfect public bounds.

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
from skdp.accounting import calibrate, noise_mechanism  # noqa: E402
from skdp.datasets import documented_bounds  # noqa: E402
from skdp.preprocessing import BoundedScaler, DPBoundsScaler, split_budget  # noqa: E402
from skdp.validation import resolve_delta  # noqa: E402

NAMES = ("breast_cancer", "wine", "digits", "adult")
TOTAL = 1.0
#: DPBoundsScaler's share of the total under each composition (of mu^2 under
#: 'gaussian'), chosen on validation splits (results/private_bounds_validation*.md)
SHARES = {"gaussian": 0.3, "basic": 0.35}
SHARE = SHARES["gaussian"]
COMPOSITION = "basic"  # how the pipeline's accountant adds up its two steps
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


def step_epsilons(share, delta):
    """(bounds step, model) epsilons whose composition is TOTAL under COMPOSITION."""
    if COMPOSITION == "gaussian":
        return split_budget(TOTAL, delta, (share, 1 - share))
    return share * TOTAL, (1 - share) * TOTAL


def pipeline_accountant(delta):
    """The pipeline's own accountant: budget TOTAL at ``delta`` under COMPOSITION."""
    if COMPOSITION == "gaussian":
        return BudgetAccountant(epsilon=TOTAL * (1 + 1e-9), delta=delta, composition="gaussian")
    return BudgetAccountant(epsilon=TOTAL * (1 + 1e-9), delta=2 * delta)


def private_pipeline(estimator, share, seed, classes, delta):
    accountant = pipeline_accountant(delta)
    bounds_eps, model_eps = step_epsilons(share, delta)
    return make_pipeline(
        DPBoundsScaler(epsilon=bounds_eps, delta=delta, accountant=accountant,
                       random_state=seed),
        ESTIMATORS[estimator](epsilon=model_eps, delta=delta, classes=classes,
                              accountant=accountant, random_state=seed))


def documented_pipeline(estimator, name, seed, classes, delta, epsilon=None):
    return make_pipeline(BoundedScaler(documented(name)), ESTIMATORS[estimator](
        epsilon=TOTAL if epsilon is None else epsilon, delta=delta, classes=classes,
        accountant=pipeline_accountant(delta), random_state=seed))


def spent(pipeline):
    """The pipeline accountant's total epsilon (both steps share it)."""
    return pipeline.steps[-1][1].accountant.spent()[0]


def table(seeds, estimators):
    bounds_eps, model_eps = step_epsilons(SHARE, 1e-5)
    lines = [
        "| estimator | data | n_train x d | documented bounds, eps=1 | private bounds, "
        f"eps={bounds_eps:.3g} + {model_eps:.3g} | difference | accountant's total "
        f"(largest) | documented bounds, model eps={model_eps:.3g} |",
        "|---|---|---|---|---|---|---|---|"]
    for estimator in estimators:
        for name in NAMES:
            doc, priv, exact, totals = [], [], [], []
            for seed, X_tr, X_te, y_tr, y_te in splits(name, seeds):
                classes = np.unique(y_tr)  # public: the documented label set
                delta = resolve_delta("auto", X_tr.shape[0])
                doc.append(documented_pipeline(estimator, name, seed, classes, delta)
                           .fit(X_tr, y_tr).score(X_te, y_te))
                pipe = private_pipeline(estimator, SHARE, seed, classes, delta).fit(X_tr, y_tr)
                priv.append(pipe.score(X_te, y_te))
                totals.append(spent(pipe))
                # the documented bounds with the model's epsilon: what the split costs
                exact.append(documented_pipeline(
                    estimator, name, seed, classes, delta,
                    epsilon=step_epsilons(SHARE, delta)[1]).fit(X_tr, y_tr).score(X_te, y_te))
            d, p = float(np.mean(doc)), float(np.mean(priv))
            lines.append(f"| {estimator} | {name} | {X_tr.shape[0]} x {X_tr.shape[1]} | "
                         f"{d:.3f} | {p:.3f} | {p - d:+.3f} | {max(totals):.6f} | "
                         f"{np.mean(exact):.3f} |")
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
            delta = resolve_delta("auto", X_tr.shape[0])
            norms = np.linalg.norm(X_tr, axis=1)
            for cell, norm in zip(cells, (1.0, np.median(norms), norms.max())):
                cell.append(DPLogisticRegression(
                    epsilon=step_epsilons(SHARE, delta)[1], delta=delta, data_norm=float(norm),
                    classes=classes, accountant=BudgetAccountant(), random_state=seed)
                    .fit(X_tr, y_tr).score(X_te, y_te))
            cells[3].append(private_pipeline("DPLogisticRegression", SHARE, seed, classes, delta)
                            .fit(X_tr, y_tr).score(X_te, y_te))
        lines.append(f"| {name} | " + " | ".join(f"{np.mean(c):.3f}" for c in cells) + " |")
        print(lines[-1], flush=True)
    return lines


def small_data_limits(seeds, name="wine", estimator="DPLogisticRegression"):
    """Why a data set misses: the model's epsilon needed, and what the bounds step costs.

    First table, rows 1-2: the model alone behind the documented bounds and
    behind the exact ranges of the training part (NOT private: a stand-in
    for perfect free bounds), at model epsilons up to 1. Row 3: what a total
    of 1 leaves for a bounds step when the model takes epsilon e, under
    Gaussian composition (mu^2(1) - mu^2(e); basic composition leaves less,
    1 - e). Second table: the private bounds at epsilon b followed by the
    model at epsilon 1, NOT counted in one total (the bounds step's own
    cost in accuracy).
    """
    from skdp.accounting._composition import gdp_epsilon, gdp_mu_budget

    model_eps = (0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
    bounds_eps = (0.3, 0.52, 1.0, 2.0, 4.0, 8.0)
    data = list(splits(name, seeds))
    doc, oracle, free = [], [], []
    for e in model_eps:
        doc.append(np.mean([documented_pipeline(
            estimator, name, seed, np.unique(y_tr), resolve_delta("auto", X_tr.shape[0]),
            epsilon=e).fit(X_tr, y_tr).score(X_te, y_te)
            for seed, X_tr, X_te, y_tr, y_te in data]))
        cells = []
        for seed, X_tr, X_te, y_tr, y_te in data:
            exact = make_pipeline(BoundedScaler((X_tr.min(axis=0), X_tr.max(axis=0))),
                                  ESTIMATORS[estimator](
                                      epsilon=e, classes=np.unique(y_tr),
                                      accountant=BudgetAccountant(), random_state=seed))
            cells.append(exact.fit(X_tr, y_tr).score(X_te, y_te))
        oracle.append(np.mean(cells))
    for b in bounds_eps:
        free.append(np.mean([make_pipeline(
            DPBoundsScaler(epsilon=b, accountant=BudgetAccountant(), random_state=seed),
            ESTIMATORS[estimator](epsilon=1.0, classes=np.unique(y_tr),
                                  accountant=BudgetAccountant(), random_state=seed))
            .fit(X_tr, y_tr).score(X_te, y_te) for seed, X_tr, X_te, y_tr, y_te in data]))
    mu2 = gdp_mu_budget(1.0, 1e-5) ** 2
    left = [gdp_epsilon(max(mu2 - gdp_mu_budget(e, 1e-5) ** 2, 0.0), 1e-5)
            if e < 1 else 0.0 for e in model_eps]
    lines = [f"| {name}, {estimator}, {len(data)} seeds | " + " | ".join(
        f"model eps {e:g}" for e in model_eps) + " |", "|---|" + "---|" * len(model_eps),
        "| documented bounds | " + " | ".join(f"{a:.3f}" for a in doc) + " |",
        "| exact ranges of the training part (NOT private) | "
        + " | ".join(f"{a:.3f}" for a in oracle) + " |",
        "| epsilon left for a bounds step (Gaussian composition, total 1) | "
        + " | ".join(f"{v:.3f}" for v in left) + " |", "",
        "| bounds step's epsilon b (model at epsilon 1 not counted) | " + " | ".join(
            f"b = {b:g}" for b in bounds_eps) + " |", "|---|" + "---|" * len(bounds_eps),
        "| private bounds + model at epsilon 1 | " + " | ".join(f"{a:.3f}" for a in free)
        + " |"]
    # the signal and the noise of the counts at the kept split (exact counts of
    # the public data set's training parts: an analysis, not a release)
    lo, hi = private_bounds.octave_grid((1e-6, 1e12))
    bounds_eps = step_epsilons(SHARE, 1e-5)[0]
    z = calibrate(noise_mechanism(1e-5), bounds_eps, 1e-5)
    occupied, octaves = [], []
    for seed, X_tr, X_te, y_tr, y_te in data:
        counts = private_bounds.cell_counts(X_tr, lo, hi)
        occupied += list(counts[counts > 0])
        octaves += list((counts > 0).sum(axis=1))
    std = private_bounds.noise_std(z, data[0][1].shape[1], 1e-5)
    lines += ["", f"At the kept split the bounds step has epsilon {bounds_eps:.3f}: noise "
              f"multiplier z = {z:.2f}, noise standard deviation on each count {std:.1f} "
              f"(z sqrt({data[0][1].shape[1]})), in each of the grid's {2 * (hi - lo) + 1} "
              f"cells per feature. The training parts' features occupy {min(octaves)} to "
              f"{max(octaves)} cells each, holding {min(occupied)} to {max(occupied)} records "
              f"({min(occupied) / std:.1f} to {max(occupied) / std:.1f} noise deviations)."]
    for line in lines:
        print(line, flush=True)
    return lines


def likelihood_bounds(noisy, std, lo, hi, n_records=0, per_cell=3.0):
    """An alternative post-processing (not kept): the most likely run of cells.

    Per feature, the run ``R`` of the signed grid maximising ``sum_R noisy^2 -
    (sum_R noisy - n)^2 / |R| - sum_R cost`` (the Gaussian likelihood of
    counts that put all n public records in ``R``, with a cost of
    ``per_cell + DISTANCE_PENALTY * |octave|`` noise variances per cell).
    """
    d, n_cells = noisy.shape
    m = hi - lo
    octave = np.abs(np.arange(n_cells) - m) - 1 + lo
    distance = np.where(np.arange(n_cells) == m, 0, np.abs(octave)).astype(float)
    cost = np.concatenate([[0.0], np.cumsum(
        (per_cell + private_bounds.DISTANCE_PENALTY * distance) * std * std)])
    first_sum = np.concatenate([np.zeros((d, 1)), np.cumsum(noisy, axis=1)], axis=1)
    square_sum = np.concatenate([np.zeros((d, 1)), np.cumsum(noisy * noisy, axis=1)], axis=1)
    a, b = np.arange(n_cells)[:, None], np.arange(n_cells)[None, :]
    valid, length = b >= a, np.maximum(b - a + 1, 1)
    total = first_sum[:, None, 1:] - first_sum[:, :-1, None]
    score = (square_sum[:, None, 1:] - square_sum[:, :-1, None]
             - (total - n_records) ** 2 / length - (cost[None, 1:] - cost[:-1, None]))
    best = np.where(valid, score, -np.inf).reshape(d, -1).argmax(axis=1)
    first, last = np.unravel_index(best, (n_cells, n_cells))
    left, right = private_bounds.cell_edges(lo, hi)
    return left[first], right[last]


def signed_log(X):
    """A public, data-independent transform: sign(x) log2(1 + |x|)."""
    return np.sign(X) * np.log2(1 + np.abs(X))


def alternatives(seeds, names=("breast_cancer", "wine", "digits")):
    """Other methods tried for small tables, on validation splits only (not kept)."""
    from sklearn.preprocessing import FunctionTransformer

    data = {name: list(splits(name, seeds, validation=True)) for name in names}

    def kept(name, seed, classes, delta):
        return private_pipeline("DPLogisticRegression", SHARE, seed, classes, delta)

    def documented_one(name, seed, classes, delta):
        return documented_pipeline("DPLogisticRegression", name, seed, classes, delta)

    def grid(magnitudes):
        def make(name, seed, classes, delta):
            return kept(name, seed, classes, delta).set_params(
                dpboundsscaler__magnitudes=magnitudes)
        return make

    def public_log(bound):
        def make(name, seed, classes, delta):
            return make_pipeline(FunctionTransformer(signed_log), BoundedScaler((-bound, bound)),
                                 DPLogisticRegression(epsilon=TOTAL, delta=delta, classes=classes,
                                                      accountant=BudgetAccountant(),
                                                      random_state=seed))
        return make

    def row(label, make):
        cells = [np.mean([make(name, seed, np.unique(y_tr), resolve_delta("auto", X_tr.shape[0]))
                          .fit(X_tr, y_tr).score(X_te, y_te)
                          for seed, X_tr, X_te, y_tr, y_te in data[name]]) for name in names]
        lines.append(f"| {label} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
        print(lines[-1], flush=True)

    lines = ["| method (DPLogisticRegression, total epsilon 1) | " + " | ".join(names) + " |",
             "|---|" + "---|" * len(names)]
    row("documented bounds, model eps 1", documented_one)
    row(f"private bounds (kept), share {SHARE:g} of mu^2", kept)
    row("private bounds, public grid (1e-3, 1e6)", grid((1e-3, 1e6)))
    row("private bounds, public grid (1e-2, 1e4)", grid((1e-2, 1e4)))
    saved = private_bounds.bounds_from_counts
    try:
        private_bounds.bounds_from_counts = likelihood_bounds
        row("private bounds, likelihood post-processing", kept)
    finally:
        private_bounds.bounds_from_counts = saved
    for bound in (8.0, 16.0):
        row(f"public signed log2(1 + abs x), range (-{bound:g}, {bound:g}), no bounds step, "
            "model eps 1", public_log(bound))
    return lines


def validation(seeds, shares=(0.1, 0.2, 0.25, 0.3, 0.4), penalties=(1.0,),
               distances=(0.1, 0.2, 0.3),
               includes=(2.0, 3.0), trims=(0.0,)):
    lines = ["| penalty | distance penalty | include | trim | share | " + " | ".join(NAMES)
             + " | mean |", "|---|---|---|---|---|" + "---|" * (len(NAMES) + 1)]
    saved = (private_bounds.PENALTY, private_bounds.DISTANCE_PENALTY,
             private_bounds.INCLUDE, private_bounds.TRIM)
    data = {name: list(splits(name, seeds, validation=True)) for name in NAMES}
    cells = [np.mean([documented_pipeline("DPLogisticRegression", name, seed, np.unique(y_tr),
                                          resolve_delta("auto", X_tr.shape[0]))
                      .fit(X_tr, y_tr).score(X_te, y_te)
                      for seed, X_tr, X_te, y_tr, y_te in data[name]]) for name in NAMES]
    lines.append("| documented bounds | | | | 0 | " + " | ".join(f"{c:.3f}" for c in cells)
                 + f" | {np.mean(cells):.3f} |")
    print(lines[-1], flush=True)
    documented_cells, ranked = cells, []
    try:
        for penalty, distance, include, trim, share in itertools.product(
                penalties, distances, includes, trims, shares):
            (private_bounds.PENALTY, private_bounds.DISTANCE_PENALTY,
             private_bounds.INCLUDE, private_bounds.TRIM) = penalty, distance, include, trim
            cells = []
            for name in NAMES:
                cells.append(np.mean([
                    private_pipeline("DPLogisticRegression", share, seed, np.unique(y_tr),
                                     resolve_delta("auto", X_tr.shape[0]))
                    .fit(X_tr, y_tr).score(X_te, y_te)
                    for seed, X_tr, X_te, y_tr, y_te in data[name]]))
            lines.append(f"| {penalty:g} | {distance:g} | {include:g} | {trim:g} | {share:g} | "
                         + " | ".join(f"{c:.3f}" for c in cells)
                         + f" | {np.mean(cells):.3f} |")
            print(lines[-1], flush=True)
            # the acceptance's criterion first: data sets within 3 points
            within = sum(c >= d - 0.03 for c, d in zip(cells, documented_cells))
            ranked.append(((within, np.mean(cells)), lines[-1]))
    finally:
        (private_bounds.PENALTY, private_bounds.DISTANCE_PENALTY,
         private_bounds.INCLUDE, private_bounds.TRIM) = saved
    (within, mean), best = max(ranked, key=lambda item: item[0])
    lines += ["", f"Chosen (most data sets within 3 points of the documented bounds, {within} "
              f"of {len(NAMES)}, then the best mean, {mean:.4f}):", "", lines[0], lines[1], best]
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
    parser.add_argument("--alternatives", action="store_true",
                        help="other methods tried for small tables (validation splits)")
    parser.add_argument("--composition", default="gaussian", choices=("gaussian", "basic"),
                        help="how the pipeline's accountant composes its two steps")
    parser.add_argument("--shares", default=None,
                        help="with --validation: comma-separated shares of the bounds step "
                             "(the constants stay at their defaults)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results",
                                                      "private_bounds.md"))
    args = parser.parse_args(argv)
    global TOTAL, COMPOSITION, SHARE
    TOTAL, COMPOSITION = args.total, args.composition
    SHARE = SHARES[COMPOSITION]
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    if args.alternatives:
        lines = alternatives(range(10, 10 + args.seeds))
        title = "# Private bounds: other methods tried, on validation splits (not kept)"
        command = f"python benchmarks/private_bounds.py --alternatives --seeds {args.seeds}"
        args.out = args.out.replace(".md", "_alternatives.md")
    elif args.validation:
        if args.trim:
            grid = {"shares": (SHARE,), "distances": (private_bounds.DISTANCE_PENALTY,),
                    "includes": (private_bounds.INCLUDE,), "trims": (0.0, 0.01, 0.03)}
        elif args.shares:
            grid = {"shares": tuple(float(v) for v in args.shares.split(",")),
                    "distances": (private_bounds.DISTANCE_PENALTY,),
                    "includes": (private_bounds.INCLUDE,)}
        else:
            grid = {}
        lines = validation(range(10, 10 + args.seeds), **grid)
        title = "# Private bounds: choosing the share and the penalty on validation splits"
        command = (f"python benchmarks/private_bounds.py --validation --seeds {args.seeds} "
                   f"--composition {COMPOSITION}")
        if args.shares:
            command += f" --shares {args.shares}"
        if args.trim:
            command += f" --trim --total {TOTAL:g}"
            title += f" (total epsilon {TOTAL:g})"
        args.out = args.out.replace(
            ".md", f"_trim_total{TOTAL:g}.md" if args.trim else "_validation.md")
        if COMPOSITION != "gaussian":
            args.out = args.out.replace(".md", "_basic.md")
    else:
        lines = table(range(args.seeds), args.estimators.split(","))
        lines += ["", "## Is a private row-norm bound needed?", "",
                  f"DPLogisticRegression at epsilon {step_epsilons(SHARE, 1e-5)[1]:.3g} on the "
                  "raw features with "
                  "`data_norm` set from the exact (NOT private) row norms of the training "
                  "part, against the private-bounds pipeline at the same total:", "",
                  *row_norm_check(range(args.seeds))]
        lines += ["", "## Why wine misses", "", *" ".join(
            small_data_limits.__doc__.split("\n\n")[1].split()).splitlines(), "",
            *small_data_limits(range(args.seeds))]
        title = f"# Private bounds on raw tables ({args.seeds} seeds, total epsilon 1)"
        command = f"python benchmarks/private_bounds.py --composition {COMPOSITION}"
        if COMPOSITION != "gaussian":
            args.out = args.out.replace(".md", "_basic.md")
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

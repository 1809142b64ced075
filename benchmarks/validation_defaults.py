"""Re-choose defaults on validation splits of the training data (never the test files).

Run by hand (14-19 minutes measured, one process under nice 19; --quick under a minute)::

    python benchmarks/validation_defaults.py            # writes results/validation_defaults.md
    python benchmarks/validation_defaults.py --quick    # a short check of the script

Only the *training* file of Adult (a9a) and Reuters is read
(:func:`benchmark_data.load_svmlight_train`, rows scaled to unit L2 norm); each
is split three times 70/30 (``train_test_split(test_size=0.3, stratify=y,
random_state=0, 1, 2)``) and every setting is fitted with two seeds on the
70% and scored on the 30%: six accuracies per cell. One default is varied at a
time, the others stay at their values:

* ``line_search``'s ``max_iter_cap`` (``DEFAULT_MAX_ITER_CAP``), ``average``
  and ``search_share``: ``DPLogisticRegression`` and ``DPLinearSVC`` with
  ``solver='line_search'``;
* ``line_search``'s ``armijo`` on kinked losses (``KINKED_ARMIJO``):
  ``DPLinearSVC(loss='hinge', solver='line_search')``;
* ``DPLinearSVC``'s ``smoothing``: ``DPLinearSVC()`` (its 'auto' solver);
* the hinge's stand-in step (``HINGE_STEP`` of ``skdp/losses/hinge.py``):
  ``DPLinearSVC(loss='hinge')`` (gd).

Rule: a parameter's score is its validation accuracy averaged over the
settings (data set x epsilon x estimator), its spread the standard deviation
over the six split/seed runs averaged the same way. The current default is
kept unless another value's score beats it by more than the default's spread,
so defaults do not churn on noise.
"""

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

import skdp.losses.hinge as hinge
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_data import load_svmlight_train  # noqa: E402
from results_file import write_results  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "validation_defaults.md"
COMMAND = "python benchmarks/validation_defaults.py"
DATASETS = ("adult", "reuters")
EPSILONS = (0.1, 1.0, 3.0)
SPLITS = (0, 1, 2)
SEEDS = (0, 1)
CLASSES = [-1.0, 1.0]


def _line_search(Est, **kw):
    def make(option, value, eps, seed):
        return Est(epsilon=eps, solver="line_search", classes=CLASSES, random_state=seed,
                   accountant=BudgetAccountant(), solver_params={option: value}, **kw)
    return make


def _svc_smoothing(option, value, eps, seed):
    return DPLinearSVC(epsilon=eps, smoothing=value, classes=CLASSES, random_state=seed,
                       accountant=BudgetAccountant())


def _svc_hinge_gd(option, value, eps, seed):
    return DPLinearSVC(epsilon=eps, loss="hinge", classes=CLASSES, random_state=seed,
                       accountant=BudgetAccountant())


@contextlib.contextmanager
def _hinge_step(value):
    """``HINGE_STEP`` set to ``value`` for the fits inside (the loss reads it at fit time)."""
    old = hinge.HINGE_STEP
    hinge.HINGE_STEP = float(value)
    try:
        yield
    finally:
        hinge.HINGE_STEP = old


LS_ESTIMATORS = (("DPLogisticRegression, line_search", _line_search(DPLogisticRegression)),
                 ("DPLinearSVC, line_search", _line_search(DPLinearSVC)))

#: (option, where the default lives, current value, grid, estimators)
PARAMETERS = (
    ("max_iter_cap", "`DEFAULT_MAX_ITER_CAP`, skdp/solvers/line_search.py", 300,
     (100, 200, 300, 500), LS_ESTIMATORS),
    ("average", "line_search option, skdp/solvers/line_search.py", 0.5,
     (0.0, 0.25, 0.5, 0.75), LS_ESTIMATORS),
    ("search_share", "line_search option, skdp/solvers/line_search.py", 0.25,
     (0.1, 0.25, 0.4), LS_ESTIMATORS),
    ("armijo", "`KINKED_ARMIJO` (hinge), skdp/solvers/line_search.py", 0.3,
     (0.1, 0.2, 0.3, 0.4, 0.5),
     (("DPLinearSVC(loss='hinge'), line_search", _line_search(DPLinearSVC, loss="hinge")),)),
    ("smoothing", "DPLinearSVC parameter, skdp/svm.py", 1.5, (0.5, 1.0, 1.5, 2.0, 3.0),
     (("DPLinearSVC (solver 'auto')", _svc_smoothing),)),
    ("HINGE_STEP", "skdp/losses/hinge.py", 16.0, (4.0, 8.0, 16.0, 32.0, 64.0),
     (("DPLinearSVC(loss='hinge'), gd", _svc_hinge_gd),)),
)


def splits(name, folder=None, max_rows=None, n_splits=len(SPLITS)):
    """The inner 70/30 splits of ``name``'s training file (the test file is never read)."""
    X, y = load_svmlight_train(name, folder=folder)
    if max_rows is not None and X.shape[0] > max_rows:
        X, _, y, _ = train_test_split(X, y, train_size=max_rows, random_state=0, stratify=y)
    return [train_test_split(X, y, test_size=0.3, random_state=s, stratify=y)
            for s in SPLITS[:n_splits]]


def accuracies(make, option, value, eps, data, seeds):
    """Validation accuracy of every split x seed."""
    scope = _hinge_step(value) if option == "HINGE_STEP" else contextlib.nullcontext()
    out = []
    with scope:
        for X, Xv, y, yv in data:
            for seed in seeds:
                out.append(make(option, value, eps, seed).fit(X, y).score(Xv, yv))
    return np.asarray(out)


def choose(current, grid, cells):
    """The rule: keep ``current`` unless a value's mean beats it by more than its spread.

    ``cells`` maps each value to the list of per-setting accuracy arrays.
    Returns ``(chosen, scores, spreads)``.
    """
    scores = {v: float(np.mean([a.mean() for a in cells[v]])) for v in grid}
    spreads = {v: float(np.mean([a.std(ddof=1) if a.size > 1 else 0.0 for a in cells[v]]))
               for v in grid}
    best = max(grid, key=lambda v: scores[v])
    chosen = best if scores[best] - scores[current] > spreads[current] else current
    return chosen, scores, spreads


def _fmt(a):
    return f"{a.mean():.4f} ± {a.std(ddof=1) if a.size > 1 else 0.0:.4f}"


def run(folder=None, epsilons=EPSILONS, n_splits=len(SPLITS), seeds=SEEDS, max_rows=None,
        parameters=PARAMETERS):
    """Print the tables; return ``{option: chosen value}``."""
    data = {name: splits(name, folder, max_rows, n_splits) for name in DATASETS}
    for name in DATASETS:
        X, Xv, y, yv = data[name][0]
        majority = max(np.mean(yv == c) for c in np.unique(yv))
        print(f"- {name}: {X.shape[0]} fitting rows, {Xv.shape[0]} validation rows "
              f"(validation majority class {majority:.4f} on split 0)")
    print(f"\nEpsilons {', '.join(f'{e:g}' for e in epsilons)}, delta the estimators' default; "
          f"{n_splits} splits x {len(seeds)} seeds a cell (mean ± sd over them).")
    chosen, cache = {}, {}
    for option, where, current, grid, estimators in parameters:
        start = time.perf_counter()
        print(f"\n## `{option}` (current {current:g}; {where})\n")
        print("| data | eps | estimator | " + " | ".join(f"{v:g}" for v in grid) + " |")
        print("|---|---|---|" + "---|" * len(grid))
        cells = {v: [] for v in grid}
        for name in DATASETS:
            for eps in epsilons:
                for label, make in estimators:
                    row = []
                    for v in grid:
                        # at its current value every option is the same fit: run it once
                        same = ("current",) if v == current else (option, v)
                        key = (label, name, eps) + same
                        if key not in cache:
                            cache[key] = accuracies(make, option, v, eps, data[name], seeds)
                        a = cache[key]
                        cells[v].append(a)
                        row.append(_fmt(a))
                    print(f"| {name} | {eps:g} | {label} | " + " | ".join(row) + " |", flush=True)
        pick, scores, spreads = choose(current, grid, cells)
        chosen[option] = pick
        print(f"\n| {option} | mean validation accuracy | sd over splits/seeds |")
        print("|---|---|---|")
        for v in grid:
            mark = " (current)" if v == current else ""
            print(f"| {v:g}{mark} | {scores[v]:.4f} | {spreads[v]:.4f} |")
        verdict = "confirmed" if pick == current else f"changed to {pick:g}"
        print(f"\nChosen: **{pick:g}** ({verdict}; best {max(scores.values()):.4f} against "
              f"current {scores[current]:.4f} ± {spreads[current]:.4f}). "
              f"[{time.perf_counter() - start:.0f} s]", flush=True)
    return chosen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="epsilon 1, one split, one seed, at most 3,000 rows a set")
    parser.add_argument("--data-dir", default=None,
                        help="folder of <name>.trn.bz2 (default: benchmark_data.data_dir())")
    parser.add_argument("--out", default=None, help="results file (default: results/"
                        "validation_defaults.md; --quick: results/validation_defaults_quick.md)")
    args = parser.parse_args(argv)
    if args.quick:
        kw = dict(epsilons=(1.0,), n_splits=1, seeds=SEEDS[:1], max_rows=3000)
        out = args.out or OUT.with_name("validation_defaults_quick.md")
        command, mode = COMMAND + " --quick", "quick"
    else:
        kw, out, command, mode = {}, args.out or OUT, COMMAND, "full"
    with write_results(out, command, mode):
        print("# Defaults re-chosen on validation splits of the training data\n")
        print("Only the training files are read; see the script's docstring for the splits "
              "and the rule (keep the current default unless another value's mean beats it "
              "by more than the spread over splits and seeds).\n")
        chosen = run(folder=args.data_dir, **kw)
    return {"chosen": chosen, "table": Path(out)}


if __name__ == "__main__":
    main()

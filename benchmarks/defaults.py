"""The defaults (``solver='auto'``, ``max_iter=None``): how they were chosen and what they reach.

Run by hand (minutes on 2 cores; timings are noisy on shared machines)::

    python benchmarks/defaults.py              # ... + test table -> results/defaults.md
    python benchmarks/defaults.py --tune       # the grid behind preconditioned_gd's constants

(the diagonal mode's constants, above 2000 parameters, are chosen by
``benchmarks/reuters_diagonal.py``.) ``--tune`` and the validation part read
only training data: a quarter of Adult's training part (stratified,
``random_state=0``) and rows 40,000-50,000 of the ill-conditioned imbalanced
set's training part, plus inner 70/30 splits of the training parts of scikit-learn's small sets (``benchmarks/small_sets.py``).
The test part then checks the defaults on the held-out rows: Adult (unit-norm
rows, delta='auto', 5 seeds), the synthetic set's last 10,000 rows (3 seeds) and
Reuters (3 seeds), the heavy-tailed proxy of the kept imbalanced set
(``benchmarks/proxy_imbalanced.py``; its last 10,000 rows, 3 seeds), with fit
CPU time beside scikit-learn's on the same input.
"""

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp.datasets import documented_bounds, make_ill_conditioned_classification
from skdp.preprocessing import BoundedScaler
from skdp.validation import resolve_delta

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_data import load_svmlight  # noqa: E402
from small_sets import CLASSIFIERS, DATASETS, EPSILONS, split  # noqa: E402
from proxy_imbalanced import make_heavy_tailed_imbalanced  # noqa: E402
from results_file import RESULTS, write_results  # noqa: E402

ESTIMATORS = (DPLogisticRegression, DPLinearSVC)


def ill_conditioned():
    """Issue 20's ill-conditioned imbalanced set: 50,000 training rows, 10,000 test rows."""
    X, y = make_ill_conditioned_classification()
    return X[:50000], y[:50000], X[50000:], y[50000:]


def validation_sets():
    X, y, _, _ = load_svmlight("adult")
    adult = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    Xs, ys, _, _ = ill_conditioned()
    return adult, (Xs[:40000], Xs[40000:], ys[:40000], ys[40000:])


def scores(adult, synth, solver, params=None, max_iter=None, seeds=range(3)):
    """Mean Adult validation accuracy (both classifiers, eps 0.1/0.5/1) and synthetic AUC."""
    kw = dict(solver=solver, max_iter=max_iter, solver_params=params or {})
    acc = [Est(epsilon=eps, random_state=s, accountant=BudgetAccountant(), **kw)
           .fit(adult[0], adult[2]).score(adult[1], adult[3])
           for Est in ESTIMATORS for eps in (0.1, 0.5, 1.0) for s in seeds]
    auc = [roc_auc_score(synth[3], DPLogisticRegression(
        epsilon=eps, random_state=s, accountant=BudgetAccountant(), **kw)
        .fit(synth[0], synth[2]).decision_function(synth[1]))
        for eps in (0.1, 1.0) for s in seeds]
    return float(np.mean(acc)), float(np.mean(auc))


def tune():
    adult, synth = validation_sets()
    print("| T | share | average | Adult validation accuracy | synthetic validation AUC | mean |")
    print("|---|---|---|---|---|---|")
    for T, share, average in itertools.product((20, 30, 50), (0.5, 1.0), (0.0, 0.5)):
        params = {"damping": 0.5, "gram_noise_ratio": share, "average": average}
        acc, auc = scores(adult, synth, "preconditioned_gd", params, T)
        print(f"| {T} | {share:g} | {average:g} | {acc:.4f} | {auc:.4f} | {(acc + auc) / 2:.5f} |",
              flush=True)


def small_sets(solver, seeds=range(4)):
    out = []
    for _, (cls, _) in CLASSIFIERS.items():
        for name in DATASETS:
            for seed in seeds:
                X_tr, _, y_tr, _ = split(name, seed)
                X_in, X_val, y_in, y_val = train_test_split(
                    X_tr, y_tr, test_size=0.3, random_state=seed + 100, stratify=y_tr)
                for e in EPSILONS:
                    model = make_pipeline(BoundedScaler(documented_bounds(name)), cls(
                        solver=solver, epsilon=e, accountant=BudgetAccountant(),
                        random_state=seed))
                    out.append(model.fit(X_in, y_in).score(X_val, y_val))
    return float(np.mean(out))


def cpu(fit):
    start = time.process_time()
    model = fit()
    return model, time.process_time() - start


def imbalanced_rows(X, y, Xt, yt, seeds=range(3)):
    """Print ROC AUC and accuracy of the default DPLogisticRegression at eps 1 and 0.1."""
    print("| eps | ROC AUC | accuracy | solver |")
    print("|---|---|---|---|")
    for eps in (1.0, 0.1):
        models = [DPLogisticRegression(epsilon=eps, random_state=s,
                                       accountant=BudgetAccountant()).fit(X, y) for s in seeds]
        auc = np.mean([roc_auc_score(yt, m.decision_function(Xt)) for m in models])
        acc = np.mean([m.score(Xt, yt) for m in models])
        print(f"| {eps:g} | {auc:.4f} | {acc:.4f} | {models[0].solver_} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.tune:
        return tune()
    with write_results(RESULTS / "defaults.md", "python benchmarks/defaults.py"):
        print("# Defaults: validation of solver='auto' and the held-out checks\n")
        report()
    return 0


def report():
    """The validation table of the auto rule, then the held-out checks of the defaults."""
    adult, synth = validation_sets()
    print("## Validation (training data only)\n")
    print("| solver | Adult accuracy | synthetic AUC | small sets accuracy |")
    print("|---|---|---|---|")
    for solver in ("gd", "preconditioned_gd"):
        acc, auc = scores(adult, synth, solver)
        print(f"| {solver} | {acc:.4f} | {auc:.4f} | {small_sets(solver):.4f} |", flush=True)

    print("\n## Test rows, defaults (solver='auto')\n")
    X, y, Xt, yt = load_svmlight("adult")
    print(f"Adult, 5 seeds, delta='auto' ({resolve_delta('auto', X.shape[0]):.2g}); fit CPU "
          "time (median) beside scikit-learn's "
          "LogisticRegression(max_iter=1000) on the same rows:\n")
    print("| estimator | eps | accuracy | solver | n_iter | fit CPU (s) |")
    print("|---|---|---|---|---|---|")
    for Est in ESTIMATORS:
        for eps in (0.1, 0.5, 1.0, 2.0, 5.0, 10.0):
            runs = [cpu(lambda s=s: Est(epsilon=eps, random_state=s,
                                        accountant=BudgetAccountant()).fit(X, y))
                    for s in range(5)]
            m = runs[0][0]
            print(f"| {Est.__name__} | {eps:g} | {np.mean([r.score(Xt, yt) for r, _ in runs]):.4f}"
                  f" | {m.solver_} | {m.n_iter_} | {np.median([t for _, t in runs]):.3f} |",
                  flush=True)
    reference = [cpu(lambda: LogisticRegression(max_iter=1000).fit(X, y)) for _ in range(5)]
    print(f"| LogisticRegression (non-private) | - | {reference[0][0].score(Xt, yt):.4f} | lbfgs"
          f" | {int(reference[0][0].n_iter_[0])} | {np.median([t for _, t in reference]):.3f} |")

    Xs, ys, Xst, yst = ill_conditioned()
    print("\nIll-conditioned imbalanced set (last 10,000 rows), DPLogisticRegression, 3 seeds:\n")
    imbalanced_rows(Xs, ys, Xst, yst)

    X, y = make_heavy_tailed_imbalanced()
    Xs, ys, Xst, yst = X[:50000], y[:50000], X[50000:], y[50000:]
    reference = LogisticRegression(max_iter=1000).fit(Xs, ys)
    print("\nHeavy-tailed imbalanced proxy of the kept set (last 10,000 rows; "
          "benchmarks/proxy_imbalanced.py), DPLogisticRegression, 3 seeds; non-private "
          f"LogisticRegression: ROC AUC {roc_auc_score(yst, reference.decision_function(Xst)):.4f},"
          f" accuracy {reference.score(Xst, yst):.4f}:\n")
    imbalanced_rows(Xs, ys, Xst, yst)

    X, y, Xt, yt = load_svmlight("reuters")
    models = [DPLogisticRegression(epsilon=1.0, random_state=s,
                                   accountant=BudgetAccountant()).fit(X, y) for s in range(3)]
    print(f"\nReuters, DPLogisticRegression, eps 1, 3 seeds: "
          f"{np.mean([m.score(Xt, yt) for m in models]):.4f} ({models[0].solver_})")


if __name__ == "__main__":
    sys.exit(main())

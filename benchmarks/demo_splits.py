"""How much of the README demo's table is its one test split (issue 43).

``python -m skdp`` scores each private pipeline on ONE 30 % hold-out
(``random_state=0``): 171 rows of breast_cancer, 540 of digits. This script
refits the demo's own pipelines (:func:`skdp.demo.demo_tasks`, unchanged) on
``--splits`` other 70 / 30 splits of the same data (``random_state`` 0, 1,
...; split 0 is the demo's), ``--seeds`` noise seeds each (every fit charged
to a fresh accountant), and prints, per task and epsilon, the mean test
accuracy over splits with its standard error across splits, the spread of
the per-split means, and the non-private baseline's mean on the same splits.

It measures; it chooses nothing (every setting is the demo's, chosen on
validation splits of training data in ``small_data.md``).

Run::

    python benchmarks/demo_splits.py                   # 20 splits x 5 seeds, ~5 min
    python benchmarks/demo_splits.py --splits 3 --seeds 2 --out -   # quick, to stdout
"""

import argparse

import numpy as np
from sklearn.model_selection import train_test_split

from results_file import RESULTS, results_output, script_command
from skdp.accounting import BudgetAccountant
from skdp.demo import demo_tasks

EPSILONS = (0.1, 0.5, 1.0, 2.0, 8.0)


def split_scores(loader, private, public, splits, seeds, epsilons):
    """Per split: the mean test accuracy over seeds at each epsilon, and the baseline's.

    Returns ``(private_scores, public_scores)``: arrays of shape
    ``(len(splits), len(epsilons))`` and ``(len(splits),)``.
    """
    X, y = loader()
    private_scores = np.empty((len(splits), len(epsilons)))
    public_scores = np.empty(len(splits))
    for i, split in enumerate(splits):
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=split)
        for j, eps in enumerate(epsilons):
            private_scores[i, j] = np.mean([
                private(eps, seed, BudgetAccountant()).fit(X_tr, y_tr).score(X_te, y_te)
                for seed in range(seeds)])
        public_scores[i] = public().fit(X_tr, y_tr).score(X_te, y_te)
    return private_scores, public_scores


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", default=str(RESULTS / "demo_splits.md"),
                        help="results file ('-': stdout only)")
    args = parser.parse_args(argv)
    command = script_command("demo_splits.py", argv)
    splits = range(args.splits)
    with results_output(args.out, command):
        print("# The README demo over many test splits (issue 43)\n")
        print(f"The demo's pipelines (`skdp.demo.demo_tasks`) on "
              f"{args.splits} 70/30 splits of each data set (`random_state` 0-"
              f"{args.splits - 1}; split 0 is the README's), {args.seeds} noise seeds per "
              "split (seeds 0-" f"{args.seeds - 1}, each fit charged to a fresh accountant). "
              "Each cell: mean test accuracy over the splits (of each split's mean over "
              "the seeds) +- its standard error across splits, and in brackets the smallest and "
              "largest split mean. Nothing is chosen here.\n")
        print("| data | estimator | " + " | ".join(f"eps={e:g}" for e in EPSILONS)
              + " | non-private | test rows |")
        print("|---|---|" + "---|" * (len(EPSILONS) + 2))
        first = []
        for data, name, loader, private, public, metric in demo_tasks():
            if metric != "accuracy":
                continue
            scores, base = split_scores(loader, private, public, splits, args.seeds,
                                        EPSILONS)
            n_test = len(train_test_split(*loader(), test_size=0.3, random_state=0)[3])
            se = scores.std(axis=0, ddof=1) / np.sqrt(len(splits)) if len(splits) > 1 \
                else np.full(len(EPSILONS), np.nan)
            cells = [f"{m:.3f} +- {s:.3f} ({lo:.3f}-{hi:.3f})" for m, s, lo, hi in zip(
                scores.mean(axis=0), se, scores.min(axis=0), scores.max(axis=0))]
            print(f"| {data} | {name} | " + " | ".join(cells)
                  + f" | {base.mean():.3f} ({base.min():.3f}-{base.max():.3f}) | {n_test} |")
            first.append(f"| {data} | {name} | " + " | ".join(f"{s:.3f}" for s in scores[0])
                         + f" | {base[0]:.3f} |")
        print("\nSplit 0 alone (the README's test rows; each fit charged to a fresh "
              "accountant, so its noise draws differ from the README's, whose fits share one):"
              "\n")
        print("| data | estimator | " + " | ".join(f"eps={e:g}" for e in EPSILONS)
              + " | non-private |")
        print("|---|---|" + "---|" * (len(EPSILONS) + 1))
        print("\n".join(first))



if __name__ == "__main__":
    main()

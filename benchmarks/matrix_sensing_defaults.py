"""DPMatrixSensing's defaults (gd's steps, clip_norm): chosen on validation measurements.

Run by hand (a few minutes on 2 cores)::

    python benchmarks/matrix_sensing_defaults.py            # the grid, validation only
    python benchmarks/matrix_sensing_defaults.py --check    # the defaults' recovery error

The grid reads training measurements only: a quarter of each instance's rows
is held out and the score is the held-out mean squared error of the released
``U V^T`` (the private data's own validation split, never the ground truth,
which a user does not have). Two instances of :func:`make_matrix_sensing`:
the acceptance instance (20 x 20, rank 3, 20,000 rows, noise 0.01) and a
second shape (10 x 30, rank 2, 10,000 rows), epsilon 1 and 8, seeds 0-1.
Columns: ``max_iter`` x ``clip_norm`` at gd's step ``3 sqrt(pq) / B**2``, then
the best cell at half the step. ``--check`` reports, at the defaults, the
relative recovery error ``||U V^T - X*||_F / ||X*||_F`` on instances the grid did
not see (other seeds and shapes), for every solver ``available_solvers`` lists.
"""

import argparse
import itertools
import sys
import warnings

import numpy as np
from sklearn.model_selection import train_test_split

from skdp import BudgetAccountant
from skdp.matrix_sensing import DPMatrixSensing, make_matrix_sensing
from skdp.solvers import available_solvers

INSTANCES = [((20, 20), 3, 20000), ((10, 30), 2, 10000)]
EPSILONS = (1.0, 8.0)
ITERS = (25, 50, 100, 200)
CLIPS = (0.05, 0.1, 0.2)


def validation_mse(shape, rank, n, eps, seed, **params):
    X, y, _ = make_matrix_sensing(n, shape=shape, rank=rank, noise=0.01, random_state=seed)
    X_in, X_val, y_in, y_val = train_test_split(X, y, test_size=0.25, random_state=seed)
    model = DPMatrixSensing(shape=shape, rank=rank, epsilon=eps, random_state=seed,
                            accountant=BudgetAccountant(), **params).fit(X_in, y_in)
    return float(np.mean((model.predict(X_val) - y_val) ** 2))


def grid(seeds=range(2)):
    cells = {}
    print("| max_iter | clip_norm | learning_rate scale | " + " | ".join(
        f"{s[0]}x{s[1]} r{r} eps {e:g}" for (s, r, _), e in itertools.product(INSTANCES, EPSILONS))
        + " | mean of log10 |")
    print("|---|---|---|" + "---|" * (len(INSTANCES) * len(EPSILONS) + 1))

    def row(T, clip, scale):
        mses = []
        for (shape, rank, n), eps in itertools.product(INSTANCES, EPSILONS):
            step = scale * np.sqrt(shape[0] * shape[1])
            mses.append(np.mean([validation_mse(shape, rank, n, eps, s, max_iter=T,
                                                clip_norm=clip,
                                                solver_params={"learning_rate": step})
                                 for s in seeds]))
        score = float(np.mean(np.log10(mses)))
        print(f"| {T} | {clip:g} | {scale:g} | " + " | ".join(f"{m:.2e}" for m in mses)
              + f" | {score:.3f} |", flush=True)
        return score

    for T, clip in itertools.product(ITERS, CLIPS):
        cells[T, clip] = row(T, clip, 3.0)
    T, clip = min(cells, key=cells.get)
    row(T, clip, 1.5)
    print(f"\nBest at step scale 3: max_iter={T}, clip_norm={clip:g} "
          f"(mean log10 validation MSE {cells[T, clip]:.3f}); the measurement noise alone "
          "gives MSE 1e-4.")


def check(seeds=range(10, 13)):
    instances = [((20, 20), 3, 20000), ((15, 15), 1, 8000), ((30, 10), 4, 30000)]
    print("| instance | eps | " + " | ".join(available_solvers(DPMatrixSensing)) + " |")
    print("|---|---|" + "---|" * len(available_solvers(DPMatrixSensing)))
    for (shape, rank, n), eps in itertools.product(instances, (1.0, 8.0)):
        cells = []
        for solver in available_solvers(DPMatrixSensing):
            errors = []
            for seed in seeds:
                X, y, X_star = make_matrix_sensing(n, shape=shape, rank=rank, noise=0.01,
                                                   random_state=seed)
                model = DPMatrixSensing(shape=shape, rank=rank, epsilon=eps, solver=solver,
                                        random_state=seed,
                                        accountant=BudgetAccountant()).fit(X, y)
                errors.append(np.linalg.norm(model.low_rank_matrix_ - X_star)
                              / np.linalg.norm(X_star))
            cells.append(f"{np.mean(errors):.4f}")
        print(f"| {shape[0]}x{shape[1]} rank {rank}, n {n} | {eps:g} | " + " | ".join(cells)
              + " |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    return check() if args.check else grid()


if __name__ == "__main__":
    sys.exit(main())

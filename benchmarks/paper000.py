"""Paper 000's experiment: DP matrix sensing with rgda, next to the paper's Table 2 and gd.

    python benchmarks/paper000.py [--seeds 5]

Part 1, the paper's instance (section 5): p = q = 20, rank 3, n = 400,
(epsilon, delta) = (2, 1e-6), per-example clip C = 1, T = 400 steps,
refreshes every 10 steps on batches of 200 and increments on batches of 50
(Poisson samples of those expected sizes), start U0, V0 ~ N(0, 0.1^2).
skdp runs the y-free form (Phi itself, d2 = 0) and the paper's minimax form
(one private dual per record, K = 5 exact ascent steps of 0.5 per step,
``solver_params={'dual': 'per_record'}``); Phi is the same function. Reported at the
released iterate: Phi = (1 / 2n) sum_i (<A_i, U V^T> - b_i)^2, ||grad Phi||
and lambda_min of the Hessian of Phi (exact, by central differences of the
exact gradient), mean +/- std over the seeds, for rgda with the paper's
settings, and for rgda and gd with their defaults at equal privacy (same
epsilon and delta), and the paper's Table 2 rows as printed (its stated noise cannot produce them: notes_000 section 3).

Part 2, the trend: ||grad Phi|| and the relative recovery error against
epsilon in {0.25, 1, 4, 16}, on the paper's instance and on 20000 rows
(the acceptance instance), estimator defaults otherwise, in the y-free and
the minimax form.

Run by hand (a few minutes on 2 cores for 5 seeds); results in
``benchmarks/results/paper000.md``.
"""

import argparse
import sys
import time

import numpy as np

import skdp
from skdp.matrix_sensing import DPMatrixSensing, make_matrix_sensing

SHAPE, RANK = (20, 20), 3
PAPER = {"epsilon": 2.0, "delta": 1e-6, "clip_norm": 1.0, "max_iter": 400}
PAPER_RGDA = {"refresh_every": 10, "refresh_batch_size": 200, "increment_batch_size": 50}
MINIMAX = {"dual": "per_record", "ascent_steps": 5}
#: Table 2 of the paper (t = 399), as printed
TABLE_2 = [("DP-RGDA (paper)", 0.9119, 0.4251, -4.8504e-2),
           ("Sto-SPIDER (paper)", 13.7046, 3.4505, -2.1862e-1),
           ("Ada-DP-SPIDER (paper)", 8.0751, 2.2753, -1.4378e-1),
           ("PrivateDiff (paper)", 0.6546, 0.3344, -4.3622e-2)]
EPSILONS = (0.25, 1.0, 4.0, 16.0)


def phi_gradient(U, V, X, y):
    G = (X.T @ (X @ (U @ V.T).ravel() - y) / len(y)).reshape(SHAPE)
    return np.concatenate([(G @ V).ravel(), (G.T @ U).ravel()])


def diagnostics(est, X, y):
    """Phi, ||grad Phi|| and lambda_min(hess Phi) at the released factors (non-private)."""
    U, V = est.components_
    phi = 0.5 * np.mean((X @ (U @ V.T).ravel() - y) ** 2)
    x = np.concatenate([U.ravel(), V.ravel()])
    size, h = U.size, 1e-5

    def grad(z):
        return phi_gradient(z[:size].reshape(U.shape), z[size:].reshape(V.shape), X, y)

    H = np.empty((x.size, x.size))
    for j in range(x.size):  # the exact gradient is quadratic in x: differences are exact
        e = np.zeros_like(x)
        e[j] = h
        H[:, j] = (grad(x + e) - grad(x - e)) / (2 * h)
    lam = np.linalg.eigvalsh(0.5 * (H + H.T))[0]
    return phi, float(np.linalg.norm(grad(x))), float(lam)


def fit(X, y, seed, solver, **params):
    return DPMatrixSensing(shape=SHAPE, rank=RANK, solver=solver, random_state=seed,
                           accountant=skdp.BudgetAccountant(), **params).fit(X, y)


def cell(values, fmt):
    return f"{np.mean(values):{fmt}} ± {np.std(values):{fmt}}"


def paper_instance(seeds):
    X, y, X_star = make_matrix_sensing(400, shape=SHAPE, rank=RANK, noise=0.01, random_state=0)
    print("## The paper's instance (n = 400, eps 2, delta 1e-6, C = 1, T = 400)\n")
    print("| method | Phi | grad norm of Phi | lambda_min | relative error | steps | s / fit |")
    print("|---|---|---|---|---|---|---|")
    equal_privacy = {"epsilon": PAPER["epsilon"], "delta": PAPER["delta"]}
    runs = {"rgda, the paper's settings (y-free)": ("rgda", {**PAPER,
                                                             "solver_params": PAPER_RGDA}),
            "rgda, the paper's settings (minimax, K = 5)": (
                "rgda", {**PAPER, "solver_params": {**PAPER_RGDA, **MINIMAX}}),
            "rgda, defaults": ("rgda", equal_privacy),
            "rgda, defaults (minimax, K = 5)": ("rgda", {**equal_privacy,
                                                         "solver_params": MINIMAX}),
            "gd, defaults": ("gd", equal_privacy)}
    for label, (solver, params) in runs.items():
        rows, steps, times = [], [], []
        for seed in range(seeds):
            start = time.perf_counter()
            est = fit(X, y, seed, solver, **params)
            times.append(time.perf_counter() - start)
            err = np.linalg.norm(est.low_rank_matrix_ - X_star) / np.linalg.norm(X_star)
            rows.append((*diagnostics(est, X, y), err))
            steps.append(est.n_iter_)
        cols = np.array(rows).T
        print(f"| {label} | {cell(cols[0], '.4f')} | {cell(cols[1], '.4f')} | "
              f"{cell(cols[2], '.2e')} | {cell(cols[3], '.3f')} | {np.mean(steps):.0f} | "
              f"{np.mean(times):.2f} |")
        sys.stdout.flush()
    for label, phi, grad, lam in TABLE_2:
        print(f"| {label} | {phi:.4f} | {grad:.4f} | {lam:.4e} | | 400 | |")
    phi0 = 0.5 * np.mean(y ** 2)
    print(f"\nPhi at U = V = 0: {phi0:.4f}.\n")


def trend(seeds):
    for n in (400, 20000):
        X, y, X_star = make_matrix_sensing(n, shape=SHAPE, rank=RANK, noise=0.01,
                                           random_state=0)
        print(f"## Trend in epsilon: rgda with defaults, n = {n} ({seeds} seeds)\n")
        print("| | " + " | ".join(f"eps {e:g}" for e in EPSILONS) + " |")
        print("|---|" + "---|" * len(EPSILONS))
        for form, params in (("y-free", {}), ("minimax", {"solver_params": MINIMAX})):
            grads, errors = [], []
            for eps in EPSILONS:
                g, e = [], []
                for seed in range(seeds):
                    est = fit(X, y, seed, "rgda", epsilon=eps, **params)
                    g.append(diagnostics(est, X, y)[1] if n <= 400 else
                             float(np.linalg.norm(phi_gradient(*est.components_, X, y))))
                    e.append(np.linalg.norm(est.low_rank_matrix_ - X_star)
                             / np.linalg.norm(X_star))
                grads.append(cell(g, ".2e"))
                errors.append(cell(e, ".3f"))
            print(f"| grad norm of Phi, {form} | " + " | ".join(grads) + " |")
            print(f"| relative error, {form} | " + " | ".join(errors) + " |")
            sys.stdout.flush()
        print()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"# Paper 000: DP matrix sensing (skdp {skdp.__version__}, {args.seeds} seeds)\n")
    paper_instance(args.seeds)
    trend(args.seeds)


if __name__ == "__main__":
    main()

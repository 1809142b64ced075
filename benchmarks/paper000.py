"""Paper 000's experiment: DP matrix sensing with rgda, the paper's Table 2 and its baselines.

    python benchmarks/paper000.py [--quick] [--seeds 5] [--out benchmarks/results/paper000.md]

Part 1, the paper's instance (section 5): p = q = 20, rank 3, n = 400,
(epsilon, delta) = (2, 1e-6), per-example clip C = 1, T = 400 steps,
refreshes every 10 steps on batches of 200 and increments on batches of 50
(Poisson samples of those expected sizes), start U0, V0 ~ N(0, 0.1^2).
The paper does not give the scale of X*; we run two: ||X*||_F = 5 (skdp's
``make_matrix_sensing``, Phi(0) = 0.033) and ||X*||_F = 27, where Phi at
the start (0.96) is the paper's final DP-RGDA value (0.9119) give or take
the start's own spread, i.e. the scale at which the paper's DP-RGDA row
means "barely moved", as ours does. Rows: rgda with the paper's settings
(y-free; the minimax form ``solver_params={'dual': 'per_record'}`` in the
full mode), rgda and gd at their defaults at equal privacy, and the paper's
three baselines (Sto-SPIDER, Ada-DP-SPIDER, PrivateDiff, implemented in
``benchmarks/minimax_baselines.py``, charged by the same accountant), then
the paper's Table 2 as printed. Reported at the released iterate: Phi,
||grad Phi|| and lambda_min of the Hessian of Phi (exact, by central
differences of the exact gradient), mean +/- std over the seeds.

Part 2, why rgda releases its start on that instance (steps, escapes).

Part 3, the noisy saddle start: rgda and gd from U = V = 0 (an exact saddle,
the gradient is 0 there) on 20000 rows (the acceptance instance), against
the same solvers from the public random start.

Part 4 (full mode only), the trend: ||grad Phi|| and the relative recovery
error against epsilon in {0.25, 1, 4, 16}, on the paper's instance and on
20000 rows, estimator defaults otherwise, in the y-free and the minimax form.

``--quick`` (2 seeds, parts 1-3, no minimax rows): 33 s of CPU (3.6 minutes
wall on the shared machine); the full mode (5 seeds, all parts): 10.8 minutes
wall on the shared machine at load 8-10 (41.8 at load 12-19).
"""

import argparse
import sys
import time

import numpy as np

import skdp
from skdp.matrix_sensing import DPMatrixSensing, make_matrix_sensing

from minimax_baselines import BASELINES, dp_spider
from results_file import write_results

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


PAPER_SCALE = 27.0


def scaled_instance(n, scale, random_state=0):
    """make_matrix_sensing's instance with X* rescaled to ||X*||_F = scale (same A_i, noise)."""
    X, y, X_star = make_matrix_sensing(n, shape=SHAPE, rank=RANK, noise=0.01,
                                       random_state=random_state)
    noise = y - X @ X_star.ravel()
    X_star = X_star * (scale / np.linalg.norm(X_star))
    return X, X @ X_star.ravel() + noise, X_star


def factors_diagnostics(U, V, X, y):
    class _Fitted:
        components_ = (U, V)
    return diagnostics(_Fitted, X, y)


def baseline_rows(X, y, X_star, seeds):
    A = X.reshape(len(y), *SHAPE)
    out = {}
    for name, kw in BASELINES.items():
        rows, times = [], []
        for seed in range(seeds):
            start_rng = np.random.default_rng(seed)
            U0 = start_rng.normal(0.0, 0.1, (SHAPE[0], RANK))
            V0 = start_rng.normal(0.0, 0.1, (SHAPE[1], RANK))
            start = time.perf_counter()
            U, V, _ = dp_spider(A, y, U0, V0, epsilon=PAPER["epsilon"], delta=PAPER["delta"],
                                T=PAPER["max_iter"], clip=PAPER["clip_norm"], rng=seed + 1000,
                                **kw)
            times.append(time.perf_counter() - start)
            err = np.linalg.norm(U @ V.T - X_star) / np.linalg.norm(X_star)
            rows.append((*factors_diagnostics(U, V, X, y), err))
        out[name] = (np.array(rows).T, PAPER["max_iter"], np.mean(times))
    return out


def paper_instance(seeds, quick, measured):
    for scale in (5.0, PAPER_SCALE):
        X, y, X_star = scaled_instance(400, scale)
        phi0 = 0.5 * np.mean(y ** 2)
        print(f"## The paper's instance, ||X*||_F = {scale:g} (n = 400, eps 2, delta 1e-6, "
              f"C = 1, T = 400; Phi(0) = {phi0:.4f})\n")
        print("| method | Phi | grad norm of Phi | lambda_min | relative error | steps | "
              "escapes | s / fit |")
        print("|---|---|---|---|---|---|---|---|")
        equal_privacy = {"epsilon": PAPER["epsilon"], "delta": PAPER["delta"]}
        runs = {"rgda, the paper's settings (y-free)": ("rgda", {**PAPER,
                                                                 "solver_params": PAPER_RGDA})}
        if not quick:
            runs["rgda, the paper's settings (minimax, K = 5)"] = (
                "rgda", {**PAPER, "solver_params": {**PAPER_RGDA, **MINIMAX}})
        runs["rgda, defaults"] = ("rgda", equal_privacy)
        runs["gd, defaults"] = ("gd", equal_privacy)
        for label, (solver, params) in runs.items():
            rows, steps, escapes, times = [], [], [], []
            for seed in range(seeds):
                start = time.perf_counter()
                est = fit(X, y, seed, solver, **params)
                times.append(time.perf_counter() - start)
                err = np.linalg.norm(est.low_rank_matrix_ - X_star) / np.linalg.norm(X_star)
                rows.append((*diagnostics(est, X, y), err))
                steps.append(est.n_iter_)
                escapes.append(getattr(est, "n_escapes_", 0))
            cols = np.array(rows).T
            measured[(scale, label)] = cols
            print(f"| {label} | {cell(cols[0], '.4f')} | {cell(cols[1], '.4f')} | "
                  f"{cell(cols[2], '.2e')} | {cell(cols[3], '.3f')} | {np.mean(steps):.0f} | "
                  f"{np.mean(escapes):.1f} | {np.mean(times):.2f} |")
            sys.stdout.flush()
        for label, (cols, steps, seconds) in baseline_rows(X, y, X_star, seeds).items():
            measured[(scale, label)] = cols
            print(f"| {label} (benchmarks/minimax_baselines.py) | {cell(cols[0], '.4f')} | "
                  f"{cell(cols[1], '.4f')} | {cell(cols[2], '.2e')} | {cell(cols[3], '.3f')} | "
                  f"{steps} | | {seconds:.2f} |")
            sys.stdout.flush()
        for label, phi, grad, lam in TABLE_2:
            print(f"| {label} | {phi:.4f} | {grad:.4f} | {lam:.4e} | | 400 | | |")
        print()


def start_gradient_norms(scale, seeds=5):
    """Median and largest per-example gradient norm at the public random start (all seeds)."""
    from minimax_baselines import per_example_grads

    X, y, _ = scaled_instance(400, scale)
    A = X.reshape(len(y), *SHAPE)
    norms = []
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        U0 = rng.normal(0.0, 0.1, (SHAPE[0], RANK))
        V0 = rng.normal(0.0, 0.1, (SHAPE[1], RANK))
        norms.append(np.linalg.norm(per_example_grads(A, y, U0, V0), axis=1))
    norms = np.concatenate(norms)
    return float(np.median(norms)), float(norms.max())


def why_start_released():
    small, large = start_gradient_norms(5.0), start_gradient_norms(PAPER_SCALE)
    print("## Why rgda releases its start on the paper's instance\n")
    print("With the paper's settings rgda stops after 51 steps with 0 escapes (tables above): "
          "the norm of its first private estimate v_0 (a clipped batch gradient plus noise "
          "calibrated for the whole 400-step plan) is below its threshold alpha, which is the "
          "noise floor of v, because on 400 rows at (2, 1e-6) the noise floor is above every "
          "clipped gradient. rgda therefore enters the perturb-and-monitor phase at t = 0 with "
          "the start as anchor, the monitored movement never passes the escape test within "
          "the patience of 50 steps, and the anchor, the public random start, is released "
          "(relative error 1.00 at both scales). This is the algorithm's rule, not a bug in "
          "the accounting or in the benchmark: a lower threshold walks on the noise (the "
          "'rgda, defaults' rows, which diverge). The benchmark's setting did contribute at "
          f"||X*||_F = 5: per-example gradient norms at the start (U0, V0 ~ N(0, 0.1^2)) have "
          f"median {small[0]:.3f} and maximum {small[1]:.3f}, far below the paper's clip C = 1, "
          "which sets the noise; at ||X*||_F = 27 (median "
          f"{large[0]:.3f}, maximum {large[1]:.3f}) rgda still releases its start.\n")


def side_by_side(measured):
    """The table the issue asks for: every number of Table 2 against ours (||X*||_F = 27)."""
    ours = {"DP-RGDA (paper)": "rgda, the paper's settings (y-free)",
            "Sto-SPIDER (paper)": "Sto-SPIDER", "Ada-DP-SPIDER (paper)": "Ada-DP-SPIDER",
            "PrivateDiff (paper)": "PrivateDiff"}
    common = ("X* scale not in the paper (ours 27); our noise is calibrated by skdp's "
              "accountant for the whole run (the paper's stated noise cannot produce its "
              "curves, notes_000 section 3)")
    why = {"DP-RGDA (paper)": "rgda never finds a gradient above its noise floor on 400 rows "
           "and releases its start (part 2); " + common,
           "Sto-SPIDER (paper)": "with the paper's step 0.005 our run stays near its start; "
           "the paper's run ends far above Phi(0); " + common,
           "Ada-DP-SPIDER (paper)": "our drift-triggered refresh simplifies Tao et al.'s rule "
           "(benchmarks/minimax_baselines.py); " + common,
           "PrivateDiff (paper)": "its step is not in the paper (we use DP-RGDA's 0.2), which "
           "walks on the noise; " + common}
    print(f"## Side by side: the paper's Table 2 against our run at ||X*||_F = "
          f"{PAPER_SCALE:g}\n")
    print("| quantity | paper reports | we measure | what differs and why |")
    print("|---|---|---|---|")
    for label, phi, grad, lam in TABLE_2:
        cols = measured.get((PAPER_SCALE, ours[label]))
        if cols is None:
            continue
        for name, paper, j, fmt in (("Phi", phi, 0, ".4f"), ("grad norm", grad, 1, ".4f"),
                                    ("lambda_min", lam, 2, ".2e")):
            print(f"| {label.replace(' (paper)', '')} {name} | {paper:{fmt}} | "
                  f"{cell(cols[j], fmt)} | {why[label] if j == 0 else ''} |")
    print()


def verdict(measured):
    X, y, _ = scaled_instance(400, PAPER_SCALE)
    phi0 = 0.5 * np.mean(y ** 2)
    phis = {label: np.mean(cols[0]) for (scale, label), cols in measured.items()
            if scale == PAPER_SCALE}
    below = [label for label, phi in phis.items() if phi < phi0]
    rgda = phis["rgda, the paper's settings (y-free)"]
    beats = [name for name in ("Sto-SPIDER", "Ada-DP-SPIDER") if rgda < phis[name]]
    print("## Verdict\n")
    print(f"Claim (paper 000, Table 2): DP-RGDA reaches a lower Phi than Sto-SPIDER and "
          f"Ada-DP-SPIDER. At ||X*||_F = {PAPER_SCALE:g}, rgda with the paper's settings "
          f"(Phi {rgda:.4f}, its start) is below {', '.join(beats) or 'neither'}; the "
          f"methods whose mean Phi ends below Phi(0) = {phi0:.4f} are: "
          f"{', '.join(below) or 'none'}. "
          f"**{'Partly reproduced' if beats else 'Not reproduced'}**: under noise calibrated "
          "for (2, 1e-6) no private method learns X* on 400 rows (relative errors near 1 or "
          "above), so the ordering is one between runs that barely move or diverge, not the "
          "paper's descent curves. The saddle-escape advantage (part 3): from U = V = 0 the "
          "privacy noise itself moves gd off the saddle, and gd ends more accurate than rgda "
          "(compare the rows).\n")


class _SaddleStart(DPMatrixSensing):
    """DPMatrixSensing started at U = V = 0 (benchmark only: the estimator's start is random)."""

    def _initial_coef(self, loss, rng):
        (p, q), rank = loss.shape, loss.rank
        return loss.pack(np.zeros((p, rank)), np.zeros((q, rank)), 0.0)


def saddle_start(seeds, quick):
    n = 20000
    X, y, X_star = make_matrix_sensing(n, shape=SHAPE, rank=RANK, noise=0.01, random_state=0)
    epsilons = (1.0,) if quick else (1.0, 4.0)
    print(f"## Noisy saddle start: from U = V = 0 (gradient exactly 0) on {n} rows, "
          f"{seeds} seeds\n")
    print("Relative recovery error ||UV^T - X*||_F / ||X*||_F (Phi(0) = "
          f"{0.5 * np.mean(y ** 2):.4f}), estimator defaults.\n")
    print("| solver, start | " + " | ".join(f"eps {e:g} error" for e in epsilons)
          + " | " + " | ".join(f"eps {e:g} Phi" for e in epsilons) + " |")
    print("|---|" + "---|" * (2 * len(epsilons)))
    for solver in ("rgda", "gd"):
        for label, cls in (("U = V = 0", _SaddleStart), ("random start", DPMatrixSensing)):
            errs, phis = [], []
            for eps in epsilons:
                e, f = [], []
                for seed in range(seeds):
                    est = cls(shape=SHAPE, rank=RANK, solver=solver, epsilon=eps,
                              random_state=seed, accountant=skdp.BudgetAccountant()).fit(X, y)
                    e.append(np.linalg.norm(est.low_rank_matrix_ - X_star)
                             / np.linalg.norm(X_star))
                    f.append(0.5 * np.mean((X @ est.coef_ - y) ** 2))
                errs.append(cell(e, ".3f"))
                phis.append(cell(f, ".2e"))
            print(f"| {solver}, {label} | " + " | ".join(errs) + " | " + " | ".join(phis) + " |")
            sys.stdout.flush()
    print()


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
    parser.add_argument("--quick", action="store_true", help="2 seeds, parts 1-3 only")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/results/paper000.md")
    args = parser.parse_args(argv)
    seeds = args.seeds or (2 if args.quick else 5)
    mode = "quick" if args.quick else "full"
    with write_results(args.out, f"python benchmarks/paper000.py{' --quick' if args.quick else ''}"
                       f"{'' if args.seeds is None else f' --seeds {seeds}'}", mode):
        print(f"# Paper 000: DP matrix sensing (skdp {skdp.__version__}, {seeds} seeds, "
              f"{mode} mode)\n")
        measured = {}
        paper_instance(seeds, args.quick, measured)
        why_start_released()
        side_by_side(measured)
        verdict(measured)
        saddle_start(seeds, args.quick)
        if not args.quick:
            trend(seeds)


if __name__ == "__main__":
    main()

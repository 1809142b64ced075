"""Fit time of the defaults next to scikit-learn's LogisticRegression, on the same input.

Run by hand (not a test: timings are noisy on shared machines)::

    python benchmarks/bench_logistic.py                     # everything (about 20 minutes)
    python benchmarks/bench_logistic.py --parts adult iteration
    python benchmarks/bench_logistic.py --n-large 200000    # a smaller dense point
    python benchmarks/bench_logistic.py --parts large --solvers gd   # defaults and gd only

Every time is CPU time of the process (``time.process_time``: all BLAS threads
counted), the median of ``--repeats`` runs, the contenders alternating run by
run (A B A B ...) so that a slow spell of a shared machine hits both. Both
sides get the same preprocessed input: rows scaled to unit L2 norm once,
before the clock starts.

Parts (Markdown tables):

* ``adult``: Adult (32,561 x 123 CSR, unit rows), scikit-learn's
  ``LogisticRegression(max_iter=1000)`` against ``DPLogisticRegression`` and
  ``DPLinearSVC`` at their defaults (``solver='auto'``), epsilon 0.1 and 1.
* ``large``: 1,000,000 x 100 dense unit rows from a logistic model (plus
  200,000 test rows), scikit-learn's ``LogisticRegression()`` against the
  defaults and against every solver ``available_solvers`` lists for
  ``DPLogisticRegression``, epsilon 1, ``delta=1e-7`` (below 1/n; the default
  1e-5 is not, and the estimator warns).
* ``iteration``: one ``gd`` iteration against the floor of one ``X @ w`` plus
  one ``X.T @ r``, dense and CSR, with one BLAS thread: the per-iteration cost
  is the difference of fits of ``K + 10`` and 10 steps, over ``K``.
* ``memory``: peak memory of the default fit at the large point.
"""

import argparse
import contextlib
import resource
import sys
import time
import tracemalloc
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp.solvers import available_solvers
from benchmark_data import load_adult
from results_file import RESULTS, write_results



def cpu_time(fit):
    """``(CPU s, wall s, model)`` of one fit: CPU of the process (all threads), and wall."""
    start, wall = time.process_time(), time.perf_counter()
    model = fit()
    return time.process_time() - start, time.perf_counter() - wall, model


def alternating(contenders, repeats):
    """``{name: (median CPU s, median wall s, last model)}``, the contenders run in turn."""
    cpu = {name: [] for name in contenders}
    wall = {name: [] for name in contenders}
    models = {}
    for _ in range(repeats):
        for name, fit in contenders.items():
            c, w, models[name] = cpu_time(fit)
            cpu[name].append(c)
            wall[name].append(w)
    return {name: (float(np.median(cpu[name])), float(np.median(wall[name])), models[name])
            for name in contenders}


def adult(repeats):
    X, y, Xt, yt = load_adult()
    contenders = {"scikit-learn LogisticRegression(max_iter=1000)":
                  lambda: LogisticRegression(max_iter=1000).fit(X, y)}
    for Est in (DPLogisticRegression, DPLinearSVC):
        for eps in (0.1, 1.0):
            contenders[f"{Est.__name__}(epsilon={eps:g})"] = (
                lambda Est=Est, eps=eps: Est(epsilon=eps, random_state=0,
                                             accountant=BudgetAccountant()).fit(X, y))
    results = alternating(contenders, repeats)
    base, base_wall, _ = results["scikit-learn LogisticRegression(max_iter=1000)"]
    print(f"\n### Adult (32,561 x 123 CSR, unit rows), CPU and wall time, median of {repeats} "
          "alternating runs\n")
    print("| model | solver | n_iter | fit CPU (s) | / scikit-learn | fit wall (s) | "
          "/ scikit-learn | test accuracy |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (t, w, model) in results.items():
        n_iter = int(np.max(model.n_iter_))
        print(f"| {name} | {getattr(model, 'solver_', 'lbfgs')} | {n_iter} | {t:.3f} | "
              f"{t / base:.2f}x | {w:.3f} | {w / base_wall:.2f}x | {model.score(Xt, yt):.4f} |")


def large_data(n, d, n_test=200_000, seed=0):
    """Dense unit rows, labels from a logistic model (a separable-ish, easy problem)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + n_test, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.standard_normal(d)
    w *= 100.0 / np.linalg.norm(w)
    y = (rng.random(n + n_test) < 1.0 / (1.0 + np.exp(-(X @ w)))).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def large(n, d, repeats, solver_repeats, solvers=None):
    X, y, Xt, yt = large_data(n, d)
    delta = 1e-7

    def dp(solver):
        return lambda: DPLogisticRegression(epsilon=1.0, delta=delta, solver=solver,
                                            random_state=0,
                                            accountant=BudgetAccountant()).fit(X, y)

    sk = "scikit-learn LogisticRegression()"
    one_thread = "DPLogisticRegression defaults, one thread"

    def single(fit):
        def run():
            with threadpool_limits(1):
                return fit()
        return run

    results = alternating({sk: lambda: LogisticRegression().fit(X, y),
                           "DPLogisticRegression defaults": dp("auto"),
                           one_thread: single(dp("auto"))}, repeats)
    base, base_wall, sk_model = results[sk]
    sk_acc = sk_model.score(Xt, yt)
    print(f"\n### {n:,} x {d} dense unit rows, epsilon 1, delta {delta:g}: defaults, CPU "
          f"and wall time, median of {repeats} alternating runs\n")
    print("| model | solver | n_iter | fit CPU (s) | / scikit-learn | fit wall (s) | "
          "/ scikit-learn | test accuracy | - scikit-learn's |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (t, w, model) in results.items():
        acc = model.score(Xt, yt)
        print(f"| {name} | {getattr(model, 'solver_', 'lbfgs')} | {int(np.max(model.n_iter_))} "
              f"| {t:.2f} | {t / base:.2f}x | {w:.2f} | {w / base_wall:.2f}x | {acc:.4f} | "
              f"{acc - sk_acc:+.4f} |", flush=True)
    same = np.array_equal(results["DPLogisticRegression defaults"][2].coef_,
                          results[one_thread][2].coef_)
    print(f"\nSame coefficients with all threads and with one thread: {same}.")
    which = ("Every solver `available_solvers(DPLogisticRegression)` lists" if not solvers
             else "Solvers " + ", ".join(f"`{s}`" for s in solvers))
    print(f"\n{which}, median of {solver_repeats} (scikit-learn: {base:.2f} s):\n")
    print("| solver | n_iter | fit CPU (s) | / scikit-learn | test accuracy |")
    print("|---|---|---|---|---|")
    for solver in solvers or available_solvers(DPLogisticRegression):
        times = []
        for _ in range(solver_repeats):
            t, _, model = cpu_time(dp(solver))
            times.append(t)
        t = float(np.median(times))
        print(f"| {solver} | {int(np.max(model.n_iter_))} | {t:.2f} | {t / base:.2f}x | "
              f"{model.score(Xt, yt):.4f} |", flush=True)


def _floor(X, repeats):
    w = np.linspace(-1.0, 1.0, X.shape[1])
    r = np.linspace(-0.5, 0.5, X.shape[0])
    times = []
    for _ in range(repeats):
        start = time.process_time()
        X @ w
        X.T @ r
        times.append(time.process_time() - start)
    return float(np.median(times))


def iteration(repeats, n_dense=200_000, d_dense=100, steps=400):
    X_adult, y_adult, _, _ = load_adult()
    X_dense, y_dense, _, _ = large_data(n_dense, d_dense, n_test=0)
    rows = []
    with threadpool_limits(limits=1):
        for name, X, y in (("Adult CSR", X_adult, y_adult),
                           (f"dense {n_dense:,} x {d_dense}", X_dense, y_dense)):
            def fit(k, X=X, y=y):
                return lambda: DPLogisticRegression(solver="gd", max_iter=k, random_state=0,
                                                    accountant=BudgetAccountant()).fit(X, y)
            res = alternating({"long": fit(steps + 10), "short": fit(10)}, repeats)
            per_iter = (res["long"][0] - res["short"][0]) / steps
            floor = _floor(X, 3 * repeats)
            rows.append((name, per_iter, floor))
    print(f"\n### One `gd` iteration against the floor (one BLAS thread, median of {repeats})\n")
    print("| data | gd iteration (ms) | floor: X @ w + X.T @ r (ms) | ratio |")
    print("|---|---|---|---|")
    for name, per_iter, floor in rows:
        print(f"| {name} | {1e3 * per_iter:.2f} | {1e3 * floor:.2f} | {per_iter / floor:.2f}x |")


def memory(n, d):
    X, y, _, _ = large_data(n, d, n_test=0)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    start = time.perf_counter()
    DPLogisticRegression(epsilon=1.0, delta=1e-7, random_state=0).fit(X, y)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"\n### Memory of the default fit, {n:,} x {d} dense float64 "
          f"(X = {X.nbytes / 2**20:.0f} MiB)\n")
    print("| X (MiB) | extra peak, tracemalloc (MiB) | (X + extra) / X | "
          "process peak RSS growth during fit (MiB) | fit wall time (s) |")
    print("|---|---|---|---|---|")
    print(f"| {X.nbytes / 2**20:.0f} | {peak / 2**20:.1f} | {(X.nbytes + peak) / X.nbytes:.3f} "
          f"| {max(0, rss_after - rss_before) / 2**20:.1f} | {elapsed:.1f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["adult", "large", "iteration", "memory"],
                        choices=["adult", "large", "iteration", "memory"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--solver-repeats", type=int, default=1,
                        help="runs per listed solver at the large point (slow solvers)")
    parser.add_argument("--solvers", nargs="+", default=None,
                        help="the solvers timed one by one at the large point (default: all)")
    parser.add_argument("--n-large", type=int, default=1_000_000)
    parser.add_argument("--d-large", type=int, default=100)
    parser.add_argument("--out", default=None,
                        help="results file (default: benchmarks/results/bench_logistic.md for "
                             "a run of every part at the defaults, else none)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    given = list(argv if argv is not None else sys.argv[1:])
    out = args.out or (None if given else str(RESULTS / "bench_logistic.md"))
    command = " ".join(["python benchmarks/bench_logistic.py"] + given)
    with (write_results(out, command) if out else contextlib.nullcontext()):
        if out:
            print("# Fit time next to scikit-learn (defaults, same preprocessed input)")
        if "adult" in args.parts:
            adult(args.repeats)
        if "large" in args.parts:
            large(args.n_large, args.d_large, args.repeats, args.solver_repeats, args.solvers)
        if "iteration" in args.parts:
            iteration(args.repeats)
        if "memory" in args.parts:
            memory(args.n_large, args.d_large)


if __name__ == "__main__":
    main()

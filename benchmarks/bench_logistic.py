"""Fit time on Adult next to scikit-learn, and peak memory of a large dense fit.

Run by hand (not a test: timings are noisy on shared machines)::

    python benchmarks/bench_logistic.py            # Adult timing + 1e6 x 100 memory
    python benchmarks/bench_logistic.py --n-large 200000   # a smaller memory run

Prints two Markdown tables. Peak memory is the peak of Python/numpy
allocations (tracemalloc) during ``fit``, beside the size of X, and the growth
of the process's peak resident set during the fit (catches non-numpy buffers).
"""

import argparse
import resource
import time
import tracemalloc
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import Normalizer

from skdp import DPLogisticRegression

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _best_time(fit, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times)), model


def adult_timing(repeats):
    X, y = load_svmlight_file(str(DATA / "adult.trn.bz2"), n_features=123)
    Xt, yt = load_svmlight_file(str(DATA / "adult.tst.bz2"), n_features=123)
    X, Xt = Normalizer().transform(X), Normalizer().transform(Xt)
    rows = []
    for name, fit in [
        ("sklearn LogisticRegression (non-private)", lambda: LogisticRegression(max_iter=1000).fit(X, y)),
        ("skdp DPLogisticRegression eps=1", lambda: DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)),
        ("skdp DPLogisticRegression eps=0.1", lambda: DPLogisticRegression(epsilon=0.1, random_state=0).fit(X, y)),
    ]:
        best, med, model = _best_time(fit, repeats)
        rows.append((name, best, med, model.score(Xt, yt)))
    print(f"\nAdult (32561 x 123 CSR, unit-norm rows), best / median of {repeats} fits, one run:\n")
    print("| model | best fit time (s) | median (s) | test accuracy |")
    print("|---|---|---|---|")
    for name, best, med, acc in rows:
        print(f"| {name} | {best:.3f} | {med:.3f} | {acc:.4f} |")


def memory(n, d):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] + 0.1 * rng.standard_normal(n) > 0).astype(int)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    t0 = time.perf_counter()
    DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"\nDense {n} x {d} float64 fit (X = {X.nbytes / 2**20:.0f} MiB):\n")
    print("| X (MiB) | extra peak, tracemalloc (MiB) | (X + extra) / X | "
          "process peak RSS growth during fit (MiB) | fit time (s) |")
    print("|---|---|---|---|---|")
    print(f"| {X.nbytes / 2**20:.0f} | {peak / 2**20:.1f} | {(X.nbytes + peak) / X.nbytes:.3f} | "
          f"{max(0, rss_after - rss_before) / 2**20:.1f} | {elapsed:.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-large", type=int, default=1_000_000)
    parser.add_argument("--d-large", type=int, default=100)
    args = parser.parse_args()
    adult_timing(args.repeats)
    memory(args.n_large, args.d_large)


if __name__ == "__main__":
    main()

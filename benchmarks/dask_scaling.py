"""Private fits on a Dask cluster: fit time and driver memory against in-memory fits.

Run by hand (not a test: timings are noisy on shared machines)::

    python benchmarks/dask_scaling.py                      # 1e6 and 1e7 rows x 100
    python benchmarks/dask_scaling.py --rows 1000000 --max-iter 50   # a quick look

A ``LocalCluster`` of 2 worker processes (1 thread each) generates dense
float32 rows of unit norm on the workers (``dask.array.random``), labels from
a fixed linear model with label noise, and keeps the blocks there
(``persist``). ``DPLogisticRegression(epsilon=1, delta=1e-8, classes=[0, 1],
solver="gd")`` (the per-query path; the default at this shape is
``preconditioned_gd``) then fits on the dask array: each query sends the public coefficients to the blocks and
brings back one partial sum per block. The driver's peak memory during the
fit is measured as the growth of its resident set (sampled every 5 ms). Where X fits in the
driver's memory (``--in-memory-limit``, default 2 GB) the same rows are
gathered and fitted in memory for comparison, once the cluster is closed (its
worker processes would otherwise compete for the cores). Prints a Markdown table and
writes it to ``benchmarks/results/dask_scaling.md``.
"""

import argparse
import sys
import threading
import time
from pathlib import Path

import numpy as np
import psutil

RESULTS = Path(__file__).resolve().parent / "results" / "dask_scaling.md"
N_FEATURES = 100


def make_data(n_rows, block_rows, seed=0):
    """Unit-norm float32 rows and 0/1 labels, generated lazily (on the workers)."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((n_rows, N_FEATURES), chunks=(block_rows, N_FEATURES),
                            dtype=np.float32)
    X = X / da.sqrt((X * X).sum(axis=1, keepdims=True))
    w = np.random.default_rng(seed).standard_normal(N_FEATURES).astype(np.float32)
    noise = rng.logistic(size=n_rows, chunks=(block_rows,)).astype(np.float32)
    y = ((X @ w) * 4.0 + noise > 0).astype(np.int64)
    return X, y


def timed_fit(make_estimator, X, y):
    """Fit; return the model, the wall time and the driver's peak RSS above its start (MB).

    The resident set is sampled every 5 ms by a thread (tracemalloc would slow
    the driver's Python-heavy scheduling traffic by an order of magnitude).
    """
    process = psutil.Process()
    start = process.memory_info().rss
    peak = [start]
    done = threading.Event()

    def sample():
        while not done.wait(0.005):
            peak[0] = max(peak[0], process.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    model = make_estimator().fit(X, y)
    seconds = time.perf_counter() - t0
    done.set()
    sampler.join()
    peak[0] = max(peak[0], process.memory_info().rss)
    return model, seconds, (peak[0] - start) / 2 ** 20


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--block-rows", type=int, default=500_000)
    parser.add_argument("--max-iter", type=int, default=None,
                        help="iterations of every fit (default: the solver's choice)")
    parser.add_argument("--in-memory-limit", type=float, default=2.0,
                        help="largest X (GB) also fitted in memory")
    parser.add_argument("--memory-limit", default="8GB", help="per worker")
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster, wait

    from skdp import BudgetAccountant, DPLogisticRegression

    def estimator():
        return DPLogisticRegression(epsilon=1.0, delta=1e-8, classes=[0, 1], random_state=0,
                                    solver="gd",
                                    max_iter=args.max_iter, accountant=BudgetAccountant())

    rows, gathered = [], []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      memory_limit=args.memory_limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        for n in args.rows:
            X, y = make_data(n, args.block_rows)
            X, y = client.persist([X, y])
            wait([X, y])  # generated on the workers before the clock starts
            X_gb = n * N_FEATURES * 4 / 2 ** 30
            model, seconds, rss = timed_fit(estimator, X, y)
            row = {"rows": n, "X (GB)": X_gb, "blocks": X.numblocks[0],
                   "n_iter": model.n_iter_, "dask fit (s)": seconds,
                   "driver peak RSS growth (MB)": rss,
                   "driver peak / X": rss / (X_gb * 1024)}
            if X_gb <= args.in_memory_limit:
                # fitted after the cluster is closed: its processes would share the cores
                gathered.append((row, model.coef_, client.compute([X, y], sync=True)))
            rows.append(row)
            print(row, flush=True)
            del X, y, model  # release the blocks on the workers
    for row, dask_coef, (X_np, y_np) in gathered:
        memory, mem_seconds, _ = timed_fit(estimator, X_np, y_np)
        row["in-memory fit (s)"] = mem_seconds
        row["max |coef difference|"] = float(np.abs(memory.coef_ - dask_coef).max())
        print(row, flush=True)
    del gathered

    command = " ".join(["python benchmarks/dask_scaling.py",
                        *(sys.argv[1:] if argv is None else argv)])
    columns = ["rows", "X (GB)", "blocks", "n_iter", "dask fit (s)", "in-memory fit (s)",
               "driver peak RSS growth (MB)",
               "driver peak / X", "max |coef difference|"]
    lines = ["# Private fits on a Dask LocalCluster (2 workers x 1 thread)", "",
             f"Command: `{command}`", "",
             "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = []
        for c in columns:
            v = row.get(c)
            cells.append("-" if v is None else (f"{v:.3g}" if isinstance(v, float) else str(v)))
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.write_text(text, encoding="utf-8")
    return rows


if __name__ == "__main__":
    main()

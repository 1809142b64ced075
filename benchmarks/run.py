"""Privacy-utility, speed and memory benchmark of every skdp estimator and solver.

Issue 6. Run by hand (it is not a timed test; ``tests/test_benchmarks.py``
runs it on a tiny configuration so that it cannot rot)::

    python benchmarks/run.py --quick     # under 5 minutes on 2 cores
    python benchmarks/run.py             # the full run, under 30 minutes

What it measures
----------------
1. *Privacy-utility.* Every estimator class found in ``skdp`` is paired with
   every solver ``skdp.solvers.available_solvers(EstimatorClass)`` lists at
   run time (so new solvers show up by themselves), and fitted for each
   epsilon in {0.1, 0.3, 1, 3, 10} (delta 1e-5) and each seed (the seed is
   the estimator's ``random_state``; the data are fixed). All other
   parameters are the estimator's defaults. Classifiers are scored by test
   accuracy on Adult (a9a) and Reuters (svmlight files in ``../shared/data``,
   rows scaled to unit L2 norm by ``Normalizer``, kept CSR); matrix sensing
   by test R^2 and relative recovery error
   ``||U V^T - X*||_F / ||X*||_F`` on :func:`skdp.matrix_sensing.make_matrix_sensing`.
   Beside each: the non-private scikit-learn counterpart (the class of the
   same name without the ``DP`` prefix, else ``LinearRegression`` for
   matrix sensing: full-rank least squares that ignores the rank), the
   majority-class accuracy, fit time and ``n_iter_``. Combinations that are
   not importable or that raise are skipped with a printed note.
2. *Time per iteration relative to the floor* at epsilon 1. The floor is one
   ``X @ w`` plus one ``X.T @ r`` on the very matrix given to ``fit``
   (median of repeated calls, sampled in between the fits so that both see
   the same machine load). Two per-iteration times are reported, both the
   median over repeated fits: *fit / n_iter_* (everything: validation, row
   norms, calibration, the loop) and *loop / iteration*: from the start of
   the solver's first ``noisy_gradient`` query (one clipped gradient pass
   plus its noise) to the end of ``solver.solve``, divided by the number of
   those queries (planning, calibration, validation and set-up excluded;
   instrumented by wrapping the registered solver's ``solve(queries, plan)``
   and the ``noisy_gradient`` of the ``PrivateQueries`` it receives).
   Peak memory: ``tracemalloc`` peak during one separate fit at epsilon 1
   (tracing slows fits by about 30%, so timed fits are never traced); it
   counts numpy buffers allocated by ``fit``, not ``X`` itself.
3. *Scaling* of the default estimator/solver on dense synthetic data
   (d = 100, unit-norm rows) at n in {1e4, 1e5, 1e6} (quick: smaller n).

All BLAS pools are limited to ``--threads`` threads (default 1, as in the
reference measurements). Writes ``results.md`` and
``privacy_utility_adult.png`` (matplotlib with the Agg backend; without
matplotlib only the table is written) to ``--out-dir``. The reference rows
(other libraries on Adult) are the only numbers not measured here; they come
from ``reference_peers.md`` and issue 6 and are labelled as such.
"""

import argparse
import contextlib
import dataclasses
import importlib
import os
import platform
import sys
import time
import tracemalloc
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import scipy
import scipy.sparse as sp
import sklearn
from sklearn.base import is_classifier
from sklearn.datasets import make_classification
from sklearn.preprocessing import Normalizer
from benchmark_data import data_dir, load_svmlight

EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)
DELTA = 1e-5
RESULTS_DIR = Path(__file__).resolve().parent / "results"
TABLE_NAME = "results.md"
PLOT_NAME = "privacy_utility_adult.png"

#: modules searched for estimator classes (their ``__all__``)
ESTIMATOR_MODULES = ("skdp", "skdp.linear_model", "skdp.svm", "skdp.matrix_sensing")

#: svmlight data sets: name -> number of features
SVMLIGHT = {"adult": 123, "reuters": 8315}

#: Reference rows: MEASURED ELSEWHERE, not by this script (reference_peers.md,
#: issue 6). Test accuracy on Adult, rows scaled to unit L2 norm, delta 1e-5.
REFERENCE_ADULT = (
    ("scikit-learn LogisticRegression, non-private (reference)",
     {0.1: 0.8495, 0.5: 0.8495, 1.0: 0.8495, 2.0: 0.8495, 5.0: 0.8495}),
    ("diffprivlib 0.6.6 LogisticRegression, data_norm=1, 5 seeds",
     {0.1: 0.711, 0.5: 0.773, 1.0: 0.787, 2.0: 0.832, 5.0: 0.847}),
    ("Opacus 1.6 DP-SGD, fixed setting (batch 1024, 20 epochs, lr 1.0, clip 1), 3 seeds",
     {0.1: 0.838, 0.5: 0.840, 1.0: 0.840, 2.0: 0.841}),
    ("Opacus 1.6 DP-SGD, best of a small grid tuned on the test set, 3 seeds",
     {0.1: 0.838, 0.5: 0.848, 1.0: 0.850, 2.0: 0.850}),
)
REFERENCE_SOURCE = ("measured elsewhere (reference_peers.md, issue 6); not run by this "
                    "script (diffprivlib 0.6.6 does not import with scikit-learn 1.9)")


# ---------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Config:
    """Everything a run depends on (see :func:`make_config`)."""

    mode: str
    seeds: tuple
    epsilons: tuple
    delta: float
    datasets: tuple  # names among SVMLIGHT, 'matrix_sensing', 'tiny'
    matrix_sensing: dict
    speed_repeats: int
    floor_repeats: int
    scaling_n: tuple
    scaling_d: int
    scaling_repeats: int
    threads: int
    data_dir: Path
    out_dir: Path
    plot: bool = True
    speed: bool = True
    scaling: bool = True
    estimators: tuple = None  # None = all discovered
    solvers: tuple = None  # None = all available


def make_config(mode="full", **overrides):
    """The configuration of a ``'full'``, ``'quick'`` or ``'tiny'`` run."""
    base = dict(
        mode=mode, epsilons=EPSILONS, delta=DELTA, threads=1,
        data_dir=data_dir(), out_dir=RESULTS_DIR, scaling_d=100,
    )
    if mode == "full":
        base.update(
            seeds=(0, 1, 2, 3, 4), datasets=("adult", "reuters", "matrix_sensing"),
            matrix_sensing=dict(n_train=20000, n_test=5000, shape=(20, 20), rank=3,
                                noise=0.01),
            speed_repeats=7, floor_repeats=20,
            scaling_n=(10_000, 100_000, 1_000_000), scaling_repeats=3,
        )
    elif mode == "quick":
        base.update(
            seeds=(0, 1), datasets=("adult", "reuters", "matrix_sensing"),
            matrix_sensing=dict(n_train=5000, n_test=2000, shape=(20, 20), rank=3,
                                noise=0.01),
            speed_repeats=3, floor_repeats=10,
            scaling_n=(10_000, 30_000, 100_000), scaling_repeats=2,
        )
    elif mode == "tiny":
        base.update(
            seeds=(0,), epsilons=(1.0,), datasets=("tiny", "matrix_sensing"),
            matrix_sensing=dict(n_train=200, n_test=100, shape=(3, 3), rank=1, noise=0.01),
            speed_repeats=1, floor_repeats=3,
            scaling_n=(300, 600), scaling_d=10, scaling_repeats=1,
        )
    else:
        raise ValueError(f"mode must be 'full', 'quick' or 'tiny', got {mode!r}.")
    base.update({k: v for k, v in overrides.items() if v is not None})
    return Config(**base)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Dataset:
    """A train/test split and how to score it."""

    name: str
    kind: str  # 'classification' or 'matrix_sensing'
    X: object
    y: np.ndarray
    X_test: object
    y_test: np.ndarray
    info: dict = dataclasses.field(default_factory=dict)


def load_svmlight_dataset(name, data_dir):
    """Adult or Reuters: CSR, rows scaled to unit L2 norm (Normalizer)."""
    X, y, X_test, y_test = load_svmlight(name, folder=data_dir)
    return Dataset(name, "classification", X, y, X_test, y_test,
                   info={"format": "CSR", "shape": X.shape, "test_rows": X_test.shape[0]})


def make_tiny_dataset(seed=0):
    """A small synthetic CSR classification set for the smoke test."""
    X, y = make_classification(n_samples=400, n_features=8, n_informative=4,
                               random_state=seed)
    X = Normalizer().transform(sp.csr_matrix(X))
    return Dataset("tiny", "classification", X[:300], y[:300], X[300:], y[300:],
                   info={"format": "CSR", "shape": (300, 8), "test_rows": 100})


def make_matrix_sensing_dataset(n_train, n_test, shape, rank, noise, seed=0):
    """One draw of the generator (fixed seed), split into train and test rows."""
    from skdp.matrix_sensing import make_matrix_sensing

    X, y, X_star = make_matrix_sensing(n_train + n_test, shape=tuple(shape), rank=rank,
                                       noise=noise, random_state=seed)
    return Dataset("matrix_sensing", "matrix_sensing", X[:n_train], y[:n_train],
                   X[n_train:], y[n_train:],
                   info={"X_star": X_star, "shape": tuple(shape), "rank": rank,
                         "noise": noise, "format": "dense",
                         "dims": (n_train, int(np.prod(shape))), "test_rows": n_test})


def load_datasets(config, notes):
    """Every requested data set that can be loaded; a note for the others."""
    out = []
    for name in config.datasets:
        try:
            if name in SVMLIGHT:
                out.append(load_svmlight_dataset(name, config.data_dir))
            elif name == "tiny":
                out.append(make_tiny_dataset())
            elif name == "matrix_sensing":
                out.append(make_matrix_sensing_dataset(**config.matrix_sensing))
            else:
                raise ValueError(f"unknown data set {name!r}")
        except (ImportError, FileNotFoundError, ValueError) as exc:
            note(notes, f"data set {name!r} skipped: {type(exc).__name__}: {exc}")
    return out


# ---------------------------------------------------------------------------
# estimators, solvers and baselines
# ---------------------------------------------------------------------------
def note(notes, text):
    """Record and print a note (skips, errors, warnings)."""
    if text not in notes:
        notes.append(text)
        print(f"note: {text}", flush=True)


def discover_estimators(notes):
    """Estimator classes exported by skdp's modules, in discovery order."""
    from sklearn.base import BaseEstimator

    found = {}
    for module_name in ESTIMATOR_MODULES:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:  # a module being written may fail in any way
            note(notes, f"{module_name} not importable yet, skipped: "
                        f"{type(exc).__name__}: {exc}")
            continue
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr, None)
            if (isinstance(obj, type) and issubclass(obj, BaseEstimator)
                    and hasattr(obj, "_loss_capabilities")):
                found.setdefault(obj.__name__, obj)
    return list(found.values())


def task_of(cls):
    """'classification', 'matrix_sensing' or None (no benchmark task)."""
    try:
        est = cls()
    except Exception:
        return None
    if is_classifier(est):
        return "classification"
    params = est.get_params()
    if "rank" in params and "shape" in params:
        return "matrix_sensing"
    return None


def solvers_for(cls, notes):
    """``available_solvers(cls)`` at run time; [] (and a note) if it fails."""
    try:
        from skdp.solvers import available_solvers

        return list(available_solvers(cls))
    except Exception as exc:
        note(notes, f"available_solvers({cls.__name__}) failed, skipped: "
                    f"{type(exc).__name__}: {exc}")
        return []


def make_estimator(cls, dataset, solver, epsilon, delta, seed):
    """The estimator with its defaults, except privacy, solver and seed."""
    params = dict(epsilon=epsilon, delta=delta, solver=solver, random_state=seed)
    if dataset.kind == "matrix_sensing":
        params.update(shape=dataset.info["shape"], rank=dataset.info["rank"])
    return cls(**params)


def int32_indices(X):
    """CSR with int32 indices (scikit-learn's LinearSVC rejects int64 ones)."""
    if not sp.issparse(X):
        return X
    X = sp.csr_matrix(X, copy=True)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def nonprivate_counterpart(cls, kind):
    """The scikit-learn class of the same name without 'DP', or a fallback."""
    from sklearn.utils import all_estimators

    name = cls.__name__[2:] if cls.__name__.startswith("DP") else cls.__name__
    by_name = dict(all_estimators())
    if name in by_name:
        return by_name[name]
    if kind == "matrix_sensing":
        return by_name["LinearRegression"]
    return by_name["LogisticRegression"]


def fit_nonprivate(cls, dataset):
    """Score of the non-private counterpart: {metric: value}, and its name."""
    base_cls = nonprivate_counterpart(cls, dataset.kind)
    base = base_cls()
    params = base.get_params()
    if "max_iter" in params and (params["max_iter"] or 0) < 1000:
        base.set_params(max_iter=1000)
    if "random_state" in params:
        base.set_params(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        base.fit(int32_indices(dataset.X), dataset.y)
        elapsed = time.perf_counter() - t0
    scores = score(base, dataset)
    return base_cls.__name__, scores, elapsed


def score(est, dataset):
    """Test metrics: accuracy, or R^2 and recovery error for matrix sensing."""
    X_test = dataset.X_test
    if not hasattr(est, "_loss_capabilities"):
        X_test = int32_indices(X_test)
    if dataset.kind == "classification":
        return {"accuracy": float(est.score(X_test, dataset.y_test))}
    X_star = dataset.info["X_star"]
    if hasattr(est, "low_rank_matrix_"):
        M = est.low_rank_matrix_
    else:
        M = np.asarray(est.coef_).reshape(X_star.shape)
    return {"r2": float(est.score(X_test, dataset.y_test)),
            "recovery_error": float(np.linalg.norm(M - X_star) / np.linalg.norm(X_star))}


METRICS = {
    "classification": (("accuracy", "test accuracy", "higher is better"),),
    "matrix_sensing": (("r2", "test R^2", "higher is better"),
                       ("recovery_error", "relative recovery error ||UV^T - X*||_F / ||X*||_F",
                        "lower is better")),
}


# ---------------------------------------------------------------------------
# measuring one fit
# ---------------------------------------------------------------------------
def fresh_accountant():
    """An unlimited accountant entered for one fit (keeps fits independent)."""
    from skdp import BudgetAccountant

    return BudgetAccountant()


def run_fit(est, X, y, *, trace_memory=False):
    """Fit once; return ((wall s, CPU s), tracemalloc peak bytes or None, warnings)."""
    with warnings.catch_warnings(record=True) as caught, fresh_accountant():
        warnings.simplefilter("always")
        if trace_memory:
            tracemalloc.start()
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            est.fit(X, y)
            elapsed = (time.perf_counter() - t0, time.process_time() - c0)
            peak = tracemalloc.get_traced_memory()[1] if trace_memory else None
        finally:
            if trace_memory:
                tracemalloc.stop()
    messages = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return elapsed, peak, messages


@contextlib.contextmanager
def instrument_solver(name):
    """Time the loop of registered solver ``name`` during the fits in the block.

    Wraps ``solver.solve(queries, plan)`` (instance attribute, removed
    afterwards) and, for each solve, the ``noisy_gradient`` method of the
    :class:`~skdp.solvers.PrivateQueries` it receives (the solver's only way
    to the data: one call is one clipped gradient pass plus its noise).
    Yields a list receiving one dict per solve: ``grad_calls``, and ``loop``
    / ``loop_cpu`` (wall / process CPU seconds from the start of the first
    gradient query to the end of solve).
    """
    from skdp.solvers import get_solver

    solver = get_solver(name)
    records = []
    had_own = "solve" in vars(solver)
    original = solver.solve

    def solve(queries, plan, *args, **kwargs):
        starts = []
        query = queries.noisy_gradient  # the bound method of this fit's queries

        def noisy_gradient(*a, **k):
            if not starts:
                starts.append((time.perf_counter(), time.process_time()))
            else:
                starts.append(None)
            return query(*a, **k)

        queries.noisy_gradient = noisy_gradient  # this fit's object only
        try:
            return original(queries, plan, *args, **kwargs)
        finally:
            t1, c1 = time.perf_counter(), time.process_time()
            del queries.noisy_gradient
            nan = float("nan")
            records.append({"grad_calls": len(starts),
                            "loop": (t1 - starts[0][0]) if starts else nan,
                            "loop_cpu": (c1 - starts[0][1]) if starts else nan})

    solver.solve = solve
    try:
        yield records
    finally:
        if had_own:
            solver.solve = original
        else:
            del solver.solve


def floor_samples(X, n_outputs, repeats, rng, block=5):
    """(wall, CPU) seconds of one ``X @ w`` plus one ``X.T @ r``, ``repeats`` samples.

    Each sample is the mean over a block of ``block`` consecutive pairs.
    ``w`` and ``r`` have the shapes the estimator's own passes have (a
    matrix for a multi-output model).
    """
    n, d = X.shape
    w = rng.standard_normal(d if n_outputs is None else (d, n_outputs)).astype(X.dtype)
    r = rng.standard_normal(n if n_outputs is None else (n, n_outputs)).astype(X.dtype)
    out = []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(block):
            X @ w
            X.T @ r
        out.append(((time.perf_counter() - t0) / block, (time.process_time() - c0) / block))
    return out


def n_outputs_of(est):
    """None for one coefficient vector, else the number of columns of W."""
    coef = np.asarray(getattr(est, "coef_", np.zeros(1)))
    if coef.ndim == 2 and coef.shape[0] > 1:
        return coef.shape[0]
    return None


def mean_std(values):
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    if values.size == 0:
        return float("nan"), float("nan")
    std = float(values.std(ddof=1)) if values.size > 1 else float("nan")
    return float(values.mean()), std


# ---------------------------------------------------------------------------
# 1. privacy-utility
# ---------------------------------------------------------------------------
def privacy_utility(config, datasets, estimators, notes):
    """Rows ``{dataset, estimator, solver, epsilon, <metric>: [per seed], ...}``
    and the non-private baselines ``{(dataset, estimator): {...}}``."""
    rows, baselines = [], {}
    for dataset in datasets:
        for cls in estimators:
            if task_of(cls) != dataset.kind:
                continue
            try:
                base_name, base_scores, base_time = fit_nonprivate(cls, dataset)
                baselines[(dataset.name, cls.__name__)] = {
                    "name": base_name, "scores": base_scores, "time": base_time}
            except Exception as exc:
                note(notes, f"non-private baseline for {cls.__name__} on {dataset.name} "
                            f"failed: {type(exc).__name__}: {exc}")
            for solver in selected_solvers(config, cls, notes):
                for eps in config.epsilons:
                    row = {"dataset": dataset.name, "estimator": cls.__name__,
                           "solver": solver, "epsilon": eps, "time": [], "cpu": [],
                           "n_iter": [], "error": None}
                    for m, _, _ in METRICS[dataset.kind]:
                        row[m] = []
                    for seed in config.seeds:
                        est = make_estimator(cls, dataset, solver, eps, config.delta, seed)
                        try:
                            elapsed, _, messages = run_fit(est, dataset.X, dataset.y)
                        except Exception as exc:
                            row["error"] = f"{type(exc).__name__}: {exc}"
                            note(notes, f"{cls.__name__}(solver={solver!r}) on {dataset.name} "
                                        f"raised: {row['error']}")
                            break
                        for msg in messages:
                            note(notes, f"{cls.__name__}(solver={solver!r}) on "
                                        f"{dataset.name}: {msg}")
                        for m, value in score(est, dataset).items():
                            row[m].append(value)
                        row["time"].append(elapsed[0])
                        row["cpu"].append(elapsed[1])
                        row["n_iter"].append(getattr(est, "n_iter_", np.nan))
                    rows.append(row)
                    print(progress_line(row, METRICS[dataset.kind][0][0]), flush=True)
    return rows, baselines


def selected_solvers(config, cls, notes):
    names = solvers_for(cls, notes)
    if config.solvers is not None:
        names = [s for s in names if s in config.solvers]
    return names


def progress_line(row, metric):
    if row["error"]:
        return (f"  {row['dataset']:14s} {row['estimator']:22s} {row['solver']:20s} "
                f"eps={row['epsilon']:<5g} error")
    mean, std = mean_std(row[metric])
    return (f"  {row['dataset']:14s} {row['estimator']:22s} {row['solver']:20s} "
            f"eps={row['epsilon']:<5g} {metric}={mean:.4f} (std {std:.4f}) "
            f"n_iter={np.mean(row['n_iter']):.0f} fit={np.mean(row['time']):.3f}s")


def majority_accuracy(dataset):
    """Accuracy of predicting the most frequent training label (computed)."""
    labels, counts = np.unique(dataset.y, return_counts=True)
    return float(np.mean(dataset.y_test == labels[np.argmax(counts)]))


# ---------------------------------------------------------------------------
# 2. time per iteration against the floor, and peak memory
# ---------------------------------------------------------------------------
def measure(make, X, y, solver, repeats, floor_repeats, rng):
    """Time ``repeats`` fits of ``make()`` (untraced) and one traced fit.

    Floor samples are taken after each fit, so fits and floor see the same
    machine load. Returns a dict of medians (see :func:`speed`) or raises
    what the fit raised.
    """
    fits, cpus, loops, loops_cpu, n_iters, grad_calls, floors = [], [], [], [], [], [], []
    with instrument_solver(solver) as records:
        for _ in range(repeats):
            est = make()
            (wall, cpu), _, _ = run_fit(est, X, y)
            rec = records[-1]
            fits.append(wall)
            cpus.append(cpu)
            n_iters.append(int(est.n_iter_))
            grad_calls.append(rec["grad_calls"])
            if rec["grad_calls"]:
                loops.append(rec["loop"] / rec["grad_calls"])
                loops_cpu.append(rec["loop_cpu"] / rec["grad_calls"])
            floors += floor_samples(X, n_outputs_of(est), floor_repeats, rng)
    _, peak, _ = run_fit(make(), X, y, trace_memory=True)
    nan = float("nan")
    floor_cpu = float(np.median([c for _, c in floors]))
    floor_wall = float(np.mean([w for w, _ in floors]))
    fit_cpu_per_iter = float(np.median([c / max(1, n) for c, n in zip(cpus, n_iters)]))
    loop_cpu = float(np.median(loops_cpu)) if loops_cpu else nan
    loop_wall = float(np.median(loops)) if loops else nan
    return {
        "n_iter": int(np.median(n_iters)), "grad_calls": grad_calls, "n_iters": n_iters,
        "fit": float(np.median(fits)), "fit_cpu": float(np.median(cpus)),
        "floor": floor_cpu, "floor_wall": floor_wall,
        "fit_per_iter": fit_cpu_per_iter, "loop_per_iter": loop_cpu,
        "loop_wall_per_iter": loop_wall,
        "fit_ratio": fit_cpu_per_iter / floor_cpu, "loop_ratio": loop_cpu / floor_cpu,
        "loop_wall_ratio": loop_wall / floor_wall,
        "peak": peak, "X_bytes": data_bytes(X), "repeats": len(fits),
    }


def speed(config, datasets, estimators, notes, epsilon=1.0):
    """One row per (dataset, estimator, solver): per-iteration time against the floor.

    All times of the ratios are process CPU seconds (``time.process_time``,
    BLAS limited to ``config.threads``), so that time the process spends
    preempted by other jobs on a shared machine counts in neither; the
    wall-clock ratio (floor averaged, preemption included) is kept beside.
    """
    rows = []
    rng = np.random.default_rng(0)
    for dataset in datasets:
        for cls in estimators:
            if task_of(cls) != dataset.kind:
                continue
            for solver in selected_solvers(config, cls, notes):
                def make(cls=cls, solver=solver):
                    return make_estimator(cls, dataset, solver, epsilon, config.delta, 0)

                try:
                    stats = measure(make, dataset.X, dataset.y, solver, config.speed_repeats,
                                    config.floor_repeats, rng)
                except Exception as exc:
                    note(notes, f"speed: {cls.__name__}(solver={solver!r}) on {dataset.name} "
                                f"skipped, the fit raised {type(exc).__name__}")
                    continue
                if any(g != n for g, n in zip(stats["grad_calls"], stats["n_iters"])):
                    note(notes, f"speed: {cls.__name__}(solver={solver!r}) on {dataset.name}: "
                                f"{stats['grad_calls'][0]} gradient passes for n_iter_="
                                f"{stats['n_iters'][0]}; loop time is divided by the "
                                "gradient passes")
                row = {"dataset": dataset.name, "estimator": cls.__name__, "solver": solver,
                       "epsilon": epsilon, **stats}
                rows.append(row)
                print(f"  {dataset.name:14s} {cls.__name__:22s} {solver:20s} "
                      f"n_iter={row['n_iter']:<5d} floor={row['floor'] * 1e3:.3f}ms "
                      f"fit/iter={row['fit_per_iter'] * 1e3:.3f}ms ({row['fit_ratio']:.2f}x) "
                      f"loop/iter={row['loop_per_iter'] * 1e3:.3f}ms "
                      f"({row['loop_ratio']:.2f}x; wall {row['loop_wall_ratio']:.2f}x) "
                      f"peak={fmt_mib(row['peak'])}MiB", flush=True)
    return rows


def data_bytes(X):
    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


def fmt_mib(nbytes):
    return "n/a" if nbytes is None else f"{nbytes / 2**20:.1f}"


# ---------------------------------------------------------------------------
# 3. scaling in n
# ---------------------------------------------------------------------------
def scaling_data(n, d, seed=0):
    """Dense unit-norm rows, labels from a noisy linear model."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    beta = rng.standard_normal(d)
    y = (X @ beta + 0.1 * rng.standard_normal(n) > 0).astype(np.int64)
    return X, y


def default_estimator(estimators):
    """DPLogisticRegression if present, else the first classifier."""
    classifiers = [c for c in estimators if task_of(c) == "classification"]
    for cls in classifiers:
        if cls.__name__ == "DPLogisticRegression":
            return cls
    return classifiers[0] if classifiers else None


def scaling(config, estimators, notes, epsilon=1.0):
    """Fit time and peak memory of the default solver as n grows (d fixed, dense)."""
    cls = default_estimator(estimators)
    if cls is None:
        note(notes, "scaling skipped: no classifier found")
        return []
    rows = []
    rng = np.random.default_rng(1)
    for n in config.scaling_n:
        X, y = scaling_data(n, config.scaling_d)
        # one step on the same shape resolves solver='auto' (it reads the shape)
        warm = cls(epsilon=epsilon, delta=config.delta, random_state=0, max_iter=1)
        warm.fit(X, y)

        def make():
            return cls(epsilon=epsilon, delta=config.delta, random_state=0)

        stats = measure(make, X, y, warm.solver_, config.scaling_repeats,
                        config.floor_repeats, rng)
        row = {"estimator": cls.__name__, "solver": warm.solver_, "n": n,
               "d": config.scaling_d, **stats}
        rows.append(row)
        print(f"  scaling {cls.__name__} solver={row['solver']} n={n} d={config.scaling_d}: "
              f"fit={row['fit']:.3f}s (CPU {row['fit_cpu']:.3f}s) "
              f"loop/iter={row['loop_per_iter'] * 1e3:.3f}ms ({row['loop_ratio']:.2f}x floor) "
              f"peak={fmt_mib(row['peak'])}MiB (X {X.nbytes / 2**20:.1f}MiB)", flush=True)
        del X, y
    return rows


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------
def fmt_mean_std(values, digits=4):
    mean, std = mean_std(values)
    if not np.isfinite(mean):
        return "—"
    if not np.isfinite(std):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def dataset_description(dataset):
    if dataset.kind == "classification":
        n, d = dataset.info["shape"]
        return (f"{n} x {d} {dataset.info['format']} train rows (unit L2 norm), "
                f"{dataset.info['test_rows']} test rows")
    n, d = dataset.info["dims"]
    p, q = dataset.info["shape"]
    return (f"make_matrix_sensing: {n} train + {dataset.info['test_rows']} test "
            f"measurements of a {p} x {q} matrix of rank {dataset.info['rank']}, "
            f"noise {dataset.info['noise']:g}, data seed 0")


def utility_table(dataset, rows, baselines, config, metric, label):
    """Wide table: one row per (estimator, solver), one column per epsilon."""
    lines = []
    eps_cols = " | ".join(f"ε = {e:g}" for e in config.epsilons)
    lines.append(f"| estimator | solver | {eps_cols} | non-private |")
    lines.append("|---|---|" + "---|" * len(config.epsilons) + "---|")
    keys = []
    for r in rows:
        if r["dataset"] == dataset.name and (r["estimator"], r["solver"]) not in keys:
            keys.append((r["estimator"], r["solver"]))
    for est_name, solver in keys:
        cells = []
        for eps in config.epsilons:
            match = [r for r in rows if r["dataset"] == dataset.name
                     and r["estimator"] == est_name and r["solver"] == solver
                     and r["epsilon"] == eps]
            if not match:
                cells.append("—")
            elif match[0]["error"]:
                cells.append("error")
            else:
                cells.append(fmt_mean_std(match[0][metric]))
        base = baselines.get((dataset.name, est_name))
        base_cell = (f"{base['scores'][metric]:.4f} ({base['name']})" if base else "—")
        lines.append(f"| {est_name} | {solver} | {' | '.join(cells)} | {base_cell} |")
    if dataset.kind == "classification":
        lines.append(f"| majority class | — | {' | '.join(['—'] * len(config.epsilons))} | "
                     f"{majority_accuracy(dataset):.4f} |")
    return lines


def reference_table():
    eps = sorted({e for _, vals in REFERENCE_ADULT for e in vals})
    lines = ["| reference row, measured elsewhere | "
             + " | ".join(f"ε = {e:g}" for e in eps) + " |",
             "|---|" + "---|" * len(eps)]
    for name, vals in REFERENCE_ADULT:
        cells = [f"{vals[e]:.4g}" if e in vals else "—" for e in eps]
        lines.append(f"| {name} | {' | '.join(cells)} |")
    return lines


def detail_table(rows, config):
    lines = ["| data | estimator | solver | ε | metric(s), mean ± std over seeds | "
             "n_iter_ (mean) | fit time, s (mean ± std) | fit CPU time, s (mean) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["error"]:
            metrics = f"error: {r['error'][:120]}"
            n_iter = time_cell = cpu_cell = "—"
        else:
            kind = "classification" if "accuracy" in r else "matrix_sensing"
            metrics = "; ".join(f"{m} {fmt_mean_std(r[m])}" for m, _, _ in METRICS[kind])
            n_iter = f"{np.mean(r['n_iter']):.0f}"
            time_cell = fmt_mean_std(r["time"], 3)
            cpu_cell = f"{np.mean(r['cpu']):.3f}"
        lines.append(f"| {r['dataset']} | {r['estimator']} | {r['solver']} | "
                     f"{r['epsilon']:g} | {metrics} | {n_iter} | {time_cell} | {cpu_cell} |")
    return lines


def speed_table(rows):
    lines = ["| data | estimator | solver | n_iter_ | fit time, wall (s) | floor, CPU (ms) | "
             "fit CPU / n_iter_ (ms) | loop CPU / iteration (ms) | fit / n_iter_ ÷ floor | "
             "**loop / iteration ÷ floor** | same, wall-clock | peak memory of fit (MiB) | "
             "X (MiB) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['dataset']} | {r['estimator']} | {r['solver']} | {r['n_iter']} | "
            f"{r['fit']:.3f} | {r['floor'] * 1e3:.3f} | {r['fit_per_iter'] * 1e3:.3f} | "
            f"{r['loop_per_iter'] * 1e3:.3f} | {r['fit_ratio']:.2f} | "
            f"**{r['loop_ratio']:.2f}** | {r['loop_wall_ratio']:.2f} | {fmt_mib(r['peak'])} | "
            f"{fmt_mib(r['X_bytes'])} |")
    return lines


def scaling_table(rows):
    lines = ["| estimator | solver | n | d | X (MiB) | fit time, wall (s) | fit CPU (s) | "
             "CPU / n (µs) | CPU ratio to previous n | n_iter_ | loop / iteration ÷ floor | "
             "peak memory of fit (MiB) | (X + peak) / X |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    previous = None
    for r in rows:
        growth = "—" if previous is None else (
            f"{r['fit_cpu'] / previous['fit_cpu']:.1f} (n x{r['n'] / previous['n']:.3g})")
        lines.append(
            f"| {r['estimator']} | {r['solver']} | {r['n']:,} | {r['d']} | "
            f"{r['X_bytes'] / 2**20:.1f} | {r['fit']:.3f} | {r['fit_cpu']:.3f} | "
            f"{r['fit_cpu'] / r['n'] * 1e6:.2f} | {growth} | {r['n_iter']} | "
            f"{r['loop_ratio']:.2f} | {fmt_mib(r['peak'])} | "
            f"{(r['X_bytes'] + (r['peak'] or 0)) / r['X_bytes']:.3f} |")
        previous = r
    return lines


def acceptance_lines(speed_rows):
    out = []
    for r in speed_rows:
        if r["dataset"] == "adult" and r["solver"] == "gd":
            verdict = "PASS" if r["loop_ratio"] <= 2.0 else "FAIL"
            out.append(f"- {r['estimator']} gd on Adult: loop / iteration = "
                       f"{r['loop_ratio']:.2f} x floor (all of fit / n_iter_: "
                       f"{r['fit_ratio']:.2f} x; wall-clock loop: "
                       f"{r['loop_wall_ratio']:.2f} x): {verdict} (target <= 2, CPU time)")
    return out


def adult_section(datasets, rows, baselines, config):
    """The Adult part of the results (also pasted into the README)."""
    adult = [d for d in datasets if d.name == "adult"]
    if not adult:
        return []
    lines = [f"Test accuracy on Adult (a9a), {dataset_description(adult[0])}; "
             f"δ = {config.delta:g}, mean ± std over seeds {list(config.seeds)}, "
             "estimator defaults otherwise:", ""]
    lines += utility_table(adult[0], rows, baselines, config, "accuracy", "test accuracy")
    lines += ["", "Reference rows, " + REFERENCE_SOURCE + ":", ""]
    lines += reference_table()
    return lines


def environment():
    import skdp

    return (f"skdp {skdp.__version__}, scikit-learn {sklearn.__version__}, numpy "
            f"{np.__version__}, scipy {scipy.__version__}, Python "
            f"{platform.python_version()}, {platform.machine()}, "
            f"{os.cpu_count()} logical CPUs")


def write_markdown(path, config, datasets, rows, baselines, speed_rows, scaling_rows,
                   notes, runtime, command):
    lines = [
        "# skdp benchmark results",
        "",
        f"Generated by `{command}` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC "
        f"in {runtime:.0f} s ({config.mode} run; {environment()}; BLAS limited to "
        f"{config.threads} thread(s)). Machine shared with other jobs: timings are noisy, "
        "ratios are measured side by side. See `benchmarks/run.py` for what is measured.",
        "",
        f"Privacy: ε ∈ {{{', '.join(f'{e:g}' for e in config.epsilons)}}}, "
        f"δ = {config.delta:g}, zero-out neighbours; seeds (estimator "
        f"`random_state`) {list(config.seeds)}; every other parameter at the estimator's "
        "default; solvers from `skdp.solvers.available_solvers(EstimatorClass)`.",
        "",
        "## Privacy-utility",
        "",
    ]
    for dataset in datasets:
        if dataset.name == "adult":
            lines += ["### adult", ""] + adult_section(datasets, rows, baselines, config) + [""]
            continue
        lines += [f"### {dataset.name}", "", dataset_description(dataset) + ".", ""]
        for metric, label, direction in METRICS[dataset.kind]:
            lines += [f"{label} ({direction}), mean ± std over seeds:", ""]
            lines += utility_table(dataset, rows, baselines, config, metric, label) + [""]
    lines += ["### All fits", "", "Fit time is wall-clock `fit()` without tracing.", ""]
    lines += detail_table(rows, config) + [""]
    if speed_rows:
        lines += [
            "## Time per iteration against the floor, and peak memory",
            "",
            "At ε = 1, seed 0; medians over "
            f"{speed_rows[0]['repeats']} fits. Ratios use process CPU time "
            "(`time.process_time`, BLAS limited to one thread), so that time spent "
            "preempted by other jobs on the shared machine counts in neither the fit nor the "
            "floor; the wall-clock ratio (floor averaged, preemption included) is beside it. "
            "*Floor*: one `X @ w` plus one `X.T @ r` on the matrix given to `fit` "
            "(median of blocks of 5, sampled after each fit). *fit / n_iter_*: all of "
            "`fit()` (validation, row norms, calibration, loop). *loop / iteration*: from "
            "the solver's first `noisy_gradient` query to the end of `solve`, divided by "
            "the number of gradient queries (planning, calibration and set-up excluded). Peak memory: "
            "`tracemalloc` peak of one separate fit (numpy buffers allocated by `fit`; `X` "
            "excluded).",
            "",
        ]
        lines += speed_table(speed_rows) + [""]
        acc = acceptance_lines(speed_rows)
        if acc:
            lines += ["Acceptance (issue 6): time per iteration of gd on Adult <= 2x the floor.",
                      ""] + acc + [""]
    if scaling_rows:
        lines += [
            "## Scaling in n",
            "",
            f"Default estimator and solver, ε = 1, dense float64, d = {scaling_rows[0]['d']}, "
            "unit-norm rows; fit time is the median of "
            f"{scaling_rows[0]['repeats']} untraced fit(s) (wall and process CPU), peak "
            "memory the `tracemalloc` peak of one more fit (allocations by `fit` beyond "
            "`X`). Linear cost in n: CPU / n constant, ratio to previous n equal to the "
            "growth of n.",
            "",
        ]
        lines += scaling_table(scaling_rows) + [""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    Path(path).write_text("\n".join(lines), encoding="utf-8")
    return lines


def plot_adult(path, datasets, rows, baselines, config, notes):
    """Accuracy against epsilon on Adult; returns False (with a note) without matplotlib."""
    if not any(d.name == "adult" for d in datasets):
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        note(notes, "matplotlib is not installed (pip install '.[bench]' from the checkout): "
                    "the plot was not written")
        return False
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.5))
    keys = []
    for r in rows:
        if r["dataset"] == "adult" and not r["error"] and (r["estimator"], r["solver"]) not in keys:
            keys.append((r["estimator"], r["solver"]))
    markers = "osD^vP*Xh"
    ref_styles = ((0, (1, 1)), (0, (4, 2)), (0, (4, 1, 1, 1)), (0, (2, 2)))
    skdp_values = []
    for ax in axes:
        for i, (est_name, solver) in enumerate(keys):
            sel = [r for r in rows if r["dataset"] == "adult" and r["estimator"] == est_name
                   and r["solver"] == solver and not r["error"]]
            eps = [r["epsilon"] for r in sel]
            means = [mean_std(r["accuracy"])[0] for r in sel]
            stds = [np.nan_to_num(mean_std(r["accuracy"])[1]) for r in sel]
            skdp_values += means
            ax.errorbar(eps, means, yerr=stds, marker=markers[i % len(markers)], capsize=3,
                        label=f"skdp {est_name} ({solver})")
        # one dashed line per distinct non-private score (measured here)
        by_value = {}
        for (name, _), base in baselines.items():
            if name == "adult":
                by_value.setdefault(round(base["scores"]["accuracy"], 4), []).append(base["name"])
        for value, names in by_value.items():
            ax.axhline(value, linestyle="--", linewidth=1.2, color="k",
                       label=f"non-private scikit-learn {' / '.join(names)} ({value:.4f})")
        for j, (name, vals) in enumerate(REFERENCE_ADULT[1:]):
            e = sorted(vals)
            ax.plot(e, [vals[k] for k in e], linestyle=ref_styles[j % len(ref_styles)],
                    marker="x", color="0.5", linewidth=1.2,
                    label=f"reference, measured elsewhere: {name}")
        ax.set_xscale("log")
        ax.set_xlabel("ε (δ = 1e-5)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("test accuracy")
    axes[0].set_title("Adult (a9a): all rows", fontsize=10)
    if skdp_values:
        low = min(min(skdp_values), 0.83)
        axes[1].set_ylim(low - 0.005, 0.86)
    axes[1].set_title("zoom on the skdp range", fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7, frameon=False)
    fig.suptitle("Privacy-utility on Adult (grey: reference rows measured elsewhere, "
                 "reference_peers.md)", fontsize=10)
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------
def run(config, command="python benchmarks/run.py"):
    """Run every part of the benchmark; returns a dict of the results."""
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    notes = []
    config.out_dir = Path(config.out_dir)
    config.out_dir.mkdir(parents=True, exist_ok=True)
    with threadpool_limits(limits=config.threads):
        estimators = discover_estimators(notes)
        if config.estimators is not None:
            estimators = [c for c in estimators if c.__name__ in config.estimators]
        for cls in estimators:
            if task_of(cls) is None:
                note(notes, f"{cls.__name__}: no benchmark task for this estimator, skipped")
        estimators = [c for c in estimators if task_of(c) is not None]
        print("estimators and solvers: " + "; ".join(
            f"{c.__name__}: {selected_solvers(config, c, notes)}" for c in estimators),
            flush=True)
        datasets = load_datasets(config, notes)
        print("== privacy-utility", flush=True)
        rows, baselines = privacy_utility(config, datasets, estimators, notes)
        speed_rows = []
        if config.speed:
            print("== time per iteration against the floor (epsilon 1)", flush=True)
            speed_rows = speed(config, datasets, estimators, notes)
            for line in acceptance_lines(speed_rows):
                print(line)
        scaling_rows = []
        if config.scaling:
            print("== scaling in n", flush=True)
            scaling_rows = scaling(config, estimators, notes)
    plotted = False
    if config.plot:
        plotted = plot_adult(config.out_dir / PLOT_NAME, datasets, rows, baselines, config,
                             notes)
    runtime = time.perf_counter() - start
    table_path = config.out_dir / TABLE_NAME
    lines = write_markdown(table_path, config, datasets, rows, baselines, speed_rows,
                           scaling_rows, notes, runtime, command)
    print()
    print("\n".join(lines))
    print(f"\nwrote {table_path}" + (f" and {config.out_dir / PLOT_NAME}" if plotted else "")
          + f" in {runtime:.0f} s")
    return {"rows": rows, "baselines": baselines, "speed": speed_rows,
            "scaling": scaling_rows, "notes": notes, "estimators": estimators,
            "datasets": datasets, "table": table_path, "plot": plotted, "runtime": runtime}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="under 5 minutes on 2 cores")
    mode.add_argument("--tiny", action="store_true",
                      help="synthetic tiny data, seconds (the smoke test)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="directory of {adult,reuters}.{trn,tst}.bz2 (default: "
                             "$SKDP_SHARED_DATA or ../shared/data)")
    parser.add_argument("--out-dir", type=Path, default=None,
                        help=f"where to write {TABLE_NAME} and {PLOT_NAME}")
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds")
    parser.add_argument("--epsilons", type=float, nargs="+", default=None)
    parser.add_argument("--datasets", nargs="+", default=None,
                        help="subset of: adult reuters matrix_sensing tiny")
    parser.add_argument("--estimators", nargs="+", default=None)
    parser.add_argument("--solvers", nargs="+", default=None)
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads (default 1)")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--no-scaling", action="store_true")
    return parser.parse_args(argv)


def config_from_args(args):
    mode = "quick" if args.quick else "tiny" if args.tiny else "full"
    return make_config(
        mode,
        data_dir=args.data_dir, out_dir=args.out_dir,
        seeds=tuple(range(args.seeds)) if args.seeds else None,
        epsilons=tuple(args.epsilons) if args.epsilons else None,
        datasets=tuple(args.datasets) if args.datasets else None,
        estimators=tuple(args.estimators) if args.estimators else None,
        solvers=tuple(args.solvers) if args.solvers else None,
        threads=args.threads,
        plot=not args.no_plot, speed=not args.no_speed, scaling=not args.no_scaling,
    )


def main(argv=None):
    args = parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    return run(config_from_args(args),
               command=" ".join(["python benchmarks/run.py", *map(str, argv)]))


if __name__ == "__main__":
    main()

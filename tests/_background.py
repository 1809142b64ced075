"""The heaviest tests' computations, run in worker processes while the rest of the suite runs.

A test marked ``@pytest.mark.background(job=..., cost=...)`` asks for the fixture
``background``: the value of ``job(**arguments)``, where ``arguments`` are the
test's parametrize arguments that ``job`` takes. As soon as the suite is
collected every such job is submitted to a pool of spawned worker processes,
costliest first (``cost(**arguments)``, a relative estimate), and the marked
tests move to the end of the run: the main process runs every other test while
the workers run the jobs on the other cores, and a marked test only collects
its job's value (or its exception, raised in the test) and asserts on it.

The jobs are seeded privacy audits, deterministic whatever the process that
runs them (``skdp.testing.audit_estimator`` returns the same scores for any
``n_jobs``), so where a job runs changes nothing a test sees: the job's printed
lines and warnings are replayed in its test.

``SKDP_TEST_WORKERS`` sets the number of worker processes (default: the cores
this process may use); 0, a single selected test or ``--collect-only`` runs
every job inline, in its test.
"""

import contextlib
import io
import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor

import pytest

#: a job that has not finished after this long fails its test instead of hanging the run
TIMEOUT_SECONDS = 1800
#: the workers' scheduling priority below the main process (``os.nice``)
NICENESS = 10


def _workers():
    value = os.environ.get("SKDP_TEST_WORKERS")
    if value is not None:
        return int(value)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _worker_setup():
    # a worker runs one audit at a time on one core: an audit's own process pool
    # (SKDP_AUDIT_JOBS, read when skdp.testing.audit_designs is imported) or BLAS
    # threads (read when numpy is imported; an audit's products are tiny) would only
    # compete with the other workers and the main process
    os.environ["SKDP_AUDIT_JOBS"] = "1"
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    # the main process's tests (many use both cores through BLAS) come first: the
    # workers take the cycles they leave idle
    os.nice(NICENESS)


def run_job(job, arguments):
    """In a worker: ``job(**arguments)``, its printed text and its warnings."""
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(printed):
        value = job(**arguments)
    seen = {(str(w.message), w.category, w.filename, w.lineno) for w in caught}
    return value, printed.getvalue(), sorted(seen, key=repr)


def _job(item):
    marker = item.get_closest_marker("background")
    if marker is None:
        raise pytest.UsageError(f"{item.nodeid} asks for the 'background' fixture without "
                                "the background(job=...) marker.")
    # a keyword: pytest.mark.x(f) with a function as its only argument marks f itself
    job = marker.kwargs["job"]
    params = getattr(item, "callspec", None)
    params = {} if params is None else params.params
    names = job.__code__.co_varnames[:job.__code__.co_argcount]
    return job, {name: params[name] for name in names if name in params}, marker.kwargs


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "background(job=f, cost=None): the test asserts on f(**its parameters), "
        "run in a worker process while the rest of the suite runs (tests/_background.py)")
    config.pluginmanager.register(Scheduler(), "skdp-background")


@pytest.fixture
def background(request):
    """The value of the test's ``background(job=...)`` marker's job, from its worker."""
    return request.config.pluginmanager.get_plugin("skdp-background").result(request.node)


class Scheduler:
    """A pytest plugin: the worker pool of one session and the jobs it was given."""

    def __init__(self):
        self._pool = None
        self._workers = ()
        self._futures = {}

    @pytest.hookimpl(trylast=True)  # after -m and -k have deselected
    def pytest_collection_modifyitems(self, config, items):
        """Move the marked items to the end; submit their jobs (costliest first)."""
        marked = [item for item in items if item.get_closest_marker("background")]
        if not marked:
            return
        chosen = set(marked)
        items[:] = [item for item in items if item not in chosen] + marked
        workers = min(_workers(), len(marked))
        if workers < 1 or len(items) < 2 or config.option.collectonly:
            return
        jobs = []
        for item in marked:
            job, arguments, options = _job(item)
            cost = options.get("cost")
            jobs.append((-(cost(**arguments) if cost else 0.0), len(jobs), item, job, arguments))
        before = set(multiprocessing.active_children())
        self._pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_worker_setup)
        for _, _, item, job, arguments in sorted(jobs, key=lambda entry: entry[:2]):
            self._futures[item.nodeid] = self._pool.submit(run_job, job, arguments)
        self._workers = set(multiprocessing.active_children()) - before

    def result(self, item):
        """The value of ``item``'s job: from its worker, or computed here if not scheduled."""
        future = self._futures.pop(item.nodeid, None)
        if future is None:
            job, arguments, _ = _job(item)
            return job(**arguments)
        value, printed, seen = future.result(timeout=TIMEOUT_SECONDS)
        print(printed, end="")
        for message, category, filename, lineno in seen:
            warnings.warn_explicit(message, category, filename, lineno)
        return value

    def pytest_sessionfinish(self):
        """Stop the workers; jobs left over (an interrupted run) are cancelled."""
        if self._pool is None:
            return
        unfinished = any(not future.done() for future in self._futures.values())
        self._pool.shutdown(wait=not unfinished, cancel_futures=True)
        if unfinished:  # a stopped run (-x, Ctrl-C) does not wait for running audits
            for process in self._workers:
                process.terminate()
        self._pool = None

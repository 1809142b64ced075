"""Threads for the passes over row blocks, with the same result whatever their number.

A pass over ``X`` is cut into row blocks fixed by the data's shape alone
(never by the number of threads); each block's partial sums are computed by
one thread, and the partials are added in block order. So the exact part of
every release is bitwise the same with one thread or many: the noise added to
it must not depend on scheduling.

How many threads: as many as the BLAS may use when the pass starts (the
threadpoolctl convention: ``with threadpool_limits(1):`` makes every pass
single-threaded, and joblib's worker processes get their share of the CPUs),
at most the CPUs (:func:`joblib.cpu_count`) and at most the blocks. While
blocks run in several threads, the BLAS is limited to one thread per call,
so the threads do not oversubscribe the cores; matrix-matrix products
(which round differently with the BLAS's thread count) always run on one.
"""

import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from joblib import cpu_count
from threadpoolctl import ThreadpoolController

__all__ = ["pass_threads", "map_blocks", "one_blas_thread"]

_LOCK = threading.Lock()
#: the controller (built once), the pool, and the BLAS limit in force while
#: passes run threads (one limit for every concurrent pass, restored by the last)
_STATE = {"controller": None, "blas": None, "pool": None, "pool_size": 0, "limiter": None,
          "active": 0, "user_limit": None}


def _controller():
    with _LOCK:
        if _STATE["controller"] is None:
            _STATE["controller"] = ThreadpoolController()
        return _STATE["controller"]


def pass_threads(n_blocks):
    """The number of threads a pass over ``n_blocks`` row blocks uses.

    Parameters
    ----------
    n_blocks : int
        The blocks of the pass.

    Returns
    -------
    int
        At least 1; at most ``n_blocks``, the CPUs, and the BLAS's current
        thread limit (the user's, when another pass holds the BLAS at one).
    """
    if n_blocks <= 1:
        return 1
    controller = _controller()
    with _LOCK:
        user_limit = _STATE["user_limit"] if _STATE["active"] else None
    if user_limit is None:
        user_limit = _blas_limit(controller)
    return max(1, min(int(n_blocks), int(cpu_count()), int(user_limit)))


def _blas_libraries(controller):
    """The BLAS libraries' controllers (selected once: ``info()`` costs more than a
    small pass, and a pass asks for the limit every time it starts)."""
    with _LOCK:
        if _STATE["blas"] is None:
            _STATE["blas"] = controller.select(user_api="blas").lib_controllers
        return _STATE["blas"]


def _blas_limit(controller):
    limits = [lib.get_num_threads() for lib in _blas_libraries(controller)]
    return min(limits) if limits else cpu_count()


def _enter_single_blas():
    libraries = _blas_libraries(_controller())
    with _LOCK:
        if _STATE["active"] == 0:
            originals = [lib.get_num_threads() for lib in libraries]
            _STATE["user_limit"] = min(originals) if originals else cpu_count()
            for lib in libraries:
                lib.set_num_threads(1)
            _STATE["limiter"] = originals  # restored by the last pass to leave
        _STATE["active"] += 1


def _leave_single_blas():
    with _LOCK:
        _STATE["active"] -= 1
        if _STATE["active"] == 0:
            for lib, n_threads in zip(_STATE["blas"], _STATE["limiter"]):
                lib.set_num_threads(n_threads)
            _STATE["limiter"] = _STATE["user_limit"] = None


def _pool(n_threads):
    with _LOCK:
        if _STATE["pool_size"] < n_threads:
            # a larger pool replaces a smaller one; the old one finishes its work
            _STATE["pool"] = ThreadPoolExecutor(max_workers=n_threads,
                                                thread_name_prefix="skdp-pass")
            _STATE["pool_size"] = n_threads
        return _STATE["pool"]


def map_blocks(work, n_blocks, n_threads, single_blas=False):
    """``[work(k) ...]`` over blocks ``k = 0 .. n_blocks - 1``, in block order.

    Share ``t`` of ``n_threads`` (share 0 in the calling thread, the others
    in a pool's threads) runs the blocks ``t, t + n_threads, ...``
    with its own scratch (``work`` is called as ``work(k, scratch)``, where
    ``scratch`` is a dict private to the thread, e.g. for a cast buffer).

    Parameters
    ----------
    work : callable
        ``work(k, scratch)`` computes block ``k``'s partial result; it must
        depend on block ``k`` only (not on the thread or on other blocks).
    n_blocks : int
        The number of blocks.
    n_threads : int
        From :func:`pass_threads`.
    single_blas : bool, default=False
        Run every block's BLAS calls on one thread even when the blocks run
        in one thread. Matrix-matrix products (a Gram matrix, several outputs)
        round differently with the BLAS's thread count; matrix-vector products
        do not, so a pass of those in one thread keeps the BLAS as it is.

    Returns
    -------
    list
        The blocks' results, in block order.
    """
    if n_threads <= 1 or n_blocks <= 1:
        scratch = {}
        # inside a pass or a one_blas_thread block the BLAS is already held at one
        # thread: joining the hold is a counter (no threadpoolctl call), and it
        # keeps another fit's thread from restoring the limit under this pass
        if not single_blas or n_blocks == 0 or (
                not _STATE["active"] and _blas_limit(_controller()) <= 1):
            return [work(k, scratch) for k in range(n_blocks)]
        _enter_single_blas()
        try:
            return [work(k, scratch) for k in range(n_blocks)]
        finally:
            _leave_single_blas()
    results = [None] * n_blocks

    def run(t):
        scratch = {}
        for k in range(t, n_blocks, n_threads):
            results[k] = work(k, scratch)

    _enter_single_blas()
    try:
        # the calling thread takes share 0 itself: every share runs at the same time.
        # Each pool share runs in a copy of the caller's context: numpy's error state
        # is a context variable, and a product that overflows under the caller's
        # np.errstate must not warn in a pool thread (a warning after the charge
        # would tell whether one huge record is in the data)
        futures = [_pool(n_threads - 1).submit(contextvars.copy_context().run, run, t)
                   for t in range(1, n_threads)]
        try:
            run(0)
        finally:
            for future in futures:
                future.result()  # waits for every share; re-raises a block's error
    finally:
        _leave_single_blas()
    return results


@contextmanager
def one_blas_thread():
    """Run the block's BLAS and LAPACK calls on one thread (nestable, thread-safe).

    For linear algebra on released values whose rounding depends on the
    BLAS's thread count (an eigendecomposition of a noisy Gram matrix, a
    matrix-matrix product): inside it, the result is the same whatever the
    user's thread limit. Shares the limit with the passes of
    :func:`map_blocks`, so concurrent fits restore the user's limit once. It
    holds the limit even when it is one already (``threadpool_limits(1)``,
    joblib's workers): the passes inside it then do not ask threadpoolctl for
    the thread count (a solver's loop of small passes runs inside it).

    Yields
    ------
    None
        Inside the ``with`` block, the BLAS libraries run on one thread.
    """
    _enter_single_blas()
    try:
        yield
    finally:
        _leave_single_blas()

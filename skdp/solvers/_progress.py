"""Progress lines of a running fit (``verbose >= 1``): counts and times only.

:class:`~skdp.solvers.PrivateQueries` reports to a :class:`FitProgress` each
time a solver asks for a query, so every solver shows progress without a
line of its own. A line says how far the run is through its public plan
(queries run against the plan's count, or the share of an adaptive plan's
privacy filter used: functions of released outputs and of the plan), the
elapsed and the expected remaining wall-clock time. Nothing computed from
the data (no loss, no gradient norm) is printed.
"""

import sys
import time

__all__ = ["FitProgress", "PROGRESS_INTERVAL"]

#: seconds between two progress lines, and before the first
PROGRESS_INTERVAL = 1.0


def _clock():
    """Monotonic wall-clock seconds (a function so that tests can replace it)."""
    return time.monotonic()


class FitProgress:
    """Time-throttled progress lines of one fit.

    Parameters
    ----------
    owner : str
        The estimator's name, printed in brackets.
    n_iter : int
        The iterations the public plan provides for.
    interval : float, default=PROGRESS_INTERVAL
        Seconds between lines: a fit shorter than this prints none.
    stream : file-like or None, default=None
        Where to print; None is ``sys.stdout`` at print time.

    Attributes
    ----------
    n_lines : int
        Lines printed so far.
    """

    def __init__(self, owner, n_iter, interval=PROGRESS_INTERVAL, stream=None):
        self.owner = owner
        self.n_iter = int(n_iter)
        self.interval = float(interval)
        self.stream = stream
        self.n_lines = 0
        self._start = self._last = _clock()

    def update(self, done):
        """Print a line if ``interval`` seconds passed since the last one.

        Parameters
        ----------
        done : float
            Share of the plan completed, in [0, 1] (a function of the
            queries run and of the public plan only).
        """
        now = _clock()
        if now - self._last < self.interval:
            return
        self._last = now
        done = min(max(float(done), 0.0), 1.0)
        elapsed = now - self._start
        left = f"~{elapsed * (1.0 - done) / done:.1f} s left" if done > 0 else "? s left"
        print(f"[{self.owner}] iteration {int(done * self.n_iter)}/{self.n_iter} "
              f"({100.0 * done:.0f}% of the plan), {elapsed:.1f} s elapsed, {left}",
              file=self.stream if self.stream is not None else sys.stdout, flush=True)
        self.n_lines += 1

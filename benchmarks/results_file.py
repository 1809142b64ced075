"""Tee a benchmark's printed markdown into its results file, with the command, mode and run time."""

import contextlib
import io
import subprocess
import sys
import time
from pathlib import Path


class _Tee(io.TextIOBase):
    def __init__(self, *streams):
        self.streams = streams

    def write(self, text):
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self):
        for stream in self.streams:
            stream.flush()


def _commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


@contextlib.contextmanager
def write_results(path, command, mode):
    """Print to stdout and to ``path``; a footer records the command, mode, commit and time."""
    buffer = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(_Tee(sys.stdout, buffer)):
        yield
    elapsed = time.perf_counter() - start
    footer = (f"\n---\nWritten by `{command}` ({mode} mode) on commit {_commit()}, "
              f"{elapsed / 60:.1f} min on 2 shared cores (nice 5, OMP_NUM_THREADS=1).\n")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(buffer.getvalue() + footer)
    print(footer)

"""Results files for benchmarks: tee what a script prints into ``benchmarks/results/``.

``write_results`` records the command, mode, commit and run time in a footer;
``printed_to`` heads the file with the command.
"""

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
            stream.flush()
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
    start = time.perf_counter()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    commit = _commit()
    # written as the run goes: an interrupted run leaves its finished tables, and no footer
    with path.open("w") as out:
        with contextlib.redirect_stdout(_Tee(sys.stdout, out)):
            yield
            elapsed = time.perf_counter() - start
            print(f"\n---\nWritten by `{command}` ({mode} mode) on commit {commit}, "
                  f"{elapsed / 60:.1f} min on 2 shared cores (nice 5, OMP_NUM_THREADS=1).")


RESULTS = Path(__file__).resolve().parent / "results"



@contextlib.contextmanager
def printed_to(name, command, mode=None):
    """Print as usual; on success also write the output to ``results/name``, headed by the command."""
    buffer = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, text):
            sys.__stdout__.write(text)
            return buffer.write(text)

    with contextlib.redirect_stdout(Tee()):
        yield
    head = f"Written by `{command}`" + (f" ({mode})" if mode else "") + ".\n\n"
    (RESULTS / name).write_text(head + buffer.getvalue())

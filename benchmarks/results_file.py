"""Results files for benchmarks: tee what a script prints into ``benchmarks/results/``.

:func:`write_results` records the command, mode, commit and run time in a
footer, or (``head=True``) heads the file with the command.
"""

import contextlib
import io
import os
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


#: the folder of the results files
RESULTS = Path(__file__).resolve().parent / "results"


def _machine():
    """What the run had, read when it ends: cores, niceness, BLAS threads, load."""
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{os.cpu_count()} cores, nice {os.nice(0)}, OMP_NUM_THREADS={threads}, "
            f"load average {load:.1f} at the end")


@contextlib.contextmanager
def write_results(path, command, mode=None, *, head=False):
    """Print to stdout and to ``path``, recording the command.

    By default the file is written as the run goes (an interrupted run leaves
    its finished tables, and no footer) and a footer records the command,
    mode, commit and run time. With ``head=True`` it is written when the run
    succeeds (a failed run leaves the former file), headed by the command and
    ``mode`` (if given).
    """
    start = time.perf_counter()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    commit = _commit()
    with (contextlib.nullcontext(io.StringIO()) if head else path.open("w")) as out:
        with contextlib.redirect_stdout(_Tee(sys.stdout, out)):
            yield
            if not head:
                elapsed = time.perf_counter() - start
                how = f" ({mode} mode)" if mode else ""
                print(f"\n---\nWritten by `{command}`{how} on commit {commit}, "
                      f"{elapsed / 60:.1f} min; {_machine()}.")
        if head:
            path.write_text(f"Written by `{command}`" + (f" ({mode})" if mode else "")
                            + ".\n\n" + out.getvalue())


def script_command(script, argv=None):
    """The command a results file records: ``python benchmarks/<script>`` and its arguments.

    ``argv`` is what the script's ``main`` parsed (None: the process's own arguments).
    """
    args = sys.argv[1:] if argv is None else argv
    return f"python benchmarks/{script}" + "".join(f" {a}" for a in args)


def results_output(path, command):
    """:func:`write_results` to ``path``, or printing only where ``path`` is ``'-'``."""
    return contextlib.nullcontext() if path == "-" else write_results(path, command)


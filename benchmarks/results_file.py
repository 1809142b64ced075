"""Write what a benchmark prints to ``benchmarks/results/<name>`` as well (a results file)."""

import contextlib
import io
import sys
from pathlib import Path

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

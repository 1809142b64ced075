"""Put binary Covertype into ``$SKDP_EXTRA_DATA`` for ``benchmarks/paper004.py``.

    SKDP_EXTRA_DATA=/work/data_ext python benchmarks/prepare_covtype_data.py SOURCE

SOURCE is UCI Covertype: ``covtype.data`` or ``covtype.data.gz`` (581,012
rows, 54 features and the class, no header), or the Kaggle ``covtype.csv``
(the same with a header row), as a file path or a git directory whose HEAD
holds one of them. The rows are checked (count, columns), classes 1 and 2
kept (495,141 rows), the 10 numeric columns scaled to [0, 1], rows scaled to
unit L2 norm, and ``covtype_binary.npz`` written there; nothing enters the
repository. (No public repository reachable from here held the full file
when this was written: the copies found were subsets or Git LFS pointers.)
"""

import argparse
import io
import subprocess
import sys
from pathlib import Path

import numpy as np

from covtype_data import ENV, FILE, N_BINARY, N_FEATURES, extra_data_dir

ROWS = 581_012
NAMES = ("covtype.data.gz", "covtype.data", "covtype.csv")


def _read(source):
    if source.is_dir():
        for name in NAMES:
            blob = subprocess.run(["git", "-C", str(source), "show", f"HEAD:{name}"],
                                  capture_output=True)
            if blob.returncode == 0:
                return name, blob.stdout
        sys.exit(f"{source}: no {' / '.join(NAMES)} at HEAD")
    return source.name, source.read_bytes()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="covtype.data[.gz] / covtype.csv, or a git directory")
    args = parser.parse_args(argv)
    folder = extra_data_dir()
    if folder is None:
        sys.exit(f"set {ENV} to the folder that should hold the data (outside the repository)")
    name, raw = _read(Path(args.source).expanduser())
    if name.endswith(".gz"):
        import gzip
        raw = gzip.decompress(raw)
    skip = 1 if name.endswith(".csv") else 0
    table = np.loadtxt(io.BytesIO(raw), delimiter=",", skiprows=skip)
    if table.shape != (ROWS, N_FEATURES + 1):
        sys.exit(f"{name}: expected {ROWS} rows of {N_FEATURES + 1} columns, got {table.shape} "
                 "(a subset or a Git LFS pointer?)")
    label = table[:, -1]
    keep = (label == 1) | (label == 2)
    X, y = table[keep, :-1], np.where(label[keep] == 1, 1.0, -1.0)
    low, high = X[:, :10].min(axis=0), X[:, :10].max(axis=0)
    X[:, :10] = (X[:, :10] - low) / np.where(high > low, high - low, 1.0)
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    assert len(y) == N_BINARY, len(y)
    folder.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(folder / FILE, X=X, y=y)
    print(f"wrote {folder / FILE}: {X.shape[0]} rows, {X.shape[1]} features")


if __name__ == "__main__":
    main()

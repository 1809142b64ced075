"""The one data loader of the benchmark scripts.

Every script of ``benchmarks/`` gets its data here::

    from benchmark_data import load_adult, load_small, load_svmlight

A script run as ``python benchmarks/<script>.py`` imports its siblings
directly (nothing to install). The real data sets are read from the shared
data folder, never copied into the repository.

* :func:`load_svmlight` -- ``(X_train, y_train, X_test, y_test)`` of a LIBSVM
  set of the shared folder (``"adult"``: a9a, 123 features; ``"reuters"``:
  8315), CSR, labels +/-1. ``unit_rows=True`` (the default) scales every row
  to unit L2 norm, the scaling of every linear-model benchmark;
  ``unit_rows=False`` returns the rows as stored.
* :func:`load_svmlight_train` -- ``(X_train, y_train)`` only: the test file is
  not opened (for choosing defaults on validation splits of the training data).
* :func:`load_adult` -- ``load_svmlight("adult")``.
* :func:`load_small` -- ``(X, y)`` of one of scikit-learn's bundled sets
  (``"breast_cancer"``, ``"wine"``, ``"digits"``, ``"iris"``), as stored.
* :func:`data_dir` -- the shared folder: ``$SKDP_SHARED_DATA``, else
  ``../shared/data`` beside the repository.
* :func:`write_report` -- print a Markdown report and write it to a file.

Data sets brought from public sources outside the shared folder live in the
folder named by ``$SKDP_EXTRA_DATA`` (:func:`extra_data_dir`), never in the
repository; run as a script, this module puts them there::

    SKDP_EXTRA_DATA=~/skdp_data python benchmarks/benchmark_data.py bank SOURCE
    SKDP_EXTRA_DATA=~/skdp_data python benchmarks/benchmark_data.py covtype SOURCE

* ``bank``: SOURCE is a copy of UCI Bank Marketing's ``bank-full.csv``
  (45,211 records, 17 columns), a file path or a git directory whose HEAD
  holds ``bank-full.csv`` (e.g. a clone of the public repository
  Mohaemnsaber/Banking-Term-Deposit-Prediction); it is checked (row count,
  columns) and copied. :func:`load_bank` returns it as paper 002
  preprocesses its census sets: categorical columns one-hot, numeric
  columns scaled to [0, 1], then rows scaled to unit L2 norm, label 'yes'
  -> +1, a fixed stratified 80/20 train/test split (seed 0; the paper uses
  10-fold cross-validation).
* ``covtype``: SOURCE is UCI Covertype, ``covtype.data`` or
  ``covtype.data.gz`` (581,012 rows, 54 features and the class, no header),
  or the Kaggle ``covtype.csv`` (the same with a header row), as a file
  path or a git directory whose HEAD holds one of them. The rows are
  checked (count, columns), classes 1 and 2 kept (495,141 rows; Blackard &
  Dean 1999), class 1 -> +1, class 2 -> -1, the 10 numeric columns scaled
  to [0, 1] and the 44 one-hot columns kept, rows scaled to unit L2 norm
  (so the losses' public bounds hold), and ``covtype_binary.npz`` written:
  :func:`load_covtype` (paper 004's binary problem). No public repository
  reachable from here held the full file when this was written: the copies
  found were subsets or Git LFS pointers. :func:`covtype_like` is a
  synthetic set of the same shape (10 numeric columns in [0, 1], one of 4
  and one of 40 one-hot columns, labels from a logistic teacher).

The loaders of the extra sets return None when the data are absent.
"""

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import (load_breast_cancer, load_digits, load_iris, load_svmlight_file,
                              load_wine)
from sklearn.preprocessing import normalize

__all__ = ["SVMLIGHT_FEATURES", "SMALL_SETS", "EXTRA_ENV", "data_dir", "extra_data_dir",
           "load_svmlight", "load_svmlight_train", "load_adult", "load_small", "load_bank",
           "load_covtype", "covtype_like", "write_report"]

#: the LIBSVM sets of the shared folder and their number of features
SVMLIGHT_FEATURES = {"adult": 123, "reuters": 8315}
#: scikit-learn's bundled sets, by name
SMALL_SETS = {"breast_cancer": load_breast_cancer, "wine": load_wine, "digits": load_digits,
              "iris": load_iris}
#: the variable naming the folder of the extra data sets
EXTRA_ENV = "SKDP_EXTRA_DATA"
BANK_FILE, BANK_ROWS, BANK_COLUMNS = "bank-full.csv", 45_211, 17
COVTYPE_FILE, COVTYPE_ROWS = "covtype_binary.npz", 581_012
COVTYPE_BINARY, COVTYPE_FEATURES = 495_141, 54
COVTYPE_SOURCES = ("covtype.data.gz", "covtype.data", "covtype.csv")


def data_dir():
    """The shared data folder: ``$SKDP_SHARED_DATA``, else ``../shared/data`` beside the repo."""
    env = os.environ.get("SKDP_SHARED_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "data"


def load_svmlight(name, *, unit_rows=True, folder=None):
    """``(X_train, y_train, X_test, y_test)`` of the LIBSVM set ``name`` (CSR, labels +/-1).

    Reads ``<name>.trn.bz2`` and ``<name>.tst.bz2`` from ``folder`` (default
    :func:`data_dir`); ``unit_rows`` scales every row to unit L2 norm.
    """
    folder = data_dir() if folder is None else Path(folder)
    n_features = SVMLIGHT_FEATURES[name]
    paths = [folder / f"{name}.{part}.bz2" for part in ("trn", "tst")]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise FileNotFoundError(f"missing {', '.join(missing)} (set --data-dir where the "
                                "script has it, or SKDP_SHARED_DATA)")
    X, y = load_svmlight_file(str(paths[0]), n_features=n_features)
    X_test, y_test = load_svmlight_file(str(paths[1]), n_features=n_features)
    if unit_rows:
        X, X_test = normalize(X), normalize(X_test)
    return X, y, X_test, y_test


def load_svmlight_train(name, *, unit_rows=True, folder=None):
    """``(X_train, y_train)`` of the LIBSVM set ``name``; only ``<name>.trn.bz2`` is opened."""
    folder = data_dir() if folder is None else Path(folder)
    path = folder / f"{name}.trn.bz2"
    if not path.exists():
        raise FileNotFoundError(f"missing {path} (set --data-dir where the script has it, "
                                "or SKDP_SHARED_DATA)")
    X, y = load_svmlight_file(str(path), n_features=SVMLIGHT_FEATURES[name])
    return (normalize(X) if unit_rows else X), y


def load_adult():
    """Adult (a9a): ``(X_train, y_train, X_test, y_test)``, CSR rows of unit L2 norm, labels +/-1."""
    return load_svmlight("adult")


def load_small(name):
    """``(X, y)`` of scikit-learn's bundled data set ``name``, as stored."""
    return SMALL_SETS[name](return_X_y=True)


def write_report(text, out):
    """Print ``text`` and write it to the file ``out`` (``"-"``: print only)."""
    print(text)
    if out != "-":
        with open(out, "w") as fh:
            fh.write(text)


def extra_data_dir():
    """The folder of the extra data sets, or None when ``SKDP_EXTRA_DATA`` is unset."""
    path = os.environ.get(EXTRA_ENV)
    return Path(path) if path else None


def load_bank():
    """``(X_train, y_train, X_test, y_test)`` of Bank Marketing, or None when it is absent."""
    folder = extra_data_dir()
    if folder is None or not (folder / BANK_FILE).exists():
        return None
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import MinMaxScaler, Normalizer, OneHotEncoder

    frame = pd.read_csv(folder / BANK_FILE, sep=None, engine="python")
    frame.columns = [c.strip().strip('"') for c in frame.columns]
    y = np.where(frame.pop("y").astype(str).str.strip('"') == "yes", 1.0, -1.0)
    categorical = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    numeric = [c for c in frame.columns if c not in categorical]
    X_train, X_test, y_train, y_test = train_test_split(
        frame, y, test_size=0.2, stratify=y, random_state=0)
    # scaling ranges and categories from the training part only
    encode = ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
        ("num", MinMaxScaler(clip=True), numeric),
    ])
    norm = Normalizer()
    X_train = norm.transform(encode.fit_transform(X_train))
    X_test = norm.transform(encode.transform(X_test))
    return X_train, y_train, X_test, y_test


def load_covtype():
    """``(X, y)`` of binary Covertype (rows of unit L2 norm, labels +/-1), or None."""
    folder = extra_data_dir()
    if folder is None or not (folder / COVTYPE_FILE).exists():
        return None
    with np.load(folder / COVTYPE_FILE) as data:
        return data["X"], data["y"]


def covtype_like(n=COVTYPE_BINARY, seed=0):
    """A synthetic set of Covertype's binary shape: ``(X, y)``, rows of unit L2 norm."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, COVTYPE_FEATURES))
    X[:, :10] = rng.beta(2.0, 2.0, size=(n, 10))
    X[np.arange(n), 10 + rng.integers(0, 4, n)] = 1.0
    X[np.arange(n), 14 + rng.integers(0, 40, n)] = 1.0
    teacher = rng.standard_normal(COVTYPE_FEATURES) * 2.0
    logits = (X - X.mean(axis=0)) @ teacher
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-logits)), 1.0, -1.0)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, y


def _read_source(source, names):
    """``(name, bytes)`` of the file ``source``, or of the first of ``names`` at a git HEAD."""
    if source.is_dir():
        for name in names:
            blob = subprocess.run(["git", "-C", str(source), "show", f"HEAD:{name}"],
                                  capture_output=True)
            if blob.returncode == 0:
                return name, blob.stdout
        sys.exit(f"{source}: no {' / '.join(names)} at HEAD")
    return source.name, source.read_bytes()


def _prepare_bank(name, raw, folder):
    lines = [line for line in raw.decode().splitlines() if line.strip()]
    sep = ";" if lines[0].count(";") > lines[0].count(",") else ","
    if len(lines) - 1 != BANK_ROWS or len(lines[0].split(sep)) != BANK_COLUMNS:
        sys.exit(f"{name}: expected {BANK_ROWS} records of {BANK_COLUMNS} columns (UCI "
                 f"bank-full.csv), found {len(lines) - 1} of {len(lines[0].split(sep))}")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / BANK_FILE).write_text("\n".join(lines) + "\n")
    return f"wrote {folder / BANK_FILE}"


def _prepare_covtype(name, raw, folder):
    if name.endswith(".gz"):
        import gzip
        raw = gzip.decompress(raw)
    skip = 1 if name.endswith(".csv") else 0
    table = np.loadtxt(io.BytesIO(raw), delimiter=",", skiprows=skip)
    if table.shape != (COVTYPE_ROWS, COVTYPE_FEATURES + 1):
        sys.exit(f"{name}: expected {COVTYPE_ROWS} rows of {COVTYPE_FEATURES + 1} columns, got "
                 f"{table.shape} (a subset or a Git LFS pointer?)")
    label = table[:, -1]
    keep = (label == 1) | (label == 2)
    X, y = table[keep, :-1], np.where(label[keep] == 1, 1.0, -1.0)
    low, high = X[:, :10].min(axis=0), X[:, :10].max(axis=0)
    X[:, :10] = (X[:, :10] - low) / np.where(high > low, high - low, 1.0)
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    assert len(y) == COVTYPE_BINARY, len(y)
    folder.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(folder / COVTYPE_FILE, X=X, y=y)
    return f"wrote {folder / COVTYPE_FILE}: {X.shape[0]} rows, {X.shape[1]} features"


#: the extra sets: the source files a git directory may hold, and their preparer
_PREPARERS = {"bank": ((BANK_FILE,), _prepare_bank),
              "covtype": (COVTYPE_SOURCES, _prepare_covtype)}


def main(argv=None):
    """Check a data set's source and put it into ``$SKDP_EXTRA_DATA`` (see the module)."""
    parser = argparse.ArgumentParser(
        description="Put a data set brought from a public source into $SKDP_EXTRA_DATA.")
    parser.add_argument("dataset", choices=sorted(_PREPARERS))
    parser.add_argument("source", help="the data file, or a git directory whose HEAD holds it")
    args = parser.parse_args(argv)
    folder = extra_data_dir()
    if folder is None:
        sys.exit(f"set {EXTRA_ENV} to the folder that should hold the data (outside the "
                 "repository)")
    names, prepare = _PREPARERS[args.dataset]
    name, raw = _read_source(Path(args.source).expanduser(), names)
    print(prepare(name, raw, folder))


if __name__ == "__main__":
    main()

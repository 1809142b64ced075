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
"""

import os
from pathlib import Path

from sklearn.datasets import (load_breast_cancer, load_digits, load_iris, load_svmlight_file,
                              load_wine)
from sklearn.preprocessing import normalize

__all__ = ["SVMLIGHT_FEATURES", "SMALL_SETS", "data_dir", "load_svmlight", "load_svmlight_train",
           "load_adult",
           "load_small", "write_report"]

#: the LIBSVM sets of the shared folder and their number of features
SVMLIGHT_FEATURES = {"adult": 123, "reuters": 8315}
#: scikit-learn's bundled sets, by name
SMALL_SETS = {"breast_cancer": load_breast_cancer, "wine": load_wine, "digits": load_digits,
              "iris": load_iris}


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

"""Covertype for paper 004's benchmark, brought from outside the git tree.

``SKDP_EXTRA_DATA`` names the folder that ``benchmarks/prepare_covtype_data.py``
filled with ``covtype_binary.npz`` (the same variable as ``census_data.py``).
:func:`load_covtype` returns the paper's binary problem: classes 1 and 2 of
UCI Covertype (Blackard & Dean 1999; 495,141 of the 581,012 records), class
1 -> +1, class 2 -> -1, the 10 numeric columns scaled to [0, 1] and the 44
one-hot columns kept, then rows scaled to unit L2 norm (as the Adult
benchmark, so the losses' public bounds hold); ``None`` when it is absent.

:func:`covtype_like` is a synthetic set of the same shape (495,141 x 54:
10 numeric columns in [0, 1], one of 4 and one of 40 one-hot columns, labels
from a logistic teacher), for when the real file is absent.
"""

import os
from pathlib import Path

import numpy as np

ENV = "SKDP_EXTRA_DATA"
FILE = "covtype_binary.npz"
N_BINARY, N_FEATURES = 495_141, 54


def extra_data_dir():
    """The folder of the extra data sets, or None when ``SKDP_EXTRA_DATA`` is unset."""
    path = os.environ.get(ENV)
    return Path(path) if path else None


def load_covtype():
    """``(X, y)`` of binary Covertype (rows of unit L2 norm, labels +/-1), or None."""
    folder = extra_data_dir()
    if folder is None or not (folder / FILE).exists():
        return None
    with np.load(folder / FILE) as data:
        return data["X"], data["y"]


def covtype_like(n=N_BINARY, seed=0):
    """A synthetic set of Covertype's binary shape: ``(X, y)``, rows of unit L2 norm."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, N_FEATURES))
    X[:, :10] = rng.beta(2.0, 2.0, size=(n, 10))
    X[np.arange(n), 10 + rng.integers(0, 4, n)] = 1.0
    X[np.arange(n), 14 + rng.integers(0, 40, n)] = 1.0
    teacher = rng.standard_normal(N_FEATURES) * 2.0
    logits = (X - X.mean(axis=0)) @ teacher
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-logits)), 1.0, -1.0)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X, y

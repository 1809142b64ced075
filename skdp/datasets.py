"""Public feature ranges of scikit-learn's small data sets, and synthetic sets for benchmarks.

A private pipeline needs bounds that do not come from the private values
(:class:`skdp.preprocessing.BoundedScaler`). For scikit-learn's bundled
data sets they are published with the data: the ``DESCR`` of
breast_cancer, wine and iris has a "Summary Statistics" table with each
feature's min and max, and digits' says its pixels are integers in
``0..16``. :func:`documented_bounds` reads them from that text, so a demo
or a test uses exactly what the documentation states.
"""

import re

import numpy as np
from sklearn import datasets as _sk_datasets

from .matrix_sensing import make_matrix_sensing

__all__ = ["documented_bounds", "make_bounded_regression", "make_ill_conditioned_classification",
           "make_matrix_sensing"]

_LOADERS = {
    "breast_cancer": _sk_datasets.load_breast_cancer,
    "digits": _sk_datasets.load_digits,
    "iris": _sk_datasets.load_iris,
    "wine": _sk_datasets.load_wine,
}


def _summary_table_bounds(descr, n_features):
    """(lower, upper) from the rows ``name: min max ...`` of a Summary Statistics table."""
    start = descr.find("Summary Statistics")
    rows = []
    for line in descr[start:].splitlines()[1:]:
        if rows and not line.strip():
            break
        name, colon, values = line.rpartition(":")
        if not colon or not name.strip():
            continue
        numbers = values.split()
        try:
            rows.append((float(numbers[0]), float(numbers[1])))
        except (IndexError, ValueError):
            continue
    if start < 0 or len(rows) != n_features:
        raise ValueError(f"the description has no Summary Statistics table with "
                         f"{n_features} rows (found {len(rows)})")
    lower, upper = np.array(rows).T
    return lower, upper


def _pixel_range_bounds(descr, n_features):
    """(lower, upper) from the sentence ``... in the range a..b``."""
    match = re.search(r"range\s+(\d+)\.\.(\d+)", descr)
    if match is None:
        raise ValueError("the description states no pixel range 'a..b'")
    lower, upper = float(match.group(1)), float(match.group(2))
    return np.full(n_features, lower), np.full(n_features, upper)


def documented_bounds(name):
    """Each feature's public (lower, upper), as the data set's ``DESCR`` states it.

    Parameters
    ----------
    name : {'breast_cancer', 'digits', 'iris', 'wine'}
        A data set bundled with scikit-learn (``sklearn.datasets.load_<name>``).

    Returns
    -------
    bounds : tuple (lower, upper) of ndarray of shape (n_features,)
        Ready for ``BoundedScaler(bounds=...)``. These are the
        documentation's min and max: a user with only the documentation
        knows them, so they cost no privacy.

    Examples
    --------
    >>> from skdp.datasets import documented_bounds
    >>> lower, upper = documented_bounds("iris")
    >>> lower, upper
    (array([4.3, 2. , 1. , 0.1]), array([7.9, 4.4, 6.9, 2.5]))
    """
    if name not in _LOADERS:
        raise ValueError(f"documented_bounds: unknown data set {name!r}; choose one of "
                         f"{sorted(_LOADERS)}.")
    bunch = _LOADERS[name]()
    n_features = bunch.data.shape[1]
    read = _pixel_range_bounds if name == "digits" else _summary_table_bounds
    return read(bunch.DESCR, n_features)


def make_ill_conditioned_classification(n_samples=60000, n_features=20, random_state=0):
    """An imbalanced binary problem whose features' scales span two orders of magnitude.

    The set on which skdp's defaults are checked against ill-conditioning:
    feature ``j`` has scale ``s_j`` (``numpy.logspace(0, -2, n_features)``)
    and mean ``0.5 s_j``, every row is scaled to unit L2 norm, the true
    weights are ``N(0, 1) / s_j * 0.6`` (so every feature carries signal),
    and a label is 1 with probability ``sigmoid(4 (z - q))``, ``z`` the true
    score and ``q`` its 90th percentile (about 10 % positives). Gradient
    descent needs many steps along the small-scale features; a preconditioned
    solver does not.

    Parameters
    ----------
    n_samples : int, default=60000
        Number of rows (the defaults' checks train on the first 50,000).
    n_features : int, default=20
        Number of features.
    random_state : int, default=0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Rows of unit L2 norm.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.

    Examples
    --------
    >>> from skdp.datasets import make_ill_conditioned_classification
    >>> X, y = make_ill_conditioned_classification(n_samples=1000)
    >>> X.shape, round(float(y.mean()), 1)
    ((1000, 20), 0.1)
    """
    # public randomness: synthetic data, drawn from its own seed, releases nothing
    rng = np.random.default_rng(random_state)
    s = np.logspace(0, -2, n_features)
    X = rng.standard_normal((n_samples, n_features)) * s + 0.5 * s
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.standard_normal(n_features) / s * 0.6
    z = X @ w
    y = (rng.random(n_samples) < 1 / (1 + np.exp(-4 * (z - np.quantile(z, 0.9))))).astype(int)
    return X, y


def make_bounded_regression(n_samples=1000, n_features=20, random_state=0):
    """A linear regression set with unit-norm rows and responses in ``[-1, 1]``.

    The set on which :class:`~skdp.DPLinearRegression` is checked against
    ridge regression: rows ``x_i ~ N(0, I)`` scaled to unit L2 norm, true
    weights ``w ~ N(0, I)`` scaled to norm 2, and responses
    ``clip(x_i . w + 0.1 + 0.1 e_i, -1, 1)`` with ``e_i ~ N(0, 1)``, so
    ``data_norm=1`` and ``y_bound=1`` are public bounds of the set.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=20
        Number of features.
    random_state : int, default=0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Rows of unit L2 norm.
    y : ndarray of shape (n_samples,)
        Responses in ``[-1, 1]``.

    Examples
    --------
    >>> from skdp.datasets import make_bounded_regression
    >>> X, y = make_bounded_regression(n_samples=100, n_features=3)
    >>> X.shape, float(abs(y).max()) <= 1.0
    ((100, 3), True)
    """
    # public randomness: synthetic data, drawn from its own seed, releases nothing
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n_samples, n_features))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.normal(size=n_features)
    w *= 2.0 / np.linalg.norm(w)
    y = np.clip(X @ w + 0.1 + 0.1 * rng.normal(size=n_samples), -1.0, 1.0)
    return X, y

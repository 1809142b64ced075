"""Public feature ranges of scikit-learn's small data sets, read from their documentation.

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

__all__ = ["documented_bounds", "make_matrix_sensing"]

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

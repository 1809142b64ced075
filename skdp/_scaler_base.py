"""What skdp's scalers share: parameter checks, the fit that leaves no trace, the bounded map.

:class:`BoundedMapMixin` is the transform of the scalers that clip each
feature to ``[lower_, upper_]`` and map it to ``feature_range``
(:class:`~skdp.preprocessing.BoundedScaler` from public bounds,
:class:`~skdp.preprocessing.DPBoundsScaler` from released ones). The
private scalers (``DPBoundsScaler``, ``DPStandardScaler``) also share their
parameters' constraints, the restore of a failed fit
(:func:`fit_guard`) and the public shape read before the charge
(:func:`public_shape`).
"""

from contextlib import contextmanager

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._base import n_columns, n_rows
from ._bounded_map import clip_and_map
from .accounting import BudgetAccountant
from .validation import (
    DELTA,
    POSITIVE,
    RANDOM_STATE,
    Boolean,
    InstanceOf,
    validate_data,
    validate_params,
)

__all__ = ["PRIVATE_SCALER_CONSTRAINTS", "BoundedMapMixin", "check_pair", "fit_guard",
           "public_shape"]

#: the parameter constraints of a private scaler's fit
PRIVATE_SCALER_CONSTRAINTS = {
    "epsilon": [POSITIVE],
    "delta": DELTA,
    "accountant": [None, InstanceOf(BudgetAccountant, name="a skdp.BudgetAccountant")],
    "random_state": RANDOM_STATE,
    "secure_mode": [Boolean],
}


def check_pair(owner, name, value, positive=False):
    """``(a, b)`` from a parameter that must be a pair of finite numbers ``a < b``.

    ``positive`` also requires ``a > 0``. The error names ``owner`` and
    ``name`` and quotes the parameter (public), never data.
    """
    try:
        a, b = (float(v) for v in value)
    except (TypeError, ValueError):
        a, b = np.nan, np.nan
    if not (np.isfinite(a) and np.isfinite(b) and a < b and (a > 0 or not positive)):
        pair, need = ("(smallest, largest)", "0 < smallest < largest") if positive \
            else ("(min, max)", "min < max")
        raise ValueError(f"{owner}: {name} must be a pair {pair} of finite numbers "
                         f"with {need}, got {value!r}.")
    return a, b


@contextmanager
def fit_guard(estimator):
    """Validate ``estimator``'s parameters; restore its attributes if the block raises.

    A fit run inside it fails on a bad parameter before anything else, and
    a failed fit leaves no trace.
    """
    saved = dict(estimator.__dict__)
    try:
        validate_params(type(estimator).__name__, estimator.get_params(deep=False),
                        estimator._parameter_constraints)
        yield
    except BaseException:
        estimator.__dict__.clear()
        estimator.__dict__.update(saved)
        raise


def public_shape(estimator, X, **check_params):
    """``(X, n, d)``: the public numbers of rows and columns, read without the values.

    Where the shape cannot be read from ``X`` alone (a list, an empty
    array), ``X`` is validated now (with ``check_params``) so that the error
    comes before any charge.
    """
    n, d = n_rows(X), n_columns(X)
    if n is None or d is None or n < 1 or d < 1:
        X = validate_data(estimator, X, **check_params)
        n, d = X.shape
    return X, n, d


class BoundedMapMixin:
    """Transform of the scalers fitted to ``lower_``, ``upper_``, ``scale_`` and ``min_``."""

    def transform(self, X):
        """Clip to the bounds and map to ``feature_range`` (sparse: scale only).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Data with the features the scaler was fitted with. The map is
            post-processing of public or released bounds: it costs no
            privacy.

        Returns
        -------
        X_new : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Of X's float dtype (float32 stays float32).
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=[np.float64, np.float32], reset=False, copy=True)
        return clip_and_map(X, self.lower_, self.upper_, self.scale_, self.min_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

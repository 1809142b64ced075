"""The clip-and-map of the bounded scalers: each feature clipped to its bounds, mapped linearly."""

import numpy as np
import scipy.sparse as sp

from .losses import canonical_rows

__all__ = ["clip_columns", "linear_map", "clip_and_map"]


def clip_columns(X, lower, upper):
    """Dense ``X`` clipped per column (a new float array of X's float dtype)."""
    return np.clip(X, lower.astype(X.dtype), upper.astype(X.dtype))


def linear_map(lower, upper, a, b):
    """``(scale, offset)`` of the affine map taking ``[lower, upper]`` to ``[a, b]``."""
    scale = (b - a) / (upper - lower)
    return scale, a - lower * scale


def clip_and_map(X, lower, upper, scale, offset):
    """Clip ``X`` (a validated copy) to the bounds and map it; sparse: scale only.

    Dense: ``clip(X) * scale + offset``. Sparse (bounds containing 0): each
    stored entry clipped and divided by ``max(|lower|, |upper|)``, so zeros
    stay zeros. The result keeps X's float dtype.
    """
    if sp.issparse(X):
        # the clip door: each stored entry is a whole cell (duplicates summed)
        X = canonical_rows(X)
        cols = X.indices
        X.data = np.clip(X.data, lower[cols], upper[cols]).astype(X.dtype)
        X.data /= np.maximum(np.abs(lower), np.abs(upper))[cols].astype(X.dtype)
        return X
    out = clip_columns(X, lower, upper)
    out *= scale.astype(X.dtype)
    out += offset.astype(X.dtype)
    return out

"""Labels against the public label set: the one encoding, in memory and on Dask workers."""

import numpy as np

__all__ = ["encode_labels"]


def encode_labels(y, classes):
    """Index of each label of ``y`` in the public ``classes``; raises, quoting nothing of y."""
    present, inverse = np.unique(y, return_inverse=True)
    lookup = {label: i for i, label in enumerate(classes.tolist())}
    try:
        # a loop over the distinct labels of y (found vectorised), not over examples
        codes = np.array([lookup[label] for label in present.tolist()], dtype=np.intp)
    except (KeyError, TypeError):  # the KeyError holds a label of y: not chained below
        codes = None
    if codes is None:
        # the message quotes no label or count of y: they are private
        raise ValueError(
            "y contains labels that are not in classes=; pass every label that can occur "
            "in y in classes= (the label set is public), or drop those records before "
            "fitting."
        ) from None
    return codes[np.ravel(inverse)]


def label_targets(y, classes, classes_given, encode):
    """The targets a classifier's loss takes from labels ``y`` (in memory or one Dask block).

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels, validated.
    classes : ndarray of shape (n_classes,)
        The sorted label set (public when given, else read from y and released).
    classes_given : bool
        Whether ``classes`` was given as ``classes=``: then every label is
        checked against it (:func:`encode_labels`), else looked up in it.
    encode : callable
        ``encode(y_index, n_classes)``: the loss's targets from label indices.

    Returns
    -------
    ndarray
        ``encode`` of the index of each label in ``classes``.
    """
    y_index = encode_labels(y, classes) if classes_given else np.searchsorted(classes, y)
    return encode(y_index, len(classes))

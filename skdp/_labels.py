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

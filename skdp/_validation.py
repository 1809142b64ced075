"""Random generators of data generators (not of private fits: see ``_seeding``)."""

import numbers

import numpy as np

__all__ = ["make_rng"]


def make_rng(random_state):
    """One ``numpy.random.Generator`` from a scikit-learn style ``random_state``.

    Used by data generators such as :func:`skdp.matrix_sensing.make_matrix_sensing`;
    the noise of a private fit comes from :mod:`skdp._seeding` instead.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1, size=4))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state))
    raise ValueError(
        f"random_state must be None, an int, a numpy RandomState or Generator, "
        f"got {random_state!r}."
    )

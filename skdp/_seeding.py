"""Noise streams of charged fits: never shared without the accountant knowing.

``sklearn.clone`` copies an int ``random_state`` and deep-copies a
``Generator``, so every fit of a grid search would otherwise draw the *same*
noise while the accountant composes the fits as independent (differencing
two such fits on neighbouring data cancels the noise). The rule here:

* ``random_state=None``: fresh operating-system entropy, no key.
* a seed (int, or a ``RandomState`` / ``Generator``, whose current state is
  the seed): :func:`seed_key` is a digest of it, computed *before* the
  charge without consuming anything; the accountant records it with the
  spend and returns ``seed_index``, the number of earlier spends on that
  accountant with the same key; :func:`noise_generator` draws from
  ``SeedSequence(seed, spawn_key=(seed_index,))``. Fits charged to one
  accountant therefore never share noise, and a fit replays exactly against
  a fresh accountant with the same history. (The process default accountant
  keeps ``seed_index = 0``, scikit-learn's "same seed, same model", and
  reports an infinite epsilon once a seed is used twice.)

A fit run inside a private search is already covered by the search's one
charge. Its noise must not be replayable from the released model, so it is
drawn from a child of the search's own stream, passed through
:func:`covered_stream` (a context variable, stored on no object): for the
duration of such a fit :func:`noise_generator` ignores ``random_state`` and
:func:`seed_key` records no key, so the model keeps the user's own
``random_state`` and nothing on it or its accountant replays its noise.
"""

import contextlib
import contextvars
import hashlib
import numbers

import numpy as np

__all__ = ["seed_key", "noise_generator", "covered_stream"]

#: the SeedSequence the noise of a covered fit is spawned from (None outside one)
_COVERED = contextvars.ContextVar("skdp_covered_stream", default=None)


@contextlib.contextmanager
def covered_stream(seed_sequence):
    """Draw the noise of the charged fits run inside from children of ``seed_sequence``.

    For fits already covered by an enclosing charge (the trials and the
    refit of a private search): each :func:`noise_generator` call inside
    spawns a fresh child, whatever the fit's ``random_state``, and
    :func:`seed_key` returns None. The stream lives in a context variable
    only, so the fitted model holds no seed of its noise.

    Parameters
    ----------
    seed_sequence : numpy.random.SeedSequence
        A child of the enclosing charge's noise stream.
    """
    token = _COVERED.set(seed_sequence)
    try:
        yield
    finally:
        _COVERED.reset(token)


def _feed(h, obj):
    """Hash a (nested) state exactly: arrays by their bytes, never by repr."""
    if isinstance(obj, dict):
        h.update(b"{")
        for key in sorted(obj, key=str):
            _feed(h, str(key))
            _feed(h, obj[key])
        h.update(b"}")
    elif isinstance(obj, (tuple, list)):
        h.update(b"(")
        for item in obj:
            _feed(h, item)
        h.update(b")")
    elif isinstance(obj, np.ndarray):
        h.update(str(obj.dtype).encode() + str(obj.shape).encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    else:
        h.update(type(obj).__name__.encode() + b":" + repr(obj).encode() + b";")


def _state(random_state):
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return ("int", int(random_state))
    if isinstance(random_state, np.random.RandomState):
        return ("RandomState", random_state.get_state(legacy=False))
    if isinstance(random_state, np.random.Generator):
        return ("Generator", random_state.bit_generator.state)
    raise ValueError(
        f"random_state must be None, an int, a numpy RandomState or Generator, "
        f"got {random_state!r}."
    )


def seed_key(random_state):
    """Digest of a seed (hex), or None for ``random_state=None``.

    Reads the state of a ``RandomState`` / ``Generator`` without advancing it.
    Inside :func:`covered_stream` there is no key: the fit's noise does not
    come from ``random_state``.
    """
    if random_state is None or _COVERED.get() is not None:
        return None
    h = hashlib.blake2b(digest_size=16)
    _feed(h, _state(random_state))
    return h.hexdigest()


def _entropy(random_state):
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        words = random_state.randint(0, 2**32, size=4, dtype=np.uint64)
    else:
        words = random_state.integers(0, 2**32, size=4, dtype=np.uint64)
    return [int(w) for w in words]


def noise_generator(random_state, seed_index):
    """The generator a charged fit draws all its randomness from.

    Parameters
    ----------
    random_state : None, int, RandomState or Generator
        None draws fresh OS entropy. A ``RandomState`` / ``Generator`` is
        advanced (four words are drawn from it), as scikit-learn does.
    seed_index : int or None
        The accountant's count of earlier spends with this seed's key.

    Returns
    -------
    rng : numpy.random.Generator
        Inside :func:`covered_stream`: a fresh child of the covered stream,
        whatever ``random_state`` is.
    """
    covered = _COVERED.get()
    if covered is not None:
        return np.random.default_rng(covered.spawn(1)[0])
    if random_state is None:
        return np.random.default_rng()
    index = 0 if seed_index is None else int(seed_index)
    return np.random.default_rng(
        np.random.SeedSequence(_entropy(random_state), spawn_key=(index,)))

r"""The release door: the one place where noise meets an exact value.

Every noisy value skdp releases (a solver's noisy gradient, a Gram matrix,
a Hessian, the sparse vector's threshold and queries, a node's message, a
scaler's noisy sums, a private search's noisy score) is produced by
:func:`release`, or, for noise added to a linear operator that is never
formed, by :func:`release_operator`. Nothing else in the package samples a
noise distribution (``tests/test_release_door.py`` scans the source for it),
so the floating-point side of the guarantee rests on this module alone,
and secure mode is a change here only (see *Secure mode* below).

The argument for one release
----------------------------
A caller passes the exact value :math:`f(D)` of a query, the mechanism its
plan charged and the query's sensitivity :math:`\Delta`: the largest change
of :math:`f` between zero-out neighbours, measured in the mechanism's norm
(``mechanism.sensitivity_norm``) and established by clipping with public
constants, never from the data. The door returns

.. math::

    f(D) + \xi, \qquad \xi \sim \mathcal{N}(0, (z\Delta)^2 I)
    \ \text{(Gaussian(z))} \quad\text{or}\quad
    \xi \sim \mathrm{Lap}(z\Delta)^{\otimes d}\ \text{(Laplace(z))},

which is exactly the Gaussian mechanism of multiplier :math:`z` (its RDP
curve :math:`\alpha / (2z^2)`, Mironov 2017) or the Laplace mechanism, which
is :math:`(1/z)`-DP for an L1 sensitivity :math:`\Delta` (Dwork and Roth
2014, Theorem 3.6): the accounting of the mechanism the plan charged. The
noise is drawn from the fit's own generator, independent of the data, and
added in float64 to a float64 copy of the exact value (the caller's array is
never changed). The guarantee holds for the real-valued mechanism; like
every floating-point sampler this one is open to precision attacks
(Mironov 2012), which the secure mode is meant to close.

Structured values are released as vectors with the same norm as their
sensitivity: :func:`release_symmetric` releases a symmetric matrix as the
vector of its diagonal and its scaled strict upper triangle (the Gram matrix
with scale :math:`\sqrt 2`, whose vector has exactly the Frobenius norm; a
clipped Hessian sum with scale 1, whose upper triangle has at most the
Frobenius norm) and mirrors the noisy triangle back. The sparse vector
technique's threshold and query noises are the components
:func:`sparse_vector_components` of the charged ``SparseVector`` /
``GaussianSparseVector``, each released here at its scale (``part_of``
names the charged mechanism). Post-processing of a release (dividing by a
public count, clipping to public bounds, an eigen-decomposition) costs
nothing more.

Secure mode
-----------
A release is secure when its noise stream is a :class:`SecureGenerator`
(what a fit with ``secure_mode=True`` draws from), its mechanism is a
:class:`~skdp.accounting.DiscreteGaussian` / :class:`~skdp.accounting.DiscreteLaplace`,
or it is made inside :func:`~skdp.accounting.secure_accounting` (a secure fit).
The door then runs the discrete mechanism (a ``Gaussian(z)`` of the plan runs
as ``DiscreteGaussian(z)``, a ``Laplace(b)`` as ``DiscreteLaplace(b)``: the
tree :func:`~skdp.accounting.discretize` gives, which is what the fit
charged): the exact float64 value is rounded to the nearest multiple of a
public granularity :math:`\gamma = 2^k` (:func:`secure_grid`, from the
sensitivity, the size and the multiplier only), and integer noise from the
exact samplers of :mod:`skdp.accounting._exact_noise` (OS CSPRNG, integer
arithmetic) is added in grid units, at scale ``ceil(z (Delta / gamma + c))``
with ``c = ceil(sqrt(d))`` (L2) or ``d`` (L1): the rounded query's
sensitivity, rounding included (:mod:`skdp.accounting.discrete`). The
released value is that integer times :math:`\gamma`, an exact multiple of
the grid, recorded with it (``Release.grid``). No floating-point number
enters the noise; the rounding of the exact value is a 1-Lipschitz map of
it (values beyond :math:`2^{62}` grid units are clipped, which is too). The
secret run count of a private selection (:func:`secret_run_count`) is drawn
exactly too (Bernoulli draws of rationals from the OS CSPRNG). The operator
door (:func:`release_operator`) has no secure form and refuses a secure stream.

Recording
---------
Inside :func:`recording` every release appends a :class:`Release` (what,
mechanism, sensitivity, shape, released value); outside it the door records
nothing and copies nothing (one context-variable read per release). Records
live in the caller's context: releases made on a Dask worker (a node's
message) are recorded in the worker's context, which is the caller's only
under the synchronous scheduler.

The number of runs of a private selection (:class:`RepeatAndSelect`) is
secret randomness of the mechanism, not noise on a value; it is drawn here
too (:func:`secret_run_count`), as is the secret Poisson sample of the
subsampled mechanisms (:func:`poisson_positions`), so that every private draw
of a distribution has one home.
"""

import math
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

from . import _exact_noise
from .discrete import DiscreteGaussian, DiscreteLaplace, discretize, is_secure_accounting
from .mechanisms import Gaussian, GaussianSparseVector, Laplace, Mechanism, SparseVector

__all__ = [
    "Release",
    "recording",
    "release",
    "release_symmetric",
    "release_operator",
    "sparse_vector_components",
    "secret_run_count",
    "poisson_positions",
    "SecureGenerator",
    "secure_grid",
]


@dataclass(frozen=True)
class Release:
    r"""The record of one release through the door.

    Parameters
    ----------
    what : str
        What was released (e.g. ``"noisy gradient"``), public text.
    mechanism : Gaussian or Laplace
        The noise mechanism drawn.
    sensitivity : float
        The sensitivity the noise was calibrated to, in the mechanism's norm.
    shape : tuple of int
        Shape of the released value.
    value : ndarray, float or None
        A copy of the released (noisy) value; None for noise added to an
        implicit operator (:func:`release_operator`), whose value is never formed.
    part_of : Mechanism or None
        The charged mechanism this noise is a component of (the sparse
        vector's threshold and queries), else None.
    grid : float or None
        Secure mode: the granularity :math:`\gamma = 2^k` the value is an
        exact multiple of; None for a floating-point release.
    """

    what: str
    mechanism: Mechanism
    sensitivity: float
    shape: tuple
    value: Any
    part_of: Optional[Mechanism] = None
    grid: Optional[float] = None


class SecureGenerator(np.random.Generator):
    """The noise stream of a secure fit: its releases are secure (see the module doc).

    The door draws a secure release's noise from the OS CSPRNG, not from
    this generator. As a :class:`numpy.random.Generator` (PCG64 seeded from
    fresh OS entropy; it cannot be seeded) it serves a fit's public
    randomness (a random start, a shuffle of public indices) and secret
    randomness that is not noise on a value (Poisson sampling of a batch).
    A pickled copy (a worker process) is a fresh secure generator.
    """

    def __init__(self):
        super().__init__(np.random.PCG64())

    def __reduce__(self):
        return (SecureGenerator, ())


# secure mode's grid: the rounding adds at most 2**-_GRID_BITS of the
# sensitivity, unless the noise scale in grid units would exceed _MAX_UNITS
_GRID_BITS = 10
_MAX_UNITS = 1 << 24
_MIN_EXPONENT, _MAX_EXPONENT = -960, 900
# grid units beyond this are clipped before the noise (a 1-Lipschitz map)
_MAX_GRID_VALUE = float(1 << 61)


def _ceil_sqrt(d):
    root = math.isqrt(d)
    return root if root * root == d else root + 1


def secure_grid(mechanism, sensitivity, size):
    r"""The public grid and integer noise scale of a secure release.

    Parameters
    ----------
    mechanism : DiscreteGaussian or DiscreteLaplace
        The discrete mechanism, multiplier ``z``.
    sensitivity : float
        :math:`\Delta > 0` of the exact query in the mechanism's norm.
    size : int
        Number of coordinates ``d``.

    Returns
    -------
    exponent : int
        ``k``: the grid is :math:`\gamma = 2^k`, the largest power of two with
        :math:`\gamma c \le 2^{-10}\Delta` (``c = ceil(sqrt(d))`` for L2,
        ``d`` for L1), raised until the scale below is at most :math:`2^{24}`.
    scale : int
        The noise scale in grid units, ``ceil(z (Delta / gamma + c))``
        computed in exact rational arithmetic: ``sigma`` of the discrete
        Gaussian, ``t`` of the discrete Laplace. It is at least ``z`` times
        the rounded query's sensitivity :math:`\Delta/\gamma + c` (grid units).
    """
    c = max(_ceil_sqrt(int(size)) if mechanism.sensitivity_norm == 2 else int(size), 1)
    delta = Fraction(float(sensitivity))
    z = Fraction(mechanism.noise_multiplier)
    _, e = math.frexp(float(sensitivity) / (c << _GRID_BITS))
    exponent = min(max(e - 1, _MIN_EXPONENT), _MAX_EXPONENT)
    while True:
        scale = math.ceil(z * (delta / Fraction(2) ** exponent + c))
        if scale <= _MAX_UNITS:
            return exponent, max(scale, 1)
        if exponent >= _MAX_EXPONENT:  # pragma: no cover - a sensitivity beyond 1e270
            raise ValueError("secure release: the noise scale is too large for the grid.")
        exponent += 1


def _is_secure(mechanism, rng):
    # a secure stream, a discrete mechanism, or a release inside a secure fit
    # (its accounting context) on a stream of its own (a node's)
    return (isinstance(rng, SecureGenerator)
            or isinstance(mechanism, (DiscreteGaussian, DiscreteLaplace))
            or is_secure_accounting())


def _secure_noisy(exact, mechanism, sensitivity):
    """``(discrete mechanism, grid, released value)`` of a secure release of ``exact``."""
    discrete = discretize(mechanism)
    if sensitivity == 0:
        # a value no record can move: released as it is, no noise (every
        # finite float is a multiple of the smallest subnormal, 2**-1074)
        return discrete, math.ldexp(1.0, -1074), np.nan_to_num(exact, nan=0.0)
    exponent, scale = secure_grid(discrete, sensitivity, exact.size)
    gamma = math.ldexp(1.0, exponent)
    with np.errstate(over="ignore", invalid="ignore"):
        units = np.nan_to_num(exact / gamma, nan=0.0)
    units = np.rint(np.clip(units, -_MAX_GRID_VALUE, _MAX_GRID_VALUE)).astype(np.int64)
    if isinstance(discrete, DiscreteGaussian):
        units += _exact_noise.discrete_gaussian(scale * scale, exact.shape)
    else:
        units += _exact_noise.discrete_laplace(scale, exact.shape)
    # an integer times a power of two: an exact multiple of the grid (an
    # integer beyond 2**53 becomes a nearby float integer: post-processing)
    return discrete, gamma, units.astype(np.float64) * gamma


_RECORDS: ContextVar[Optional[list]] = ContextVar("skdp_release_records", default=None)


@contextmanager
def recording():
    """Record every release made in this context (for tests and audits).

    Yields
    ------
    records : list of Release
        Filled as releases happen, in order; nested ``recording()`` blocks
        each get their own list (the inner one collects while it is open).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.accounting import Gaussian
    >>> from skdp.accounting.release import recording, release
    >>> with recording() as records:
    ...     _ = release(np.zeros(3), Gaussian(1.0), 1.0, np.random.default_rng(0),
    ...                 what="example")
    >>> [(r.what, r.shape) for r in records]
    [('example', (3,))]
    """
    records = []
    token = _RECORDS.set(records)
    try:
        yield records
    finally:
        _RECORDS.reset(token)


def _noise_scale(mechanism, sensitivity):
    if not isinstance(mechanism, (Gaussian, Laplace, DiscreteGaussian, DiscreteLaplace)):
        raise TypeError(
            "release: the mechanism must be Gaussian or Laplace noise (or their discrete "
            f"forms), got {mechanism!r}; "
            "a composite mechanism is released one noise component at a time.")
    sensitivity = float(sensitivity)
    if not (sensitivity >= 0 and np.isfinite(sensitivity)):
        raise ValueError(
            f"release: the sensitivity must be a finite number >= 0, got {sensitivity!r}.")
    return mechanism.noise_multiplier * sensitivity


def _draw_noise(mechanism, scale, rng, shape):
    """The only sampler of noise in skdp: i.i.d. draws of ``mechanism`` at ``scale``."""
    if isinstance(mechanism, Gaussian):
        return rng.normal(0.0, scale, size=shape)
    return rng.laplace(0.0, scale, size=shape)


def _record(what, mechanism, sensitivity, shape, value, part_of, grid=None):
    records = _RECORDS.get()
    if records is not None:
        value = None if value is None else (
            float(value) if np.ndim(value) == 0 else np.array(value, copy=True))
        records.append(Release(str(what), mechanism, float(sensitivity), tuple(shape),
                               value, part_of, grid))


def release(exact, mechanism, sensitivity, rng, *, what, part_of=None):
    """Release ``exact`` plus the noise of ``mechanism`` at ``sensitivity``.

    Parameters
    ----------
    exact : array-like or float
        The exact value of the query (private); cast to float64. It is not
        modified.
    mechanism : Gaussian, Laplace, DiscreteGaussian or DiscreteLaplace
        The noise the plan charged for this query.
    sensitivity : float
        The query's sensitivity in ``mechanism.sensitivity_norm`` (L2 for
        the Gaussians, L1 for the Laplaces), >= 0, public.
    rng : numpy.random.Generator
        The fit's (or node's) secret noise stream; a :class:`SecureGenerator`
        makes the release secure (see the module doc).
    what : str
        What is released, for the record (public text).
    part_of : Mechanism or None, default=None
        The charged mechanism this noise is a component of, when it is not
        ``mechanism`` itself (see :func:`sparse_vector_components`).

    Returns
    -------
    value : ndarray or float
        ``exact + noise`` in float64, a new array of the shape of ``exact``
        (a float for a scalar); in secure mode the rounded value plus the
        discrete noise, an exact multiple of the grid.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.accounting import Laplace
    >>> from skdp.accounting.release import release
    >>> release(np.ones(2), Laplace(1.0), 1.0, np.random.default_rng(0), what="x").shape
    (2,)
    """
    scale = _noise_scale(mechanism, sensitivity)
    exact = np.asarray(exact, dtype=np.float64)
    if _is_secure(mechanism, rng):
        discrete, grid, value = _secure_noisy(exact, mechanism, float(sensitivity))
        _record(what, discrete, sensitivity, exact.shape, value, part_of, grid)
        return float(value) if value.ndim == 0 else value
    # the fresh noise buffer becomes the released value: the float64 cast is
    # the only copy of the exact value
    value = np.asarray(_draw_noise(mechanism, scale, rng, exact.shape), dtype=np.float64)
    value += exact
    _record(what, mechanism, sensitivity, exact.shape, value, part_of)
    return float(value) if value.ndim == 0 else value


def release_symmetric(exact, mechanism, sensitivity, rng, *, what, off_diagonal_scale):
    r"""Release a symmetric matrix through its diagonal and scaled upper triangle.

    The released vector is :math:`v = [S_{11}, \dots, S_{pp}, a S_{12}, a
    S_{13}, \dots]` (``a = off_diagonal_scale``); the caller's
    ``sensitivity`` is its sensitivity in that vector's norm. The noisy
    vector is mapped back to a symmetric matrix (the off-diagonal entries
    divided by ``a``), so each off-diagonal entry's noise has the scale over
    ``a``: with ``a = sqrt(2)`` the vector has exactly the Frobenius norm of
    ``S`` (the Gram matrix: noise variance :math:`\sigma^2` on the diagonal,
    :math:`\sigma^2 / 2` off it); with ``a = 1`` the upper triangle
    including the diagonal (a Hessian sum clipped in Frobenius norm, whose
    triangle has at most that norm).

    Parameters
    ----------
    exact : ndarray of shape (p, p)
        Symmetric exact value (only its upper triangle is read).
    mechanism : Gaussian or Laplace
        As for :func:`release`.
    sensitivity : float
        Sensitivity of the vector ``v`` above.
    rng : numpy.random.Generator
        The secret noise stream.
    what : str
        What is released, for the record.
    off_diagonal_scale : float
        ``a > 0``.

    Returns
    -------
    ndarray of shape (p, p)
        The noisy symmetric matrix, a new array.
    """
    exact = np.asarray(exact, dtype=np.float64)
    p = exact.shape[0]
    a = float(off_diagonal_scale)
    upper = np.triu_indices(p, 1)
    vector = np.concatenate([np.diagonal(exact), a * exact[upper]])
    noisy = release(vector, mechanism, sensitivity, rng, what=what)
    out = np.empty((p, p))
    out[np.diag_indices(p)] = noisy[:p]
    off = noisy[p:] / a
    out[upper] = off
    out[upper[1], upper[0]] = off
    return out


def release_operator(matvec, size, mechanism, sensitivity, rng, *, what):
    r"""Noise for a symmetric linear operator that is never formed: ``v -> matvec(v) + E v``.

    The second entry of the door, for a Hessian available only through its
    products (Lanczos). ``E`` is symmetric with the entries on and above the
    diagonal i.i.d. noise of ``mechanism`` at ``sensitivity``: the law of
    :func:`release_symmetric` with ``off_diagonal_scale=1`` applied to the
    operator's matrix, so the operator released is the same mechanism. ``E``
    is drawn whole, here, once; the release is recorded with ``value=None``.

    Parameters
    ----------
    matvec : callable
        ``v -> H v`` for the exact symmetric operator ``H`` of order ``size``.
    size : int
        The operator's order ``p``.
    mechanism : Gaussian or Laplace
        As for :func:`release`.
    sensitivity : float
        Sensitivity of ``H``'s upper triangle (including the diagonal).
    rng : numpy.random.Generator
        The secret noise stream.
    what : str
        What is released, for the record.

    Returns
    -------
    callable
        ``v -> matvec(v) + E @ v``, the noisy operator's products.
    """
    scale = _noise_scale(mechanism, sensitivity)
    if _is_secure(mechanism, rng):
        raise ValueError(
            "secure_mode=True cannot release an operator that is never formed (it cannot "
            "be rounded to the grid): use a problem small enough for the dense Hessian, "
            "or secure_mode=False.")
    size = int(size)
    # the draws in release_symmetric's order (diagonal, then the strict upper
    # triangle by rows): the same generator state gives the same E
    noise = np.asarray(_draw_noise(mechanism, scale, rng, size * (size + 1) // 2),
                       dtype=np.float64)
    upper = np.triu_indices(size, 1)
    E = np.empty((size, size))
    E[np.diag_indices(size)] = noise[:size]
    E[upper] = noise[size:]
    E[upper[1], upper[0]] = noise[size:]
    del noise
    _record(what, mechanism, sensitivity, (size, size), None, None)

    def noisy_matvec(v):
        return matvec(v) + E @ v
    return noisy_matvec


def sparse_vector_components(mechanism):
    """The threshold and query noises of a sparse vector mechanism.

    Parameters
    ----------
    mechanism : SparseVector or GaussianSparseVector
        The charged sparse vector mechanism.

    Returns
    -------
    threshold_noise, query_noise : Laplace or Gaussian
        ``Laplace(threshold_scale)``, ``Laplace(query_scale)`` for a
        :class:`SparseVector`; ``Gaussian(threshold_multiplier)``,
        ``Gaussian(query_multiplier)`` for a :class:`GaussianSparseVector`.
        Released at the queries' sensitivity, they are the noises the
        mechanism's accounting assumes.
    """
    if isinstance(mechanism, SparseVector):
        return Laplace(mechanism.threshold_scale), Laplace(mechanism.query_scale)
    if isinstance(mechanism, GaussianSparseVector):
        return Gaussian(mechanism.threshold_multiplier), Gaussian(mechanism.query_multiplier)
    raise TypeError(f"sparse_vector_components: not a sparse vector mechanism: {mechanism!r}.")


def secret_run_count(selection, rng):
    r"""Draw the secret number of runs ``K`` of a :class:`RepeatAndSelect`.

    Parameters
    ----------
    selection : RepeatAndSelect
        The selection; ``K`` follows its truncated negative binomial law
        :math:`\mathcal{D}_{\eta, \gamma}`.
    rng : numpy.random.Generator
        A secret stream: releasing ``K`` voids the selection's guarantee. A
        :class:`SecureGenerator` (or a draw inside a secure fit) draws ``K``
        exactly from the OS CSPRNG
        (:func:`~skdp.accounting._exact_noise.truncated_negative_binomial`).

    Returns
    -------
    k : int
        The number of runs, >= 1 (a logarithmic draw for :math:`\eta = 0`,
        else a negative binomial draw conditioned on being >= 1).
    """
    if isinstance(rng, SecureGenerator) or is_secure_accounting():
        # exact, from the OS CSPRNG: Bernoulli draws of rationals only
        return _exact_noise.truncated_negative_binomial(selection.shape, selection.gamma)
    if selection.shape == 0:
        return int(rng.logseries(1.0 - selection.gamma))
    while True:
        k = int(rng.negative_binomial(selection.shape, selection.gamma))
        if k >= 1:
            return k


#: up to this many records, a node samples with one coin per record; above,
#: with a binomial count and a uniform subset of that size (same law)
_BERNOULLI_RECORDS = 1 << 15


def poisson_positions(rng, size, rate):
    """A Poisson sample of ``size`` records: each kept independently with probability ``rate``.

    Parameters
    ----------
    rng : numpy.random.Generator
        The node's own stream (secret).
    size : int
        Number of records.
    rate : float
        Sampling probability in (0, 1].

    Returns
    -------
    ndarray of int
        Positions of the kept records, increasing.
    """
    if size <= _BERNOULLI_RECORDS:
        return np.flatnonzero(rng.random(size) < rate)
    count = rng.binomial(size, rate)
    return np.sort(rng.choice(size, count, replace=False))

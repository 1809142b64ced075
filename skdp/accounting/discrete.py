r"""The discrete mechanisms secure mode runs, and how a plan becomes them.

In secure mode (``secure_mode=True`` on an estimator) the release door
rounds each exact value to a public grid and adds discrete Gaussian or
discrete Laplace noise drawn exactly from the OS CSPRNG. What runs is then
:class:`DiscreteGaussian` / :class:`DiscreteLaplace`, and that is what the
accountant charges: :func:`discretize` maps a plan's tree onto them, and
inside :func:`secure_accounting` the accountant's functions
(:func:`~skdp.accounting.get_epsilon`, :func:`~skdp.accounting.get_rdp`,
:func:`~skdp.accounting.get_delta`, hence :func:`~skdp.accounting.calibrate`)
evaluate every tree through :func:`discretize`, so the noise a plan
calibrates is the discrete noise that meets its target.

Accounting of the discrete mechanisms
-------------------------------------
Both are described, like their continuous cousins, by a noise multiplier
``z``: the noise scale in units of the (rounded) query's sensitivity.

- ``DiscreteGaussian(z)``: the multivariate discrete Gaussian with
  :math:`\sigma \ge z\Delta_2` is :math:`\rho`-zCDP with
  :math:`\rho = \Delta_2^2 / (2\sigma^2) \le 1/(2z^2)` (Canonne, Kamath and
  Steinke 2020, Theorem 14), i.e. :math:`(\alpha, \alpha/(2z^2))`-RDP at
  every order. It is charged through that curve only: the analytic-Gaussian
  and PLD shortcuts hold for the continuous Gaussian, not for this one
  (CKS20, Section 4: the discrete Gaussian's exact curve differs from the
  continuous one, mostly in its favour, but not everywhere). Poisson
  subsampled, it gets the general subsampled-RDP bound of Zhu and Wang (2019).
- ``DiscreteLaplace(z)``: the discrete Laplace of scale :math:`t \ge
  z\Delta_1` on an integer-valued query of L1 sensitivity :math:`\Delta_1`
  is :math:`(\Delta_1 / t) \le (1/z)`-DP (Ghosh, Roughgarden and Sundararajan
  2009; CKS20, Section 2.3); its RDP curve is the generic pure-DP bound.

Rounding, and the sensitivity it adds
-------------------------------------
The door rounds every coordinate to the nearest multiple of a public
granularity :math:`\gamma = 2^k` (chosen from the sensitivity, the size and
the multiplier, never from the data). Rounding to the nearest moves a
coordinate by at most :math:`\gamma/2`, so two neighbours' rounded values
differ by at most :math:`\Delta_2 + \gamma\sqrt d` in L2 and
:math:`\Delta_1 + \gamma d` in L1. The door draws the noise at ``z`` times
that inflated sensitivity (in grid units, rounded up to an integer), so the
charge ``DiscreteGaussian(z)`` / ``DiscreteLaplace(z)`` holds for what runs
with no change to the calibration; the grid keeps the inflation below
:math:`2^{-10}` of the sensitivity (it grows only when the noise scale in
grid units would exceed :math:`2^{24}`, see ``release.secure_grid``).

The sparse vector technique with discrete Laplace noise on integer queries
keeps its pure-DP proof (it only uses the ratio bound of the Laplace law
under shifts by the sensitivity); :class:`~skdp.accounting.SparseVector`
therefore stays as it is. The repeat-and-select selection keeps its form
around the discrete runs (its theorem holds for any run; the door draws its
number of runs exactly). The Gaussian sparse vector has no secure form here:
:func:`discretize` refuses it.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from . import mechanisms as _mechanisms
from .mechanisms import (
    Activated,
    AnyOf,
    Composed,
    FilteredRDP,
    Gaussian,
    GaussianSparseVector,
    Laplace,
    Mechanism,
    PoissonSampled,
    PureDP,
    Repeated,
    RepeatAndSelect,
    SparseVector,
    ZCDP,
    _real,
)

__all__ = ["DiscreteGaussian", "DiscreteLaplace", "discretize", "secure_accounting",
           "is_secure_accounting", "calibration_cache", "as_run"]


@dataclass(frozen=True, slots=True)
class DiscreteGaussian(Mechanism):
    r"""The discrete Gaussian mechanism on a public grid (secure mode).

    Releases the query rounded to a grid plus discrete Gaussian noise of
    :math:`\sigma \ge z\Delta_2` (grid units), where :math:`\Delta_2` is the
    rounded query's L2 sensitivity.

    Parameters
    ----------
    noise_multiplier : float
        :math:`z > 0`.

    Notes
    -----
    :math:`1/(2z^2)`-zCDP (Canonne, Kamath and Steinke 2020, Theorem 14):
    RDP curve :math:`\alpha/(2z^2)`, no analytic-Gaussian or PLD shortcut.
    """

    noise_multiplier: float

    #: The norm in which the query's sensitivity is measured: 2 (L2).
    sensitivity_norm = 2

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier",
                           _real(self.noise_multiplier, "noise_multiplier", "DiscreteGaussian"))


@dataclass(frozen=True, slots=True)
class DiscreteLaplace(Mechanism):
    r"""The discrete Laplace mechanism on a public grid (secure mode).

    Releases the query rounded to a grid plus discrete Laplace noise of
    scale :math:`t \ge z\Delta_1` (grid units), :math:`\Delta_1` the rounded
    query's L1 sensitivity.

    Parameters
    ----------
    noise_multiplier : float
        :math:`z > 0`; the mechanism is :math:`(1/z)`-DP.
    """

    noise_multiplier: float

    #: The norm in which the query's sensitivity is measured: 1 (L1).
    sensitivity_norm = 1

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier",
                           _real(self.noise_multiplier, "noise_multiplier", "DiscreteLaplace"))

    @property
    def epsilon(self) -> float:
        """The pure-DP epsilon of one release, ``1 / noise_multiplier`` (float)."""
        return 1.0 / self.noise_multiplier


for _cls in (DiscreteGaussian, DiscreteLaplace):
    _mechanisms._REGISTRY[_cls.__name__] = _cls

_SECURE: ContextVar[bool] = ContextVar("skdp_secure_accounting", default=False)


@contextmanager
def secure_accounting(enabled=True):
    """Account every mechanism tree as what secure mode runs (see :func:`discretize`).

    Parameters
    ----------
    enabled : bool, default=True
        False leaves the accounting as it is (a no-op context).
    """
    token = _SECURE.set(bool(enabled) or _SECURE.get())
    try:
        yield
    finally:
        _SECURE.reset(token)


def is_secure_accounting() -> bool:
    """True inside :func:`secure_accounting`."""
    return _SECURE.get()


def as_run(mechanism, owner):
    """``mechanism`` checked, as it runs: its :func:`discretize` form in secure accounting.

    Parameters
    ----------
    mechanism : Mechanism
    owner : str
        The caller's name, for the error message.

    Returns
    -------
    Mechanism
    """
    if not isinstance(mechanism, Mechanism):
        raise ValueError(f"{owner}: expected a Mechanism, got {mechanism!r}.")
    return discretize(mechanism) if is_secure_accounting() else mechanism


def calibration_cache(maxsize):
    """``functools.lru_cache`` for a calibration, keyed also on the secure context.

    A noise multiplier calibrated for the continuous mechanisms is too small
    for the discrete ones (their charge takes no analytic or PLD shortcut):
    a cached calibration must never cross from one accounting to the other.

    Parameters
    ----------
    maxsize : int
        As for :func:`functools.lru_cache`.

    Returns
    -------
    callable
        The decorator.
    """
    def decorate(function):
        cached = functools.lru_cache(maxsize=maxsize)(
            lambda secure, *args: function(*args))

        @functools.wraps(function)
        def wrapper(*args):
            return cached(is_secure_accounting(), *args)
        return wrapper
    return decorate


def discretize(mechanism: Mechanism) -> Mechanism:
    """The tree secure mode runs for ``mechanism``.

    Every ``Gaussian(z)`` becomes ``DiscreteGaussian(z)`` and every
    ``Laplace(b)`` ``DiscreteLaplace(b)``; composite nodes keep their shape;
    pure-DP, zCDP, filtered-RDP and (Laplace) sparse vector parts are kept.

    Parameters
    ----------
    mechanism : Mechanism

    Returns
    -------
    Mechanism

    Raises
    ------
    ValueError
        For a part with no secure form (``GaussianSparseVector``).
    """
    if isinstance(mechanism, Gaussian):
        return DiscreteGaussian(mechanism.noise_multiplier)
    if isinstance(mechanism, Laplace):
        return DiscreteLaplace(mechanism.noise_multiplier)
    if isinstance(mechanism, (DiscreteGaussian, DiscreteLaplace, PureDP, ZCDP, FilteredRDP,
                              SparseVector)):
        return mechanism
    if isinstance(mechanism, GaussianSparseVector):
        raise ValueError(
            "secure_mode=True has no exact form of the Gaussian sparse vector technique "
            "(its accounting is proved for continuous Gaussian noise only); use delta=0 "
            "(the Laplace sparse vector) or secure_mode=False.")
    if isinstance(mechanism, RepeatAndSelect):
        # the door draws the number of runs exactly (secret_run_count); the
        # selection's theorem holds for any run, here the discrete one
        return RepeatAndSelect(discretize(mechanism.mechanism), mechanism.gamma,
                               mechanism.shape)
    if isinstance(mechanism, PoissonSampled):
        return PoissonSampled(mechanism.rate, discretize(mechanism.mechanism))
    if isinstance(mechanism, Activated):
        return Activated(mechanism.probability, discretize(mechanism.mechanism))
    if isinstance(mechanism, Repeated):
        return Repeated(discretize(mechanism.mechanism), mechanism.count)
    if isinstance(mechanism, Composed):
        return Composed(tuple(discretize(m) for m in mechanism.mechanisms))
    if isinstance(mechanism, AnyOf):
        return AnyOf(tuple(discretize(m) for m in mechanism.mechanisms))
    raise ValueError(f"discretize: unknown mechanism {mechanism!r}.")

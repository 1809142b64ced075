"""Mechanism descriptions: what was run, in the terms the accountant needs.

A mechanism object records only the quantities that determine its privacy
loss (a noise multiplier, an epsilon, a sampling rate, a repetition count),
never data or sensitivities in data units.  Objects are immutable, hashable
and picklable, nest like Google dp-accounting's ``DpEvent`` s, and serialise
to JSON-compatible dictionaries with :meth:`Mechanism.to_dict` and
:func:`mechanism_from_dict` (the SQLite ledger stores them that way).

Compatibility rule: the meaning of an existing mechanism or field never
changes; new fields are optional with a default that keeps the old meaning.

Neighbouring datasets are zero-out neighbours (one record replaced by a null
record that contributes nothing; Kairouz et al. 2021): n is public, and
Poisson-sampled accounting equals that of add/remove-one.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

from ._mechanism_base import (  # noqa: F401  (argument checks, used below and by discrete.py)
    Mechanism, _count, _mechanism, _mechanism_tuple, _probability, _real,
)
from .sparse_vector import GaussianSparseVector, SparseVector

__all__ = [
    "Mechanism",
    "Gaussian",
    "Laplace",
    "PureDP",
    "ZCDP",
    "SparseVector",
    "GaussianSparseVector",
    "FilteredRDP",
    "PoissonSampled",
    "Activated",
    "Composed",
    "Repeated",
    "AnyOf",
    "RepeatAndSelect",
    "mechanism_from_dict",
    "noise_mechanism",
    "compose_runs",
]


@dataclass(frozen=True, slots=True)
class Gaussian(Mechanism):
    r"""The Gaussian mechanism.

    Releases :math:`f(D) + \mathcal{N}(0, \sigma^2 I)` for a query with L2
    sensitivity :math:`\Delta_2`.

    Parameters
    ----------
    noise_multiplier : float
        :math:`z = \sigma / \Delta_2 > 0`, the noise standard deviation in
        units of the L2 sensitivity.

    Notes
    -----
    Its Rényi DP curve is :math:`\alpha / (2 z^2)` at every order
    :math:`\alpha > 1` [1]_; its exact (epsilon, delta) trade-off is that of
    the analytic Gaussian mechanism [2]_.

    References
    ----------
    .. [1] I. Mironov, "Rényi Differential Privacy", CSF 2017.
    .. [2] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018.
    """

    noise_multiplier: float

    #: The norm in which the query's sensitivity is measured: 2 (L2).
    sensitivity_norm = 2

    def __post_init__(self):
        object.__setattr__(
            self, "noise_multiplier", _real(self.noise_multiplier, "noise_multiplier", "Gaussian")
        )


@dataclass(frozen=True, slots=True)
class Laplace(Mechanism):
    r"""The Laplace mechanism.

    Releases :math:`f(D) + \mathrm{Lap}(b)^d` for a query with L1 sensitivity
    :math:`\Delta_1`.

    Parameters
    ----------
    noise_multiplier : float
        :math:`b / \Delta_1 > 0`, the Laplace scale in units of the L1
        sensitivity.  The mechanism is :math:`(1/\text{noise\_multiplier})`-DP.

    Notes
    -----
    Its Rényi DP curve is the closed form of Mironov [1]_, Table II.

    References
    ----------
    .. [1] I. Mironov, "Rényi Differential Privacy", CSF 2017.
    """

    noise_multiplier: float

    #: The norm in which the query's sensitivity is measured: 1 (L1).
    sensitivity_norm = 1

    def __post_init__(self):
        object.__setattr__(
            self, "noise_multiplier", _real(self.noise_multiplier, "noise_multiplier", "Laplace")
        )

    @property
    def epsilon(self) -> float:
        """The pure-DP epsilon of one release, ``1 / noise_multiplier`` (float)."""
        return 1.0 / self.noise_multiplier


@dataclass(frozen=True, slots=True)
class PureDP(Mechanism):
    r"""Any :math:`\varepsilon`-differentially private mechanism.

    Parameters
    ----------
    epsilon : float
        The pure-DP parameter, :math:`\varepsilon \ge 0`.

    Notes
    -----
    Its Rényi DP curve is the tight bound for a generic
    :math:`\varepsilon`-DP mechanism, attained by randomized response [1]_,
    [2]_:

    .. math::

        \frac{1}{\alpha - 1}\log\frac{e^{\alpha\varepsilon}
        + e^{(1-\alpha)\varepsilon}}{1 + e^{\varepsilon}}
        \le \min(\varepsilon, \alpha\varepsilon^2/2).

    References
    ----------
    .. [1] M. Bun and T. Steinke, "Concentrated Differential Privacy:
       Simplifications, Extensions, and Lower Bounds", TCC 2016
       (proof of Proposition 3.3).
    .. [2] T. Steinke, "Sharp RDP & zCDP from Pure DP",
       DifferentialPrivacy.org, 2024 (Theorem 4, tightness).
    """

    epsilon: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _real(self.epsilon, "epsilon", "PureDP", positive=False))


@dataclass(frozen=True, slots=True)
class ZCDP(Mechanism):
    r"""A :math:`\rho`-zero-concentrated DP mechanism.

    Parameters
    ----------
    rho : float
        :math:`\rho \ge 0`; the mechanism is :math:`(\alpha, \alpha\rho)`-RDP
        for every :math:`\alpha > 1` [1]_.

    References
    ----------
    .. [1] M. Bun and T. Steinke, "Concentrated Differential Privacy:
       Simplifications, Extensions, and Lower Bounds", TCC 2016.
    """

    rho: float

    def __post_init__(self):
        object.__setattr__(self, "rho", _real(self.rho, "rho", "ZCDP", positive=False))


@dataclass(frozen=True, slots=True)
class FilteredRDP(Mechanism):
    r"""Whatever an RDP privacy filter at one order admitted.

    An adaptive sequence of mechanisms, each chosen from the outputs of the
    earlier ones and run only while the sum of their Rényi DP at ``order``
    stays at most ``rdp``, is :math:`(\alpha, \text{rdp})`-RDP at
    :math:`\alpha` = ``order`` (Feldman and Zrnic [1]_, Theorem 3.1), hence at
    every order below it (Rényi divergences grow with the order).  This is
    the charge of a fit run under a :class:`~skdp.accounting.PrivacyFilter`.

    Parameters
    ----------
    order : float
        The filter's Rényi order :math:`\alpha > 1`, fixed before any data is read.
    rdp : float
        The filter's budget at that order, >= 0.

    References
    ----------
    .. [1] V. Feldman and T. Zrnic, "Individual Privacy Accounting via a
       Rényi Filter", NeurIPS 2021.
    """

    order: float
    rdp: float

    def __post_init__(self):
        order = _real(self.order, "order", "FilteredRDP")
        if order <= 1:
            raise ValueError(f"FilteredRDP: order must be > 1, got {order!r}.")
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "rdp", _real(self.rdp, "rdp", "FilteredRDP", positive=False))


@dataclass(frozen=True, slots=True)
class PoissonSampled(Mechanism):
    r"""A mechanism run on a Poisson subsample.

    Each record enters the subsample independently with probability
    ``rate``; ``mechanism`` is then run on the subsample (add/remove
    neighbours).

    Parameters
    ----------
    rate : float
        Sampling probability :math:`q \in (0, 1]`; ``rate=1`` is no sampling.
    mechanism : Mechanism
        What is run on each subsample.  Everything charged on one subsample
        belongs inside one ``PoissonSampled`` (amplify the whole per-batch
        cost once, not each part).

    Notes
    -----
    RDP curves: a Gaussian (or any composition of Gaussians, which is one
    Gaussian) gets the exact numerical RDP of the sampled Gaussian [1]_;
    pure-DP inner mechanisms get :math:`\varepsilon' = \log(1 + q(e^\varepsilon
    - 1))` [3]_ and the general upper bound of Zhu and Wang [2]_, whichever is
    smaller; other inner mechanisms get the general upper bound [2]_.

    References
    ----------
    .. [1] I. Mironov, K. Talwar and L. Zhang, "Rényi Differential Privacy of
       the Sampled Gaussian Mechanism", arXiv:1908.10530, 2019.
    .. [2] Y. Zhu and Y.-X. Wang, "Poisson Subsampled Rényi Differential
       Privacy", ICML 2019, Theorem 6.
    .. [3] B. Balle, G. Barthe and M. Gaboardi, "Privacy Amplification by
       Subsampling: Tight Analyses via Couplings and Divergences",
       NeurIPS 2018.
    """

    rate: float
    mechanism: Mechanism

    def __post_init__(self):
        object.__setattr__(self, "rate", _probability(self.rate, "rate", "PoissonSampled"))
        _mechanism(self.mechanism, "PoissonSampled")


@dataclass(frozen=True, slots=True)
class Activated(Mechanism):
    r"""A mechanism run only when a public coin comes up heads.

    With probability ``probability`` (a coin independent of the data, whose
    outcome is released) ``mechanism`` runs; otherwise nothing that depends
    on the data is released.  This is one step of a node in a decentralised
    algorithm whose activation is visible to every observer (paper 003):
    the step costs nothing when the record's node is idle.

    Parameters
    ----------
    probability : float
        :math:`p \in (0, 1]`: the largest chance that the record's part of
        the data is active in one step (1 runs ``mechanism`` always).
    mechanism : Mechanism
        What runs when active (e.g. a Poisson-sampled Gaussian on the
        node's records).

    Notes
    -----
    The coin is released, so the pair of output distributions is the
    mixture of the pairs of each branch (public-coin mixture): with
    :math:`D_\alpha` the Rényi divergence of ``mechanism``,

    .. math::

        e^{(\alpha - 1) R(\alpha)} = (1 - p) + p\, e^{(\alpha - 1) D_\alpha},

    exactly (the divergence of a pair sharing a released coin is the
    coin-average of the exponentiated branch divergences), and the privacy
    profile is :math:`\delta(\varepsilon) = p\,\delta_M(\varepsilon)` for
    :math:`\varepsilon \ge 0` (the idle branch has identical outputs).
    Unlike :class:`PoissonSampled`, an observer learns when the record
    could have been used, so the amplification is weaker: about a factor
    :math:`p` on the composed Rényi divergence instead of :math:`p^2`.
    """

    probability: float
    mechanism: Mechanism

    def __post_init__(self):
        object.__setattr__(self, "probability",
                           _probability(self.probability, "probability", "Activated"))
        _mechanism(self.mechanism, "Activated")


@dataclass(frozen=True, slots=True)
class Composed(Mechanism):
    """Several mechanisms run one after the other on the same data.

    Parameters
    ----------
    mechanisms : iterable of Mechanism
        Stored as a tuple; may be empty (no cost).  The mechanisms may be
        chosen adaptively; their costs add in RDP.
    """

    mechanisms: tuple

    def __post_init__(self):
        object.__setattr__(self, "mechanisms", _mechanism_tuple(self.mechanisms, "Composed"))


@dataclass(frozen=True, slots=True)
class Repeated(Mechanism):
    """One mechanism run ``count`` times (self-composition).

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism repeated.
    count : int
        Number of runs, >= 0 (0 costs nothing).
    """

    mechanism: Mechanism
    count: int

    def __post_init__(self):
        _mechanism(self.mechanism, "Repeated")
        object.__setattr__(self, "count", _count(self.count, "count", "Repeated", minimum=0))


@dataclass(frozen=True, slots=True)
class AnyOf(Mechanism):
    r"""One of several mechanisms, which one chosen from earlier released outputs.

    For example the refit of a hyperparameter search: the candidate refitted
    is chosen by the (private) selection, so its cost is not known before
    the data is read, but it is one of ``mechanisms``.

    Parameters
    ----------
    mechanisms : iterable of Mechanism
        The possible mechanisms (at least one), stored as a tuple.

    Notes
    -----
    At every order the Rényi divergence of the one that runs is at most the
    largest of theirs, and adaptive composition of Rényi DP holds order by
    order [1]_, so the cost is the pointwise maximum of the RDP curves (and
    of the pure epsilons, and of the Gaussian :math:`\mu^2`).

    References
    ----------
    .. [1] I. Mironov, "Rényi Differential Privacy", CSF 2017, Proposition 1.
    """

    mechanisms: tuple

    def __post_init__(self):
        mechanisms = _mechanism_tuple(self.mechanisms, "AnyOf")
        if not mechanisms:
            raise ValueError("AnyOf: mechanisms must hold at least one mechanism.")
        object.__setattr__(self, "mechanisms", mechanisms)


@dataclass(frozen=True, slots=True)
class RepeatAndSelect(Mechanism):
    r"""Run a mechanism a random number of times and release only the best run.

    Private hyperparameter selection of Papernot and Steinke [1]_: the
    number of runs :math:`K` is drawn from the truncated negative binomial
    distribution :math:`\mathcal{D}_{\eta, \gamma}`,
    :math:`P[K = k] \propto (1 - \gamma)^k \binom{k + \eta - 1}{k}` for
    :math:`k \ge 1` (:math:`\eta = 1`: geometric; :math:`\eta = 0`: the
    logarithmic distribution), independently of the data; each run releases
    nothing but a candidate and its score, and only the best is released.

    Parameters
    ----------
    mechanism : Mechanism
        One run (e.g. :class:`AnyOf` the candidates' fits composed with the
        release of a noisy validation score).
    gamma : float
        :math:`\gamma \in (0, 1)`.
    shape : float, default=1.0
        :math:`\eta \ge 0`.

    Notes
    -----
    Theorem 2 of [1]_: if one run is :math:`(\lambda, \varepsilon)`- and
    :math:`(\hat\lambda, \hat\varepsilon)`-RDP, the selection is
    :math:`(\lambda, \varepsilon')`-RDP with

    .. math::

        \varepsilon' = \varepsilon + (1 + \eta)\Big(1 - \frac{1}{\hat\lambda}\Big)
        \hat\varepsilon + \frac{(1 + \eta)\log(1/\gamma)}{\hat\lambda}
        + \frac{\log E[K]}{\lambda - 1},

    minimised here over :math:`\hat\lambda \in \{1\} \cup` the
    accountant's orders (at :math:`\hat\lambda = 1` the second term
    vanishes). For a pure :math:`\varepsilon`-DP run, letting both orders
    grow gives :math:`(2 + \eta)\varepsilon`-DP (:math:`3\varepsilon` for
    the geometric distribution, as in Liu and Talwar [2]_).

    References
    ----------
    .. [1] N. Papernot and T. Steinke, "Hyperparameter Tuning with Renyi
       Differential Privacy", ICLR 2022, Theorem 2.
    .. [2] J. Liu and K. Talwar, "Private Selection from Private
       Candidates", STOC 2019.
    """

    mechanism: Mechanism
    gamma: float
    shape: float = 1.0

    def __post_init__(self):
        _mechanism(self.mechanism, "RepeatAndSelect")
        gamma = _real(self.gamma, "gamma", "RepeatAndSelect")
        if not gamma < 1:
            raise ValueError(f"RepeatAndSelect: gamma must be in (0, 1), got {gamma!r}.")
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "shape",
                           _real(self.shape, "shape", "RepeatAndSelect", positive=False))

    @property
    def mean_runs(self) -> float:
        """:math:`E[K]` of the truncated negative binomial distribution."""
        return truncated_negative_binomial_mean(self.gamma, self.shape)

    @classmethod
    def from_mean(cls, mechanism, mean_runs, shape=1.0):
        r"""The selection whose number of runs has mean ``mean_runs`` (> 1).

        Solves :math:`E[K] = ` ``mean_runs`` for :math:`\gamma` by bisection
        (the mean falls from infinity to 1 as :math:`\gamma` grows from 0 to
        1). The cost grows like :math:`\log E[K]`.

        Parameters
        ----------
        mechanism : Mechanism
            One run, as for the class.
        mean_runs : float
            The expected number of runs :math:`E[K]`, > 1 and finite.
        shape : float, default=1.0
            :math:`\eta \ge 0`: 1 is geometric, 0 logarithmic.

        Returns
        -------
        selection : RepeatAndSelect
            With the :math:`\gamma` found (rounded up, so that the mean is at
            most ``mean_runs``).
        """
        mean_runs = _real(mean_runs, "mean_runs", "RepeatAndSelect")
        shape = _real(shape, "shape", "RepeatAndSelect", positive=False)
        if not mean_runs > 1:
            raise ValueError(f"RepeatAndSelect: mean_runs must be > 1, got {mean_runs!r}.")
        lo, hi = 1e-300, 1.0 - 1e-15  # the mean falls from inf to 1 as gamma grows
        for _ in range(200):
            mid = math.sqrt(lo * hi) if hi / lo > 4 else 0.5 * (lo + hi)
            if truncated_negative_binomial_mean(mid, shape) > mean_runs:
                lo = mid
            else:
                hi = mid
        return cls(mechanism, hi, shape)


def truncated_negative_binomial_mean(gamma: float, shape: float) -> float:
    r""":math:`E[K]` for :math:`K \sim \mathcal{D}_{\eta, \gamma}` (Papernot and Steinke, eq. 2).
    """
    if shape == 0:
        return (1.0 - gamma) / (gamma * math.log(1.0 / gamma))
    return shape * (1.0 - gamma) / (gamma * -math.expm1(shape * math.log(gamma)))


_REGISTRY = {
    cls.__name__: cls
    for cls in (Gaussian, Laplace, PureDP, ZCDP, SparseVector, GaussianSparseVector,
                FilteredRDP, PoissonSampled, Activated, Composed, Repeated, AnyOf,
                RepeatAndSelect)
}


def noise_mechanism(delta: float, sampling_rate: float = 1.0):
    """The one place where ``delta`` chooses the noise of a noisy query.

    Parameters
    ----------
    delta : float
        0 selects pure epsilon-DP (Laplace noise, L1 sensitivity); any
        ``delta > 0`` the Gaussian mechanism (L2 sensitivity).
    sampling_rate : float, default=1.0
        Poisson sampling rate of each query; below 1 the mechanism is
        wrapped in :class:`PoissonSampled`.

    Returns
    -------
    make : callable
        ``noise_multiplier -> Mechanism``.
    """
    pure = delta == 0

    def make(noise_multiplier):
        if isinstance(noise_multiplier, float):  # (the common case) built once per value
            return _noise(pure, sampling_rate, float(noise_multiplier))
        return _build_noise(pure, sampling_rate, noise_multiplier)

    return make


def _build_noise(pure, sampling_rate, noise_multiplier):
    mech = (Laplace if pure else Gaussian)(noise_multiplier)
    return mech if sampling_rate >= 1.0 else PoissonSampled(sampling_rate, mech)


#: the noisy-gradient mechanisms of a fit's steps (immutable: shared, not rebuilt every step)
_noise = functools.lru_cache(maxsize=4096)(_build_noise)


def mechanism_from_dict(d: dict) -> Mechanism:
    """Rebuild a mechanism from :meth:`Mechanism.to_dict` output.

    Parameters
    ----------
    d : dict
        A dictionary with a ``"type"`` key naming the mechanism class and one
        key per field; nested mechanisms are nested dictionaries.

    Returns
    -------
    mechanism : Mechanism
        An instance of the class named by ``"type"``, equal to the mechanism
        that produced ``d``; fields absent from ``d`` take their defaults.

    Raises
    ------
    ValueError
        If the type is unknown or the fields do not match it.
    """
    if not isinstance(d, dict) or "type" not in d:
        raise ValueError(f"mechanism_from_dict: expected a dict with a 'type' key, got {d!r}.")
    kind = d["type"]
    cls = _REGISTRY.get(kind)
    if cls is None:
        raise ValueError(
            f"mechanism_from_dict: unknown mechanism type {kind!r}; "
            f"known types: {sorted(_REGISTRY)}."
        )
    names = [f.name for f in dataclasses.fields(cls)]
    extra = set(d) - set(names) - {"type"}
    if extra:
        raise ValueError(f"mechanism_from_dict: unknown fields {sorted(extra)} for {kind}.")
    kwargs = {}
    for name in names:
        if name not in d:
            continue
        value = d[name]
        if name == "mechanism":
            value = mechanism_from_dict(value)
        elif name == "mechanisms":
            if not isinstance(value, (list, tuple)):
                raise ValueError(f"mechanism_from_dict: {kind}.mechanisms must be a list.")
            value = tuple(mechanism_from_dict(v) for v in value)
        kwargs[name] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"mechanism_from_dict: cannot build {kind} from {d!r}: {exc}") from None


def compose_runs(mechanisms):
    """One :class:`Composed` of ``mechanisms`` in order, equal neighbours as :class:`Repeated`.

    Parameters
    ----------
    mechanisms : iterable of Mechanism
        Mechanisms run one after the other.

    Returns
    -------
    Composed
        The same composition, each run of equal consecutive mechanisms
        written once with its count.
    """
    runs = []
    for mechanism in mechanisms:
        if runs and runs[-1][0] == mechanism:
            runs[-1][1] += 1
        else:
            runs.append([mechanism, 1])
    return Composed([m if k == 1 else Repeated(m, k) for m, k in runs])

r"""The sparse vector technique, with Laplace or Gaussian noise, as mechanism descriptions.

Part of :mod:`skdp.accounting.mechanisms` (imported from there as well).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._mechanism_base import Mechanism, _count, _real

__all__ = ["SparseVector", "GaussianSparseVector"]


_SVT_BOUNDS = ("pure", "paper002")


@dataclass(frozen=True, slots=True)
class SparseVector(Mechanism):
    r"""The sparse vector technique with Laplace noise (AboveThreshold for ``count=1``).

    One run compares any number of queries of sensitivity :math:`\Delta`
    with a threshold and halts after ``count`` "above" answers.  With this
    class's parametrisation (Lyu, Su and Li [1]_, Algorithm 1):

    - the threshold noise is :math:`\mathrm{Lap}(\Delta/\varepsilon_1)`,
      drawn once (scale :attr:`threshold_scale` times :math:`\Delta`);
    - each query's noise is :math:`\mathrm{Lap}(2c\Delta/\varepsilon_2)` with
      :math:`c` = ``count`` (scale :attr:`query_scale` times :math:`\Delta`),

    and the run is :math:`(\varepsilon_1 + \varepsilon_2)`-DP whatever the
    number of queries.

    Parameters
    ----------
    epsilon_1 : float
        Budget of the threshold noise, > 0.
    epsilon_2 : float
        Budget of the query noise, > 0.
    count : int, default=1
        Maximum number :math:`c` of "above" answers before halting.
    rdp_bound : {"pure", "paper002"}, default="pure"
        The Rényi DP curve used for RDP accounting.

        - ``"pure"``: the :math:`(\varepsilon_1 + \varepsilon_2)`-DP bound
          converted with the tight pure-DP to RDP bound (see :class:`PureDP`).
          Proven; the default.
        - ``"paper002"``: Theorem 2 of Chen and Lee (paper 002), which in this
          parametrisation is the Laplace-mechanism curve at
          :math:`\varepsilon_1` plus the one at :math:`\varepsilon_2`
          (``count`` must be 1).  About half the "pure" curve at small
          epsilon.  Its published proof has a gap (it never sums over the
          halting position); numerical checks found no violation.  Opt-in.

    Notes
    -----
    Conversions between conventions (the pure cost is always
    ``epsilon_1 + epsilon_2``):

    - Dwork and Roth's AboveThreshold / paper 002, Lemma 5 (threshold
      :math:`\mathrm{Lap}(2\Delta/\varepsilon)`, queries
      :math:`\mathrm{Lap}(4\Delta/\varepsilon)`):
      ``SparseVector(eps / 2, eps / 2)``.
    - Paper 002, Algorithm 1 with its own :math:`\epsilon_1, \epsilon_2`
      (queries :math:`\mathrm{Lap}(\Delta/\epsilon_2)`):
      ``SparseVector(eps1, 2 * eps2)``.
    - Paper 004, Algorithm 2 (threshold :math:`\mathrm{Lap}(2\lambda\Delta)`,
      queries :math:`\mathrm{Lap}(4\lambda\Delta)`, :math:`1/\lambda`-DP):
      ``SparseVector(1 / (2 * lam), 1 / (2 * lam))``.

    When in doubt, build it from the noise actually drawn with
    :meth:`from_noise_scales`.  The Gaussian-noise variant (paper 002,
    Theorem 3) is not provided: its published bound fails for long query
    sequences.

    References
    ----------
    .. [1] M. Lyu, D. Su and N. Li, "Understanding the Sparse Vector Technique
       for Differential Privacy", PVLDB 2017.
    .. [2] C. Dwork and A. Roth, "The Algorithmic Foundations of Differential
       Privacy", 2014, Section 3.6.
    .. [3] C. Chen and J. Lee, "Stochastic Adaptive Line Search for
       Differentially Private Optimization", IEEE BigData 2020, Theorem 2.
    """

    epsilon_1: float
    epsilon_2: float
    count: int = 1
    rdp_bound: str = "pure"

    def __post_init__(self):
        object.__setattr__(self, "epsilon_1", _real(self.epsilon_1, "epsilon_1", "SparseVector"))
        object.__setattr__(self, "epsilon_2", _real(self.epsilon_2, "epsilon_2", "SparseVector"))
        object.__setattr__(self, "count", _count(self.count, "count", "SparseVector", minimum=1))
        if self.rdp_bound not in _SVT_BOUNDS:
            raise ValueError(
                f"SparseVector: rdp_bound must be one of {_SVT_BOUNDS}, got {self.rdp_bound!r}."
            )
        if self.rdp_bound == "paper002" and self.count != 1:
            raise ValueError(
                "SparseVector: rdp_bound='paper002' (paper 002, Theorem 2) covers "
                f"AboveThreshold only (count=1), got count={self.count}; use rdp_bound='pure'."
            )

    @classmethod
    def from_noise_scales(cls, threshold_scale, query_scale, count=1, rdp_bound="pure"):
        r"""Build the description from the Laplace scales actually used.

        Parameters
        ----------
        threshold_scale : float
            Scale of the threshold's Laplace noise divided by the query
            sensitivity :math:`\Delta`.
        query_scale : float
            Scale of each query's Laplace noise divided by :math:`\Delta`.
        count : int, default=1
            Maximum number of "above" answers.
        rdp_bound : {"pure", "paper002"}, default="pure"
            See the class docstring.

        Returns
        -------
        mechanism : SparseVector
            With ``epsilon_1 = 1 / threshold_scale`` and
            ``epsilon_2 = 2 * count / query_scale``.
        """
        threshold_scale = _real(threshold_scale, "threshold_scale", "SparseVector")
        query_scale = _real(query_scale, "query_scale", "SparseVector")
        count = _count(count, "count", "SparseVector", minimum=1)
        return cls(1.0 / threshold_scale, 2.0 * count / query_scale, count, rdp_bound)

    @property
    def epsilon(self) -> float:
        """The pure-DP epsilon of one run, ``epsilon_1 + epsilon_2`` (float)."""
        return self.epsilon_1 + self.epsilon_2

    @property
    def threshold_scale(self) -> float:
        """Laplace scale of the threshold noise in units of the sensitivity (float).

        Equal to ``1 / epsilon_1``.
        """
        return 1.0 / self.epsilon_1

    @property
    def query_scale(self) -> float:
        """Laplace scale of each query's noise in units of the sensitivity (float).

        Equal to ``2 * count / epsilon_2``.
        """
        return 2.0 * self.count / self.epsilon_2


@dataclass(frozen=True, slots=True)
class GaussianSparseVector(Mechanism):
    r"""AboveThreshold (the sparse vector technique with one "above" answer), Gaussian noise.

    One run compares at most ``max_queries`` queries of sensitivity
    :math:`\Delta` with a threshold and halts at the first "above" answer.
    The threshold noise is :math:`\mathcal{N}(0, (\sigma_1 \Delta)^2)`, drawn
    once; each query's noise is :math:`\mathcal{N}(0, (\sigma_2 \Delta)^2)`.

    Parameters
    ----------
    threshold_multiplier : float
        :math:`\sigma_1 > 0`, the threshold noise in units of :math:`\Delta`.
    query_multiplier : float
        :math:`\sigma_2 > 0`, each query's noise in units of :math:`\Delta`.
    max_queries : int
        :math:`k \ge 1`, the most queries one run may compare.

    Notes
    -----
    Its Rényi DP curve is Zhu and Wang's bound for Gaussian SVT with cut-off
    1 [1]_ (Theorem 8, in the form autodp implements it),

    .. math::

        \varepsilon(\alpha) = \frac{\log k}{\alpha - 1}
        + \frac{\alpha}{\sigma_1^2} + \frac{2\alpha}{\sigma_2^2},

    which grows with ``max_queries``.  Paper 002's Theorem 3
    (:math:`\alpha(4\sigma_1^2 + \sigma_2^2) / (2\sigma_1^2\sigma_2^2)`, no
    dependence on :math:`k`) is not used: it fails for long query sequences,
    so a bound valid for every ``max_queries`` must grow with it, as the one
    above does.

    References
    ----------
    .. [1] Y. Zhu and Y.-X. Wang, "Improving Sparse Vector Technique with
       Renyi Differential Privacy", NeurIPS 2020.
    """

    threshold_multiplier: float
    query_multiplier: float
    max_queries: int

    def __post_init__(self):
        owner = "GaussianSparseVector"
        object.__setattr__(self, "threshold_multiplier",
                           _real(self.threshold_multiplier, "threshold_multiplier", owner))
        object.__setattr__(self, "query_multiplier",
                           _real(self.query_multiplier, "query_multiplier", owner))
        object.__setattr__(self, "max_queries",
                           _count(self.max_queries, "max_queries", owner, minimum=1))

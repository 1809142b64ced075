"""PrivateQueries: the only way from a solver to the data.

Every method draws its noise together with its mechanism and counts it
against the plan: a query the plan does not provide for raises
:class:`QueryBudgetError` *before* it touches the data, so a solver bug that
queries too much is caught, never leaked. No method returns an unnoised
value computed from the data.
"""

from collections import Counter

import numpy as np

from ..accounting import Composed, PoissonSampled, Repeated

__all__ = ["PrivateQueries", "QueryBudgetError"]


class QueryBudgetError(RuntimeError):
    """A solver asked for a query that its plan (what was charged) does not cover."""


def _leaves(mechanism, count=1, out=None):
    """Multiset of the single queries a mechanism tree provides for."""
    out = Counter() if out is None else out
    if isinstance(mechanism, Repeated):
        return _leaves(mechanism.mechanism, count * mechanism.count, out)
    if isinstance(mechanism, Composed):
        for child in mechanism.mechanisms:
            _leaves(child, count, out)
        return out
    out[mechanism] += count
    return out


class PrivateQueries:
    """Noisy, counted access to one fit's data.

    Built by the estimator after the charge; a solver receives it in
    ``solve(queries, plan)``.

    Parameters
    ----------
    loss : loss object
        The data-fit bound to the validated training data (private).
    plan : Plan
        What was charged; the queries run at most its mechanisms.
    rng : numpy.random.Generator
        The fit's own noise stream.
    start : ndarray or None
        Public starting point (drawn from ``rng`` by the estimator when it
        is random); None starts at zero.
    """

    def __init__(self, loss, plan, rng, start=None):
        self._loss = loss
        self._spec = plan.spec
        self._rng = rng
        self._start = start
        self._left = _leaves(plan.mechanism)
        self._ran = []

    @property
    def n_samples(self):
        """Number of records (public)."""
        return self._spec.n_samples

    def initial_coef(self):
        """The public starting point (a fresh copy)."""
        if self._start is None:
            return np.zeros(self._spec.coef_shape)
        return np.array(self._start, dtype=np.float64)

    def _consume(self, mechanism):
        if self._left[mechanism] <= 0:
            raise QueryBudgetError(
                f"The solver asked for a query {mechanism!r} that its plan does not provide "
                f"for (it has already run {len(self._ran)} queries; the plan is what was "
                "charged). The query was not run and nothing is released: this is a bug in "
                "the solver's plan or solve."
            )
        self._left[mechanism] -= 1
        self._ran.append(mechanism)

    def noisy_gradient(self, W, noise_multiplier, *, sampling_rate=None):
        r"""Noisy mean of per-example gradients clipped to ``clip_norm``.

        .. math::

            \tilde g = \frac{1}{q n}\Big(\sum_{i \in B} \mathrm{clip}_C(\nabla\ell_i(W))
            + \xi\Big)

        with ``B`` the whole data set (``q = 1``) or a Poisson sample of
        rate ``q`` (the normaliser ``q n`` is public), and ``xi`` Gaussian
        (L2 clipping) or, with ``delta = 0``, Laplace noise (L1 clipping) of
        scale ``noise_multiplier * clip_norm``. The penalty is not included.

        Parameters
        ----------
        W : ndarray of shape ``spec.coef_shape``
        noise_multiplier : float
        sampling_rate : float or None
            None uses the spec's rate (``batch_size / n``).

        Returns
        -------
        g : ndarray of shape ``spec.coef_shape``
        """
        spec = self._spec
        mechanism = spec.noise(noise_multiplier, sampling_rate)
        self._consume(mechanism)
        base = mechanism.mechanism if isinstance(mechanism, PoissonSampled) else mechanism
        rate = mechanism.rate if isinstance(mechanism, PoissonSampled) else 1.0
        n = spec.n_samples
        idx = None if rate >= 1.0 else np.flatnonzero(self._rng.random(n) < rate)
        C = spec.clip_norm
        G = self._loss.clipped_grad_sum(W, C, idx=idx, norm=base.sensitivity_norm)
        G += base.sample(self._rng, C, G.shape)
        return G / (rate * n)

    @property
    def ran(self):
        """What the queries ran so far, as one mechanism tree (runs merged)."""
        parts = []
        for m in self._ran:
            if parts and parts[-1][0] == m:
                parts[-1][1] += 1
            else:
                parts.append([m, 1])
        return Composed([m if k == 1 else Repeated(m, k) for m, k in parts])

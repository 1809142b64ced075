"""The row sampling and loss-value sums a private query needs, in one place.

:class:`~skdp.solvers.PrivateQueries` reaches a loss's values only through
these three methods, so that a loss whose rows live elsewhere (the Dask back
end, :mod:`skdp._dask`) can answer them with per-block sums and never send
an n-sized vector to the driver. The sums are accumulated in float64 by
blocks and added accurately (:func:`~skdp.losses.float64_total`): each carries
the sensitivity ``loss_clip``.
"""

import numpy as np

from ._float64_sums import float64_total
from ._threads import one_blas_thread

__all__ = ["BatchSums"]


class BatchSums:
    """Poisson row samples and sums of clipped loss values (mixin of the in-memory losses).

    The class using it provides ``n_samples`` and
    ``loss_values(W, idx=None, loss_clip=None)``.
    """

    # a context for linear algebra on released values that must round the same
    # whatever the thread count (skdp.losses.one_blas_thread)
    one_blas_thread = staticmethod(one_blas_thread)

    def sample_rows(self, rng, rate):
        """Draw a Poisson sample: each row independently with probability ``rate``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's generator (the draw is secret: which rows were sampled
            is never released).
        rate : float
            Sampling probability in (0, 1).

        Returns
        -------
        idx : ndarray of int
            Positions of the sampled rows, increasing; private (which rows
            were drawn is never released), passed back as ``idx``.
        """
        return np.flatnonzero(rng.random(self.n_samples) < rate)

    def clipped_loss_sum(self, W, loss_clip, idx=None):
        """Sum of the per-example losses clipped to ``[0, loss_clip]``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Coefficients at which the losses are evaluated.
        loss_clip : float
            Upper clip of each value: the sensitivity of the sum. A NaN or
            infinite value counts as ``loss_clip``.
        idx : ndarray of int or None
            Rows of a sample (from :meth:`sample_rows`); None for all.

        Returns
        -------
        float
            The sum, in ``[0, loss_clip * n_rows]``.
        """
        C = float(loss_clip)
        values = self.loss_values(W, idx, loss_clip=C)
        return float64_total(np.nan_to_num(values, nan=C, posinf=C, neginf=0.0))

    def clipped_decrease(self, W, loss_clip, idx=None):
        """The sum of per-example decreases from ``W``, each clipped to ``[-C, C]``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            The reference point; its per-example losses are computed once.
        loss_clip : float
            ``C``: the bound on each example's decrease, the sensitivity of
            every sum the returned function computes.
        idx : ndarray of int or None
            Rows of a sample (from :meth:`sample_rows`); None for all.

        Returns
        -------
        decrease : callable
            ``decrease(V)`` is ``sum_i clip(l_i(W) - l_i(V), -C, C)`` as a
            float (a change from inf to inf counts as 0, to or from an
            infinity as +-C); ``decrease(V, c)`` clips to ``[-c, c]`` instead.
        """
        C0 = float(loss_clip)
        reference = self.loss_values(W, idx)

        def decrease(V, loss_clip=None):
            C = C0 if loss_clip is None else float(loss_clip)
            with np.errstate(invalid="ignore"):
                d = self.loss_values(V, idx)
                d = np.subtract(reference, d, out=d)
            # infinities to +-C; an inf - inf (NaN) change counts as 0
            total = float64_total(np.clip(d, -C, C, out=d))
            if total != total:  # NaN: only from inf - inf, rare
                d[np.isnan(d)] = 0.0
                total = float64_total(d)
            return total

        return decrease

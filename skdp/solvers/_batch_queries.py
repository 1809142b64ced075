"""PrivateBatch: the queries run on one Poisson batch, charged once by :meth:`PrivateQueries.batch`.

Part of the data access of :mod:`skdp.solvers._queries` (see there): every
query draws its noise through the release door and consumes one of the
mechanisms the batch was charged for.
"""

import numpy as np
from scipy import linalg as sla
from scipy.sparse import linalg as spla

from ..accounting import GaussianSparseVector, SparseVector
from ..accounting.release import (
    release,
    release_operator,
    release_symmetric,
    sparse_vector_components,
)
from ._query_budget import QueryBudgetError, _leaves

__all__ = ["PrivateBatch", "public_eigsh_start"]


class PrivateBatch:
    """The queries of one batch, drawn and charged by :meth:`PrivateQueries.batch`.

    Every query consumes one of the mechanisms the batch was charged for; a
    query it was not charged for raises :class:`QueryBudgetError` before it
    touches the data. Results are means over the batch divided by the
    public expected batch size ``rate * n`` (one scale throughout).

    Parameters
    ----------
    queries : PrivateQueries
        The fit's queries (data, noise stream, spec).
    idx : ndarray of int or None
        Positions of the records in the batch (the Poisson sample, which
        stays private); None for the whole data.
    rate : float
        The batch's sampling rate (public), stored as ``rate``.
    mechanism : Mechanism
        What was charged for the batch, unsampled, stored as
        ``mechanism``; each of its queries can run at most once.
    """

    def __init__(self, queries, idx, rate, mechanism):
        self._queries = queries
        self._idx = idx
        self.rate = rate
        self.mechanism = mechanism
        self._left = _leaves(mechanism)

    @property
    def expected_size(self):
        """The public expected batch size ``rate * n``."""
        return self.rate * self._queries.n_samples

    def _consume(self, mechanism):
        if self._left[mechanism] <= 0:
            raise QueryBudgetError(
                f"The solver asked this batch for a query {mechanism!r} it was not charged "
                f"for (charged: {self.mechanism!r}). The query was not run and nothing is "
                "released: this is a bug in the solver."
            )
        self._left[mechanism] -= 1

    def noisy_gradient(self, W, noise_multiplier, *, clip_norm=None, duals=None):
        """Noisy sum of clipped per-example gradients over the batch, over ``rate * n``.

        Parameters
        ----------
        W : ndarray of shape ``spec.coef_shape``
            The point at which the gradients are taken (public).
        noise_multiplier : float
            Must match a Gaussian (``delta > 0``) or Laplace (``delta = 0``)
            mechanism the batch was charged for.
        clip_norm : float or None
            Per-example gradient bound (public); None uses ``spec.clip_norm``.
            The noise scales with it, so the mechanism is unchanged.
        duals : PrivateDuals or None
            The minimax form: gradients in ``W`` of ``F_i(W, y_i)`` at the
            current duals (see :meth:`PrivateQueries.duals`).

        Returns
        -------
        g : ndarray of shape ``spec.coef_shape``
            ``(sum of clipped gradients + noise) / (rate * n)``, the noise of
            scale ``noise_multiplier * clip_norm`` (L2 clipping and Gaussian
            noise, or L1 clipping and Laplace noise).
        """
        q = self._queries
        spec = q._spec
        base = spec.noise(noise_multiplier, 1.0)
        self._consume(base)
        C = spec.clip_norm if clip_norm is None else float(clip_norm)
        extra = {} if duals is None else {"duals": duals._for(q)[0]}
        G = q._loss.clipped_grad_sum(W, C, idx=self._idx, norm=base.sensitivity_norm, **extra)
        G = release(G, base, C, q._rng, what="noisy gradient")
        G /= self.expected_size
        return G

    def noisy_gradient_difference(self, W, W_prev, noise_multiplier, clip_norm, *, duals=None):
        r"""Noisy sum of clipped per-example gradient differences, over ``rate * n``.

        .. math::

            \frac{1}{q n}\Big(\sum_{i \in B} \mathrm{clip}_{C}\big(\nabla\ell_i(W)
            - \nabla\ell_i(W')\big) + \xi\Big), \qquad
            \xi \sim N(0, (z C)^2 I),

        SPIDER's increment. ``C`` must be public (a constant, or a function
        of released iterates such as ``L ||W - W'||``); the noise scales with
        it, so the mechanism is ``Gaussian(z)`` whatever ``C`` is.

        Parameters
        ----------
        W : ndarray of shape ``spec.coef_shape``
            The current point :math:`W` (public).
        W_prev : ndarray of shape ``spec.coef_shape``
            The previous point :math:`W'` (public).
        noise_multiplier : float
            ``z``; must match a mechanism the batch was charged for.
        clip_norm : float
            Per-example bound on the difference, > 0.
        duals : PrivateDuals or None
            The minimax form: differences of ``F_i``'s gradients in ``W``
            at (``W``, the current duals) and (``W_prev``, the duals of the
            handle's previous query).

        Returns
        -------
        g : ndarray of shape ``spec.coef_shape``
            The noisy increment above, to add to the previous gradient
            estimate.
        """
        q = self._queries
        base = q._spec.noise(noise_multiplier, 1.0)
        if not (clip_norm > 0 and np.isfinite(clip_norm)):
            raise ValueError(
                f"noisy_gradient_difference needs a finite clip_norm > 0, got {clip_norm!r}.")
        self._consume(base)
        C = float(clip_norm)
        extra = {}
        if duals is not None:
            extra["duals"], extra["duals_prev"] = duals._for(q)
        G = q._loss.clipped_grad_diff_sum(W, W_prev, C, idx=self._idx,
                                          norm=base.sensitivity_norm, **extra)
        G = release(G, base, C, q._rng, what="noisy gradient difference")
        G /= self.expected_size
        return G

    def noisy_mean_loss(self, W, noise_multiplier, loss_clip):
        r"""Noisy sum of per-example losses clipped to ``[0, loss_clip]``, over ``rate * n``.

        Sensitivity ``loss_clip`` under zero-out neighbours; the noise is
        ``spec.noise(noise_multiplier)`` (Gaussian, or Laplace when
        ``delta = 0``) of scale ``noise_multiplier * loss_clip``.

        Parameters
        ----------
        W : ndarray of shape ``spec.coef_shape``
            The point at which the losses are evaluated (public).
        noise_multiplier : float
            Must match a mechanism the batch was charged for.
        loss_clip : float
            The clip ``C > 0`` of each example's loss (public); a NaN or
            infinite loss counts as ``C``.

        Returns
        -------
        float
            ``(sum of clipped losses + noise) / (rate * n)``: a noisy,
            downward-biased (by clipping) estimate of the mean loss.
        """
        q = self._queries
        base = q._spec.noise(noise_multiplier, 1.0)
        if not (loss_clip > 0 and np.isfinite(loss_clip)):
            raise ValueError(f"noisy_mean_loss needs a finite loss_clip > 0, got {loss_clip!r}.")
        self._consume(base)
        C = float(loss_clip)
        total = q._loss.clipped_loss_sum(W, C, self._idx)
        return release(total, base, C, q._rng, what="noisy loss sum") / self.expected_size

    def noisy_hessian_eigenpair(self, W, noise_multiplier, hessian_clip, *,
                                public_diagonal=None, dense_limit=2000):
        r"""Smallest eigenpair of the batch's noisy Hessian (over ``rate * n``).

        .. math::

            \tilde H = \frac{1}{q n}\Big(\sum_{i \in B} \mathrm{clip}_{C_H}(\nabla^2 \ell_i(W))
            + E\Big) + D,

        each example's Hessian clipped to Frobenius norm ``C_H`` and ``E``
        symmetric with the entries on and above the diagonal i.i.d.
        ``N(0, (z C_H)^2)``: a Gaussian mechanism on the upper triangle,
        whose L2 sensitivity is at most ``C_H`` (paper 004, section 2). ``D``
        is a public diagonal (the penalty's Hessian). Only the smallest
        eigenvalue and its unit eigenvector are returned (post-processing of
        :math:`\tilde H`): by dense ``scipy.linalg.eigh`` up to
        ``dense_limit`` parameters (the triangle released by
        :func:`~skdp.accounting.release_symmetric`), else by Lanczos
        (``eigsh``) on Hessian-vector products plus ``E`` (drawn whole by
        :func:`~skdp.accounting.release_operator`).

        Parameters
        ----------
        W : ndarray of shape ``spec.coef_shape``
            The point at which the Hessians are taken (public).
        noise_multiplier : float
            Must match a Gaussian mechanism the batch was charged for.
        hessian_clip : float
            ``C_H``, public.
        public_diagonal : ndarray of shape ``spec.coef_shape`` or None
            ``D``, added after the noise (e.g. the penalty's
            ``hessian_diagonal(W)``); it reads no data. None adds nothing.
        dense_limit : int, default=2000
            Largest number of parameters for which the Hessian is formed
            densely; above it Lanczos on Hessian-vector products is used.
            Only the computation changes, not the mechanism.

        Returns
        -------
        eigenvalue : float
            The smallest eigenvalue of :math:`\tilde H`.
        eigenvector : ndarray of shape ``spec.coef_shape``, unit norm
            Its eigenvector (its sign is arbitrary).
        """
        q = self._queries
        spec = q._spec
        base = spec.noise(noise_multiplier, 1.0)
        if base.sensitivity_norm != 2:
            raise ValueError("noisy_hessian_eigenpair needs Gaussian noise (delta > 0).")
        if not (hessian_clip > 0 and np.isfinite(hessian_clip)):
            raise ValueError(
                f"noisy_hessian_eigenpair needs a finite hessian_clip > 0, got {hessian_clip!r}.")
        self._consume(base)
        C, m, P = float(hessian_clip), self.expected_size, spec.n_params
        diag = (np.zeros(P) if public_diagonal is None
                else np.asarray(public_diagonal, dtype=np.float64).ravel())
        if P <= dense_limit:
            # the upper triangle (diagonal included) of the clipped sum, sensitivity C_H
            H = release_symmetric(q._loss.hessian(W, C, self._idx), base, C, q._rng,
                                  what="Hessian", off_diagonal_scale=1.0)
            H /= m
            H[np.diag_indices(P)] += diag
            value, vector = sla.eigh(H, subset_by_index=[0, 0])
            value, vector = float(value[0]), vector[:, 0]
        else:
            shape = spec.coef_shape

            def exact_matvec(v):
                return q._loss.hessian_matvec(W, v.reshape(shape), C, self._idx).ravel()

            # H is never formed: the door's second entry adds the same noise to its products
            noisy_matvec = release_operator(exact_matvec, P, base, C, q._rng, what="Hessian")

            def matvec(v):
                v = np.ravel(v)
                return noisy_matvec(v) / m + diag * v

            operator = spla.LinearOperator((P, P), matvec=matvec, dtype=np.float64)
            start = public_eigsh_start(q._rng, P)
            values, vectors = spla.eigsh(operator, k=1, which="SA", v0=start, tol=1e-6)
            value, vector = float(values[0]), vectors[:, 0]
        vector = vector / np.linalg.norm(vector)
        return value, vector.reshape(spec.coef_shape)

    def above_threshold(self, W, candidates, mechanism, loss_clip, clip="decrease"):
        r"""AboveThreshold over clipped loss decreases on the batch.

        Query ``k`` is the batch's loss decrease from ``W`` to the candidate
        ``W_k``, clipped per example, plus a public offset:

        .. math::

            q_k = \sum_{i \in B} \mathrm{clip}_{[-C, C]}\big(\ell_i(W) - \ell_i(W_k)\big)
            + o_k \quad (\texttt{clip='decrease'}),

            q_k = \sum_{i \in B} \big[\bar\ell_i(W) - \bar\ell_i(W_k)\big] + o_k,
            \ \bar\ell_i = \min(\max(\ell_i, 0), C) \quad (\texttt{clip='values'},
            \text{paper 002}),

        both of sensitivity ``C = loss_clip`` under zero-out neighbours (each
        term lies in [-C, C]; a null record adds 0). The queries are compared
        in order with the threshold 0 under the mechanism's noise; the first
        one above is returned. Only that index is released.

        Parameters
        ----------
        W : ndarray of shape ``spec.coef_shape``
            The reference point (public).
        candidates : iterable of (ndarray, float) or (ndarray, float, float)
            ``(W_k, o_k)`` pairs, public; evaluated lazily, one data pass each.
            A third entry ``c_k`` in ``(0, C]`` (``clip='decrease'`` only)
            asks for the query ``(C / c_k) (sum_i clip(l_i(W) - l_i(W_k),
            -c_k, c_k) + o_k)``: each example's term lies in ``[-C, C]``
            again, so the sensitivity is still ``C``, and a candidate whose
            decreases are known to be small (a shorter step) is tested at
            its own scale rather than at the largest candidate's.
        mechanism : SparseVector or GaussianSparseVector
            One the batch was charged for: ``SparseVector(e1, e2)`` (count 1)
            draws threshold noise ``Lap(C / e1)`` and query noise ``Lap(2 C /
            e2)``; ``GaussianSparseVector(s1, s2, k)`` draws ``N(0, (s1 C)^2)``
            and ``N(0, (s2 C)^2)`` and compares at most ``k`` queries.
        loss_clip : float
            ``C > 0``, public.
        clip : {'decrease', 'values'}, default='decrease'
            Clip each example's loss decrease (unbiased for small steps), or
            each loss value (paper 002; biased once losses exceed ``C``).

        Returns
        -------
        k : int or None
            The index of the first candidate above the threshold, None if none is.
        """
        if not (isinstance(mechanism, SparseVector) and mechanism.count == 1) \
                and not isinstance(mechanism, GaussianSparseVector):
            raise ValueError(
                f"above_threshold needs SparseVector(e1, e2) with count=1 or "
                f"GaussianSparseVector, got {mechanism!r}."
            )
        if not (loss_clip > 0 and np.isfinite(loss_clip)):
            raise ValueError(f"above_threshold needs a finite loss_clip > 0, got {loss_clip!r}.")
        if clip not in ("decrease", "values"):
            raise ValueError(f"above_threshold: clip must be 'decrease' or 'values', got {clip!r}.")
        self._consume(mechanism)
        q = self._queries
        rng, loss, C = q._rng, q._loss, float(loss_clip)
        threshold_noise, query_noise = sparse_vector_components(mechanism)
        # the public threshold 0, released with the threshold noise
        threshold = release(0.0, threshold_noise, C, rng, what="sparse vector threshold",
                            part_of=mechanism)
        limit = None if isinstance(mechanism, SparseVector) else mechanism.max_queries

        if clip == "values":
            reference = loss.clipped_loss_sum(W, C, self._idx)

            def decrease(V):
                return reference - loss.clipped_loss_sum(V, C, self._idx)
        else:
            decrease = loss.clipped_decrease(W, C, self._idx)

        for k, candidate in enumerate(candidates):
            if limit is not None and k >= limit:
                return None
            W_k, offset = candidate[0], float(candidate[1])
            if len(candidate) == 2:
                value = decrease(W_k) + offset
            else:
                c_k = float(candidate[2])
                if clip != "decrease" or not 0.0 < c_k <= C:
                    raise ValueError(
                        f"above_threshold: a candidate's own clip must lie in (0, loss_clip] "
                        f"= (0, {C}] with clip='decrease', got {c_k!r} with clip={clip!r}.")
                value = (C / c_k) * (decrease(W_k, c_k) + offset)
            if release(value, query_noise, C, rng, what="sparse vector query",
                       part_of=mechanism) >= threshold:
                return k
        return None


def public_eigsh_start(rng, size):
    """Lanczos's start vector: public randomness (it only steers the eigen-solver), no release."""
    return rng.standard_normal(size)

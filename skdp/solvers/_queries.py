"""PrivateQueries: the only way from a solver to the data.

Every method draws its noise together with its mechanism, through the
release door (:func:`skdp.accounting.release`), and counts it against the
plan: a query the plan does not provide for raises
:class:`QueryBudgetError` *before* it touches the data, so a solver bug that
queries too much is caught, never leaked. No method returns an unnoised
value computed from the data.

A plan is either a fixed list of mechanisms (``plan.adaptive`` False: every
query consumes one of them) or, for solvers that choose their queries as
they run, a :class:`~skdp.accounting.PrivacyFilter` (``plan.adaptive`` True:
every query is admitted by the filter, whose budget is what was charged).

Several queries may share one Poisson batch: :meth:`PrivateQueries.batch`
draws the batch and charges everything that will run on it *once*, as
``PoissonSampled(rate, Composed(...))`` (the costs on one sample are composed
first and amplified once); the :class:`PrivateBatch` it returns runs those
queries on that batch.

Decentralised solvers see the data as shards held by simulated nodes:
:meth:`PrivateQueries.shards` splits the records over the nodes, and each
:meth:`PrivateShards.round` draws which nodes are active (a public coin),
draws each active node's Poisson sample of its records, and returns one
noisy clipped gradient per active node, charged as
``Activated(p, PoissonSampled(rate, noise))``.
"""

from collections import Counter

import numpy as np
from scipy import linalg as sla
from scipy.sparse import linalg as spla

from ..accounting import (
    Activated,
    BudgetError,
    Composed,
    GaussianSparseVector,
    PoissonSampled,
    PrivacyFilter,
    Repeated,
    SparseVector,
    compose_runs,
    discretize,
)
from ..accounting.release import (
    SecureGenerator,
    poisson_positions,
    release,
    release_operator,
    release_symmetric,
    sparse_vector_components,
)

__all__ = ["PrivateQueries", "PrivateBatch", "PrivateDuals", "PrivateShards", "QueryBudgetError",
           "round_cost"]


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
        What was charged; the queries run at most its mechanisms (a fixed
        plan) or what its privacy filter admits (an adaptive plan).
    rng : numpy.random.Generator
        The fit's own noise stream.
    start : ndarray or None
        Public starting point (drawn from ``rng`` by the estimator when it
        is random); None starts at zero.
    progress : FitProgress or None, default=None
        Told, before each query, the share of the plan run so far (queries
        run over the plan's count, or the privacy filter's share used):
        public and released quantities only. None prints nothing.
    """

    def __init__(self, loss, plan, rng, start=None, progress=None):
        self._loss = loss
        self._spec = plan.spec
        self._rng = rng
        self._start = start
        self._ran = []
        self._progress = progress
        if getattr(plan, "adaptive", False):
            self._filter = PrivacyFilter(plan.spec.epsilon, plan.spec.delta,
                                         getattr(plan.mechanism, "order", None))
            if self._filter.mechanism != plan.mechanism:
                raise ValueError(  # pragma: no cover - a solver's plan is inconsistent
                    f"An adaptive plan must charge its filter's mechanism "
                    f"{self._filter.mechanism!r}, got {plan.mechanism!r}."
                )
            self._left = None
        else:
            self._filter = None
            self._left = _leaves(plan.mechanism)
            self._planned = max(1, sum(self._left.values()))

    @property
    def n_samples(self):
        """Number of records (public)."""
        return self._spec.n_samples

    @property
    def privacy_filter(self):
        """The adaptive plan's :class:`~skdp.accounting.PrivacyFilter` (None for a fixed plan).

        Its state is a function of the queries run so far, i.e. of released
        outputs: a solver may read it to decide what to run next.
        """
        return self._filter

    @property
    def rng(self):
        """The fit's generator, for public draws a solver makes (e.g. perturbations).

        Draws from it are independent of the data; consuming it releases
        nothing about a record.
        """
        return self._rng

    def initial_coef(self):
        """The public starting point (a fresh copy).

        Returns
        -------
        ndarray of shape ``spec.coef_shape``
            The estimator's public random start when it drew one, else
            zeros. Reading it costs nothing.
        """
        if self._start is None:
            return np.zeros(self._spec.coef_shape)
        return np.array(self._start, dtype=np.float64)

    def batch_cost(self, mechanism, sampling_rate=None):
        """What running ``mechanism`` on one batch costs: sampled once, or as is.

        Parameters
        ----------
        mechanism : Mechanism
            Everything that would run on the batch, unsampled.
        sampling_rate : float or None, default=None
            Poisson sampling rate of the batch; None uses the spec's rate
            (``batch_size / n``), 1 is the whole data.

        Returns
        -------
        Mechanism
            ``PoissonSampled(rate, mechanism)`` for a rate below 1, else
            ``mechanism`` itself: what :meth:`batch` would charge.
        """
        rate = self._spec.sampling_rate if sampling_rate is None else float(sampling_rate)
        return mechanism if rate >= 1.0 else PoissonSampled(rate, mechanism)

    def affordable(self, mechanism, sampling_rate=None):
        """Whether one batch running ``mechanism`` still fits the plan (reads no data).

        Parameters
        ----------
        mechanism : Mechanism
            Everything that would run on the batch, unsampled.
        sampling_rate : float or None, default=None
            As for :meth:`batch_cost`.

        Returns
        -------
        bool
            For a fixed plan, whether the plan still holds an unused
            :meth:`batch_cost` of it; for an adaptive plan, whether the
            privacy filter admits it. A function of the queries run so far,
            so asking releases nothing.
        """
        cost = self.batch_cost(mechanism, sampling_rate)
        if self._filter is not None:
            return self._filter.admits(cost)
        return self._left[cost] > 0

    def _consume(self, mechanism):
        if self._progress is not None:
            self._progress.update(self._share_run())
        if self._filter is not None:
            try:
                self._filter.spend(mechanism)
            except BudgetError as exc:
                raise QueryBudgetError(
                    f"The solver asked for a query {mechanism!r} that its privacy filter "
                    f"does not admit ({exc}). The query was not run and nothing is "
                    "released: this is a bug in the solver, which must stop when "
                    "affordable() is False."
                ) from None
        elif self._left[mechanism] <= 0:
            raise QueryBudgetError(
                f"The solver asked for a query {mechanism!r} that its plan does not provide "
                f"for (it has already run {len(self._ran)} queries; the plan is what was "
                "charged). The query was not run and nothing is released: this is a bug in "
                "the solver's plan or solve."
            )
        else:
            self._left[mechanism] -= 1
        self._ran.append(mechanism)

    def _share_run(self):
        """The share of the plan run so far (queries counted, or the filter's budget used)."""
        if self._filter is not None:
            budget = self._filter.budget
            return self._filter.spent / budget if budget > 0 else 0.0
        return len(self._ran) / self._planned

    def batch(self, mechanism, sampling_rate=None):
        """Draw one batch on which ``mechanism`` will run, and charge it once.

        Parameters
        ----------
        mechanism : Mechanism
            Everything that will run on the batch (e.g. ``Composed([Gaussian(z),
            SparseVector(e, e)])``), unsampled; it is charged as
            ``PoissonSampled(rate, mechanism)`` (or as is for full batches).
        sampling_rate : float or None
            None uses the spec's rate (``batch_size / n``); 1 is the whole data.

        Returns
        -------
        PrivateBatch
            Runs the queries of ``mechanism`` on the batch, each at most once.
        """
        rate = self._spec.sampling_rate if sampling_rate is None else float(sampling_rate)
        self._consume(self.batch_cost(mechanism, rate))
        idx = None if rate >= 1.0 else self._loss.sample_rows(self._rng, rate)
        return PrivateBatch(self, idx, rate, mechanism)

    def noisy_gradient(self, W, noise_multiplier, *, sampling_rate=None):
        r"""Noisy mean of per-example gradients clipped to ``clip_norm``, on a fresh batch.

        .. math::

            \tilde g = \frac{1}{q n}\Big(\sum_{i \in B} \mathrm{clip}_C(\nabla\ell_i(W))
            + \xi\Big)

        with ``B`` the whole data set (``q = 1``) or a Poisson sample of
        rate ``q`` (the normaliser ``q n`` is public), and ``xi`` Gaussian
        (L2 clipping) or, with ``delta = 0``, Laplace noise (L1 clipping) of
        scale ``noise_multiplier * clip_norm``. The penalty is not included.
        The same as ``batch(spec.noise(z, 1.0)).noisy_gradient(W, z)``.

        Parameters
        ----------
        W : ndarray of shape ``spec.coef_shape``
            The point at which the gradients are taken (public: the start or
            a function of released outputs).
        noise_multiplier : float
            ``z``: the noise scale per unit of ``clip_norm``. The plan must
            provide for ``spec.noise(z)`` at this rate (else
            :class:`QueryBudgetError` is raised before the data is read).
        sampling_rate : float or None
            None uses the spec's rate (``batch_size / n``).

        Returns
        -------
        g : ndarray of shape ``spec.coef_shape``
            The noisy mean gradient :math:`\tilde g` of the loss (without
            the penalty).
        """
        base = self._spec.noise(noise_multiplier, 1.0)
        return self.batch(base, sampling_rate).noisy_gradient(W, noise_multiplier)

    def noisy_gram(self, noise_multiplier):
        r"""Noisy second moment of the rows, over ``n``: one Gaussian mechanism on the data.

        .. math::

            \tilde G = \frac{1}{n}\Big(\sum_i x_i x_i^\top + E\Big),

        ``x_i = [s_i x_i, c]`` the implicit rows (intercept last), of norm at
        most ``R = spec.row_bound``, so one example moves the sum by at most
        ``R**2`` in Frobenius norm. The vector of the diagonal entries and of
        ``sqrt 2`` times the entries above it has exactly the Frobenius norm,
        so the symmetric ``E`` with ``E_jj ~ N(0, (z R^2)^2)`` and ``E_jk =
        E_kj ~ N(0, (z R^2)^2 / 2)`` (j < k) is the Gaussian mechanism of
        multiplier ``z`` on it.

        Parameters
        ----------
        noise_multiplier : float
            ``z``; the plan must provide for ``Gaussian(z)`` on the whole data.

        Returns
        -------
        ndarray of shape (p, p)
            :math:`\tilde G`, ``p = spec.coef_shape[0]`` (features plus intercept).

        Raises
        ------
        ValueError
            Without a public row bound (``data_norm``) or with ``delta = 0``.
        """
        base, R2 = self._second_moment_noise("noisy_gram", noise_multiplier)
        G = release_symmetric(self._loss.gram_sum(), base, R2, self._rng, what="Gram matrix",
                              off_diagonal_scale=np.sqrt(2.0))
        G /= self._spec.n_samples
        return G

    def _second_moment_noise(self, name, noise_multiplier):
        """Check a second-moment query, consume its Gaussian; the Gaussian and ``R^2``."""
        spec = self._spec
        if spec.row_bound is None:
            raise ValueError(f"{name} needs a public bound on the row norms: set data_norm.")
        base = spec.noise(noise_multiplier, 1.0)
        if base.sensitivity_norm != 2:
            raise ValueError(f"{name} needs Gaussian noise (delta > 0).")
        self._consume(self.batch_cost(base, 1.0))
        return base, float(spec.row_bound) ** 2

    def noisy_gram_diagonal(self, noise_multiplier):
        r"""Noisy diagonal of the rows' second moment, over ``n``: one Gaussian mechanism.

        :math:`\tilde D_j = \frac{1}{n}\big(\sum_i x_{ij}^2 + E_j\big)`,
        ``E_j ~ N(0, (z R^2)^2)``: one example moves the vector of the
        :math:`x_{ij}^2` by at most :math:`\|x_i\|^2 \le R^2` in L2 norm.

        Parameters
        ----------
        noise_multiplier : float
            ``z``; the plan must provide for ``Gaussian(z)`` on the whole data.

        Returns
        -------
        ndarray of shape (p,)
            :math:`\tilde D`, ``p = spec.coef_shape[0]`` (features plus intercept).

        Raises
        ------
        ValueError
            Without a public row bound (``data_norm``) or with ``delta = 0``.
        """
        base, R2 = self._second_moment_noise("noisy_gram_diagonal", noise_multiplier)
        D = release(self._loss.gram_diagonal_sum(), base, R2, self._rng,
                    what="Gram diagonal")
        D /= self._spec.n_samples
        return D

    def duals(self, ascent_step, ascent_steps):
        """The per-record duals of the loss's minimax form, held here, never released.

        For a loss with the ``'minimax'`` capability (one dual per record,
        paper 000's form; see ``loss.dual_ascent``). The duals start at 0
        (the paper's ``y_0``); :meth:`PrivateDuals.ascend` runs the exact
        ascent steps on them, and the batch queries take the handle
        (``duals=``) to return noisy primal gradients at the current duals.
        Each dual is a function of its own record and the released
        iterates, so a record's clipped contribution to a query is still a
        function of that record alone: the queries' sensitivities, hence
        their mechanisms, are unchanged, and the ascent itself releases
        nothing and costs nothing.

        Parameters
        ----------
        ascent_step : float
            ``lambda`` in (0, 1].
        ascent_steps : int
            ``K >= 1`` steps per :meth:`PrivateDuals.ascend`.

        Returns
        -------
        PrivateDuals
            The handle to the duals, all 0 to start; it exposes no value.

        Raises
        ------
        ValueError
            If the loss has no per-record dual (minimax) form.
        """
        if "minimax" not in getattr(self._loss, "capabilities", ()):
            raise ValueError(
                f"{type(self._loss).__name__} has no per-record dual (minimax) form.")
        return PrivateDuals(self, float(ascent_step), int(ascent_steps))

    def shards(self, n_nodes, seed, local_batch_size=1.0):
        """Split the records evenly over ``n_nodes`` nodes, at random by a public seed.

        The split reads no data (n is public): record positions are permuted
        by ``numpy.random.default_rng(seed)`` and cut into ``n_nodes`` parts
        whose sizes differ by at most one.

        Parameters
        ----------
        n_nodes : int
            Number of nodes, ``1 <= n_nodes <= n_samples``.
        seed : int
            Public seed of the split.
        local_batch_size : float, default=1.0
            Expected number of records an active node samples per round
            (the paper's one record); see :meth:`PrivateShards.round`.

        Returns
        -------
        PrivateShards
            The split, whose :meth:`PrivateShards.round` runs the per-node
            queries; creating it reads no data and charges nothing.
        """
        return PrivateShards(self, n_nodes, seed, local_batch_size)

    @property
    def ran(self):
        """What the queries ran so far, as one mechanism tree (runs merged)."""
        return compose_runs(self._ran)


class PrivateDuals:
    """Per-record duals of one fit, built by :meth:`PrivateQueries.duals`.

    The values stay inside (there is no accessor); a solver moves them
    with :meth:`ascend` and passes the handle to
    :meth:`PrivateBatch.noisy_gradient` and
    :meth:`PrivateBatch.noisy_gradient_difference`, which use the current
    duals and, for a difference, the duals of the last query.

    Parameters
    ----------
    queries : PrivateQueries
        The fit's queries; the duals can be used only with them.
    ascent_step : float
        The dual step ``lambda``, in (0, 1].
    ascent_steps : int
        Number ``K >= 1`` of exact ascent steps per :meth:`ascend`.
    """

    def __init__(self, queries, ascent_step, ascent_steps):
        self._queries = queries
        self._step = ascent_step
        self._steps = ascent_steps
        self._current = np.zeros(queries.n_samples)
        self._queried = self._current

    def ascend(self, W):
        """Run ``K`` exact ascent steps on every dual at the public point ``W``.

        Each dual moves as a function of its own record and ``W`` only, and
        nothing is returned, so this releases nothing and costs nothing.

        Parameters
        ----------
        W : ndarray of shape ``spec.coef_shape``
            The current primal point (public: a function of released
            outputs).
        """
        self._current = self._queries._loss.dual_ascent(W, self._current, self._step,
                                                         self._steps)

    def _for(self, queries):
        if queries is not self._queries:
            raise ValueError("these duals belong to another fit's queries.")
        current, previous = self._current, self._queried
        self._queried = current
        return current, previous

    def __repr__(self):
        return f"PrivateDuals(ascent_step={self._step}, ascent_steps={self._steps})"


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


def round_cost(base, sampling_rate, activation_probability):
    """One shard round's per-record cost: ``base`` on a Poisson sample, behind a public coin.

    ``Activated(p, PoissonSampled(rate, base))``, without the wrappers that
    are no-ops (rate or probability 1). What :meth:`PrivateShards.round`
    charges, and what a solver plans with.
    """
    inner = base if sampling_rate >= 1.0 else PoissonSampled(float(sampling_rate), base)
    if activation_probability >= 1.0:
        return inner
    return Activated(float(activation_probability), inner)


class PrivateShards:
    """The records split over simulated nodes: noisy per-node gradients at active nodes.

    Built by :meth:`PrivateQueries.shards`. Node ``i`` holds ``sizes[i]``
    records (public); in every :meth:`round` an active node samples each of
    its records independently with probability ``local_batch_size /
    sizes[i]`` (a Poisson sample: one coin per record, or for many records
    a binomial count and a uniform subset of that size, which has the same
    law) and releases the sum of their clipped gradients plus noise, over
    ``local_batch_size``. The sample and the noise of a node's round come from
    the node's own stream, seeded by the fit's generator (secret), so the
    same draws are made whether the node is simulated in memory or runs on a
    Dask worker: a loss that offers ``node_shards(order, offsets)`` (the
    Dask back end) places each node's records on a worker, and only the
    nodes' noisy messages come back.

    Privacy of one round for one record (zero-out neighbours): only its own
    node's message depends on it, so the round is its node's Poisson-sampled
    noisy sum when the node is active and nothing otherwise. Activation is
    a public coin independent of the data (observers see who gossips): the
    round costs ``Activated(p, PoissonSampled(rate, noise))`` with ``p`` the
    largest chance that one node is active and ``rate`` the largest
    sampling rate over the nodes.

    Parameters
    ----------
    queries : PrivateQueries
        The fit's queries; every round is charged against their plan.
    n_nodes : int
        Number of nodes, ``1 <= n_nodes <= n_samples``.
    seed : int
        Public seed of the split of the records over the nodes.
    local_batch_size : float
        Expected number of records an active node samples per round, > 0.
    """

    def __init__(self, queries, n_nodes, seed, local_batch_size):
        n = queries.n_samples
        n_nodes = int(n_nodes)
        if not 1 <= n_nodes <= n:
            raise ValueError(f"shards: need 1 <= n_nodes <= n_samples = {n}, got {n_nodes}.")
        if not (local_batch_size > 0 and np.isfinite(local_batch_size)):
            raise ValueError(
                f"shards: local_batch_size must be a finite number > 0, got {local_batch_size!r}.")
        self._queries = queries
        self.n_nodes = n_nodes
        self.local_batch_size = float(local_batch_size)
        self._order = np.random.default_rng(seed).permutation(n)
        self.sizes = np.full(n_nodes, n // n_nodes, dtype=np.int64)
        self.sizes[: n % n_nodes] += 1
        self._offsets = np.concatenate([[0], np.cumsum(self.sizes)])
        self._rates = np.minimum(1.0, self.local_batch_size / self.sizes)
        # a loss whose rows live elsewhere (the Dask back end) builds each
        # node's shard where it can run the node's rounds
        nodes = getattr(queries._loss, "node_shards", None)
        self._remote = None if nodes is None else nodes(self._order, self._offsets)

    @property
    def sampling_rate(self):
        """The largest per-record sampling rate of one round (public)."""
        return float(self._rates.max())

    def _node_sums(self, active, node_coef, seeds, C, norm):
        """In memory: each active node's Poisson sample (from its seed), one grouped pass."""
        rngs = [np.random.default_rng(seed) for seed in seeds]
        # a loop over the round's active nodes (public, few), not over records
        samples = [poisson_positions(rng, size, rate) for rng, size, rate
                   in zip(rngs, self.sizes[active], self._rates[active])]
        counts = np.array([len(sample) for sample in samples], dtype=np.int64)
        slots = np.repeat(np.arange(len(active)), counts)
        positions = np.concatenate(samples) + np.repeat(self._offsets[active], counts)
        G = self._queries._loss.clipped_grad_sums(node_coef, self._order[positions], slots,
                                                  C, norm=norm)
        return G, rngs

    def round(self, activation, node_coef, noise_multiplier):
        """One round: draw the active nodes, their samples, and their noisy gradients.

        Parameters
        ----------
        activation : object
            Public activation scheme with ``probability`` (the largest chance
            that a node is active in a round) and ``draw(rng) -> (active,
            mixing)`` (the active nodes, sorted, and any public quantities the
            solver needs, e.g. gossip weights). The draw is made here, once
            per charged round.
        node_coef : ndarray of shape ``(n_nodes,) + spec.coef_shape``
            Every node's current parameters (public: functions of released
            messages); the active nodes' gradients are taken at theirs.
        noise_multiplier : float
            Gaussian (``delta > 0``) or Laplace (``delta = 0``) multiplier.

        Returns
        -------
        active : ndarray of int
            The nodes active this round, sorted (public).
        mixing : object
            What ``activation.draw`` returned beside the active nodes.
        gradients : ndarray of shape ``(len(active),) + spec.coef_shape``
            ``(sum of the sample's clipped gradients + noise) / local_batch_size``.
        """
        q = self._queries
        spec = q._spec
        base = spec.noise(noise_multiplier, 1.0)
        q._consume(round_cost(base, self.sampling_rate, activation.probability))
        active, mixing = activation.draw(q._rng)
        # each active node's own stream (secret, like the fit's generator): its
        # Poisson sample, then its noise; the same draws wherever the node runs
        seeds = q._rng.integers(0, 2 ** 63, size=len(active))
        coefs = np.asarray(node_coef, dtype=np.float64)[active]
        C, rates = spec.clip_norm, self._rates[active]
        # a secure fit's nodes draw secure noise wherever they run (their own
        # streams are plain generators): the door sees the discrete mechanism
        if isinstance(q._rng, SecureGenerator):
            base = discretize(base)
        if self._remote is not None:  # the nodes run where their shards live
            G = self._remote.messages(active, coefs, seeds, rates, C, base)
        else:
            G, rngs = self._node_sums(active, coefs, seeds, C, base.sensitivity_norm)
            # a loop over the round's active nodes (public, few): each node's own noise
            for k, rng in enumerate(rngs):
                G[k] = release(G[k], base, C, rng, what="node message")
        return active, mixing, G / self.local_batch_size

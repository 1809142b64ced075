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

import numpy as np

from ..accounting import (
    Activated,
    BudgetError,
    PoissonSampled,
    PrivacyFilter,
    compose_runs,
    discretize,
)
from ..accounting.release import (
    SecureGenerator,
    poisson_positions,
    release,
    release_symmetric,
)
from ._batch_queries import PrivateBatch
from ._query_budget import QueryBudgetError, _leaves

__all__ = ["PrivateQueries", "PrivateBatch", "PrivateDuals", "PrivateShards", "QueryBudgetError",
           "round_cost"]


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

    def one_blas_thread(self):
        """A context in which BLAS and LAPACK calls run on one thread.

        For post-processing of released values whose rounding follows the
        BLAS's thread count (an eigendecomposition, a matrix-matrix product):
        inside it, the fit's output is bitwise the same whatever the user's
        thread limit, as the passes over the data are.

        Returns
        -------
        context manager
            Use as ``with queries.one_blas_thread(): ...``; nestable.
        """
        return self._loss.one_blas_thread()

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
        self._mechanisms = {}  # (multiplier, activation probability) -> node noise, round cost
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
        starts, sizes = self._offsets[active].tolist(), self.sizes[active].tolist()
        samples = [poisson_positions(rng, size, rate) for rng, size, rate
                   in zip(rngs, sizes, self._rates[active].tolist())]
        slots = np.repeat(np.arange(len(samples)), [len(sample) for sample in samples])
        rows = np.concatenate([self._order[start:start + size][sample]
                               for start, size, sample in zip(starts, sizes, samples)])
        G = self._queries._loss.clipped_grad_sums(node_coef, rows, slots, C, norm=norm)
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
        key = (float(noise_multiplier), float(activation.probability))
        if key not in self._mechanisms:  # the same few public objects every round
            base = q._spec.noise(noise_multiplier, 1.0)
            cost = round_cost(base, self.sampling_rate, key[1])
            # a secure fit's nodes draw secure noise wherever they run (their own
            # streams are plain generators): the door sees the discrete mechanism
            if isinstance(q._rng, SecureGenerator):
                base = discretize(base)
            self._mechanisms[key] = base, cost
        base, cost = self._mechanisms[key]
        q._consume(cost)
        active, mixing = activation.draw(q._rng)
        # each active node's own stream (secret, like the fit's generator): its
        # Poisson sample, then its noise; the same draws wherever the node runs
        seeds = q._rng.integers(0, 2 ** 63, size=len(active))
        coefs = np.asarray(node_coef, dtype=np.float64)[active]
        C = q._spec.clip_norm
        if self._remote is not None:  # the nodes run where their shards live
            G = self._remote.messages(active, coefs, seeds, self._rates[active], C, base)
        else:
            G, rngs = self._node_sums(active, coefs, seeds, C, base.sensitivity_norm)
            # a loop over the round's active nodes (public, few): each node's own noise
            for k, rng in enumerate(rngs):
                G[k] = release(G[k], base, C, rng, what="node message")
        return active, mixing, G / self.local_batch_size

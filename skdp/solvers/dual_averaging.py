r"""Private distributed dual averaging over simulated nodes (paper 003, DP-DDA).

The records are split evenly over ``n_nodes`` nodes. At step t a random
set of nodes is active; each active node i takes a noisy clipped gradient
on a Poisson sample of its records (one record in expectation, as in the
paper), and the active nodes gossip (Algorithm 1, eqs. 5-6):

.. math::

    z_i(t+1) = \sum_j w_{ij}(t)\,\big(z_j(t) + a_t\,\zeta_j(t)\big), \qquad
    x_i(t+1) = \arg\min_x\ \langle z_i(t+1), x\rangle + \iota A_{t+1}\, h(x)
               + \tfrac{1}{2}\textstyle\sum_k \gamma_{t+1,k}\, x_k^2,

with :math:`\zeta_j` the noisy gradient, :math:`W(t)` doubly stochastic on
the active nodes (Metropolis weights on the round's links, or a given
mixing matrix) and the identity elsewhere, :math:`A_t = \sum_{\tau \le t}
a_\tau`, :math:`\iota` the mean activation probability and :math:`h` the
penalty, taken by its proximal operator (closed form for L2, L1 and the
elastic net). The output is the weighted average of the iterates,
:math:`\tilde x_i = A_T^{-1}\sum_t a_t x_i(t)`, averaged over the nodes
(the paper's metric), accumulated lazily: an idle node costs nothing.

Schedules (paper 003, Corollaries 3.2 and 3.4): strongly convex penalty
(L2, or an elastic net with a ridge part): :math:`a_t = t`, constant
:math:`\gamma`; otherwise :math:`a_t = 1`, :math:`\gamma_t = \gamma\sqrt
t`. Coordinates the penalty leaves alone (the intercept) are not strongly
convex, so under the strongly convex schedule they take
:math:`\gamma_t = \gamma_c \sqrt{\sum_{\tau \le t} a_\tau^2}` (the convex
schedule's :math:`\gamma\sqrt t` for weights :math:`a_t`; :math:`\gamma_c`
= 0.1 ``clip_norm``), without which their steps grow like t and diverge.

Privacy (record level, zero-out neighbours: one record replaced by a null
record that contributes nothing, n public). In one
round a record's data reaches only its own node's message, and only when
that node is active. Which nodes are active is a public coin, independent
of the data and visible to every observer (an idle node's state does not
change), so a round costs the record ``Activated(p, PoissonSampled(r,
Gaussian(z)))``: with the largest activation probability ``p`` over the
nodes, its node runs a Poisson-sampled Gaussian at the largest sampling
rate ``r = local_batch_size / (records of the smallest node)``. The T
rounds compose to ``Repeated(that, T)``, accounted by privacy loss
distributions (exact up to discretisation) and calibrated by the
accountant for the target (epsilon, delta). This protects the whole
transcript of messages (the paper's Definition 1), hence the model.

The paper's Theorem 1 claims amplification at rate :math:`\iota / q`, as
if the activation were hidden, and sets the noise by advanced
composition with a delta near 1: it is offered only
as ``calibration='paper'``, which warns, charges what the accountant
computes for that noise and refuses to run when that exceeds the target.

References
----------
.. [1] C. Liu, K. H. Johansson and Y. Shi, "Distributed Empirical Risk
   Minimization With Differential Privacy", arXiv:2302.10520 (paper 003).
.. [2] L. Xiao, S. Boyd and S.-J. Kim, "Distributed average consensus with
   least-mean-square deviation", J. Parallel Distrib. Comput. 2007
   (Metropolis weights).
"""

import math
import warnings
from numbers import Integral, Real

import numpy as np

from ..accounting import Repeated, calibrate, get_epsilon, noise_mechanism
from ..accounting.discrete import calibration_cache
from ..validation import (
    POSITIVE,
    POSITIVE_INT,
    UNIT_INTERVAL_OPEN,
    InstanceOf,
    Interval,
    StrOptions,
)
from ._base import Plan, Solver, SolverResult
from ._queries import round_cost
from ._registry import register_solver

__all__ = ["DualAveraging", "EdgeGossip", "NodeGossip", "paper_noise_multiplier"]

#: gamma per unit of clip_norm: the paper's 20 (constant) for L2; 0.003 sqrt(t)
#: otherwise (the paper's 0.01 was less accurate on Adult: docs/solvers/dual_averaging.md)
DEFAULT_GAMMA = {"strongly_convex": 20.0, "convex": 0.003}
#: expected records per active node and round (the paper's is 1): more records
#: per round means fewer rounds for the same epochs, and per-record noise that is
#: smaller against the signal (docs/solvers/dual_averaging.md, "Sampling")
DEFAULT_LOCAL_BATCH = 30.0
#: gamma_c of the unpenalised coordinates (the intercept) under the strongly
#: convex schedule, per unit of clip_norm: a small gamma_c lets the intercept take
#: the noise of huge steps (docs/solvers/dual_averaging.md, "Schedules")
INTERCEPT_GAMMA = 0.1


def _check_graph(graph, n_nodes):
    """Validated adjacency matrix (bool, symmetric, connected, no self-loops)."""
    if isinstance(graph, str):
        A = ~np.eye(n_nodes, dtype=bool)
        return A
    A = np.asarray(graph)
    if A.shape != (n_nodes, n_nodes):
        raise ValueError(
            f"dual_averaging: graph must be 'complete' or an (n_nodes, n_nodes) = "
            f"({n_nodes}, {n_nodes}) adjacency matrix, got shape {A.shape}.")
    if not (np.all((A == 0) | (A == 1)) and np.array_equal(A, A.T)
            and not np.any(np.diag(A))):
        raise ValueError(
            "dual_averaging: graph must be a symmetric 0/1 adjacency matrix with a zero "
            "diagonal (an edge between nodes i and j is A[i, j] = A[j, i] = 1).")
    A = A.astype(bool)
    reached = np.zeros(n_nodes, dtype=bool)
    reached[0] = True
    for _ in range(n_nodes):  # a loop over nodes (public), not over data
        grown = reached | A[reached].any(axis=0)
        if np.array_equal(grown, reached):
            break
        reached = grown
    if n_nodes > 1 and not reached.all():
        raise ValueError("dual_averaging: graph must be connected (gossip cannot reach "
                         "every node otherwise).")
    return A


def _check_weights(weights, adjacency):
    """None for Metropolis weights, else a validated symmetric doubly stochastic matrix."""
    if isinstance(weights, str):
        return None
    M = np.asarray(weights, dtype=np.float64)
    n = adjacency.shape[0]
    off = M * ~np.eye(n, dtype=bool)
    if (M.shape != (n, n) or not np.all(np.isfinite(M)) or np.any(M < 0)
            or not np.allclose(M, M.T) or not np.allclose(M.sum(axis=1), 1.0)
            or np.any(off[~adjacency] != 0)):
        raise ValueError(
            "dual_averaging: weights must be 'metropolis' or an (n_nodes, n_nodes) symmetric, "
            "non-negative matrix whose rows sum to 1 and whose off-diagonal entries are 0 "
            "where the graph has no edge.")
    return M


_ONE_LINK = np.array([[0, 1]])
_HALVES = np.full((2, 2), 0.5)
_HALVES.setflags(write=False)


class _Gossip:
    """Public activation and mixing of one round; ``draw(rng) -> (active, W)``."""

    def __init__(self, adjacency, weights):
        self.adjacency = adjacency
        self.weights = weights
        self.n_nodes = adjacency.shape[0]

    def _mixing(self, active, links):
        """Doubly stochastic weights on the active nodes for the round's links (pairs of slots)."""
        k = len(active)
        W = np.zeros((k, k))
        if len(links):
            i, j = links[:, 0], links[:, 1]
            if self.weights is None:  # Metropolis on the round's link graph
                degree = np.bincount(links.ravel(), minlength=k)
                w = 1.0 / (1.0 + np.maximum(degree[i], degree[j]))
            else:
                w = self.weights[active[i], active[j]]
            W[i, j] = w
            W[j, i] = w
        W[np.diag_indices(k)] = 1.0 - W.sum(axis=1)
        return W


class EdgeGossip(_Gossip):
    """Each round samples ``n_edges`` edges of the graph; their end points are active.

    The paper's experiments (section 5: one or two edges of the complete
    graph per round, Metropolis weights). A node of degree :math:`d` is
    active with probability :math:`1 - \\binom{E - d}{m} / \\binom{E}{m}`
    (``E`` edges, ``m`` sampled).

    Parameters
    ----------
    adjacency : ndarray of bool of shape (n_nodes, n_nodes)
    n_edges : int
    weights : ndarray or None
        Mixing matrix, or None for Metropolis weights.
    """

    def __init__(self, adjacency, n_edges, weights=None):
        super().__init__(adjacency, weights)
        self.edges = np.argwhere(np.triu(adjacency))
        E = len(self.edges)
        if not 1 <= n_edges <= E:
            raise ValueError(f"dual_averaging: the graph has {E} edges; cannot sample "
                             f"{n_edges} per round.")
        self.n_edges = int(n_edges)
        degree = adjacency.sum(axis=1)
        idle = np.ones(self.n_nodes)
        for j in range(self.n_edges):  # P(no sampled edge touches the node)
            idle *= np.maximum(E - degree - j, 0) / (E - j)
        self.node_probabilities = 1.0 - idle
        self.probability = float(self.node_probabilities.max())
        self.mean_probability = float(self.node_probabilities.mean())

    def draw(self, rng):
        if self.n_edges == 1:  # the paper's pairwise averaging: no search needed
            active = self.edges[rng.integers(len(self.edges))]
            if self.weights is None:  # Metropolis on one link: always half and half
                return active, _HALVES
            return active, self._mixing(active, _ONE_LINK)
        chosen = self.edges[rng.choice(len(self.edges), self.n_edges, replace=False)]
        active, links = np.unique(chosen, return_inverse=True)
        return active, self._mixing(active, links.reshape(chosen.shape))


class NodeGossip(_Gossip):
    """Each round ``k`` nodes, uniformly at random, are active (the paper's Definition 2).

    They mix over the graph's edges among them (the subgraph the active
    nodes induce), with Metropolis weights or the given mixing matrix; each
    node is active with probability ``k / n_nodes``.

    Parameters
    ----------
    adjacency : ndarray of bool of shape (n_nodes, n_nodes)
    k : int
    weights : ndarray or None
    """

    def __init__(self, adjacency, k, weights=None):
        super().__init__(adjacency, weights)
        if not 1 <= k <= self.n_nodes:
            raise ValueError(f"dual_averaging: cannot activate {k} of {self.n_nodes} nodes.")
        self.k = int(k)
        self.node_probabilities = np.full(self.n_nodes, self.k / self.n_nodes)

    @property
    def probability(self):
        return self.k / self.n_nodes

    mean_probability = probability

    def draw(self, rng):
        if self.k == self.n_nodes:
            active = np.arange(self.n_nodes)
        else:
            active = np.sort(rng.choice(self.n_nodes, self.k, replace=False))
        sub = np.triu(self.adjacency[np.ix_(active, active)])
        return active, self._mixing(active, np.argwhere(sub))


def paper_noise_multiplier(n_steps, activation, records_per_node, epsilon, delta0):
    r"""Theorem 1's noise, per unit of the gradient bound: :math:`\sigma / L`.

    .. math::

        \sigma^2 = \frac{32\,\iota^2 L^2\, T \log(2/\delta_0)}{q^2 \varepsilon^2}

    Valid (by skdp's accountant) only in the theorem's regime :math:`T \ge 5
    q^2 \varepsilon^2 / (4 \iota^2)`, i.e. :math:`\sigma \ge L\sqrt{40
    \log(2/\delta_0)}`; the paper's stated delta is near 1 elsewhere.
    """
    return math.sqrt(32.0 * activation ** 2 * n_steps * math.log(2.0 / delta0)) / (
        records_per_node * epsilon)


def _rounds(key, n_steps, z):
    """``n_steps`` rounds at noise multiplier z; ``key = (probability, rate, delta)``."""
    probability, rate, delta = key
    return Repeated(round_cost(noise_mechanism(delta)(z), rate, probability), n_steps)


@calibration_cache(maxsize=128)
def _calibrated(key, n_steps, epsilon, delta):
    return calibrate(lambda z: _rounds(key, n_steps, z), epsilon, delta)


class DualAveraging(Solver):
    """Private distributed dual averaging (DP-DDA, paper 003) over simulated nodes.

    Options (``solver_params``)
    ---------------------------
    n_nodes : int, default=20
        Number of nodes; the records are split evenly over them at random
        by ``split_seed``. With fewer records than nodes each node holds
        one record (only with ``graph='complete'``).
    activation : float in (0, 1], default=0.1
        The paper's :math:`\\iota`, the expected fraction of active nodes:
        ``gossip='edges'`` samples ``max(1, round(activation * n_nodes /
        2))`` edges per round (0.1 and 0.2 on 20 nodes: the paper's one and
        two edges); ``gossip='nodes'`` activates ``max(1, round(activation
        * n_nodes))`` nodes. 1 activates every node (with ``'nodes'``): the
        paper's baseline without subsampling.
    gossip : {'edges', 'nodes'}, default='edges'
        How a round's active nodes and links are drawn (:class:`EdgeGossip`,
        :class:`NodeGossip`).
    graph : 'complete' or array of shape (n_nodes, n_nodes), default='complete'
        The nodes' communication graph (symmetric 0/1 adjacency, connected).
    weights : 'metropolis' or array of shape (n_nodes, n_nodes), default='metropolis'
        Mixing weights on a round's links: Metropolis weights of the links'
        graph, or a symmetric doubly stochastic matrix supported on the
        graph (restricted to the round's links, the rest on the diagonal).
    local_batch_size : float, default=30.0
        Expected records an active node samples per round (Poisson); 1 is
        the paper's one record. More records per round means fewer, less
        noisy rounds for the same epochs (``docs/solvers/dual_averaging.md``).
    n_epochs : float, default=3.0
        Rounds when ``max_iter`` is None: enough for every record to be
        sampled ``n_epochs`` times in expectation (the paper's 3 epochs).
    schedule : {'auto', 'strongly_convex', 'convex'}, default='auto'
        'auto' is 'strongly_convex' when the penalty is.
    learning_rate : 'auto' or float, default='auto'
        ``1 / gamma``, the inverse of the prox weight's scale :math:`\\gamma`
        (the steps scale as :math:`1 / \\gamma`). 'auto' is
        :math:`\\gamma` = 20 (strongly convex, the paper's) or 0.003
        (convex, times :math:`\\sqrt t`; the paper's 0.01 was worse on
        Adult: ``docs/solvers/dual_averaging.md``), times ``clip_norm``.
        Formerly ``gamma``.
    calibration : {'accountant', 'paper'}, default='accountant'
        Noise from skdp's accountant for the target (epsilon, delta), or
        from the paper's Theorem 1 (reproduction only: warns; refused when
        the accountant finds it above the target).
    paper_delta0 : float in (0, 1), default=0.01
        Theorem 1's :math:`\\delta_0` (``calibration='paper'`` only).
    split_seed : int, default=0
        Public seed of the split of the records over the nodes.
    output : {'auto', 'average', 'dual'}, default='auto'
        'average': the paper's output, the node mean of the weighted
        averages of the iterates. 'dual': the primal point of the node mean
        of the final duals (eq. 8's :math:`y(T + 1)`, as regularised dual
        averaging releases it), which keeps the exact zeros an L1 penalty
        makes (an average of iterates with different supports has none).
        'auto' is 'dual' for penalties that are not smooth, else 'average'.
        Both are post-processing of the messages: free.
    backend : {'auto', 'memory', 'dask'}, default='auto'
        Where the nodes run. 'memory': simulated in the driver's process
        (numpy or scipy input). 'dask': each node's shard is a partition of
        the dask input built on a worker, where the node samples its records
        and adds its own noise; the driver draws the public randomness (the
        round's active nodes and links) and a secret noise seed per active
        node, and only the nodes' noisy messages reach it. 'auto' follows
        the input. The same ``random_state`` gives the same model on both
        (up to floating-point summation order).
    """

    name = "dual_averaging"
    paper = "Liu, Johansson, Shi 2023 (arXiv:2302.10520)"
    requires = frozenset({"gradient", "convex", "grouped_gradient", "penalty:prox",
                          "penalty:convex"})
    options = {
        "n_nodes": 20, "activation": 0.1, "gossip": "edges", "graph": "complete",
        "weights": "metropolis", "local_batch_size": DEFAULT_LOCAL_BATCH, "n_epochs": 3.0,
        "schedule": "auto", "learning_rate": "auto", "calibration": "accountant",
        "paper_delta0": 0.01, "split_seed": 0, "output": "auto", "backend": "auto",
    }
    option_constraints = {
        "n_nodes": [POSITIVE_INT],
        "activation": [Interval(Real, 0, 1, closed="right")],
        "gossip": [StrOptions({"edges", "nodes"})],
        "graph": [StrOptions({"complete"}), InstanceOf(np.ndarray, list, name="an array")],
        "weights": [StrOptions({"metropolis"}), InstanceOf(np.ndarray, list, name="an array")],
        "local_batch_size": [POSITIVE],
        "n_epochs": [POSITIVE],
        "schedule": [StrOptions({"auto", "strongly_convex", "convex"})],
        "learning_rate": [StrOptions({"auto"}), POSITIVE],
        "calibration": [StrOptions({"accountant", "paper"})],
        "paper_delta0": [UNIT_INTERVAL_OPEN],
        "split_seed": [Interval(Integral, 0, None, closed="left")],
        "output": [StrOptions({"auto", "average", "dual"})],
        "backend": [StrOptions({"auto", "memory", "dask"})],
    }
    renamed_options = {"gamma": ("learning_rate", "its inverse: learning_rate = 1 / gamma")}

    def poor_on_few_rows(self, loss_capabilities):
        """True: the rows are split over nodes that each add their own noise.

        On a few hundred rows (15 per node of 20) it is the majority class
        or little more (``docs/solvers/dual_averaging.md``, "When to use it").

        Parameters
        ----------
        loss_capabilities : frozenset of str

        Returns
        -------
        bool
        """
        return True

    def check_backend(self, spec, backend):
        """Refuse a ``backend`` option that the input cannot run on (before the charge)."""
        wanted = spec.options["backend"]
        if wanted == "dask" and backend != "dask":
            raise ValueError(
                "dual_averaging: backend='dask' runs the nodes on a Dask cluster and needs "
                "dask input: pass X and y as dask arrays (e.g. dask.array.from_array(X, "
                "chunks=...)), or use backend='auto' to simulate the nodes in memory.")
        if wanted == "memory" and backend != "memory":
            raise ValueError(
                "dual_averaging: backend='memory' simulates the nodes in the driver's "
                "memory, but X is a dask collection (gathering it is refused); use "
                "backend='auto' or 'dask' to run the nodes where the blocks live.")

    def _gossip(self, spec):
        opts = spec.options
        n_nodes = int(opts["n_nodes"])
        if n_nodes > spec.n_samples:
            if not isinstance(opts["graph"], str) or not isinstance(opts["weights"], str):
                raise ValueError(
                    f"dual_averaging: n_nodes={n_nodes} nodes need at least as many records, "
                    f"got n_samples = {spec.n_samples}; lower n_nodes.")
            n_nodes = spec.n_samples
        adjacency = _check_graph(opts["graph"], n_nodes)
        weights = _check_weights(opts["weights"], adjacency)
        if n_nodes == 1:
            return NodeGossip(adjacency, 1, weights)
        if opts["gossip"] == "edges":
            return EdgeGossip(adjacency, max(1, round(opts["activation"] * n_nodes / 2)),
                              weights)
        return NodeGossip(adjacency, max(1, round(opts["activation"] * n_nodes)), weights)

    def plan(self, spec):
        """The gossip scheme, the number of rounds and the calibrated noise (public)."""
        opts = spec.options
        gossip = self._gossip(spec)
        n_nodes = gossip.n_nodes
        smallest = spec.n_samples // n_nodes
        batch = float(opts["local_batch_size"])
        rate = min(1.0, batch / smallest)
        expected_records = gossip.mean_probability * n_nodes * min(batch, smallest)
        T = (int(spec.max_iter) if spec.max_iter is not None
             else max(1, math.ceil(opts["n_epochs"] * spec.n_samples / expected_records)))
        key = (gossip.probability, rate, float(spec.delta))
        if opts["calibration"] == "paper":
            if batch != 1.0:
                raise ValueError(
                    "dual_averaging: calibration='paper' reproduces Theorem 1, whose nodes "
                    f"take one record per round; pass local_batch_size=1 (got {batch:g}).")
            z = paper_noise_multiplier(T, gossip.mean_probability, smallest, spec.epsilon,
                                       opts["paper_delta0"])
            spent = get_epsilon(_rounds(key, T, z), spec.delta)
            if not spent <= spec.epsilon:
                T_min = math.ceil(5 * smallest ** 2 * spec.epsilon ** 2
                                  / (4 * gossip.mean_probability ** 2))
                raise ValueError(
                    f"dual_averaging: Theorem 1's noise (multiplier {z:.4g}) gives epsilon "
                    f"{spent:.4g} at delta {spec.delta:g} by skdp's accountant, above the "
                    f"target {spec.epsilon:g} (the theorem's delta is near 1 outside its "
                    f"regime T >= {T_min}). Use calibration='accountant'.")
            warnings.warn(
                f"dual_averaging: calibration='paper' uses Theorem 1's noise (multiplier "
                f"{z:.4g}) for reproduction; its stated guarantee does not hold as written "
                f"(its delta is near 1 outside the theorem's regime). The fit is charged epsilon {spec.epsilon:g} at delta "
                f"{spec.delta:g}, which skdp's accountant confirms ({spent:.4g}).",
                UserWarning, stacklevel=2)
        else:
            z = _calibrated(key, T, float(spec.epsilon), float(spec.delta))
        schedule = opts["schedule"]
        if schedule == "auto":
            schedule = ("strongly_convex" if "strongly_convex" in spec.penalty.capabilities
                        else "convex")
        # the step scales as 1 / gamma: learning_rate is gamma's inverse
        rate = opts["learning_rate"]
        gamma = DEFAULT_GAMMA[schedule] * spec.clip_norm if rate == "auto" else 1.0 / rate
        return Plan(spec=spec, mechanism=_rounds(key, T, z), n_iter=T,
                    noise_multiplier=z,
                    details={"gossip": gossip, "schedule": schedule, "gamma": float(gamma),
                             "gamma_intercept": INTERCEPT_GAMMA * spec.clip_norm})

    def solve(self, queries, plan):
        """Run the planned rounds; release the node average of the weighted iterate averages."""
        spec, d = plan.spec, plan.details
        gossip, T = d["gossip"], plan.n_iter
        shards = queries.shards(gossip.n_nodes, spec.options["split_seed"],
                                spec.options["local_batch_size"])
        shape = spec.coef_shape
        n_nodes, P = gossip.n_nodes, spec.n_params
        strongly = d["schedule"] == "strongly_convex"
        penalised = (np.ones(shape, dtype=bool) if spec.penalty.mask is None
                     else np.broadcast_to(spec.penalty.mask, shape))
        iota = gossip.mean_probability
        X = np.zeros((n_nodes, P))       # x_i(t), flattened
        Z = np.zeros((n_nodes, P))       # z_i(t)
        S = np.zeros((n_nodes, P))       # sum_{tau <= last_i} a_tau x_i(tau)
        last = np.zeros(n_nodes)         # A at each node's last accumulation
        A, sq = 0.0, 0.0                 # A_t and sum of a_tau^2
        node_coef = X.reshape((n_nodes,) + shape)  # a view: X's rows as coefficients
        if strongly:  # gamma per coordinate; only the unpenalised ones change
            gamma = np.where(penalised, d["gamma"], 0.0).ravel()
            free, gamma_free = np.flatnonzero(~penalised.ravel()), d["gamma_intercept"]
        # the rounds' tiny products run on one BLAS thread anyway (their rounding
        # must not follow the thread count): held once, not set twice per round
        prox, z = spec.penalty.prox, plan.noise_multiplier
        with queries.one_blas_thread():
            for t in range(1, T + 1):
                a = float(t) if strongly else 1.0
                A_t = A + a
                active, W, G = shards.round(gossip, node_coef, z)
                k = len(active)
                S[active] += X[active] * (A_t - last[active])[:, None]
                last[active] = A_t
                Z_active = W @ (Z[active] + a * G.reshape(k, P))
                Z[active] = Z_active
                a_next = float(t + 1) if strongly else 1.0
                A_next, sq = A_t + a_next, sq + a * a
                sq_next = sq + a_next * a_next
                if strongly:
                    gamma[free] = gamma_free * math.sqrt(sq_next)
                    step = (iota * A_next / gamma).reshape(shape)
                else:  # one gamma for every coordinate
                    gamma = d["gamma"] * math.sqrt(t + 1)
                    step = iota * A_next / gamma
                V = (-Z_active / gamma).reshape((k,) + shape)
                X[active] = prox(V, step).reshape(k, P)
                A = A_t
        output = spec.options["output"]
        if output == "auto":
            output = "average" if "smooth" in spec.penalty.capabilities else "dual"
        if output == "dual":
            V = (-Z.mean(axis=0) / gamma).reshape(shape)
            coef = spec.penalty.prox(V, step)
        else:
            S += X * (A - last)[:, None]
            coef = (S.mean(axis=0) / A).reshape(shape)
        return SolverResult(coef=coef, n_iter=T)


register_solver(DualAveraging())

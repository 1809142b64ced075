"""Solver ``dual_averaging`` (paper 003) and the ``Activated`` mechanism it is charged with."""

import importlib
import math
import types
import warnings

import numpy as np
import pytest
from scipy import stats

import skdp
from skdp.accounting import (
    Activated,
    Composed,
    Gaussian,
    Laplace,
    PoissonSampled,
    Repeated,
    get_delta,
    get_epsilon,
    get_rdp,
    mechanism_from_dict,
)
from skdp.accounting.release import poisson_positions
from skdp.solvers import PrivateQueries, get_solver
from skdp.solvers.dual_averaging import EdgeGossip, NodeGossip, paper_noise_multiplier

#: the door module (``skdp.accounting.release`` as an attribute is the function)
release_module = importlib.import_module("skdp.accounting.release")

# -- the Activated mechanism --------------------------------------------------------


def test_activated_rdp_is_the_public_coin_mixture():
    inner = PoissonSampled(0.02, Gaussian(1.3))
    orders = np.array([1.5, 2.0, 8.0, 64.0])
    r_inner = get_rdp(inner, orders)
    expected = np.logaddexp(np.log(0.8), np.log(0.2) + (orders - 1) * r_inner) / (orders - 1)
    assert np.allclose(get_rdp(Activated(0.2, inner), orders), expected, rtol=1e-12)
    assert np.array_equal(get_rdp(Activated(1.0, inner), orders), r_inner)
    # pure DP: the worst branch, exactly
    assert get_epsilon(Repeated(Activated(0.3, Laplace(2.0)), 4), 0.0) == pytest.approx(2.0)


def test_activated_validation_and_ledger_form():
    m = Activated(0.25, PoissonSampled(0.1, Gaussian(2.0)))
    assert mechanism_from_dict(m.to_dict()) == m
    for bad in (0.0, 1.5, float("nan"), True):
        with pytest.raises(ValueError, match="Activated"):
            Activated(bad, Gaussian(1.0))


def test_activated_epsilon_matches_the_binomial_mixture():
    # independent computation of the same sampling: over T rounds the node is
    # active K ~ Binomial(T, p) times, and given K the record's loss is that
    # of K Poisson-sampled Gaussians, so delta(eps) = E_K[delta_K(eps)]
    T, p, rate, z = 150, 0.2, 0.05, 0.9
    eps = get_epsilon(Repeated(Activated(p, PoissonSampled(rate, Gaussian(z))), T), 1e-5)
    ks = np.arange(T + 1)
    weights = stats.binom.pmf(ks, T, p)
    keep = weights > 1e-13
    mixture = sum(w * get_delta(Repeated(PoissonSampled(rate, Gaussian(z)), int(k)), eps)
                  for k, w in zip(ks[keep], weights[keep])) + weights[~keep].sum()
    assert mixture <= 1e-5 * 1.01
    assert mixture >= 0.7e-5          # and the accountant is not loose
    # activation is visible, so it amplifies far less than Poisson sampling at p * rate
    hidden = get_epsilon(Repeated(PoissonSampled(p * rate, Gaussian(z)), T), 1e-5)
    assert hidden < 0.6 * eps


# -- the sampling the code performs is the sampling that is charged -----------------

@pytest.mark.parametrize("gossip", [
    EdgeGossip(~np.eye(20, dtype=bool), 1),
    EdgeGossip(~np.eye(20, dtype=bool), 2),
    NodeGossip(~np.eye(20, dtype=bool), 4),
    EdgeGossip(np.eye(6, k=1, dtype=bool) | np.eye(6, k=-1, dtype=bool), 2),  # a path
])
def test_activation_frequencies_match_the_stated_probabilities(gossip):
    rng = np.random.default_rng(0)
    n_draws = 20000
    counts = np.zeros(gossip.n_nodes)
    mixings = {}  # by size (the active nodes of a draw)
    for _ in range(n_draws):
        active, W = gossip.draw(rng)
        counts[active] += 1
        mixings.setdefault(W.shape, []).append(W)
    for group in mixings.values():  # every draw's mixing matrix: doubly stochastic, symmetric
        W = np.stack(group)
        assert np.allclose(W.sum(axis=1), 1) and np.allclose(W.sum(axis=2), 1)
        assert np.allclose(W, W.transpose(0, 2, 1)) and np.all(W >= 0)
    p = gossip.node_probabilities
    assert np.all(np.abs(counts / n_draws - p) <= 5 * np.sqrt(p * (1 - p) / n_draws))
    assert gossip.probability == pytest.approx(p.max())
    if gossip.n_nodes == 20 and isinstance(gossip, EdgeGossip):
        # the paper's 1 or 2 edges of K_20: 0.1 and 1 - C(171, 2) / C(190, 2)
        target = 0.1 if gossip.n_edges == 1 else 1 - math.comb(171, 2) / math.comb(190, 2)
        assert gossip.probability == pytest.approx(target)


class _RecordingLoss:
    """Stands in for a loss: records which rows of which node a round sums."""

    def clipped_grad_sums(self, Ws, idx, groups, clip_norm, norm=2):
        self.idx, self.groups = np.asarray(idx), np.asarray(groups)
        return np.zeros_like(Ws)


def _shards(n, n_nodes, batch, loss=None, seed=0):
    spec = types.SimpleNamespace(n_samples=n)
    plan = types.SimpleNamespace(spec=spec, adaptive=False, mechanism=Composed([]))
    return PrivateQueries(loss, plan, np.random.default_rng(seed)).shards(n_nodes, 7, batch)


@pytest.mark.parametrize("route", ["coin_per_record", "count_and_subset"])
def test_each_record_is_poisson_sampled_at_the_charged_rate(route, monkeypatch):
    # few records take one coin each; many, a binomial count and a uniform
    # subset: both must be the same Poisson sample
    limit = 10**6 if route == "coin_per_record" else 0
    monkeypatch.setattr(release_module, "_BERNOULLI_RECORDS", limit)
    rng = np.random.default_rng(0)
    size, rate, n_draws = 11, 3.0 / 11, 20000
    hits, counts = np.zeros(size), []
    for _ in range(n_draws):
        positions = poisson_positions(rng, size, rate)
        assert np.all(np.diff(positions) > 0)               # a subset: no repeats
        hits[positions] += 1
        counts.append(len(positions))
    assert np.all(np.abs(hits / n_draws - rate) <= 5 * np.sqrt(rate / n_draws))
    # a binomial count (variance q p (1 - p), not that of a fixed size)
    assert np.var(counts) == pytest.approx(size * rate * (1 - rate), rel=0.1)


def test_a_round_samples_only_the_active_nodes_records_from_their_own_streams():
    loss = _RecordingLoss()
    shards = _shards(n=103, n_nodes=10, batch=3.0, loss=loss)
    assert shards.sizes.sum() == 103 and set(shards.sizes) == {10, 11}
    assert shards.sampling_rate == pytest.approx(0.3)
    active, seeds = np.array([2, 5]), np.array([11, 12])
    hits = np.zeros(103)
    for _ in range(200):
        shards._node_sums(active, np.zeros((2, 3)), seeds, 1.0, 2)
        hits[loss.idx] += 1
        for k, j in enumerate(active):                      # each row in its own node's group
            members = shards._order[shards._offsets[j]:shards._offsets[j + 1]]
            assert np.isin(loss.idx[loss.groups == k], members).all()
    members = np.concatenate([shards._order[shards._offsets[j]:shards._offsets[j + 1]]
                              for j in active])
    assert hits.sum() == hits[members].sum() > 0            # only the active nodes' records
    # a node's sample is a function of its seed alone (same seed, same rows)
    assert np.isin(hits, [0, 200]).all()
    shards._node_sums(active, np.zeros((2, 3)), np.array([11, 99]), 1.0, 2)
    first = loss.idx[loss.groups == 0]
    shards._node_sums(active[:1], np.zeros((1, 3)), np.array([11]), 1.0, 2)
    np.testing.assert_array_equal(loss.idx, first)


# -- fits ---------------------------------------------------------------------------

def _blobs(n=600, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def test_fit_charges_exactly_the_planned_rounds():
    X, y = _blobs()
    acc = skdp.BudgetAccountant()
    est = skdp.DPLinearSVC(loss="hinge", solver="dual_averaging", epsilon=0.7, max_iter=40,
                           accountant=acc, random_state=0).fit(X, y)
    assert est.n_iter_ == 40 and est.solver_ == "dual_averaging"
    (spend,) = acc.spends
    assert spend.mechanism.count == 40
    leaf = spend.mechanism.mechanism
    # one edge of K_20 per round: each node active with probability 0.1; 30
    # records per node and 30 expected per round: every record, no sampling
    assert isinstance(leaf, Activated) and leaf.probability == pytest.approx(0.1)
    assert isinstance(leaf.mechanism, Gaussian)
    assert get_epsilon(spend.mechanism, 1e-5) <= 0.7
    # 60 records per node: Poisson sampling at rate 30 / 60
    X2, y2 = _blobs(1200)
    acc2 = skdp.BudgetAccountant()
    est.set_params(accountant=acc2).fit(X2, y2)
    leaf = acc2.spends[0].mechanism.mechanism
    assert isinstance(leaf.mechanism, PoissonSampled) and leaf.mechanism.rate == 0.5


def test_nearly_noise_free_run_matches_the_non_private_model():
    from sklearn.svm import LinearSVC
    X, y = _blobs(2000)
    ref = LinearSVC(C=1.0).fit(X, y).score(X, y)
    for penalty in ("l2", "l1"):
        # 3 epochs of gossip: single runs range over 0.96-0.99 (ref 0.9965)
        scores = [skdp.DPLinearSVC(loss="hinge", penalty=penalty, solver="dual_averaging",
                                   epsilon=1e4, random_state=seed,
                                   accountant=skdp.BudgetAccountant()).fit(X, y).score(X, y)
                  for seed in range(4)]
        assert np.mean(scores) >= ref - 0.03, penalty


def test_accuracy_grows_with_epsilon():
    X, y = _blobs(3000, d=20, seed=1)
    Xt, yt = _blobs(3000, d=20, seed=2)

    def mean_acc(eps):
        return np.mean([skdp.DPLogisticRegression(solver="dual_averaging", epsilon=eps,
                                                  random_state=s,
                                                  accountant=skdp.BudgetAccountant())
                        .fit(X, y).score(Xt, yt) for s in range(3)])
    assert mean_acc(0.05) + 0.05 < mean_acc(2.0)


def test_multinomial_logistic_regression():
    rng = np.random.default_rng(0)
    centers = np.eye(3, 6) * 3
    y = rng.integers(0, 3, 1500)
    X = centers[y] + rng.normal(size=(1500, 6))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    est = skdp.DPLogisticRegression(solver="dual_averaging", epsilon=2.0, random_state=0,
                                    accountant=skdp.BudgetAccountant()).fit(X, y)
    assert est.coef_.shape == (3, 6)
    assert est.score(X, y) > 0.8


def test_user_graph_and_mixing_matrix():
    X, y = _blobs()
    ring = np.eye(6, k=1) + np.eye(6, k=-1)
    ring[0, -1] = ring[-1, 0] = 1
    mixing = np.eye(6) * 0.5 + ring * 0.25
    for params in ({"graph": ring}, {"graph": ring, "weights": mixing, "gossip": "nodes"}):
        est = skdp.DPLogisticRegression(
            solver="dual_averaging", epsilon=20.0, random_state=0,
            max_iter=300, solver_params={"n_nodes": 6, "activation": 0.5, **params},
            accountant=skdp.BudgetAccountant()).fit(X, y)
        assert est.score(X, y) > 0.8
    acc = skdp.BudgetAccountant()
    bad = [({"graph": np.ones((6, 6))}, "zero diagonal"),
           ({"graph": np.zeros((6, 6))}, "connected"),
           ({"graph": ring[:5, :5]}, r"\(6, 6\) adjacency"),
           ({"graph": ring, "weights": np.full((6, 6), 1 / 6)}, "0 where the graph has no edge")]
    for params, message in bad:
        with pytest.raises(ValueError, match=message):
            skdp.DPLogisticRegression(solver="dual_averaging", accountant=acc,
                                      solver_params={"n_nodes": 6, **params}).fit(X, y)
    assert acc.spent() == (0.0, 0.0)


def test_fewer_records_than_nodes():
    X, y = _blobs(7)
    est = skdp.DPLogisticRegression(solver="dual_averaging", random_state=0,
                                    classes=[0, 1], accountant=skdp.BudgetAccountant())
    assert est.fit(X, y).n_iter_ >= 1


# -- the paper's Theorem 1 as a reproduction option ----------------------------------

def test_paper_noise_formula():
    # sigma^2 = 32 iota^2 T log(2 / delta0) / (q^2 eps^2), per unit of L
    z = paper_noise_multiplier(1000, 0.1, 200, 0.5, 0.01)
    assert z ** 2 == pytest.approx(32 * 0.01 * 1000 * math.log(200) / (200 ** 2 * 0.25))
    # the theorem's condition T >= 5 q^2 eps^2 / (4 iota^2) is sigma >= sqrt(40 log(2/delta0))
    T_min = 5 * 200 ** 2 * 0.25 / (4 * 0.01)
    assert paper_noise_multiplier(T_min, 0.1, 200, 0.5, 0.01) == pytest.approx(
        math.sqrt(40 * math.log(200)))


def test_paper_calibration_warns_where_valid_and_refuses_elsewhere():
    X, y = _blobs(400)  # 20 nodes of 20 records
    common = dict(solver="dual_averaging", epsilon=1.0, random_state=0, classes=[0, 1])
    params = {"calibration": "paper", "local_batch_size": 1.0, "gossip": "nodes"}
    acc = skdp.BudgetAccountant()
    # the paper's 3 epochs: Theorem 1's noise is far below what epsilon 1 needs
    with pytest.raises(ValueError, match="Theorem 1's noise .* above the target"):
        skdp.DPLogisticRegression(**common, solver_params=params, accountant=acc).fit(X, y)
    with pytest.raises(ValueError, match="local_batch_size=1"):
        skdp.DPLogisticRegression(**common, accountant=acc,
                                  solver_params={**params, "local_batch_size": 2.0}).fit(X, y)
    assert acc.spent() == (0.0, 0.0)
    # in the theorem's regime (T >= 5 q^2 eps^2 / (4 iota^2) = 5000) it is valid
    with pytest.warns(UserWarning, match="reproduction"):
        est = skdp.DPLogisticRegression(**common, max_iter=5000, solver_params=params,
                                        accountant=acc).fit(X, y)
    assert get_epsilon(acc.spends[0].mechanism, 1e-5) <= 1.0
    assert get_solver("dual_averaging").options["calibration"] == "accountant"
    del est
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        skdp.DPLogisticRegression(**common, accountant=acc).fit(X, y)  # default: no warning

"""The Dask back end: fits on dask arrays where the blocks live, same model as in memory."""

import contextlib
from collections import Counter
from unittest import mock

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from dask.utils import key_split
from distributed import Client, LocalCluster, get_task_stream
from sklearn.datasets import make_classification

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.linear_model import logistic_targets
from skdp.losses import BinaryLogisticLoss, LinearDesign

from conftest import load_adult

MB = 2 ** 20


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


@contextlib.contextmanager
def no_large_gather(limit=MB):
    """Fail if a dask array larger than ``limit`` bytes is brought to the driver."""
    array_compute, array_numpy = da.Array.compute, da.Array.__array__
    compute = dask.compute

    def check(arrays):
        for a in arrays:
            if isinstance(a, da.Array) and a.nbytes > limit:
                raise AssertionError(f"a {a.nbytes / MB:.1f} MB dask array was gathered")

    def guarded_compute(self, *args, **kwargs):
        check([self])
        return array_compute(self, *args, **kwargs)

    def guarded_numpy(self, *args, **kwargs):
        check([self])
        return array_numpy(self, *args, **kwargs)

    def guarded_dask_compute(*args, **kwargs):
        check(args)
        return compute(*args, **kwargs)

    with mock.patch.object(da.Array, "compute", guarded_compute), \
            mock.patch.object(da.Array, "__array__", guarded_numpy), \
            mock.patch.object(dask, "compute", guarded_dask_compute):
        yield


def _small(n=1200, d=8, n_classes=2, seed=0):
    X, y = make_classification(n_samples=n, n_features=d, n_informative=4,
                               n_classes=n_classes, random_state=seed)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


def _assert_same_fit(Estimator, params, data, dask_data, context):
    """The fit on dask input equals the in-memory fit (1e-8) with the same seed."""
    memory = Estimator(accountant=BudgetAccountant(), **params).fit(*data)
    with context:
        model = Estimator(accountant=BudgetAccountant(), **params).fit(*dask_data)
    np.testing.assert_allclose(model.coef_, memory.coef_, rtol=0, atol=1e-8)
    assert model.n_iter_ == memory.n_iter_


@pytest.mark.parametrize("sparse", [False, True])
def test_a_bound_block_reports_the_bytes_it_holds(sparse):
    # what a Dask scheduler weighs before it moves or spills a bound block
    X, y = _small(n=5000)
    X = sp.csr_matrix(X) if sparse else X
    loss = BinaryLogisticLoss(LinearDesign(X, True, 1.0), logistic_targets(y, 2))
    rows = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sparse else X.nbytes
    assert dask.sizeof.sizeof(loss) >= rows + 2 * X.shape[0] * 8   # rows, norms, targets


def test_guard_catches_a_gather():
    X = da.zeros((1000, 200), chunks=(250, 200))  # 1.6 MB
    with no_large_gather(), pytest.raises(AssertionError, match="gathered"):
        np.asarray(X)
    with no_large_gather(), pytest.raises(AssertionError, match="gathered"):
        X.compute()


@pytest.mark.filterwarnings("ignore:Sending large graph")  # the test ships Adult once
def test_adult_on_a_cluster_equals_the_in_memory_fit_without_gathering_X(client):
    X, y, X_test, _ = load_adult()
    X, X_test = X.toarray(), X_test.toarray()
    Xd = da.from_array(X, chunks=(8200, 123))              # 4 blocks of about 8 MB
    yd = da.from_array(y, chunks=(8200,))
    Xd, yd = client.persist([Xd, yd])                       # the blocks live on the workers
    memory = DPLogisticRegression(random_state=0, accountant=BudgetAccountant()).fit(X, y)
    accountant = BudgetAccountant()
    with get_task_stream(client) as stream, no_large_gather():
        model = DPLogisticRegression(random_state=0, accountant=accountant).fit(Xd, yd)
    assert Xd.numblocks[0] >= 4
    # every query ran where its block was bound: no bound block moved between workers
    queries = [task for task in stream.data if key_split(task["key"]) == "call"]
    assert model.solver_ == "preconditioned_gd"            # the default at Adult's shape
    assert len(queries) == 4 * (model.n_iter_ + 1)         # the second moment, then the steps
    assert not [ss for task in queries for ss in task["startstops"] if ss["action"] == "transfer"]
    np.testing.assert_allclose(model.coef_, memory.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, memory.intercept_, rtol=0, atol=1e-8)
    assert model.n_iter_ == memory.n_iter_ and len(accountant.spends) == 1
    assert accountant.spends[0].mechanism == memory.accountant.spends[0].mechanism
    Xt = da.from_array(X_test, chunks=(4100, 123))
    predicted = model.predict(Xt)
    assert isinstance(predicted, da.Array)                 # lazy
    np.testing.assert_array_equal(predicted.compute(), memory.predict(X_test))


@pytest.mark.parametrize("Estimator", [DPLogisticRegression, DPLinearSVC])
@pytest.mark.parametrize("params", [{"solver": "nesterov"}, {"solver": "line_search", "max_iter": 40},
                                    {"solver": "preconditioned_gd"}, {"classes": [0, 1, 2]},
                                    {"solver": "preconditioned_gd",   # intercept feature 0.3
                                     "solver_params": {"preconditioner": "diagonal"}}])
def test_every_full_batch_solver_runs_unchanged_on_dask(Estimator, params):
    X, y = _small(n_classes=3)
    Xd, yd = da.from_array(X, chunks=(300, 4)), da.from_array(y, chunks=(500,))
    memory = Estimator(random_state=1, accountant=BudgetAccountant(), **params).fit(X, y)
    with dask.config.set(scheduler="threads"):
        model = Estimator(random_state=1, accountant=BudgetAccountant(), **params).fit(Xd, yd)
        np.testing.assert_allclose(model.coef_, memory.coef_, rtol=0, atol=1e-8)
        np.testing.assert_allclose(model.intercept_, memory.intercept_, rtol=0, atol=1e-8)
        Xs = da.from_array(X, chunks=(500, 8))
        scores = model.decision_function(Xs)
        assert isinstance(scores, da.Array)
        np.testing.assert_allclose(scores.compute(), memory.decision_function(X), atol=1e-10)
        np.testing.assert_array_equal(model.predict(Xs).compute(), memory.predict(X))
        if hasattr(model, "predict_proba"):
            np.testing.assert_allclose(model.predict_proba(Xs).compute(),
                                       memory.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("penalty, gossip", [("l2", "edges"), ("l1", "nodes")])
def test_dual_averaging_nodes_run_on_the_workers_and_equal_the_in_process_run(client, penalty,
                                                                              gossip):
    X, y = _small(n=3000)
    Xd, yd = client.persist([da.from_array(X, chunks=(750, 8)), da.from_array(y, chunks=(750,))])
    # one edge of the complete graph per round (2 active nodes), or 4 of the 20 nodes
    options = {"gossip": gossip, "activation": 0.1 if gossip == "edges" else 0.2}

    def fit(data, backend):
        accountant = BudgetAccountant()
        model = DPLinearSVC(solver="dual_averaging", penalty=penalty, classes=[0, 1],
                            random_state=0, accountant=accountant,
                            solver_params={**options, "backend": backend}).fit(*data)
        return model, accountant.spends[0].mechanism

    memory, charged = fit((X, y), "memory")
    with get_task_stream(client) as stream, no_large_gather(limit=2 ** 14):
        model, dask_charged = fit((Xd, yd), "dask")
    np.testing.assert_allclose(model.coef_, memory.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, memory.intercept_, rtol=0, atol=1e-8)
    assert model.n_iter_ == memory.n_iter_ and dask_charged == charged
    ran = Counter(key_split(task["key"]) for task in stream.data)
    assert ran["bind_node"] == 20                  # each node's shard built on a worker
    # every active node's round ran on a worker
    assert ran["node_message"] == model.n_iter_ * (2 if gossip == "edges" else 4)
    assert ran["call"] == 0                        # no un-noised sum went to the driver
    assert {task["worker"] for task in stream.data} <= set(client.scheduler_info()["workers"])


@pytest.mark.filterwarnings("ignore:Sending large graph")  # the test ships Adult once
def test_dual_averaging_on_sparse_adult_blocks_equals_the_in_process_run(client):
    X, y, _, _ = load_adult()                                   # CSR
    Xd = da.from_array(X.toarray(), chunks=(8200, 123)).map_blocks(sp.csr_matrix,
                                                                  dtype=np.float64)
    Xd, yd = client.persist([Xd, da.from_array(y, chunks=(8200,))])
    params = dict(solver="dual_averaging", penalty="elasticnet", max_iter=300, random_state=3)
    memory = DPLogisticRegression(accountant=BudgetAccountant(), **params).fit(X, y)
    with no_large_gather():
        model = DPLogisticRegression(accountant=BudgetAccountant(),
                                     solver_params={"backend": "dask"}, **params).fit(Xd, yd)
    np.testing.assert_allclose(model.coef_, memory.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, memory.intercept_, rtol=0, atol=1e-8)


@pytest.mark.parametrize("backend, dask_input, match", [
    ("dask", False, "needs dask input"), ("memory", True, "gathering it is refused")])
def test_a_backend_the_input_cannot_run_on_is_refused_before_the_charge(backend, dask_input,
                                                                       match):
    X, y = _small()
    data = (da.from_array(X, chunks=(300, 8)), da.from_array(y, chunks=(300,))) \
        if dask_input else (X, y)
    accountant = BudgetAccountant()
    model = DPLinearSVC(solver="dual_averaging", solver_params={"backend": backend},
                        accountant=accountant)
    with dask.config.set(scheduler="threads"), pytest.raises(ValueError, match=match):
        model.fit(*data)
    assert accountant.spends == [] and not hasattr(model, "coef_")


def test_second_order_runs_on_dask():
    X, y = _small()
    Xd, yd = da.from_array(X, chunks=(400, 8)), da.from_array(y, chunks=(400,))
    params = dict(penalty="nonconvex", solver="second_order", classes=[0, 1], random_state=0)
    _assert_same_fit(DPLogisticRegression, params, (X, y), (Xd, yd),
                     dask.config.set(scheduler="threads"))


def test_poisson_batches_are_drawn_per_block_and_fixed_by_the_seed():
    X, y = _small()
    Xd, yd = da.from_array(X, chunks=(300, 8)), da.from_array(y, chunks=(300,))

    def fit(data, seed):
        accountant = BudgetAccountant()
        model = DPLogisticRegression(batch_size=100, random_state=seed, classes=[0, 1],
                                     accountant=accountant).fit(*data)
        return model, accountant.spends[0].mechanism

    with dask.config.set(scheduler="threads"):
        (a, charged), (b, _), (c, _) = [fit((Xd, yd), seed) for seed in (3, 3, 4)]
    np.testing.assert_array_equal(a.coef_, b.coef_)         # the seed fixes the samples
    assert not np.allclose(a.coef_, c.coef_)
    memory, memory_charged = fit((X, y), 3)
    assert charged == memory_charged                         # the same sampled mechanism
    assert abs(a.score(X, y) - memory.score(X, y)) < 0.05    # another sample, same quality


def test_dataframe_input_and_labels_read_from_y():
    X, y = _small()
    frame = dd.from_pandas(pd.DataFrame(X, columns=[f"f{j}" for j in range(8)]), npartitions=3)
    labels = dd.from_pandas(pd.Series(np.where(y == 1, "yes", "no")), npartitions=3)
    memory = DPLinearSVC(random_state=0, accountant=BudgetAccountant()).fit(
        X, np.where(y == 1, "yes", "no"))
    with dask.config.set(scheduler="threads"):
        model = DPLinearSVC(random_state=0, accountant=BudgetAccountant()).fit(frame, labels)
        np.testing.assert_array_equal(model.classes_, ["no", "yes"])
        np.testing.assert_allclose(model.coef_, memory.coef_, rtol=0, atol=1e-8)
        np.testing.assert_array_equal(model.predict(frame).compute(), memory.predict(X))


@pytest.mark.parametrize("case, error, match", [
    ("nan", ValueError, "Input X contains NaN"),
    ("label", ValueError, "labels that are not in classes="),
    ("one_class", ValueError, "at least 2 classes"),
    ("matrix_sensing", TypeError, "does not accept dask input"),
    ("y_only", TypeError, "y is a dask collection but X is not"),
])
def test_bad_input_is_refused_before_the_charge(case, error, match):
    X, y = _small()
    if case == "nan":
        X = X.copy()
        X[1000, 3] = np.nan                                  # in the last block only
    if case == "one_class":
        y = np.zeros_like(y)
    Xd, yd = da.from_array(X, chunks=(300, 8)), da.from_array(y, chunks=(300,))
    accountant = BudgetAccountant()
    estimator = {
        "label": DPLogisticRegression(classes=[0, 2], accountant=accountant),
        "matrix_sensing": DPMatrixSensing(shape=(2, 4), rank=1, accountant=accountant),
    }.get(case, DPLogisticRegression(accountant=accountant))
    with dask.config.set(scheduler="threads"), pytest.raises(error, match=match):
        estimator.fit(X if case == "y_only" else Xd, yd)
    assert accountant.spends == []
    assert not hasattr(estimator, "coef_")


def test_nan_block_on_a_distributed_cluster_is_reported_as_nan():
    X, y = _small()
    X = X.copy()
    X[1000, 3] = np.nan                                      # in the last block only
    Xd, yd = da.from_array(X, chunks=(300, 8)), da.from_array(y, chunks=(300,))
    accountant = BudgetAccountant()
    estimator = DPLogisticRegression(accountant=accountant)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster):
        with pytest.raises(ValueError, match="NaN") as caught:
            estimator.fit(Xd, yd)
    assert "allow_other_workers" not in str(caught.value)
    assert accountant.spends == []
    assert not hasattr(estimator, "coef_")


def test_dataframe_fit_records_feature_names_as_scikit_learn_does():
    X, y = _small()
    columns = [f"f{j}" for j in range(8)]
    frame = dd.from_pandas(pd.DataFrame(X, columns=columns), npartitions=3)
    memory = DPLogisticRegression(random_state=0, accountant=BudgetAccountant()).fit(
        pd.DataFrame(X, columns=columns), y)
    with dask.config.set(scheduler="threads"):
        model = DPLogisticRegression(random_state=0, accountant=BudgetAccountant()).fit(
            frame, da.from_array(y, chunks=frame.to_dask_array(lengths=True).chunks[0]))
        np.testing.assert_array_equal(model.feature_names_in_, memory.feature_names_in_)
        assert model.feature_names_in_.dtype == object
        # refitted on an array: the names go, as in scikit-learn
        model.fit(da.from_array(X, chunks=(400, 8)), da.from_array(y, chunks=(400,)))
        assert not hasattr(model, "feature_names_in_")
        unnamed = dd.from_pandas(pd.DataFrame(X), npartitions=3)   # integer column names
        assert not hasattr(DPLogisticRegression(accountant=BudgetAccountant()).fit(
            unnamed, da.from_array(y, chunks=unnamed.to_dask_array(lengths=True).chunks[0])),
            "feature_names_in_")
        mixed = dd.from_pandas(pd.DataFrame(X, columns=[0] + columns[1:]), npartitions=3)
        accountant = BudgetAccountant()
        with pytest.raises(TypeError, match="all input features have string names"):
            DPLogisticRegression(accountant=accountant).fit(mixed, y)
        assert accountant.spends == []

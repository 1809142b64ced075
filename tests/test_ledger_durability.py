"""A budget kept in a ledger file: nothing lost, nothing counted twice, whatever kills it."""

import multiprocessing
import os
import signal
import sqlite3
import threading
import time

import joblib
import numpy as np
import pytest
from distributed import Client, LocalCluster
from sklearn.model_selection import GridSearchCV

from skdp import BudgetAccountant, BudgetError, DPLogisticRegression

SIZES = (0.03, 0.05, 0.07)
#: an open budget (kills land mid-commit) and a tight one (kills land at the
#: boundary, where spends are refused); rounds alternate between them
BUDGETS = {"open": 1e9, "tight": 3.0}
#: spends the open ledger must have committed before the test judges it
OPEN_SPENDS = 300


def _spend_until_killed(path, budget, journal, worker):
    """Check-and-spend forever; journal a label only once its spend has committed."""
    acc = BudgetAccountant(epsilon=budget, delta=1.0, ledger=path)
    rng = np.random.default_rng(worker)
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    i = 0
    while True:
        label = f"{worker}-{i}"
        try:
            acc.spend(float(rng.choice(SIZES)), 0.0, label=label)
        except BudgetError:
            os.write(fd, f"refused {label}\n".encode())
        else:
            os.write(fd, f"committed {label}\n".encode())
        os.fsync(fd)
        i += 1


def _journal_labels(journals):
    committed, refused = set(), set()
    for journal in journals:
        if os.path.exists(journal):
            for line in open(journal).read().splitlines():
                kind, label = line.split()
                (committed if kind == "committed" else refused).add(label)
    return committed, refused


def _enough(journals, rounds):
    open_committed, _ = _journal_labels(journals["open"])
    _, tight_refused = _journal_labels(journals["tight"])
    return rounds >= 20 and len(open_committed) > OPEN_SPENDS and bool(tight_refused)


def _ledger_rows(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT label, epsilon FROM skdp_spends ORDER BY id").fetchall()


def test_sigkill_at_random_points_never_loses_or_doubles_a_spend(tmp_path):
    paths = {name: str(tmp_path / f"{name}.sqlite") for name in BUDGETS}
    for name, path in paths.items():
        BudgetAccountant(epsilon=BUDGETS[name], delta=1.0, ledger=path)
    ctx = multiprocessing.get_context("fork")
    rng = np.random.default_rng(0)
    journals = {name: [] for name in BUDGETS}
    start = time.monotonic()
    rounds = 0
    # about 20 s on an idle machine; on a loaded one the rounds go on (up to
    # 5 minutes) until both ledgers have seen enough spends to judge
    while rounds < 200 and not (time.monotonic() - start > 20 and _enough(journals, rounds)):
        assert time.monotonic() - start < 300, (
            f"after {rounds} rounds in 5 minutes: "
            f"{len(_journal_labels(journals['open'])[0])} spends committed to the open ledger")
        name = "open" if rounds % 2 == 0 else "tight"
        procs = []
        for k in range(3):
            journal = str(tmp_path / f"journal-{rounds}-{k}.txt")
            journals[name].append(journal)
            p = ctx.Process(target=_spend_until_killed,
                            args=(paths[name], BUDGETS[name], journal, 1000 * rounds + k))
            p.start()
            procs.append(p)
        time.sleep(float(rng.uniform(0.02, 0.3)))
        for p in procs:
            os.kill(p.pid, signal.SIGKILL)
        for p in procs:
            p.join()
        rounds += 1
        # the ledger reopens after every crash, and agrees with itself
        reopened = BudgetAccountant(epsilon=BUDGETS[name], delta=1.0, ledger=paths[name])
        assert reopened.spent()[0] == pytest.approx(sum(e for _, e in _ledger_rows(paths[name])))
    assert rounds >= 20
    print(f"{rounds} rounds of SIGKILL")
    for name, path in paths.items():
        committed, refused = _journal_labels(journals[name])
        rows = _ledger_rows(path)
        labels = [label for label, _ in rows]
        assert len(committed) > (OPEN_SPENDS if name == "open" else BUDGETS[name] / max(SIZES))
        assert committed <= set(labels)  # no committed spend lost
        assert len(labels) == len(set(labels))  # none counted twice
        assert not refused & set(labels)  # a refused spend is never recorded
        total = sum(e for _, e in rows)
        assert total <= BUDGETS[name] * (1 + 1e-9)  # never above the budget
        if name == "tight":
            assert refused and total > BUDGETS[name] - max(SIZES)  # the budget was reached


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = (X[:, 0] > 0).astype(int)
    return X, y


def test_eight_threads_of_a_hundred_fits_record_exactly_800_spends(tmp_path, data):
    X, y = data
    acc = BudgetAccountant(ledger=str(tmp_path / "threads.sqlite"))
    start = threading.Barrier(8)
    errors = []

    def work(k):
        start.wait()
        try:
            for i in range(100):
                DPLogisticRegression(epsilon=0.1, max_iter=10, accountant=acc,
                                     random_state=1000 * k + i).fit(X, y)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(_ledger_rows(acc.ledger_path)) == len(acc.spends) == 800
    assert acc.spent()[0] == pytest.approx(80.0)


def _grid():
    return GridSearchCV(DPLogisticRegression(random_state=0, max_iter=20),
                        {"epsilon": [0.5, 1.0]}, cv=3, n_jobs=2)


def test_gridsearch_on_loky_records_every_fit_in_the_parents_ledger(tmp_path, data):
    X, y = data
    acc = BudgetAccountant(ledger=str(tmp_path / "loky.sqlite"))
    with acc, joblib.parallel_backend("loky", n_jobs=2):
        _grid().fit(X, y)
    rows = _ledger_rows(acc.ledger_path)
    assert len(rows) == len(acc.spends) == 7  # 2 candidates x 3 folds + the refit
    assert sorted(s.seed_index for s in acc.spends) == list(range(7))


@pytest.mark.parametrize("ledger", [True, False], ids=["ledger", "in-memory"])
def test_gridsearch_on_dask_records_every_fit_in_the_parents_ledger(tmp_path, data, ledger):
    X, y = data
    acc = BudgetAccountant(ledger=str(tmp_path / "dask.sqlite") if ledger else None)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        with acc, joblib.parallel_backend("dask"):
            _grid().fit(X, y)
    assert len(acc.spends) == 7
    assert sorted(s.seed_index for s in acc.spends) == list(range(7))
    if ledger:
        assert len(_ledger_rows(acc.ledger_path)) == 7


# -- ledger file safety --------------------------------------------------------
def test_a_corrupt_ledger_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "corrupt.sqlite"
    junk = os.urandom(4096)
    path.write_bytes(junk)
    with pytest.raises(BudgetError, match="not a readable skdp ledger"):
        BudgetAccountant(epsilon=1.0, ledger=str(path))
    assert path.read_bytes() == junk


def test_a_foreign_database_is_refused(tmp_path):
    path = str(tmp_path / "other.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (name TEXT)")
    with pytest.raises(BudgetError, match="not an skdp ledger"):
        BudgetAccountant(epsilon=1.0, ledger=path)


def test_a_ledger_from_a_newer_version_is_refused(tmp_path):
    path = str(tmp_path / "newer.sqlite")
    BudgetAccountant(epsilon=1.0, ledger=path).spend(0.25, 0.0)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE skdp_meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(BudgetError, match="newer skdp"):
        BudgetAccountant(epsilon=1.0, ledger=path)
    with sqlite3.connect(path) as conn:  # nothing was reset
        assert conn.execute("SELECT COUNT(*) FROM skdp_spends").fetchone() == (1,)


def test_a_ledgers_budget_cannot_be_raised_by_reopening_it(tmp_path):
    path = str(tmp_path / "budget.sqlite")
    acc = BudgetAccountant(epsilon=1.0, ledger=path)
    acc.spend(0.75, 0.0)
    with pytest.raises(ValueError, match="holds the budget"):
        BudgetAccountant(epsilon=10.0, ledger=path)
    # the budget stays the one stored in the file
    with pytest.raises(BudgetError):
        BudgetAccountant(epsilon=1.0, ledger=path).spend(0.5, 0.0)

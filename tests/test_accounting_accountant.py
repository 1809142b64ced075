"""BudgetAccountant: budgets, composition, sharing, threads, processes, SQLite."""

import copy
import math
import os
import pickle
import sqlite3
import threading

import pytest
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone

from skdp.accounting import (
    BudgetAccountant,
    BudgetError,
    Composed,
    Gaussian,
    Laplace,
    PoissonSampled,
    PureDP,
    Repeated,
    Spend,
    calibrate,
    current_accountant,
    get_default_accountant,
    get_epsilon,
)


def _gaussian_for(eps, delta):
    return Gaussian(calibrate(lambda z: Gaussian(z), eps, delta))


@pytest.fixture(params=["memory", "sqlite"])
def make_accountant(request, tmp_path):
    """The shared accountant suite runs on both backends."""
    counter = iter(range(1000))

    def make(**kwargs):
        if request.param == "sqlite":
            kwargs["ledger"] = tmp_path / f"ledger{next(counter)}.sqlite"
        return BudgetAccountant(**kwargs)

    return make


# ---------------------------------------------------------------------------
# Budget checks.
# ---------------------------------------------------------------------------
def test_defaults_and_repr(make_accountant):
    acc = make_accountant()
    assert acc.epsilon == math.inf and acc.delta == 1.0
    assert acc.ledger_path is None or acc.ledger_path.endswith(".sqlite")
    assert len(acc) == 0 and bool(acc)  # an empty accountant is not falsy
    assert acc.spent() == (0.0, 0.0)
    assert acc.remaining() == (math.inf, 1.0)
    acc.spend(0.5, 0.0, label="fit")
    text = repr(acc)
    assert "BudgetAccountant(epsilon=inf" in text and "n_spends=1" in text


def test_spend_records_and_returns_self(make_accountant):
    acc = make_accountant(epsilon=1.0, delta=1e-5)
    assert acc.spend(0.25, 1e-6, label="a") is acc
    acc.spend(0.25, 0.0, mechanism=Laplace(4.0), label="b")
    assert len(acc) == 2
    assert acc.spends == [Spend(0.25, 1e-6, None, "a"), Spend(0.25, 0.0, Laplace(4.0), "b")]
    acc.spends.clear()  # a copy
    assert len(acc.spends) == 2
    assert acc.spent() == pytest.approx((0.5, 1e-6))
    assert acc.remaining() == pytest.approx((0.5, 9e-6))


def test_budget_error_before_recording(make_accountant):
    acc = make_accountant(epsilon=1.0, delta=1e-5)
    acc.spend(0.7, 1e-6, label="first")
    before = (acc.spends, acc.spent())
    with pytest.raises(BudgetError) as info:
        acc.spend(0.5, 1e-6, label="second")
    msg = str(info.value)
    for part in ("epsilon=0.5", "asks for", "already spent", "epsilon=0.7", "left",
                 "epsilon=0.3", "To fix", "second", "Nothing was recorded"):
        assert part in msg
    assert (acc.spends, acc.spent()) == before
    with pytest.raises(BudgetError, match="delta"):
        acc.spend(0.1, 1e-4)
    assert (acc.spends, acc.spent()) == before
    assert isinstance(info.value, ValueError)


def test_check_does_not_record(make_accountant):
    acc = make_accountant(epsilon=1.0, delta=1e-5)
    assert acc.check(1.0, 1e-5) is True
    assert acc.check(0.5, 0.0, mechanism=Laplace(2.0)) is True
    assert len(acc) == 0
    acc.spend(0.6, 0.0)
    with pytest.raises(BudgetError):
        acc.check(0.5, 0.0)
    assert len(acc) == 1


def test_exact_budget_is_usable_despite_rounding(make_accountant):
    acc = make_accountant(epsilon=1.0, delta=1e-5)
    for _ in range(10):
        acc.spend(0.1, 1e-6)
    assert acc.remaining() == (0.0, 0.0)
    with pytest.raises(BudgetError):
        acc.spend(1e-6, 0.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(epsilon=0.0), "epsilon must be > 0"),
    (dict(epsilon=-1.0), "epsilon must be in"),
    (dict(epsilon=float("nan")), "epsilon"),
    (dict(epsilon="big"), "epsilon must be a number"),
    (dict(delta=1.5), r"delta must be in \[0, 1\]"),
    (dict(delta=-0.1), "delta"),
    (dict(ledger=3.5), "ledger must be None or a file path"),
])
def test_bad_budget(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BudgetAccountant(**kwargs)


@pytest.mark.parametrize("args, match", [
    ((0.0, 1e-6), "epsilon must be > 0"),
    ((-1.0, 1e-6), "epsilon must be > 0"),
    ((math.inf, 1e-6), "finite"),
    ((float("nan"), 1e-6), "epsilon"),
    (("1", 1e-6), None),  # numeric strings are accepted like float("1")
    ((True, 1e-6), "epsilon must be a number"),
    ((1.0, 1.0), r"delta must be in \[0, 1\)"),
    ((1.0, -1e-9), "delta"),
    ((1.0, None), "delta must be a number"),
    ((1.0, 1e-6, "gaussian"), "mechanism must be a Mechanism"),
])
def test_bad_spend_arguments(args, match):
    acc = BudgetAccountant()
    if match is None:
        acc.spend(*args)
        return
    for call in (acc.spend, acc.check):
        with pytest.raises(ValueError, match=match):
            call(*args)
    assert len(acc) == 0


def test_spend_claim_must_cover_mechanism(make_accountant):
    acc = make_accountant()
    with pytest.raises(ValueError, match="only .* but the spend claims epsilon=0.1"):
        acc.spend(0.1, 1e-5, mechanism=Gaussian(1.0))
    with pytest.raises(ValueError, match="claims"):
        acc.spend(1.0, 0.0, mechanism=Gaussian(10.0))  # not pure DP at all
    assert len(acc) == 0
    acc.spend(get_epsilon(Gaussian(1.0), 1e-5), 1e-5, mechanism=Gaussian(1.0))
    assert len(acc) == 1


# ---------------------------------------------------------------------------
# Composition of spends.
# ---------------------------------------------------------------------------
def test_gaussian_spends_compose_tightly(make_accountant):
    eps_each, delta_each = 0.5, 1e-6
    mech = _gaussian_for(eps_each, delta_each)
    acc = make_accountant(epsilon=5.0, delta=1e-4)
    for i in range(10):
        acc.spend(eps_each, delta_each, mechanism=mech, label=f"fit {i}")
    eps, delta = acc.spent()
    assert delta == pytest.approx(10 * delta_each)
    assert eps < 0.5 * 10 * eps_each  # far below the plain sum
    # It is exactly the ten-fold Gaussian at the summed delta.
    assert eps == pytest.approx(get_epsilon(Repeated(mech, 10), 10 * delta_each), rel=1e-12)
    assert acc.ledger == Composed([Repeated(mech, 10)])


def test_mixed_spends_never_under_report(make_accountant):
    acc = make_accountant()
    mech = _gaussian_for(1.0, 1e-6)
    acc.spend(0.3, 1e-7)  # no mechanism: added as is
    acc.spend(1.0, 1e-6, mechanism=mech)
    acc.spend(1.0, 1e-6, mechanism=mech)
    acc.spend(0.2, 0.0, mechanism=Laplace(5.0))
    eps, delta = acc.spent()
    assert delta == pytest.approx(1e-7 + 2e-6)
    composed = get_epsilon(Composed([mech, mech, Laplace(5.0)]), 2e-6)
    assert eps == pytest.approx(0.3 + min(2.2, composed))
    assert eps <= 0.3 + 2.2
    assert acc.ledger == Composed([Repeated(mech, 2), Laplace(5.0)])


def test_pure_spends_sum(make_accountant):
    acc = make_accountant(epsilon=1.0, delta=0.0)
    for _ in range(4):
        acc.spend(0.25, 0.0, mechanism=Laplace(4.0))
    assert acc.spent() == pytest.approx((1.0, 0.0))
    with pytest.raises(BudgetError):
        acc.spend(0.01, 0.0, mechanism=PureDP(0.01))


# ---------------------------------------------------------------------------
# Sharing: copies, clone, pickling, context.
# ---------------------------------------------------------------------------
class _HoldsAccountant(BaseEstimator):
    def __init__(self, accountant=None, epsilon=1.0):
        self.accountant = accountant
        self.epsilon = epsilon


def test_copies_are_the_same_accountant():
    acc = BudgetAccountant(epsilon=2.0)
    assert copy.copy(acc) is acc
    assert copy.deepcopy(acc) is acc
    holder = {"a": acc, "b": [acc]}
    dup = copy.deepcopy(holder)
    assert dup["a"] is acc and dup["b"][0] is acc
    est = _HoldsAccountant(accountant=acc)
    assert clone(est).accountant is acc
    assert pickle.loads(pickle.dumps(acc)) is acc  # same process: same object


def test_context_manager_nesting_and_default():
    default = get_default_accountant()
    assert default is get_default_accountant()
    assert default.epsilon == math.inf
    assert current_accountant() is default
    outer, inner = BudgetAccountant(), BudgetAccountant()
    with outer as entered:
        assert entered is outer and current_accountant() is outer
        with inner:
            assert current_accountant() is inner
            with outer:
                assert current_accountant() is outer
            assert current_accountant() is inner
        assert current_accountant() is outer
    assert current_accountant() is default


def test_context_in_threads():
    a, b = BudgetAccountant(), BudgetAccountant()
    seen = {}
    barrier = threading.Barrier(2)

    def run(name, acc):
        with acc:
            barrier.wait()
            seen[name] = current_accountant()
            barrier.wait()

    threads = [threading.Thread(target=run, args=(n, x)) for n, x in (("a", a), ("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": a, "b": b}
    assert current_accountant() is get_default_accountant()

    # A worker thread started inside a ``with`` block (no context of its own)
    # is charged to the accountant in force, not to the default.
    found = []
    with a:
        t = threading.Thread(target=lambda: found.append(current_accountant()))
        t.start()
        t.join()
    assert found == [a]


# ---------------------------------------------------------------------------
# Threads.
# ---------------------------------------------------------------------------
def _hammer(acc, n_threads, n_spends, **spend_kwargs):
    errors = []
    start = threading.Barrier(n_threads)

    def work(k):
        start.wait()
        for i in range(n_spends):
            try:
                acc.spend(label=f"t{k}-{i}", **spend_kwargs)
            except BudgetError:
                errors.append((k, i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_threads_all_recorded(make_accountant):
    acc = make_accountant(epsilon=1000.0, delta=1e-3)
    errors = _hammer(acc, 8, 50, epsilon=1.0, delta=1e-6)
    assert errors == []
    assert len(acc) == 400
    assert len({s.label for s in acc.spends}) == 400
    assert acc.spent() == pytest.approx((400.0, 4e-4))


def test_threads_never_exceed_budget(make_accountant):
    acc = make_accountant(epsilon=150.0)
    errors = _hammer(acc, 8, 50, epsilon=0.5, delta=0.0, mechanism=Laplace(2.0))
    assert len(acc) == 300 and len(errors) == 100
    eps, _ = acc.spent()
    assert eps == pytest.approx(150.0) and eps <= 150.0 * (1 + 1e-9)


# ---------------------------------------------------------------------------
# Processes and the SQLite ledger.
# ---------------------------------------------------------------------------
def _spend_in_worker(acc, k, n=1):
    for i in range(n):
        acc.spend(0.5, 1e-7, mechanism=Laplace(2.0), label=f"worker {k} spend {i}")
    return os.getpid()


def _try_spend_in_worker(acc):
    snapshot = (acc.spent(), len(acc))
    try:
        acc.spend(0.5, 0.0, label="from a worker")
    except BudgetError as exc:
        return os.getpid(), snapshot, str(exc)
    return os.getpid(), snapshot, None


def test_in_memory_accountant_refuses_spends_in_workers():
    acc = BudgetAccountant(epsilon=10.0)
    acc.spend(1.0, 0.0)
    results = Parallel(n_jobs=2, backend="loky")(
        delayed(_try_spend_in_worker)(acc) for _ in range(2))
    for pid, snapshot, error in results:
        assert pid != os.getpid()
        assert snapshot == ((1.0, 0.0), 1)  # a readable snapshot ...
        # ... but spending there fails loudly instead of being lost.
        assert error is not None
        assert f"lives in process {os.getpid()}" in error
        assert "BudgetAccountant(ledger=" in error
    assert len(acc) == 1


def test_sqlite_ledger_shared_by_worker_processes(tmp_path):
    path = tmp_path / "budget.sqlite"
    acc = BudgetAccountant(epsilon=100.0, delta=1e-3, ledger=path)
    acc.spend(1.0, 0.0, label="parent")
    pids = Parallel(n_jobs=2, backend="loky")(
        delayed(_spend_in_worker)(acc, k, n=5) for k in range(2))
    assert os.getpid() not in pids
    labels = [s.label for s in acc.spends]
    assert len(labels) == 11 and labels[0] == "parent"
    assert sorted(labels[1:]) == sorted(f"worker {k} spend {i}" for k in range(2) for i in range(5))
    assert all(s.mechanism == Laplace(2.0) for s in acc.spends[1:])
    eps, delta = acc.spent()
    assert delta == pytest.approx(10 * 1e-7)
    assert eps <= 1.0 + 10 * 0.5


def test_sqlite_ledger_survives_restart_and_checks_budget(tmp_path):
    path = str(tmp_path / "ledger.sqlite")
    mech = Repeated(PoissonSampled(0.01, Gaussian(1.0)), 100)
    eps_m = get_epsilon(mech, 1e-6)
    first = BudgetAccountant(epsilon=4.0, delta=1e-5, ledger=path)
    first.spend(eps_m, 1e-6, mechanism=mech, label="dp-sgd")
    first.spend(1.0, 0.0, label="plain")
    del first

    again = BudgetAccountant(epsilon=4.0, delta=1e-5, ledger=path)
    assert again.ledger_path == os.path.abspath(path)
    assert [s.label for s in again.spends] == ["dp-sgd", "plain"]
    assert again.spends[0].mechanism == mech
    assert again.spent() == pytest.approx((eps_m + 1.0, 1e-6))
    with pytest.raises(ValueError, match="holds the budget"):
        BudgetAccountant(epsilon=5.0, delta=1e-5, ledger=path)

    # Two accountants on one file share the budget; a refused spend writes nothing.
    other = BudgetAccountant(epsilon=4.0, delta=1e-5, ledger=path)
    other.spend(0.5, 0.0, label="other")
    assert len(again) == 3
    left = 4.0 - (eps_m + 1.5)
    assert again.remaining()[0] == pytest.approx(left)
    with pytest.raises(BudgetError, match="in 3 spend"):
        again.spend(left + 0.01, 0.0)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM skdp_spends").fetchone()[0] == 3
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_sqlite_accountant_threads_and_pickle(tmp_path):
    acc = BudgetAccountant(epsilon=20.0, ledger=tmp_path / "t.sqlite")
    errors = _hammer(acc, 4, 10, epsilon=0.5, delta=0.0)
    assert len(acc) == 40 and errors == []
    with pytest.raises(BudgetError):
        acc.spend(0.5, 0.0)
    assert pickle.loads(pickle.dumps(acc)) is acc


def _fork_child(acc, queue):
    try:
        acc.spend(0.5, 0.0, label="forked child")
        queue.put("recorded")
    except BudgetError as exc:
        queue.put(f"refused: {exc}")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_children(tmp_path):
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    for acc, expected in [(BudgetAccountant(epsilon=5.0), "refused: This BudgetAccountant lives"),
                          (BudgetAccountant(epsilon=5.0, ledger=tmp_path / "f.sqlite"), "recorded")]:
        acc.spend(1.0, 0.0)  # the parent's SQLite connection is open at fork time
        queue = ctx.Queue()
        child = ctx.Process(target=_fork_child, args=(acc, queue))
        child.start()
        message = queue.get(timeout=60)
        child.join(timeout=60)
        assert message.startswith(expected)
        assert len(acc) == (2 if acc.ledger_path else 1)


def test_sqlite_ledger_tolerates_hand_edits(tmp_path):
    path = tmp_path / "edit.sqlite"
    acc = BudgetAccountant(epsilon=10.0, ledger=path)
    acc.spend(1.0, 0.0, mechanism=Laplace(1.0), label="kept")
    acc.spend(2.0, 0.0, label="removed")
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM skdp_spends WHERE label = 'removed'")
        conn.execute("INSERT INTO skdp_spends (epsilon, delta, mechanism, label) "
                     "VALUES (0.5, 0.0, '{\"type\": \"FromTheFuture\"}', 'unknown')")
    with pytest.warns(UserWarning, match="unreadable mechanism"):
        spends = acc.spends
    assert [s.label for s in spends] == ["kept", "unknown"]
    assert spends[1].mechanism is None  # counted at its recorded cost
    assert acc.spent() == pytest.approx((1.5, 0.0))

"""A ledger file cannot be split (deleted or replaced under an accountant) or read by others."""

import os
import pickle
import sqlite3
import stat

import pytest

from skdp import BudgetAccountant, BudgetError


def _unlink_ledger(path):
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.unlink(path + suffix)


def _row_count(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM skdp_spends").fetchone()[0]


def test_deleted_ledger_refuses_instead_of_splitting_the_budget(tmp_path):
    path = str(tmp_path / "budget.sqlite")
    held = BudgetAccountant(epsilon=1.0, ledger=path)
    held.spend(0.7, 0.0)
    _unlink_ledger(path)
    # Deleting the file deletes the record: a new accountant starts afresh...
    fresh = BudgetAccountant(epsilon=1.0, ledger=path)
    fresh.spend(1.0, 0.0)
    # ...but the accountant holding the deleted file no longer charges it.
    with pytest.raises(BudgetError, match="no longer the ledger file this BudgetAccountant"):
        held.spend(0.3, 0.0)
    with pytest.raises(BudgetError, match="put the original ledger file back"):
        held.check(0.1, 0.0)
    assert _row_count(path) == 1  # nothing reached the new file either


def test_deleted_ledger_refuses_before_anything_replaces_it(tmp_path):
    path = str(tmp_path / "budget.sqlite")
    held = BudgetAccountant(epsilon=1.0, ledger=path)
    held.spend(0.5, 0.0)
    _unlink_ledger(path)
    with pytest.raises(BudgetError, match="was deleted or moved"):
        held.spend(0.1, 0.0)
    assert not os.path.exists(path)  # refusing re-creates nothing


def test_moved_ledger_refuses_until_it_is_put_back(tmp_path):
    path = str(tmp_path / "budget.sqlite")
    held = BudgetAccountant(epsilon=1.0, ledger=path)
    held.spend(0.5, 0.0)
    os.rename(path, path + ".moved")
    with pytest.raises(BudgetError, match="was deleted or moved"):
        held.spend(0.1, 0.0)
    os.rename(path + ".moved", path)
    held.spend(0.1, 0.0)
    assert held.spent()[0] == pytest.approx(0.6)


def test_replaced_ledger_refuses_and_charges_neither_file(tmp_path):
    path = str(tmp_path / "budget.sqlite")
    other = str(tmp_path / "other.sqlite")
    held = BudgetAccountant(epsilon=1.0, ledger=path)
    held.spend(0.5, 0.0)
    BudgetAccountant(epsilon=1.0, ledger=other).spend(0.2, 0.0)
    os.replace(other, path)  # the path now names another ledger's file
    with pytest.raises(BudgetError, match="holds another file"):
        held.spend(0.1, 0.0)
    assert _row_count(path) == 1


def test_pickled_copy_of_a_replaced_ledger_refuses(tmp_path):
    path = str(tmp_path / "budget.sqlite")
    held = BudgetAccountant(epsilon=1.0, ledger=path)
    held.spend(0.5, 0.0)
    restore, (state,) = held.__reduce__()
    state = dict(state, token="another-process")  # as if unpickled in another process
    _unlink_ledger(path)
    BudgetAccountant(epsilon=1.0, ledger=path)  # a new ledger at the same path
    copy = restore(pickle.loads(pickle.dumps(state)))
    with pytest.raises(BudgetError, match="no longer the ledger file"):
        copy.spend(0.1, 0.0)


def test_ledger_files_are_readable_by_their_owner_only(tmp_path):
    old = os.umask(0o022)  # the common default, under which files come out 0644
    try:
        path = str(tmp_path / "budget.sqlite")
        acc = BudgetAccountant(epsilon=1.0, ledger=path)
        acc.spend(0.1, 0.0)
        files = [path + s for s in ("", "-wal", "-shm", "-journal") if os.path.exists(path + s)]
        assert path + "-wal" in files and path + "-shm" in files
        for name in files:
            assert stat.S_IMODE(os.stat(name).st_mode) == 0o600, name
    finally:
        os.umask(old)


def test_rollback_journal_is_owner_only_too(tmp_path):
    # The journal SQLite writes when the file is opened outside WAL mode.
    old = os.umask(0o022)
    try:
        path = str(tmp_path / "budget.sqlite")
        acc = BudgetAccountant(epsilon=1.0, ledger=path)
        acc._conn.close()  # the accountant's own connection keeps WAL mode on
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA journal_mode = DELETE")
            conn.execute("PRAGMA journal_mode = PERSIST")
            conn.execute("INSERT INTO skdp_meta (key, value) VALUES ('note', 'x')")
        assert os.path.exists(path + "-journal")
        assert stat.S_IMODE(os.stat(path + "-journal").st_mode) == 0o600
    finally:
        os.umask(old)

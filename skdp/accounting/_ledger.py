"""The SQLite ledger of a budget accountant, and its transport between processes.

:class:`LedgerMixin` is the ledger half of
:class:`~skdp.accounting.BudgetAccountant`: it keeps the spends in an
SQLite file (WAL, one ``BEGIN IMMEDIATE`` transaction per check-and-spend,
created readable by its owner only), checks that the path still holds the
file it opened, moves an in-memory accountant to a temporary ledger when it
is pickled (so that worker processes charge the same budget), and
:func:`restore` rebuilds an accountant on unpickling. The host class keeps
the budget and the tally (``_tally``, ``_lock``, ...).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import tempfile
import threading
import time
import urllib.request
import uuid
import warnings
import weakref
from typing import Optional

from ._composition import BudgetError, Spend, fmt_budget
from .mechanisms import Mechanism, mechanism_from_dict

__all__ = ["LedgerChanged", "LedgerMixin", "SCHEMA_VERSION", "remember", "restore"]

SCHEMA_VERSION = "2"


class LedgerChanged(BudgetError):
    """The ledger path no longer holds the file the accountant opened."""


# Every accountant alive in this process, by token: unpickling in the process
# that owns an accountant returns that very object.
_LIVE: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
_LIVE_LOCK = threading.Lock()


def remember(accountant) -> None:
    """Register a live accountant under its token (see :func:`restore`)."""
    with _LIVE_LOCK:
        _LIVE[accountant._token] = accountant


def _after_fork_in_child() -> None:
    # Locks held by other threads at fork time would never be released here.
    global _LIVE_LOCK
    _LIVE_LOCK = threading.Lock()
    for acc in list(_LIVE.values()):
        acc._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)




def restore(cls, state: dict, default_accountant):
    """Unpickle an accountant of class ``cls`` from :meth:`LedgerMixin._pickle_state`.

    ``default_accountant()`` gives this process's default accountant, charged
    when a pickled default accountant's temporary ledger is gone.
    """
    with _LIVE_LOCK:
        live = _LIVE.get(state["token"])
    if live is not None:
        return live
    path = state["path"]
    reason = state.get("refuse")
    if path is not None and reason is None:
        if os.path.exists(path):
            acc = cls.__new__(cls)
            try:
                acc._setup(state["epsilon"], state["delta"], path,
                           composition=state["composition"], token=state["token"],
                           origin_pid=state["pid"], create=False, temp=state["temp"],
                           default=state["default"], ledger_id=state.get("ledger_id"),
                           file_id=state.get("file_id"))
                return acc
            except LedgerChanged as exc:
                reason = str(exc)
            except (sqlite3.Error, BudgetError):
                if os.path.exists(path):
                    raise
    if path is not None and reason is None:
        # The file is gone (its accountant or its process ended).
        if state["default"]:
            # Nothing was at stake (unlimited budget): charge this process's own.
            return default_accountant()
        if state["temp"]:
            reason = (
                f"This BudgetAccountant was created in process {state['pid']} and reached this "
                f"process (pid {os.getpid()}) by pickling, but the temporary ledger it shares "
                "spends through no longer exists (the accountant was garbage-collected or its "
                "process ended), so spends here are refused rather than lost. Use "
                "BudgetAccountant(ledger='path.sqlite') for a budget that outlives its process."
            )
        else:
            reason = (
                f"The ledger file {path} of this BudgetAccountant no longer exists, so spends "
                "are refused rather than charged to a new, empty budget. Restore the file, or "
                "create a BudgetAccountant(ledger='path.sqlite') for a new budget."
            )
    acc = cls.__new__(cls)
    acc._setup(state["epsilon"], state["delta"], None, composition=state["composition"],
               token=state["token"], origin_pid=state["pid"], create=False,
               default=state["default"])
    if reason is None and state["pid"] == os.getpid():
        # An in-memory copy unpickled in its own process after the original
        # died: nothing can be shared with it any more.
        reason = ("This BudgetAccountant is a copy of one that no longer exists, so its spends "
                  "are refused rather than lost. Use BudgetAccountant(ledger='path.sqlite') "
                  "to keep a budget across pickling.")
    acc._refuse = reason
    for s in state["spends"]:
        acc._tally.add(s)
    return acc


def remove_temp_ledger(path: str, pid: int, conns: list) -> None:
    """Finalizer of a temporary ledger: close the owner's connections, delete the files."""
    if os.getpid() != pid:  # a forked child inherited the finalizer: not its file
        return
    for conn in conns:
        try:
            conn.close()
        except Exception:  # pragma: no cover - best effort
            pass
    conns.clear()
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(path + suffix)
        except OSError:
            pass


class LedgerMixin:
    """The ledger and transport methods of :class:`~skdp.accounting.BudgetAccountant`."""

    def _record(self, spend: Spend) -> Spend:
        """Check and record ``spend`` in one ledger transaction (under the lock).

        Returns the spend with its ``seed_index``.
        """
        seed_key = spend.seed_key
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._verify_same_ledger(conn)
            self._sync_rows(conn)
            self._tally.verify_fits(spend)
            if seed_key is not None:
                if self._default:
                    index = 0
                else:
                    (index,) = conn.execute(
                        "SELECT COUNT(*) FROM skdp_spends WHERE seed_key = ?",
                        (seed_key,)).fetchone()
                spend = dataclasses.replace(spend, seed_index=int(index))
            cur = conn.execute(
                "INSERT INTO skdp_spends (epsilon, delta, mechanism, label, pid, created, "
                "seed_key, seed_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (spend.epsilon, spend.delta, _mechanism_json(spend.mechanism), spend.label,
                 os.getpid(), time.time(), spend.seed_key, spend.seed_index),
            )
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        self._tally.add(spend)
        self._last_id = cur.lastrowid
        return spend

    def _ensure_reachable(self) -> None:
        if self._refuse is not None:
            raise BudgetError(self._refuse)
        pid = os.getpid()
        if self._path is None and self._origin_pid != pid:
            raise BudgetError(
                f"This BudgetAccountant lives in process {self._origin_pid}; this is process "
                f"{pid}, which holds an in-memory copy of it that was never sent by pickling "
                "(e.g. inherited by fork), so spends here cannot reach it and are refused "
                "rather than lost. Send it to workers by pickling (joblib/loky, multiprocessing "
                "spawn), use BudgetAccountant(ledger='path.sqlite'), or run in threads."
            )
        if self._temp and self._origin_pid != pid and not os.path.exists(self._path):
            raise BudgetError(
                f"This BudgetAccountant was created in process {self._origin_pid}; the temporary "
                f"ledger it shares spends through ({self._path}) no longer exists (the "
                "accountant was garbage-collected or its process ended), so this spend is "
                "refused rather than lost. Use BudgetAccountant(ledger='path.sqlite') for a "
                "budget that outlives its process."
            )

    def _connection(self, create: bool = False) -> sqlite3.Connection:
        pid = os.getpid()
        if self._conn is None or self._conn_pid != pid:
            if self._conn is not None:
                # Inherited across fork: never reuse, never close it here.
                self._stale_conns.append(self._conn)
            if create:
                _create_owner_only(self._path)
                conn = sqlite3.connect(self._path, timeout=60.0, isolation_level=None,
                                       check_same_thread=False)
            else:
                # Never create: a missing file means a lost ledger, not a new one.
                uri = "file:" + urllib.request.pathname2url(self._path) + "?mode=rw"
                try:
                    conn = sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None,
                                           check_same_thread=False)
                except sqlite3.OperationalError as exc:
                    raise BudgetError(
                        f"Cannot open the ledger file {self._path} ({exc}); spends are refused "
                        "rather than lost or charged to a new, empty budget. Restore the file, "
                        "or use a new BudgetAccountant(ledger='path.sqlite')."
                    ) from None
            conn.execute("PRAGMA busy_timeout = 60000")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # pragma: no cover - exotic filesystems
                warnings.warn(f"SQLite ledger {self._path}: WAL mode unavailable ({mode}).")
            # A temporary ledger need not survive a power cut; a user's ledger must.
            conn.execute(f"PRAGMA synchronous = {'NORMAL' if self._temp else 'FULL'}")
            self._conn, self._conn_pid = conn, pid
            if self._owned_conns is not None and pid == self._origin_pid:
                self._owned_conns.append(conn)
        return self._conn

    def _init_ledger(self, *, create: bool) -> None:
        try:
            conn = self._connection(create=create)
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise BudgetError(
                f"The ledger file {self._path} is not a readable skdp ledger ({exc}); it is "
                "left untouched and no budget is created over it. Restore the file from a "
                "backup, or use a new BudgetAccountant(ledger='path.sqlite')."
            ) from None
        try:
            _check_ledger_schema(conn, self._path)
            _create_schema(conn)
            meta = dict(conn.execute("SELECT key, value FROM skdp_meta").fetchall())
            if "epsilon" not in meta:
                conn.executemany("INSERT INTO skdp_meta (key, value) VALUES (?, ?)", [
                    ("schema", SCHEMA_VERSION),
                    ("epsilon", repr(self._epsilon)),
                    ("delta", repr(self._delta)),
                    ("composition", self._composition),
                ])
                stored_id = None
            else:
                stored_id = meta.get("ledger_id")
                stored = float(meta["epsilon"]), float(meta["delta"])
                if stored != (self._epsilon, self._delta):
                    raise ValueError(
                        f"The ledger {self._path} holds the budget {fmt_budget(*stored)}, but this "
                        f"BudgetAccountant was given {fmt_budget(self._epsilon, self._delta)}. Pass "
                        f"epsilon={stored[0]!r}, delta={stored[1]!r} to reopen it, or use a new "
                        "ledger file for a new budget."
                    )
                rule = meta.get("composition")
                if rule is None:  # a ledger from before composition rules were stored
                    conn.execute("INSERT INTO skdp_meta (key, value) VALUES (?, ?)",
                                 ("composition", self._composition))
                elif rule != self._composition:
                    raise ValueError(
                        f"The ledger {self._path} composes spends with composition={rule!r}, "
                        f"but this BudgetAccountant was given composition="
                        f"{self._composition!r}. Pass composition={rule!r} to reopen it, or "
                        "use a new ledger file."
                    )
            if stored_id is None:  # a new ledger, or one from before ids were stored
                stored_id = uuid.uuid4().hex
                conn.execute("INSERT INTO skdp_meta (key, value) VALUES (?, ?)",
                             ("ledger_id", stored_id))
            if self._ledger_id is not None and stored_id != self._ledger_id:
                raise LedgerChanged(self._changed_message("holds another ledger"))
            self._ledger_id = stored_id
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        file_id = _file_identity(self._path)
        if self._file_id is not None and file_id != self._file_id:
            raise LedgerChanged(self._changed_message(
                "was deleted or moved" if file_id is None else "holds another file"))
        self._file_id = file_id
        self._sync()

    def _move_to_temp_ledger(self) -> None:
        """Move an in-memory accountant to a temporary SQLite ledger (under the lock)."""
        fd, path = tempfile.mkstemp(prefix="skdp-budget-", suffix=".sqlite",
                                    dir=tempfile.gettempdir())
        os.close(fd)
        owned = []
        ledger_id = uuid.uuid4().hex
        saved = (self._path, self._temp, self._conn, self._conn_pid, self._owned_conns)
        try:
            self._path, self._temp, self._owned_conns = path, True, owned
            self._conn = None
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                _create_schema(conn)
                conn.executemany("INSERT INTO skdp_meta (key, value) VALUES (?, ?)", [
                    ("schema", SCHEMA_VERSION),
                    ("epsilon", repr(self._epsilon)),
                    ("delta", repr(self._delta)),
                    ("composition", self._composition),
                    ("temporary", "1"),
                    ("replay", "1" if self._default else "0"),
                    ("ledger_id", ledger_id),
                ])
                conn.executemany(
                    "INSERT INTO skdp_spends (id, epsilon, delta, mechanism, label, pid, created, "
                    "seed_key, seed_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(i + 1, s.epsilon, s.delta, _mechanism_json(s.mechanism), s.label,
                      self._origin_pid, None, s.seed_key, s.seed_index)
                     for i, s in enumerate(self._tally.spends)])
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise
        except BaseException:
            remove_temp_ledger(path, os.getpid(), owned)
            self._path, self._temp, self._conn, self._conn_pid, self._owned_conns = saved
            raise
        self._last_id = len(self._tally.spends)
        self._ledger_id, self._file_id = ledger_id, _file_identity(path)
        weakref.finalize(self, remove_temp_ledger, path, os.getpid(), owned)

    def _changed_message(self, what: str) -> str:
        return (
            f"The ledger path {self._path} {what}: it is no longer the ledger file this "
            "BudgetAccountant opened, so spends and checks are refused (nothing was charged). "
            "A ledger that was deleted, moved or replaced while in use would otherwise split "
            "one budget in two: this accountant would keep charging a file no one else reads, "
            "while a new accountant on the path starts from zero. To fix: put the original "
            f"ledger file back at {self._path} (spends then resume), or, to start a new budget "
            "on purpose, create a new BudgetAccountant(ledger=...) for it."
        )

    def _verify_same_ledger(self, conn: sqlite3.Connection) -> None:
        """Refuse unless the path still holds the ledger opened (inside a transaction)."""
        if self._file_id is None:
            return
        file_id = _file_identity(self._path)
        if file_id is None:
            raise LedgerChanged(self._changed_message("was deleted or moved"))
        if file_id != self._file_id:
            raise LedgerChanged(self._changed_message("holds another file"))
        row = conn.execute("SELECT value FROM skdp_meta WHERE key = 'ledger_id'").fetchone()
        if row is None or row[0] != self._ledger_id:
            raise LedgerChanged(self._changed_message("holds another ledger"))

    def _sync(self) -> None:
        """Bring the local tally up to date with the ledger file."""
        if self._path is None:
            return
        self._ensure_reachable()
        conn = self._connection()
        conn.execute("BEGIN")
        try:
            self._verify_same_ledger(conn)
            self._sync_rows(conn)
        finally:
            conn.execute("COMMIT")

    def _sync_rows(self, conn: sqlite3.Connection) -> None:
        columns = "id, epsilon, delta, mechanism, label, seed_key, seed_index"
        (count,) = conn.execute("SELECT COUNT(*) FROM skdp_spends").fetchone()
        rows = conn.execute(
            f"SELECT {columns} FROM skdp_spends WHERE id > ? ORDER BY id",
            (self._last_id,)).fetchall()
        if len(self._tally.spends) + len(rows) != count:
            # Rows were removed by hand: rebuild from scratch.
            self._tally, self._last_id = self._new_tally(), 0
            rows = conn.execute(f"SELECT {columns} FROM skdp_spends ORDER BY id").fetchall()
        for row_id, eps, delta, mech_json, label, key, index in rows:
            mechanism = None
            if mech_json is not None:
                try:
                    mechanism = mechanism_from_dict(json.loads(mech_json))
                except (ValueError, TypeError) as exc:
                    warnings.warn(
                        f"Ledger {self._path}, spend {row_id}: unreadable mechanism ({exc}); "
                        "counted at its recorded (epsilon, delta) without composition.")
            self._tally.add(Spend(float(eps), float(delta), mechanism, label, key,
                                  None if index is None else int(index)))
            self._last_id = row_id

    def _pickle_state(self) -> dict:
        """The state :func:`restore` rebuilds the accountant from (moves an in-memory
        accountant to a temporary ledger first: it may be going to another process)."""
        with self._lock:
            if (self._path is None and self._refuse is None
                    and self._origin_pid == os.getpid()):
                # Going to another process, perhaps: share spends through a file.
                self._move_to_temp_ledger()
            try:
                self._sync()
            except (BudgetError, sqlite3.Error):
                pass  # pickling a copy whose ledger is gone: it stays a refusing snapshot
            state = {
                "token": self._token,
                "pid": self._origin_pid,
                "epsilon": self._epsilon,
                "delta": self._delta,
                "composition": self._composition,
                "path": self._path,
                "temp": self._temp,
                "default": self._default,
                "refuse": self._refuse,
                "ledger_id": self._ledger_id,
                "file_id": self._file_id,
                # A fallback snapshot, used only where the file is gone.
                "spends": list(self._tally.spends) if self._path is None or self._temp else [],
            }
        return state


def _check_ledger_schema(conn: sqlite3.Connection, path: str) -> None:
    """Refuse a ledger this version cannot read safely: corrupt, foreign or newer."""
    try:
        tables = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return  # a new, empty file
        meta = {}
        if "skdp_meta" in tables:
            meta = dict(conn.execute("SELECT key, value FROM skdp_meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise BudgetError(
            f"The ledger file {path} is not a readable skdp ledger ({exc}); it is left "
            "untouched. Restore it from a backup, or use a new ledger file."
        ) from None
    if "skdp_meta" not in tables or "skdp_spends" not in tables or "epsilon" not in meta:
        raise BudgetError(
            f"The file {path} is an SQLite database but not an skdp ledger (tables "
            f"{sorted(tables)}); it is left untouched. Pass a new path for a new ledger."
        )
    schema = meta.get("schema", "1")
    try:
        newer = int(schema) > int(SCHEMA_VERSION)
    except ValueError:
        newer = True
    if newer:
        raise BudgetError(
            f"The ledger {path} was written by a newer skdp (ledger schema {schema!r}; this "
            f"version reads schema {SCHEMA_VERSION} and older). Spends are refused rather "
            "than miscounted: upgrade skdp to use this ledger."
        )


def _create_schema(conn: sqlite3.Connection) -> None:
    """Create the ledger tables, or add the columns an older ledger lacks."""
    conn.execute("CREATE TABLE IF NOT EXISTS skdp_meta "
                 "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS skdp_spends ("
        "id INTEGER PRIMARY KEY AUTOINCREMENT, epsilon REAL NOT NULL, "
        "delta REAL NOT NULL, mechanism TEXT, label TEXT, pid INTEGER, created REAL, "
        "seed_key TEXT, seed_index INTEGER)")
    columns = {row[1] for row in conn.execute("PRAGMA table_info(skdp_spends)")}
    for name, kind in (("seed_key", "TEXT"), ("seed_index", "INTEGER")):
        if name not in columns:
            conn.execute(f"ALTER TABLE skdp_spends ADD COLUMN {name} {kind}")
    conn.execute("CREATE INDEX IF NOT EXISTS skdp_spends_seed_key ON skdp_spends (seed_key)")


def _file_identity(path: str):
    """(st_dev, st_ino) of the file at ``path``, or None if there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _create_owner_only(path: str) -> None:
    """Create an empty ledger file readable and writable by its owner only (0600).

    Created with that mode (never chmod-ed afterwards, so it is never
    readable by others, even briefly); SQLite gives its WAL, shared-memory
    and journal files the mode of the database file.  An existing file is
    left as it is; a path that cannot be created is reported by SQLite.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return
    os.close(fd)


def _rollback(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error:  # pragma: no cover - no transaction left to roll back
        pass


def _mechanism_json(mechanism: Optional[Mechanism]) -> Optional[str]:
    if mechanism is None:
        return None
    return json.dumps(mechanism.to_dict(), allow_nan=False)

"""The privacy budget accountant: one ledger of every private release.

A :class:`BudgetAccountant` holds a total budget (epsilon, delta) and the list
of spends charged against it.  Every private fit checks and charges its whole
worst-case cost before touching the data; an over-budget charge raises
:class:`BudgetError` and records nothing.  Totals compose the recorded
mechanisms tightly (RDP, analytic Gaussian, pure composition), so many small
Gaussian fits cost far less than the sum of their epsilons.

Accountants are shared, never copied: ``copy.deepcopy`` and
``sklearn.clone`` return the same object, so every fit of a grid search is
charged to one budget.  Checks and charges are atomic across threads (a
lock) and, with ``ledger="file.sqlite"``, across processes (an SQLite
transaction); an in-memory accountant that reached another process by
pickling refuses to spend there instead of losing the charge.

Neighbouring datasets differ by adding or removing one record.
"""

from __future__ import annotations

import contextvars
import json
import math
import os
import sqlite3
import threading
import time
import uuid
import warnings
import weakref
from dataclasses import dataclass
from typing import Optional

from .mechanisms import Composed, Mechanism, Repeated, mechanism_from_dict
from .rdp import _DEFAULT_KEY, _cost, _epsilon_of_cost, _zero_cost, get_epsilon

__all__ = [
    "BudgetAccountant",
    "BudgetError",
    "Spend",
    "get_default_accountant",
    "current_accountant",
]

# Relative slack of the budget comparisons (floating-point sums only).
_SLACK = 1e-9
# A spend's claimed epsilon may undercut its mechanism's epsilon by this much.
_CLAIM_RTOL = 1e-6
_SCHEMA_VERSION = "1"


class BudgetError(ValueError):
    """A privacy spend that does not fit in the budget, or cannot be recorded.

    Raised before anything is recorded: the accountant is unchanged.
    """


@dataclass(frozen=True)
class Spend:
    """One recorded charge.

    Parameters
    ----------
    epsilon : float
        The epsilon charged.
    delta : float
        The delta charged.
    mechanism : Mechanism or None
        What was run, if known; spends with a mechanism compose tightly.
    label : str or None
        Free text (e.g. the estimator and solver).
    """

    epsilon: float
    delta: float
    mechanism: Optional[Mechanism] = None
    label: Optional[str] = None


def _fmt(eps: float, delta: float) -> str:
    return f"(epsilon={eps:.6g}, delta={delta:.6g})"


class _Tally:
    """Running composition of a list of spends."""

    def __init__(self):
        self.spends = []
        self.plain_eps, self.plain_delta = [], []
        self.mech_eps, self.mech_delta = [], []
        self.cost = _zero_cost(_DEFAULT_KEY)

    def add(self, spend: Spend) -> None:
        self.spends.append(spend)
        if spend.mechanism is None:
            self.plain_eps.append(spend.epsilon)
            self.plain_delta.append(spend.delta)
        else:
            self.mech_eps.append(spend.epsilon)
            self.mech_delta.append(spend.delta)
            self.cost = self.cost + _cost(spend.mechanism, _DEFAULT_KEY)

    def totals(self, extra: Optional[Spend] = None):
        plain_eps, plain_delta = list(self.plain_eps), list(self.plain_delta)
        mech_eps, mech_delta, cost = list(self.mech_eps), list(self.mech_delta), self.cost
        if extra is not None:
            if extra.mechanism is None:
                plain_eps.append(extra.epsilon)
                plain_delta.append(extra.delta)
            else:
                mech_eps.append(extra.epsilon)
                mech_delta.append(extra.delta)
                cost = cost + _cost(extra.mechanism, _DEFAULT_KEY)
        eps = math.fsum(plain_eps)
        if mech_eps:
            d = min(math.fsum(mech_delta), 1.0 - 1e-16)
            composed = _epsilon_of_cost(cost, d, _DEFAULT_KEY)
            eps += min(math.fsum(mech_eps), composed)
        delta = math.fsum(plain_delta) + math.fsum(mech_delta)
        return eps, delta


# Every accountant alive in this process, by token: unpickling in the process
# that owns an accountant returns that very object.
_LIVE: "weakref.WeakValueDictionary[str, BudgetAccountant]" = weakref.WeakValueDictionary()
_LIVE_LOCK = threading.Lock()


def _restore(state: dict) -> "BudgetAccountant":
    with _LIVE_LOCK:
        live = _LIVE.get(state["token"])
    if live is not None:
        return live
    acc = BudgetAccountant.__new__(BudgetAccountant)
    acc._setup(state["epsilon"], state["delta"], state["path"], token=state["token"],
               origin_pid=state["pid"])
    if acc._path is None:
        for s in state["spends"]:
            acc._tally.add(s)
    return acc


class BudgetAccountant:
    r"""A privacy budget and the ledger of what has been spent from it.

    Parameters
    ----------
    epsilon : float, default=inf
        Total epsilon budget (> 0; ``inf`` means unlimited).
    delta : float, default=1.0
        Total delta budget in [0, 1] (1 means unconstrained).
    ledger : str or path-like or None, default=None
        None keeps the spends in memory (this process only).  A file path
        keeps them in an SQLite database (WAL mode, one ``BEGIN IMMEDIATE``
        transaction per check-and-spend): the budget survives restarts and
        crashes and is shared by every process and accountant that opens the
        file.  The budget is stored in the file on creation; opening an
        existing ledger with a different budget raises ValueError.

    Attributes
    ----------
    epsilon, delta : float
        The total budget.
    ledger_path : str or None
        Absolute path of the SQLite ledger, if any.

    Notes
    -----
    **Composition.**  :meth:`spent` returns
    :math:`(\varepsilon_{plain} + \min(\sum_i \varepsilon_i,
    \varepsilon_{M}(\delta_M)),\ \sum_i \delta_i)`: spends without a
    mechanism add up; spends with mechanisms are also composed as one
    mechanism tree :math:`M` at :math:`\delta_M`, the sum of their deltas,
    with :func:`~skdp.accounting.get_epsilon` (RDP, analytic Gaussian or
    pure composition, whichever is smallest).  Both are valid bounds, so the
    total never under-reports.  Refusing spends once the budget is reached
    makes the accountant a privacy filter: for spends fixed in advance (a
    grid search, cross-validation) the tight total is exact; for spends
    chosen adaptively from earlier private outputs, basic composition (the
    sum of epsilons and deltas) and Gaussian-only composition remain valid
    filters, while the RDP route with its minimum over orders is a
    widely used approximation of one.

    **Concurrency.**  Check-and-spend is atomic: a re-entrant lock serialises
    threads, and with an SQLite ledger one ``BEGIN IMMEDIATE`` transaction
    serialises processes.

    **Sharing.**  ``copy.copy``, ``copy.deepcopy`` and ``sklearn.clone`` (via
    deepcopy) return the accountant itself.  Pickling then unpickling in the
    same process also returns the same object.  In another process an
    in-memory accountant is a read-only snapshot whose :meth:`spend` and
    :meth:`check` raise :class:`BudgetError`; an SQLite-backed one reopens
    the file and spends normally.

    **Context.**  ``with accountant:`` makes it the one returned by
    :func:`current_accountant` in this context (thread or task); contexts
    nest.

    Examples
    --------
    >>> from skdp.accounting import BudgetAccountant, Gaussian, get_epsilon
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    >>> _ = acc.spend(0.3, 1e-6, label="first fit")
    >>> acc.remaining()
    (0.7, 9e-06)
    """

    def __init__(self, epsilon: float = float("inf"), delta: float = 1.0, ledger=None):
        epsilon = _check_budget_value(epsilon, "epsilon", upper=math.inf)
        if epsilon <= 0:
            raise ValueError(f"BudgetAccountant: epsilon must be > 0, got {epsilon!r}.")
        delta = _check_budget_value(delta, "delta", upper=1.0)
        path = None
        if ledger is not None:
            try:
                path = os.path.abspath(os.fspath(ledger))
            except TypeError:
                raise ValueError(
                    f"BudgetAccountant: ledger must be None or a file path, got {ledger!r}."
                ) from None
        self._setup(epsilon, delta, path, token=uuid.uuid4().hex, origin_pid=os.getpid())

    def _setup(self, epsilon, delta, path, *, token, origin_pid):
        self._epsilon = float(epsilon)
        self._delta = float(delta)
        self._path = path
        self._token = token
        self._origin_pid = origin_pid
        self._lock = threading.RLock()
        self._tally = _Tally()
        self._conn = None
        self._conn_pid = None
        self._last_id = 0
        self._stale_conns = []
        if path is not None:
            self._init_ledger()
        with _LIVE_LOCK:
            _LIVE[token] = self

    # -- public read-only state ----------------------------------------------
    @property
    def epsilon(self) -> float:
        """float: the total epsilon budget."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """float: the total delta budget."""
        return self._delta

    @property
    def ledger_path(self) -> Optional[str]:
        """str or None: the SQLite ledger file, if any."""
        return self._path

    @property
    def spends(self) -> list:
        """list of Spend: a copy of the recorded spends, oldest first."""
        with self._lock:
            self._sync()
            return list(self._tally.spends)

    @property
    def ledger(self) -> Composed:
        """Composed: every recorded mechanism as one tree (runs of equal
        mechanisms merged into :class:`Repeated`).  Spends recorded without a
        mechanism are not in it; see :attr:`spends`."""
        mechanisms = [s.mechanism for s in self.spends if s.mechanism is not None]
        merged = []
        for m in mechanisms:
            if merged and merged[-1][0] == m:
                merged[-1][1] += 1
            else:
                merged.append([m, 1])
        return Composed(m if k == 1 else Repeated(m, k) for m, k in merged)

    def spent(self):
        """Total privacy spent, composed tightly.

        Returns
        -------
        epsilon, delta : float
            See the class Notes for how spends compose.
        """
        with self._lock:
            self._sync()
            return self._tally.totals()

    def remaining(self):
        """Budget left.

        Returns
        -------
        epsilon, delta : float
            ``budget - spent``, floored at 0 (``inf`` for an unlimited epsilon).
        """
        eps, delta = self.spent()
        left_eps, left_delta = self._epsilon - eps, self._delta - delta
        # Differences within the comparison slack are rounding noise.
        if math.isfinite(self._epsilon) and left_eps <= self._epsilon * _SLACK:
            left_eps = 0.0
        if left_delta <= self._delta * _SLACK + 1e-15:
            left_delta = 0.0
        return left_eps, left_delta

    def __len__(self) -> int:
        with self._lock:
            self._sync()
            return len(self._tally.spends)

    def __bool__(self) -> bool:
        # An accountant with no spends is still an accountant: never falsy,
        # so ``accountant or default`` cannot silently switch ledgers.
        return True

    def __repr__(self) -> str:
        try:
            eps, delta = self.spent()
            n = len(self._tally.spends)
            spent = f", spent={_fmt(eps, delta)}, n_spends={n}"
        except Exception:  # pragma: no cover - repr must not fail
            spent = ""
        where = f", ledger={self._path!r}" if self._path else ""
        return f"BudgetAccountant(epsilon={self._epsilon!r}, delta={self._delta!r}{where}{spent})"

    # -- charging -------------------------------------------------------------
    def check(self, epsilon: float, delta: float, mechanism: Optional[Mechanism] = None) -> bool:
        """Check that a spend would fit, without recording it.

        Parameters
        ----------
        epsilon : float
            Epsilon of the spend, > 0 and finite.
        delta : float
            Delta of the spend, in [0, 1).
        mechanism : Mechanism or None, default=None
            What will be run; its own epsilon at ``delta`` must not exceed
            ``epsilon``.

        Returns
        -------
        True

        Raises
        ------
        BudgetError
            If the spend does not fit, or this accountant cannot record
            spends in this process.
        ValueError
            Invalid arguments.
        """
        spend = _make_spend(epsilon, delta, mechanism, None)
        with self._lock:
            self._ensure_reachable()
            self._sync()
            self._verify_fits(spend)
        return True

    def spend(self, epsilon: float, delta: float, mechanism: Optional[Mechanism] = None,
              label: Optional[str] = None) -> "BudgetAccountant":
        """Check and record one spend, atomically.

        Parameters
        ----------
        epsilon : float
            Epsilon charged, > 0 and finite.
        delta : float
            Delta charged, in [0, 1).
        mechanism : Mechanism or None, default=None
            What is run.  With a mechanism the spend composes tightly with the
            others; its own epsilon at ``delta`` must not exceed ``epsilon``.
        label : str or None, default=None
            Free text stored with the spend.

        Returns
        -------
        self : BudgetAccountant
            The accountant, for chaining.

        Raises
        ------
        BudgetError
            If the new total would exceed the budget (nothing is recorded),
            or this accountant cannot record spends in this process.
        ValueError
            Invalid arguments.
        """
        spend = _make_spend(epsilon, delta, mechanism, label)
        with self._lock:
            self._ensure_reachable()
            if self._path is None:
                self._verify_fits(spend)
                self._tally.add(spend)
                return self
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._sync_rows(conn)
                self._verify_fits(spend)
                cur = conn.execute(
                    "INSERT INTO skdp_spends (epsilon, delta, mechanism, label, pid, created) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (spend.epsilon, spend.delta,
                     None if mechanism is None else json.dumps(mechanism.to_dict(), allow_nan=False),
                     label, os.getpid(), time.time()),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            self._tally.add(spend)
            self._last_id = cur.lastrowid
            return self

    def _verify_fits(self, spend: Spend) -> None:
        eps, delta = self._tally.totals()
        new_eps, new_delta = self._tally.totals(spend)
        fits_eps = new_eps <= self._epsilon * (1 + _SLACK) + 1e-12
        fits_delta = new_delta <= self._delta * (1 + _SLACK) + 1e-15
        if fits_eps and fits_delta:
            return
        what = f" ({spend.label})" if spend.label else ""
        left_eps, left_delta = max(0.0, self._epsilon - eps), max(0.0, self._delta - delta)
        over = " and ".join(n for n, ok in (("epsilon", fits_eps), ("delta", fits_delta)) if not ok)
        raise BudgetError(
            f"Privacy budget exceeded ({over}): this spend{what} asks for "
            f"{_fmt(spend.epsilon, spend.delta)}; already spent {_fmt(eps, delta)} in "
            f"{len(self._tally.spends)} spend(s) of the budget {_fmt(self._epsilon, self._delta)}; "
            f"left {_fmt(left_eps, left_delta)}; with this spend the total would be "
            f"{_fmt(new_eps, new_delta)}. Nothing was recorded. To fix: ask for at most what "
            "is left (smaller epsilon/delta), or use a BudgetAccountant with a larger budget."
        )

    def _ensure_reachable(self) -> None:
        if self._path is None and self._origin_pid != os.getpid():
            raise BudgetError(
                f"This BudgetAccountant lives in process {self._origin_pid}; this is process "
                f"{os.getpid()} (e.g. a joblib/loky worker), and spends from worker processes "
                "cannot reach it, so this spend is refused rather than lost. Use "
                "BudgetAccountant(ledger='path.sqlite') to share a budget across processes, "
                "or run in threads (n_jobs with the threading backend)."
            )

    # -- SQLite ledger --------------------------------------------------------
    def _connection(self) -> sqlite3.Connection:
        pid = os.getpid()
        if self._conn is None or self._conn_pid != pid:
            if self._conn is not None:
                # Inherited across fork: never reuse, never close it here.
                self._stale_conns.append(self._conn)
            conn = sqlite3.connect(self._path, timeout=60.0, isolation_level=None,
                                   check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 60000")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # pragma: no cover - exotic filesystems
                warnings.warn(f"SQLite ledger {self._path}: WAL mode unavailable ({mode}).")
            conn.execute("PRAGMA synchronous = FULL")
            self._conn, self._conn_pid = conn, pid
        return self._conn

    def _init_ledger(self) -> None:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS skdp_meta "
                         "(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS skdp_spends ("
                "id INTEGER PRIMARY KEY AUTOINCREMENT, epsilon REAL NOT NULL, "
                "delta REAL NOT NULL, mechanism TEXT, label TEXT, pid INTEGER, created REAL)")
            meta = dict(conn.execute("SELECT key, value FROM skdp_meta").fetchall())
            if "epsilon" not in meta:
                conn.executemany("INSERT INTO skdp_meta (key, value) VALUES (?, ?)", [
                    ("schema", _SCHEMA_VERSION),
                    ("epsilon", repr(self._epsilon)),
                    ("delta", repr(self._delta)),
                ])
            else:
                stored = float(meta["epsilon"]), float(meta["delta"])
                if stored != (self._epsilon, self._delta):
                    raise ValueError(
                        f"The ledger {self._path} holds the budget {_fmt(*stored)}, but this "
                        f"BudgetAccountant was given {_fmt(self._epsilon, self._delta)}. Pass "
                        f"epsilon={stored[0]!r}, delta={stored[1]!r} to reopen it, or use a new "
                        "ledger file for a new budget."
                    )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._sync()

    def _sync(self) -> None:
        """Bring the local tally up to date with the ledger file."""
        if self._path is None:
            return
        conn = self._connection()
        conn.execute("BEGIN")
        try:
            self._sync_rows(conn)
        finally:
            conn.execute("COMMIT")

    def _sync_rows(self, conn: sqlite3.Connection) -> None:
        (count,) = conn.execute("SELECT COUNT(*) FROM skdp_spends").fetchone()
        rows = conn.execute(
            "SELECT id, epsilon, delta, mechanism, label FROM skdp_spends WHERE id > ? "
            "ORDER BY id", (self._last_id,)).fetchall()
        if len(self._tally.spends) + len(rows) != count:
            # Rows were removed by hand: rebuild from scratch.
            self._tally, self._last_id = _Tally(), 0
            rows = conn.execute("SELECT id, epsilon, delta, mechanism, label FROM skdp_spends "
                                "ORDER BY id").fetchall()
        for row_id, eps, delta, mech_json, label in rows:
            mechanism = None
            if mech_json is not None:
                try:
                    mechanism = mechanism_from_dict(json.loads(mech_json))
                except (ValueError, TypeError) as exc:
                    warnings.warn(
                        f"Ledger {self._path}, spend {row_id}: unreadable mechanism ({exc}); "
                        "counted at its recorded (epsilon, delta) without composition.")
            self._tally.add(Spend(float(eps), float(delta), mechanism, label))
            self._last_id = row_id

    # -- sharing --------------------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        with self._lock:
            self._sync()
            state = {
                "token": self._token,
                "pid": self._origin_pid,
                "epsilon": self._epsilon,
                "delta": self._delta,
                "path": self._path,
                "spends": [] if self._path else list(self._tally.spends),
            }
        return (_restore, (state,))

    # -- context --------------------------------------------------------------
    def __enter__(self) -> "BudgetAccountant":
        _STACK.set(_STACK.get() + (self,))
        with _ACTIVE_LOCK:
            _ACTIVE.append(self)
        return self

    def __exit__(self, *exc_info) -> None:
        stack = _STACK.get()
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                _STACK.set(stack[:i] + stack[i + 1:])
                break
        with _ACTIVE_LOCK:
            for i in range(len(_ACTIVE) - 1, -1, -1):
                if _ACTIVE[i] is self:
                    del _ACTIVE[i]
                    break


def _check_budget_value(value, name, *, upper):
    if isinstance(value, bool):
        raise ValueError(f"BudgetAccountant: {name} must be a number, got {value!r}.")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"BudgetAccountant: {name} must be a number, got {value!r}.") from None
    if math.isnan(value) or value < 0 or value > upper:
        bound = "[0, 1]" if upper == 1.0 else "(0, inf]"
        raise ValueError(f"BudgetAccountant: {name} must be in {bound}, got {value!r}.")
    return value


def _make_spend(epsilon, delta, mechanism, label) -> Spend:
    if isinstance(epsilon, bool):
        raise ValueError(f"spend: epsilon must be a number > 0, got {epsilon!r}.")
    try:
        epsilon = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"spend: epsilon must be a number > 0, got {epsilon!r}.") from None
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"spend: epsilon must be > 0 and finite, got {epsilon!r}.")
    if isinstance(delta, bool):
        raise ValueError(f"spend: delta must be a number in [0, 1), got {delta!r}.")
    try:
        delta = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"spend: delta must be a number in [0, 1), got {delta!r}.") from None
    if not (0.0 <= delta < 1.0):
        raise ValueError(f"spend: delta must be in [0, 1), got {delta!r}.")
    if mechanism is not None:
        if not isinstance(mechanism, Mechanism):
            raise ValueError(f"spend: mechanism must be a Mechanism or None, got {mechanism!r}.")
        own = get_epsilon(mechanism, delta)
        if own > epsilon * (1 + _CLAIM_RTOL) + 1e-12:
            raise ValueError(
                f"spend: the mechanism {mechanism!r} is only ({own:.6g}, {delta:.6g})-DP, but the "
                f"spend claims epsilon={epsilon:.6g}. Charge at least {own:.6g}, or calibrate the "
                "noise with skdp.accounting.calibrate for the claimed budget."
            )
    if label is not None and not isinstance(label, str):
        label = str(label)
    return Spend(epsilon, delta, mechanism, label)


# -- default and current accountant ---------------------------------------------
_STACK: contextvars.ContextVar = contextvars.ContextVar("skdp_accountant_stack", default=())
_ACTIVE: list = []
_ACTIVE_LOCK = threading.Lock()
_DEFAULT: Optional[BudgetAccountant] = None
_DEFAULT_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    # Locks held by other threads at fork time would never be released here.
    global _ACTIVE_LOCK, _DEFAULT_LOCK, _LIVE_LOCK
    _ACTIVE_LOCK, _DEFAULT_LOCK, _LIVE_LOCK = threading.Lock(), threading.Lock(), threading.Lock()
    for acc in list(_LIVE.values()):
        acc._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def get_default_accountant() -> BudgetAccountant:
    """The process-wide default accountant.

    Returns
    -------
    accountant : BudgetAccountant
        An in-memory accountant with an unlimited budget, created on first
        use; each process (including forked or spawned workers) has its own.
    """
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT._origin_pid != os.getpid():
            _DEFAULT = BudgetAccountant()
        return _DEFAULT


def current_accountant() -> BudgetAccountant:
    """The accountant private estimators charge when given none.

    Returns
    -------
    accountant : BudgetAccountant
        The innermost accountant entered with ``with accountant:`` in the
        current context (thread or asyncio task).  A thread started without
        one of its own (e.g. a joblib threading worker, which does not
        inherit the context) gets the most recently entered accountant still
        active in this process, so its fits are charged to the budget in
        force rather than silently to the default.  Otherwise the default
        accountant (:func:`get_default_accountant`).
    """
    stack = _STACK.get()
    if stack:
        return stack[-1]
    with _ACTIVE_LOCK:
        if _ACTIVE:
            return _ACTIVE[-1]
    return get_default_accountant()


r"""The privacy budget accountant: one ledger of every private release.

A :class:`BudgetAccountant` holds a total budget (epsilon, delta) and the list
of spends charged against it.  Every private fit checks and charges its whole
worst-case cost before touching the data; an over-budget charge raises
:class:`BudgetError` and records nothing.  Spends compose by one of two rules,
each a valid *privacy filter* (spends may be chosen adaptively, from earlier
private outputs):

- ``composition='basic'`` (default): the claimed epsilons add up and the
  claimed deltas add up (Rogers, Roth, Ullman & Vadhan 2016);
- ``composition='gaussian'``: every spend is a mu-Gaussian-DP release, the
  mu's compose as :math:`\mu^2 = \sum_i \mu_i^2` and the total is quoted at
  the budget's delta (Dong, Roth & Su 2022; Smith & Thakurta 2022), so many
  Gaussian fits cost far less than the sum of their epsilons.

Accountants are shared, never copied: ``copy.deepcopy`` and
``sklearn.clone`` return the same object, so every fit of a grid search is
charged to one budget.  Checks and charges are atomic across threads (a
lock) and across processes (an SQLite transaction): with
``ledger="file.sqlite"``, or, for an in-memory accountant sent to worker
processes by pickling, through a temporary SQLite file it moves itself to.

Neighbouring datasets are zero-out neighbours (Kairouz et al. 2021): one
record replaced by a null record that contributes nothing.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import math
import os
import sqlite3
import tempfile
import threading
import time
import urllib.request
import uuid
import warnings
import weakref
from dataclasses import dataclass
from typing import Optional

from scipy import special

from ._checks import check_delta, check_epsilon, check_number
from .mechanisms import (
    Composed,
    Gaussian,
    Laplace,
    Mechanism,
    PureDP,
    Repeated,
    mechanism_from_dict,
)
from .rdp import (
    _DEFAULT_KEY,
    _analytic_gaussian_epsilon,
    _cost,
    get_epsilon,
)

__all__ = [
    "BudgetAccountant",
    "BudgetError",
    "Spend",
    "get_default_accountant",
    "current_accountant",
    "context_accountant",
]

# Relative slack of the budget comparisons (floating-point sums only).
_SLACK = 1e-9
# A spend's claimed epsilon may undercut its mechanism's epsilon by this much.
_CLAIM_RTOL = 1e-6
_SCHEMA_VERSION = "2"
_COMPOSITIONS = ("basic", "gaussian")


class BudgetError(ValueError):
    """A privacy spend that does not fit in the budget, or cannot be recorded.

    Raised before anything is recorded: the accountant is unchanged.
    """


class _LedgerChanged(BudgetError):
    """The ledger path no longer holds the file the accountant opened."""


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
        What was run, if known.  Under ``composition='gaussian'`` it gives
        the spend's Gaussian-DP parameter.
    label : str or None
        Free text (e.g. the estimator and solver).
    seed_key : str or None
        Opaque digest of the seed the spend's noise was drawn from, given by
        the caller (None: fresh entropy).
    seed_index : int or None
        With a ``seed_key``: the number of spends already recorded on the
        accountant with the same key when this one was recorded (0, 1, ...);
        always 0 on the process default accountant (replay mode).  None
        without a key.
    """

    epsilon: float
    delta: float
    mechanism: Optional[Mechanism] = None
    label: Optional[str] = None
    seed_key: Optional[str] = None
    seed_index: Optional[int] = None


def _fmt(eps: float, delta: float) -> str:
    return f"(epsilon={eps:.6g}, delta={delta:.6g})"


# -- Gaussian differential privacy -----------------------------------------------
def _mu_of_pure(eps: float) -> float:
    """Smallest mu such that every eps-DP mechanism is mu-GDP.

    mu = 2 Phi^{-1}(e^eps / (1 + e^eps)) (Dong, Roth & Su 2022), computed as
    -2 Phi^{-1}(1 / (1 + e^eps)) for precision, and padded up by a few ulps.
    Valid: the trade-off curves G_mu and f_{eps,0} are equal at 0, at 1 and
    at f_{eps,0}'s kink alpha* = 1 / (1 + e^eps), where G_mu(alpha*) =
    Phi(-mu/2) = alpha*; G_mu is convex and f_{eps,0} is linear on [0,
    alpha*] and on [alpha*, 1], so G_mu <= f_{eps,0} everywhere.  Tight:
    randomized response is eps-DP with trade-off exactly f_{eps,0}, and any
    smaller mu puts G_mu above it at alpha*.
    """
    if eps == 0:
        return 0.0
    mu = -2.0 * float(special.ndtri(special.expit(-eps)))
    return mu * (1 + 1e-12) if math.isfinite(mu) else math.inf


def _gdp_mu2(spend: Spend) -> Optional[float]:
    """mu^2 of a spend under Gaussian DP, or None if it has no GDP form."""
    if spend.mechanism is None:
        return _mu_of_pure(spend.epsilon) ** 2 if spend.delta == 0 else None
    return _mechanism_mu2(spend.mechanism)


def _mechanism_mu2(mechanism: Mechanism) -> Optional[float]:
    """mu^2 of a mechanism under Gaussian DP, part by part, or None if it has no GDP form.

    A Gaussian of noise multiplier z is exactly (1/z)-GDP; a Laplace or
    pure-DP part of epsilon e is mu_e-GDP (:func:`_mu_of_pure`); parts
    composed (``Composed``, ``Repeated``) add their mu^2, which is GDP
    composition (valid under adaptive choice).  Mapping each pure part on
    its own is what keeps a fit of many small Laplace steps cheap:
    mu_e^2 grows like (pi/2) e^2, so the sum over the parts is far below
    mu^2 of their summed epsilon.  Any other node is mapped whole from its
    cost (unsampled Gaussian parts plus one pure-DP epsilon), or has no GDP
    form (Poisson-sampled, zCDP, ...).
    """
    if isinstance(mechanism, Gaussian):
        z = mechanism.noise_multiplier
        return 1.0 / (z * z)
    if isinstance(mechanism, (Laplace, PureDP)):
        return _mu_of_pure(mechanism.epsilon) ** 2
    if isinstance(mechanism, Composed):
        parts = [_mechanism_mu2(child) for child in mechanism.mechanisms]
        return None if any(p is None for p in parts) else math.fsum(parts)
    if isinstance(mechanism, Repeated):
        part = _mechanism_mu2(mechanism.mechanism)
        return None if part is None else part * mechanism.count
    cost = _cost(mechanism, _DEFAULT_KEY)
    if cost.other:
        return None
    mu2 = cost.gauss
    if cost.pure > 0:
        mu2 += _mu_of_pure(cost.pure) ** 2
    return mu2


def _gdp_epsilon(mu2: float, delta: float) -> float:
    """Exact epsilon of a mu-GDP release at ``delta`` (analytic Gaussian)."""
    mu = math.sqrt(mu2)
    if not math.isfinite(mu):
        return math.inf
    return _analytic_gaussian_epsilon(mu, delta)


def _gdp_mu_budget(epsilon: float, delta: float) -> float:
    """Largest mu whose Gaussian is (epsilon, delta)-DP (bisection on log mu)."""
    if not math.isfinite(epsilon):
        return math.inf

    def fits(mu):
        return _analytic_gaussian_epsilon(mu, delta) <= epsilon

    lo = hi = 1.0
    while fits(hi):
        lo, hi = hi, hi * 2
    while not fits(lo):
        lo, hi = lo / 2, lo
        if lo < 1e-300:
            return 0.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if not lo < mid < hi:
            break
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


class _Tally:
    """Running totals of a list of spends under one composition rule.

    'basic': (fsum of epsilons, fsum of deltas).  'gaussian': mu^2 is the
    fsum of the spends' mu_i^2, converted at the budget delta.  Both are
    non-decreasing as spends are added (a correctly rounded sum of more
    non-negative terms is never smaller); the reported Gaussian epsilon is
    also floored at the largest value reported so far, so root-finding
    round-off can never make it step back.
    """

    def __init__(self, composition: str, budget_delta: float, replay: bool):
        self.composition = composition
        self.budget_delta = budget_delta
        self.replay = replay
        self.spends = []
        self.eps, self.deltas, self.mu2 = [], [], []
        self.no_gdp = False
        self.key_counts = {}
        self.shared_seed = False
        self.floor = 0.0

    def seed_index(self, key: Optional[str]) -> Optional[int]:
        if key is None:
            return None
        return 0 if self.replay else self.key_counts.get(key, 0)

    def add(self, spend: Spend) -> None:
        self.spends.append(spend)
        self.eps.append(spend.epsilon)
        self.deltas.append(spend.delta)
        if self.composition == "gaussian":
            mu2 = _gdp_mu2(spend)
            if mu2 is None:  # only from hand-edited or unreadable ledger rows
                self.no_gdp = True
            else:
                self.mu2.append(mu2)
        if spend.seed_key is not None:
            count = self.key_counts.get(spend.seed_key, 0)
            self.shared_seed = self.shared_seed or count > 0
            self.key_counts[spend.seed_key] = count + 1

    def totals(self, extra: Optional[Spend] = None, *, extra_mu2: Optional[float] = None):
        """(epsilon, delta) of the recorded spends, plus ``extra`` if given."""
        n = len(self.spends) + (extra is not None)
        shared = self.replay and (self.shared_seed or (
            extra is not None and extra.seed_key is not None
            and extra.seed_key in self.key_counts))
        if self.composition == "basic":
            eps = self.eps + [extra.epsilon] if extra is not None else self.eps
            deltas = self.deltas + [extra.delta] if extra is not None else self.deltas
            total = (math.fsum(eps), math.fsum(deltas))
        elif n == 0:
            total = (0.0, 0.0)
        else:
            mu2 = self.mu2 + [extra_mu2] if extra is not None else self.mu2
            eps = math.inf if self.no_gdp else _gdp_epsilon(math.fsum(mu2), self.budget_delta)
            eps = max(eps, self.floor)
            if extra is None:
                self.floor = eps
            total = (eps, self.budget_delta)
        if shared:
            # Replay mode: two fits with one seed drew the same noise, so
            # they never compose as independent releases.
            total = (math.inf, total[1])
        return total


# Every accountant alive in this process, by token: unpickling in the process
# that owns an accountant returns that very object.
_LIVE: "weakref.WeakValueDictionary[str, BudgetAccountant]" = weakref.WeakValueDictionary()
_LIVE_LOCK = threading.Lock()


def _restore(state: dict) -> "BudgetAccountant":
    """Unpickle an accountant (see ``BudgetAccountant.__reduce__``)."""
    with _LIVE_LOCK:
        live = _LIVE.get(state["token"])
    if live is not None:
        return live
    path = state["path"]
    reason = state.get("refuse")
    if path is not None and reason is None:
        if os.path.exists(path):
            acc = BudgetAccountant.__new__(BudgetAccountant)
            try:
                acc._setup(state["epsilon"], state["delta"], path,
                           composition=state["composition"], token=state["token"],
                           origin_pid=state["pid"], create=False, temp=state["temp"],
                           default=state["default"], ledger_id=state.get("ledger_id"),
                           file_id=state.get("file_id"))
                return acc
            except _LedgerChanged as exc:
                reason = str(exc)
            except (sqlite3.Error, BudgetError):
                if os.path.exists(path):
                    raise
    if path is not None and reason is None:
        # The file is gone (its accountant or its process ended).
        if state["default"]:
            # Nothing was at stake (unlimited budget): charge this process's own.
            return get_default_accountant()
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
    acc = BudgetAccountant.__new__(BudgetAccountant)
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


def _remove_temp_ledger(path: str, pid: int, conns: list) -> None:
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


class BudgetAccountant:
    r"""A privacy budget and the ledger of what has been spent from it.

    Parameters
    ----------
    epsilon : float, default=inf
        Total epsilon budget (> 0; ``inf`` means unlimited).
    delta : float, default=1.0
        Total delta budget in [0, 1] (1 means unconstrained).  With
        ``composition='gaussian'`` it must be in (0, 1): totals are quoted
        at this delta.
    ledger : str or path-like or None, default=None
        None keeps the spends in memory (but see *Processes* below).  A file
        path keeps them in an SQLite database (WAL mode, one ``BEGIN
        IMMEDIATE`` transaction per check-and-spend): the budget survives
        restarts and crashes and is shared by every process and accountant
        that opens the file.  The budget and the composition rule are stored
        in the file on creation; opening an existing ledger with different
        ones raises ValueError.  A new file is created readable and writable
        by its owner only (mode 0600, as are SQLite's WAL, shared-memory and
        journal files next to it).  The accountant remembers which file it
        opened (its device and inode, and a random id stored in it): once
        the path no longer holds that file (deleted, moved or replaced),
        every check, spend and read raises :class:`BudgetError` and nothing
        is charged, so one budget cannot be split between the old file and
        a new one; putting the file back resumes it.
    composition : {'basic', 'gaussian'}, default='basic'
        How spends add up (see Notes).  Checked here: ValueError if unknown,
        or if 'gaussian' is asked with a delta outside (0, 1).

    Attributes
    ----------
    epsilon, delta : float
        The total budget.
    composition : str
        The composition rule.
    ledger_path : str or None
        Absolute path of the SQLite ledger given as ``ledger``, if any (None
        for an in-memory accountant, even once it shares its spends through
        a temporary file).

    Notes
    -----
    **Composition** (``composition='basic'``).  :meth:`spent` returns
    :math:`(\sum_i \varepsilon_i, \sum_i \delta_i)` over the spends' claimed
    values, and a spend is refused iff the new total would exceed the
    budget in either coordinate.  Each claim is itself tight (the fit's
    mechanism was calibrated by :func:`~skdp.accounting.calibrate` with the
    best conversion for it), so one fit is charged exactly.  This is a
    valid privacy filter even when each fit and its (epsilon, delta) are
    chosen adaptively from earlier private outputs: basic composition is a
    valid filter (Rogers, Roth, Ullman & Vadhan 2016 [1]_).

    **Composition** (``composition='gaussian'``).  Each spend is a
    :math:`\mu_i`-GDP release: its unsampled Gaussian parts contribute
    :math:`\sum 1/z^2` to :math:`\mu_i^2`, and each of its Laplace or
    pure-DP parts, of epsilon :math:`e` (a spend with delta 0 and no
    mechanism counts as one pure part :math:`e=\varepsilon`), contributes
    :math:`\mu_e^2` with :math:`\mu_e = 2\Phi^{-1}(e^{e}/(1+e^{e}))`, the
    smallest :math:`\mu` such that every :math:`e`-DP mechanism is
    :math:`\mu`-GDP [2]_ (the GDP trade-off curve meets the
    :math:`e`-DP one at its kink and lies below it elsewhere; randomized
    response attains it).  With
    :math:`\mu^2 = \sum_i \mu_i^2`, :meth:`spent` returns the exact epsilon
    of a :math:`\mu`-Gaussian at the budget's delta (analytic Gaussian
    mechanism [4]_) and that delta; ``(0.0, 0.0)`` before the first spend.
    A spend is refused iff that epsilon would exceed the budget epsilon.
    GDP composes with these parameters even under fully adaptive choice of
    the :math:`\mu_i` [3]_, so this is a valid privacy filter; nine
    Gaussian fits at (1, 1e-5) total epsilon 3.41 at delta 1e-5 instead of
    9.  A spend with no GDP form (Poisson-sampled or zCDP parts; a spend
    with delta > 0 and no mechanism) raises :class:`BudgetError` and
    records nothing: use ``composition='basic'`` for those.  Parts are
    mapped one by one, so a pure-DP fit of many small Laplace steps is
    cheap (one fit at (1, 0), 100 steps at epsilon 0.01, reports 0.436 at
    delta 1e-5), but a single pure-DP release is not (one spend at (1, 0)
    without a mechanism reports 5.58 at delta 1e-5): keep such spends on
    ``'basic'``.  :meth:`remaining` is then the largest epsilon (at the budget delta) of
    one more Gaussian spend that would still be accepted.

    Either way :meth:`spent` never decreases as spends are added, and it is
    a valid bound on the privacy of everything recorded.

    **Neighbouring datasets** are zero-out neighbours [5]_: one record is
    replaced by a null record that contributes nothing.  n is public, a
    clipped sum has sensitivity ``clip_norm``, and the accounting of
    Poisson-sampled mechanisms equals that of add/remove neighbours.
    Replace-one neighbours follow as a group of two.

    **Concurrency.**  Check-and-spend is atomic: a re-entrant lock serialises
    threads, and an SQLite ``BEGIN IMMEDIATE`` transaction serialises
    processes.

    **Sharing.**  ``copy.copy``, ``copy.deepcopy`` and ``sklearn.clone`` (via
    deepcopy) return the accountant itself.  Pickling then unpickling in the
    same process also returns the same object.

    **Processes.**  When an in-memory accountant is pickled in the process
    that created it (e.g. sent to joblib/loky workers with ``n_jobs > 1``),
    it first moves itself, under its lock, to a temporary SQLite file in
    :func:`tempfile.gettempdir` (every spend, the budget and the rule
    copied) and from then on spends through it like a ledger accountant;
    the copies unpickled in other processes open that file, so the budget
    holds across processes and the origin sees every spend.  The file is
    removed when the accountant is garbage-collected or its process exits;
    a copy unpickled after that refuses every spend with
    :class:`BudgetError` (use ``ledger=`` for a budget that outlives its
    process).  A process forked with an in-memory accountant that was never
    pickled refuses to spend it.

    **Seeds.**  :meth:`charge` records a ``seed_key`` and returns the
    spend's ``seed_index``, the count of earlier spends with that key, so
    fits seeded alike draw distinct noise under one accountant and replay
    exactly against a fresh one.  The process default accountant is in
    *replay mode*: its ``seed_index`` is always 0 (same seed, same model),
    and its :meth:`spent` epsilon is ``inf`` once two spends share a key,
    because such fits share noise and never compose as independent.

    **Context.**  ``with accountant:`` makes it the one returned by
    :func:`current_accountant` and :func:`context_accountant` in this
    context (thread or asyncio task); contexts nest and are never seen from
    other threads.

    References
    ----------
    .. [1] R. Rogers, A. Roth, J. Ullman and S. Vadhan, "Privacy Odometers and
       Filters: Pay-as-you-Go Composition", NeurIPS 2016 (basic composition
       is a valid privacy filter under adaptive choice of the parameters).
    .. [2] J. Dong, A. Roth and W. J. Su, "Gaussian Differential Privacy",
       J. R. Stat. Soc. B 84(1), 2022 (epsilon-DP implies mu-GDP; GDP
       composition).
    .. [3] A. Smith and A. Thakurta, "Fully Adaptive Composition for Gaussian
       Differential Privacy", arXiv:2210.17520, 2022 (the filter comparing
       :math:`\sum_i \mu_i^2` to a threshold is valid for a fully adaptive
       analyst).
    .. [4] B. Balle and Y.-X. Wang, "Improving the Gaussian Mechanism for
       Differential Privacy: Analytical Calibration and Optimal Denoising",
       ICML 2018.
    .. [5] P. Kairouz, B. McMahan, S. Song, O. Thakkar, A. Thakurta and Z. Xu,
       "Practical and Private (Deep) Learning without Sampling or
       Shuffling", ICML 2021.

    Examples
    --------
    >>> from skdp.accounting import BudgetAccountant
    >>> acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    >>> _ = acc.spend(0.3, 1e-6, label="first fit")
    >>> acc.remaining()
    (0.7, 9e-06)

    An estimator given the accountant charges its whole fit to it before
    reading the data; a fit that does not fit in what is left raises
    :class:`BudgetError` and records nothing:

    >>> from sklearn.datasets import load_iris
    >>> from skdp import BudgetError, DPLogisticRegression
    >>> from skdp.datasets import documented_bounds
    >>> from skdp.preprocessing import BoundedScaler
    >>> X, y = load_iris(return_X_y=True)
    >>> X = BoundedScaler(documented_bounds("iris")).fit_transform(X)
    >>> clf = DPLogisticRegression(epsilon=0.5, delta=1e-6, classes=[0, 1, 2],
    ...                            accountant=acc, random_state=0).fit(X, y)
    >>> acc.spent()
    (0.8, 2e-06)
    >>> [spend.label for spend in acc.spends]
    ['first fit', "DPLogisticRegression(solver='gd')"]
    >>> try:
    ...     clf.fit(X, y)
    ... except BudgetError:
    ...     print("refused:", len(acc), "spends,", round(acc.remaining()[0], 6), "left")
    refused: 2 spends, 0.2 left
    """

    def __init__(self, epsilon: float = float("inf"), delta: float = 1.0, ledger=None,
                 composition: str = "basic"):
        epsilon = _check_budget_value(epsilon, "epsilon", upper=math.inf)
        if epsilon <= 0:
            raise ValueError(f"BudgetAccountant: epsilon must be > 0, got {epsilon!r}.")
        delta = _check_budget_value(delta, "delta", upper=1.0)
        if not (isinstance(composition, str) and composition in _COMPOSITIONS):
            raise ValueError(
                f"BudgetAccountant: composition must be 'basic' or 'gaussian', got "
                f"{composition!r}."
            )
        if composition == "gaussian" and not 0 < delta < 1:
            raise ValueError(
                f"BudgetAccountant: composition='gaussian' quotes the total epsilon at the "
                f"budget delta, which must be in (0, 1); got delta={delta!r}. Pass e.g. "
                "delta=1e-5, or use composition='basic'."
            )
        path = None
        if ledger is not None:
            try:
                path = os.path.abspath(os.fspath(ledger))
            except TypeError:
                raise ValueError(
                    f"BudgetAccountant: ledger must be None or a file path, got {ledger!r}."
                ) from None
        self._setup(epsilon, delta, path, composition=composition, token=uuid.uuid4().hex,
                    origin_pid=os.getpid(), create=True)

    def _setup(self, epsilon, delta, path, *, composition, token, origin_pid, create,
               temp=False, default=False, ledger_id=None, file_id=None):
        self._epsilon = float(epsilon)
        self._delta = float(delta)
        self._composition = composition
        self._path = path
        self._temp = temp  # spends go through a temporary ledger (was in-memory)
        self._default = default  # the process default accountant: replay mode
        self._refuse = None  # why this copy refuses every spend, if it does
        self._mu_budget = None  # 'gaussian': the budget as a GDP mu (computed when needed)
        self._token = token
        self._origin_pid = origin_pid
        self._lock = threading.RLock()
        self._tally = self._new_tally()
        self._conn = None
        self._conn_pid = None
        self._owned_conns = None  # the origin's connections to its temporary ledger
        self._last_id = 0
        self._stale_conns = []
        # Identity of the ledger opened: the random id stored in it, and the
        # (st_dev, st_ino) of its file; every check and charge compares both.
        self._ledger_id = ledger_id
        self._file_id = None if file_id is None else tuple(file_id)
        if path is not None:
            self._init_ledger(create=create)
        with _LIVE_LOCK:
            _LIVE[token] = self

    def _new_tally(self) -> _Tally:
        return _Tally(self._composition, self._delta, self._default)

    # -- public read-only state ----------------------------------------------
    @property
    def epsilon(self) -> float:
        """The total epsilon budget (float; ``inf`` when unlimited).

        Fixed at construction (read-only).
        """
        return self._epsilon

    @property
    def delta(self) -> float:
        """The total delta budget (float, in [0, 1]).

        Fixed at construction (read-only). Under ``composition='gaussian'``
        totals are quoted at this delta.
        """
        return self._delta

    @property
    def composition(self) -> str:
        """The composition rule (str): 'basic' or 'gaussian'.

        See the class Notes for how each rule adds up spends.
        """
        return self._composition

    @property
    def ledger_path(self) -> Optional[str]:
        """The absolute path of the SQLite ledger given as ``ledger`` (str or None).

        None for an in-memory accountant, even once it shares its spends
        through a temporary file.
        """
        return None if self._temp else self._path

    @property
    def spends(self) -> list:
        """A copy of the recorded spends, oldest first (list of :class:`Spend`).

        With a ledger file, spends recorded by other processes or
        accountants on that file are read first, so the list is complete.
        """
        with self._lock:
            self._sync()
            return list(self._tally.spends)

    @property
    def ledger(self) -> Composed:
        """Every recorded mechanism as one :class:`~skdp.accounting.Composed` tree.

        Runs of equal consecutive mechanisms are merged into
        :class:`~skdp.accounting.Repeated`. Spends recorded without a
        mechanism are not in it; see :attr:`spends`.
        """
        mechanisms = [s.mechanism for s in self.spends if s.mechanism is not None]
        merged = []
        for m in mechanisms:
            if merged and merged[-1][0] == m:
                merged[-1][1] += 1
            else:
                merged.append([m, 1])
        return Composed(m if k == 1 else Repeated(m, k) for m, k in merged)

    def spent(self):
        """Total privacy spent.

        Returns
        -------
        epsilon, delta : float
            'basic': the sums of the spends' epsilons and deltas.
            'gaussian': the epsilon of the composed Gaussian-DP release at
            the budget delta, and that delta ((0.0, 0.0) before any spend).
            Never decreases as spends are added.  On the process default
            accountant epsilon is ``inf`` once two spends share a seed key.
            See the class Notes.
        """
        with self._lock:
            self._sync()
            return self._tally.totals()

    def remaining(self):
        """Budget left.

        Returns
        -------
        epsilon, delta : float
            'basic': ``budget - spent``, floored at 0 (``inf`` for an
            unlimited epsilon).  'gaussian': the largest epsilon, quoted at
            the budget delta, of one more Gaussian spend that would still be
            accepted, and the budget delta.
        """
        with self._lock:
            self._sync()
            return self._left()

    def _left(self):
        """:meth:`remaining` from the local tally (no sync: callable in a transaction)."""
        eps, delta = self._tally.totals()
        if self._composition == "gaussian":
            if not math.isfinite(self._epsilon):
                return math.inf, self._delta
            if not math.isfinite(eps):
                return 0.0, self._delta
            if self._mu_budget is None:
                self._mu_budget = _gdp_mu_budget(self._epsilon, self._delta)
            mu_b = self._mu_budget
            left = mu_b * mu_b - math.fsum(self._tally.mu2)
            if left <= mu_b * mu_b * _SLACK:
                return 0.0, self._delta
            return _gdp_epsilon(left, self._delta), self._delta
        left_eps, left_delta = self._epsilon - eps, self._delta - delta
        # Differences within the comparison slack are rounding noise.
        if math.isfinite(self._epsilon) and left_eps <= self._epsilon * _SLACK:
            left_eps = 0.0
        if math.isnan(left_eps):  # inf - inf: replay mode on an unlimited budget
            left_eps = math.inf
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
        where = f", ledger={self.ledger_path!r}" if self.ledger_path else ""
        rule = ", composition='gaussian'" if self._composition == "gaussian" else ""
        return (f"BudgetAccountant(epsilon={self._epsilon!r}, delta={self._delta!r}"
                f"{where}{rule}{spent})")

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
        bool
            Always True: a spend that does not fit raises instead. Nothing
            is recorded either way.

        Raises
        ------
        BudgetError
            If the spend does not fit (or has no Gaussian-DP form under
            ``composition='gaussian'``), or this accountant cannot record
            spends in this process.
        ValueError
            Invalid arguments.
        """
        spend = _make_spend(epsilon, delta, mechanism, None, None)
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
            What is run; its own epsilon at ``delta`` must not exceed
            ``epsilon``.  Needed under ``composition='gaussian'`` for a
            spend with delta > 0.
        label : str or None, default=None
            Free text stored with the spend.

        Returns
        -------
        self : BudgetAccountant
            The accountant, for chaining (:meth:`charge` returns the
            recorded :class:`Spend` instead).

        Raises
        ------
        BudgetError
            If the spend does not fit (nothing is recorded), or this
            accountant cannot record spends in this process.
        ValueError
            Invalid arguments.
        """
        self.charge(epsilon, delta, mechanism, label)
        return self

    def charge(self, epsilon: float, delta: float, mechanism: Optional[Mechanism] = None,
               label: Optional[str] = None, *, seed_key: Optional[str] = None) -> Spend:
        """Check and record one spend, atomically, and return the record.

        Same as :meth:`spend` (in memory under the lock, or in one SQLite
        transaction), plus the seed bookkeeping of seeded fits.

        Parameters
        ----------
        epsilon : float
            The spend's epsilon (> 0 and finite), as in :meth:`spend`.
        delta : float
            The spend's delta (in [0, 1)), as in :meth:`spend`.
        mechanism : Mechanism or None, default=None
            What is run, as in :meth:`spend` (required under
            ``composition='gaussian'`` when delta > 0).
        label : str or None, default=None
            Free text stored with the record.
        seed_key : str or None, default=None
            Opaque digest of the seed the fit will draw its noise from
            (None for fresh entropy).  Stored with the spend.

        Returns
        -------
        spend : Spend
            The recorded spend.  With a ``seed_key``, ``seed_index`` is the
            number of spends already recorded on this accountant (across
            processes, counted inside the same transaction) with the same
            key: 0 for the first, 1 for the second, ...  The caller derives
            the fit's noise from (seed, seed_index), so fits seeded alike
            never share noise under one accountant and replay exactly
            against a fresh one.  On the process default accountant (replay
            mode) ``seed_index`` is always 0 and :meth:`spent` reports an
            infinite epsilon once two spends share a key.

        Raises
        ------
        BudgetError, ValueError
            As for :meth:`spend`; nothing is recorded.
        """
        spend = _make_spend(epsilon, delta, mechanism, label, seed_key)
        with self._lock:
            self._ensure_reachable()
            if self._path is None:
                self._verify_fits(spend)
                spend = dataclasses.replace(spend, seed_index=self._tally.seed_index(seed_key))
                self._tally.add(spend)
                return spend
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                self._verify_same_ledger(conn)
                self._sync_rows(conn)
                self._verify_fits(spend)
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
                    (spend.epsilon, spend.delta, _mechanism_json(mechanism), spend.label,
                     os.getpid(), time.time(), spend.seed_key, spend.seed_index),
                )
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise
            self._tally.add(spend)
            self._last_id = cur.lastrowid
            return spend

    def _verify_fits(self, spend: Spend) -> None:
        extra_mu2 = None
        if self._composition == "gaussian":
            extra_mu2 = _gdp_mu2(spend)
            if extra_mu2 is None:
                what = f" ({spend.label})" if spend.label else ""
                if spend.mechanism is None:
                    why = ("it has delta > 0 and no mechanism, so its privacy curve is "
                           "unknown (only pure epsilon-DP spends, delta=0, may omit the "
                           "mechanism). Pass the mechanism that is run, or")
                else:
                    why = (f"its mechanism {spend.mechanism!r} has a part that is neither an "
                           "unsampled Gaussian nor pure DP (Poisson-sampled, zCDP, ...), "
                           "which has no Gaussian-DP bound here. For such fits")
                raise BudgetError(
                    f"This spend{what} {_fmt(spend.epsilon, spend.delta)} cannot be charged "
                    f"to a BudgetAccountant with composition='gaussian': {why} use "
                    "BudgetAccountant(composition='basic'), where each spend counts at its "
                    "claimed (epsilon, delta). Nothing was recorded."
                )
        eps, delta = self._tally.totals()
        new_eps, new_delta = self._tally.totals(spend, extra_mu2=extra_mu2)
        fits_eps = new_eps <= self._epsilon * (1 + _SLACK) + 1e-12
        # A delta budget of 1 constrains nothing (every mechanism is (0, 1)-DP).
        fits_delta = self._delta >= 1.0 or new_delta <= self._delta * (1 + _SLACK) + 1e-15
        if fits_eps and fits_delta:
            return
        what = f" ({spend.label})" if spend.label else ""
        if self._composition == "gaussian":
            left = self._left()
            rule = (" (composition='gaussian': totals are the composed Gaussian-DP epsilon "
                    "at the budget delta)")
        else:
            left = (max(0.0, self._epsilon - eps), max(0.0, self._delta - delta))
            rule = ""
        over = " and ".join(n for n, ok in (("epsilon", fits_eps), ("delta", fits_delta)) if not ok)
        raise BudgetError(
            f"Privacy budget exceeded ({over}): this spend{what} asks for "
            f"{_fmt(spend.epsilon, spend.delta)}; already spent {_fmt(eps, delta)} in "
            f"{len(self._tally.spends)} spend(s) of the budget {_fmt(self._epsilon, self._delta)}"
            f"{rule}; left {_fmt(*left)}; with this spend the total would be "
            f"{_fmt(new_eps, new_delta)}. Nothing was recorded. To fix: ask for at most what "
            "is left (smaller epsilon/delta), or use a BudgetAccountant with a larger budget."
        )

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

    # -- SQLite ledger --------------------------------------------------------
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
                    ("schema", _SCHEMA_VERSION),
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
                        f"The ledger {self._path} holds the budget {_fmt(*stored)}, but this "
                        f"BudgetAccountant was given {_fmt(self._epsilon, self._delta)}. Pass "
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
                raise _LedgerChanged(self._changed_message("holds another ledger"))
            self._ledger_id = stored_id
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
        file_id = _file_identity(self._path)
        if self._file_id is not None and file_id != self._file_id:
            raise _LedgerChanged(self._changed_message(
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
                    ("schema", _SCHEMA_VERSION),
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
            _remove_temp_ledger(path, os.getpid(), owned)
            self._path, self._temp, self._conn, self._conn_pid, self._owned_conns = saved
            raise
        self._last_id = len(self._tally.spends)
        self._ledger_id, self._file_id = ledger_id, _file_identity(path)
        weakref.finalize(self, _remove_temp_ledger, path, os.getpid(), owned)

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
            raise _LedgerChanged(self._changed_message("was deleted or moved"))
        if file_id != self._file_id:
            raise _LedgerChanged(self._changed_message("holds another file"))
        row = conn.execute("SELECT value FROM skdp_meta WHERE key = 'ledger_id'").fetchone()
        if row is None or row[0] != self._ledger_id:
            raise _LedgerChanged(self._changed_message("holds another ledger"))

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

    # -- sharing --------------------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
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
        return (_restore, (state,))

    # -- context --------------------------------------------------------------
    def __enter__(self) -> "BudgetAccountant":
        _STACK.set(_STACK.get() + (self,))
        return self

    def __exit__(self, *exc_info) -> None:
        stack = _STACK.get()
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                _STACK.set(stack[:i] + stack[i + 1:])
                break


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
        newer = int(schema) > int(_SCHEMA_VERSION)
    except ValueError:
        newer = True
    if newer:
        raise BudgetError(
            f"The ledger {path} was written by a newer skdp (ledger schema {schema!r}; this "
            f"version reads schema {_SCHEMA_VERSION} and older). Spends are refused rather "
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


def _check_budget_value(value, name, *, upper):
    value = check_number(value, name, "BudgetAccountant")
    if math.isnan(value) or value < 0 or value > upper:
        bound = "[0, 1]" if upper == 1.0 else "(0, inf]"
        raise ValueError(f"BudgetAccountant: {name} must be in {bound}, got {value!r}.")
    return value


def _make_spend(epsilon, delta, mechanism, label, seed_key) -> Spend:
    epsilon = check_epsilon(epsilon, "spend")
    delta = check_delta(delta, "spend")
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
    if seed_key is not None and not isinstance(seed_key, str):
        raise ValueError(
            f"charge: seed_key must be a str (a digest of the seed) or None, got {seed_key!r}.")
    return Spend(epsilon, delta, mechanism, label, seed_key)


# -- default and current accountant ---------------------------------------------
_STACK: contextvars.ContextVar = contextvars.ContextVar("skdp_accountant_stack", default=())
_DEFAULT: Optional[BudgetAccountant] = None
_DEFAULT_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    # Locks held by other threads at fork time would never be released here.
    global _DEFAULT_LOCK, _LIVE_LOCK
    _DEFAULT_LOCK, _LIVE_LOCK = threading.Lock(), threading.Lock()
    for acc in list(_LIVE.values()):
        acc._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def get_default_accountant() -> BudgetAccountant:
    """The process-wide default accountant.

    Returns
    -------
    accountant : BudgetAccountant
        An in-memory accountant with an unlimited budget
        (``composition='basic'``), created on first use; each process
        (including forked or spawned workers) has its own.  It is in replay
        mode: :meth:`~BudgetAccountant.charge` gives every seeded spend
        ``seed_index=0`` (scikit-learn's "same seed, same model"), and its
        :meth:`~BudgetAccountant.spent` epsilon is ``inf`` once two spends
        share a seed key, since such fits share their noise.  Sent to a
        worker process by pickling, it is charged through its temporary
        ledger while its process lives; after that, the worker's own default
        is used (nothing was at stake: the budget is unlimited).
    """
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT._origin_pid != os.getpid():
            acc = BudgetAccountant.__new__(BudgetAccountant)
            acc._setup(math.inf, 1.0, None, composition="basic", token=uuid.uuid4().hex,
                       origin_pid=os.getpid(), create=False, default=True)
            _DEFAULT = acc
        return _DEFAULT


def context_accountant() -> Optional[BudgetAccountant]:
    """The innermost accountant entered with ``with accountant:`` here, if any.

    Returns
    -------
    accountant : BudgetAccountant or None
        The innermost accountant of a ``with`` block of the current context
        (thread or asyncio task); None outside any.  Blocks entered in other
        threads are never seen.
    """
    stack = _STACK.get()
    return stack[-1] if stack else None


def current_accountant() -> BudgetAccountant:
    """The accountant charged when none is given.

    Returns
    -------
    accountant : BudgetAccountant
        :func:`context_accountant` if it is not None (the innermost
        ``with accountant:`` block of the current thread or task), else the
        process default (:func:`get_default_accountant`).  A thread never
        sees blocks entered by other threads: in a server with one
        accountant per user, one user's fits are never billed to another.
    """
    entered = context_accountant()
    return entered if entered is not None else get_default_accountant()

r"""The privacy budget accountant: one ledger of every private release.

A :class:`BudgetAccountant` holds a total budget (epsilon, delta) and the
spends charged against it. Every private fit checks and charges its whole
worst-case cost before touching the data; a charge over the budget raises
:class:`BudgetError` and records nothing. How spends add up lives in
:mod:`._composition`, the SQLite ledger and the transport between processes
in :mod:`._ledger`, the ``with accountant:`` stack in :mod:`._context`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import uuid
from typing import Optional

from . import _context
from ..validation import check_budget_value
from ._composition import (
    BudgetError,
    Spend,
    Tally,
    fmt_budget,
    make_spend,
)
from ._context import context_accountant
from ._ledger import LedgerMixin, remember, restore
from .mechanisms import Composed, Mechanism, compose_runs

__all__ = [
    "BudgetAccountant",
    "BudgetError",
    "Spend",
    "get_default_accountant",
    "current_accountant",
    "context_accountant",
]

_COMPOSITIONS = ("basic", "gaussian")


class BudgetAccountant(LedgerMixin):
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
        None keeps the spends in memory (but see *Processes* below). A file
        path keeps them in an SQLite database, created readable by its owner
        only, that survives restarts and crashes and is shared by every
        process and accountant that opens it; the budget and the rule are
        stored in it (reopening with others raises ValueError). Once the path
        no longer holds the file opened (deleted, moved or replaced), every
        check, spend and read raises :class:`BudgetError`.
    composition : {'basic', 'gaussian'}, default='basic'
        How spends add up (see Notes).  Checked here: ValueError if unknown,
        or if 'gaussian' is asked with a delta outside (0, 1).

    Notes
    -----
    The rules in full, with their references, are on the accounting page of
    the user guide (``docs/accounting.md``):

    - **Composition.** ``'basic'``: :meth:`spent` is the sum of the claimed
      epsilons and of the claimed deltas [1]_. ``'gaussian'``: each spend is
      a :math:`\mu_i`-GDP release (Gaussian parts :math:`1/z^2`, each pure
      part of epsilon :math:`e` mapped to the smallest :math:`\mu_e` it
      implies [2]_), :math:`\mu^2 = \sum_i \mu_i^2`, and :meth:`spent` is
      the exact epsilon of that Gaussian at the budget delta [4]_; a spend
      with no GDP form raises :class:`BudgetError`. Both are valid privacy
      filters under adaptive choice [1]_ [3]_; :meth:`spent` never decreases.
    - **Neighbouring datasets** are zero-out neighbours [5]_ (n public).
    - **Concurrency and sharing.** Check-and-spend is atomic (a lock; an
      SQLite ``BEGIN IMMEDIATE`` transaction across processes). ``copy``,
      ``deepcopy`` and ``sklearn.clone`` return the accountant itself.
    - **Processes.** Pickled in its own process (joblib/loky workers), an
      in-memory accountant first moves to a temporary SQLite ledger that the
      unpickled copies charge; it is removed with the accountant, after
      which copies refuse every spend. A forked copy never pickled refuses too.
    - **Seeds.** :meth:`charge` returns the spend's ``seed_index`` (earlier
      spends with its ``seed_key``), so fits seeded alike draw distinct
      noise; the process default accountant is in replay mode (index 0,
      :meth:`spent` ``inf`` once two spends share a key).
    - **Context.** ``with accountant:`` makes it :func:`current_accountant`
      in this thread or task; contexts nest.

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
        epsilon = check_budget_value(epsilon, "epsilon", upper=math.inf)
        if epsilon <= 0:
            raise ValueError(f"BudgetAccountant: epsilon must be > 0, got {epsilon!r}.")
        delta = check_budget_value(delta, "delta", upper=1.0)
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
        remember(self)

    def _new_tally(self) -> Tally:
        return Tally(self._composition, self._epsilon, self._delta, self._default)

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
        return compose_runs(s.mechanism for s in self.spends if s.mechanism is not None)

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
            return self._tally.left()

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
            spent = f", spent={fmt_budget(eps, delta)}, n_spends={n}"
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
        spend = make_spend(epsilon, delta, mechanism, None, None)
        with self._lock:
            self._ensure_reachable()
            self._sync()
            self._tally.verify_fits(spend)
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
            For chaining (:meth:`charge` returns the :class:`Spend`).

        Raises
        ------
        BudgetError, ValueError
            As for :meth:`check`; nothing is recorded.
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
            The recorded spend. With a ``seed_key``, ``seed_index`` counts the
            spends already recorded with that key (across processes, in the
            same transaction), so fits seeded alike never share noise under
            one accountant and replay exactly against a fresh one (always 0
            on the process default accountant, in replay mode).

        Raises
        ------
        BudgetError, ValueError
            As for :meth:`spend`; nothing is recorded.
        """
        spend = make_spend(epsilon, delta, mechanism, label, seed_key)
        with self._lock:
            self._ensure_reachable()
            if self._path is None:
                self._tally.verify_fits(spend)
                spend = dataclasses.replace(spend, seed_index=self._tally.seed_index(seed_key))
                self._tally.add(spend)
                return spend
            return self._record(spend)

    # -- sharing --------------------------------------------------------------
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_restore, (self._pickle_state(),))

    # -- context --------------------------------------------------------------
    def __enter__(self) -> "BudgetAccountant":
        _context.enter(self)
        return self

    def __exit__(self, *exc_info) -> None:
        _context.leave(self)


def _restore(state: dict) -> BudgetAccountant:
    """Unpickle an accountant (see ``BudgetAccountant.__reduce__``)."""
    return restore(BudgetAccountant, state, get_default_accountant)


# -- default and current accountant ---------------------------------------------
_DEFAULT: Optional[BudgetAccountant] = None
_DEFAULT_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    # A lock held by another thread at fork time would never be released here.
    global _DEFAULT_LOCK
    _DEFAULT_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def get_default_accountant() -> BudgetAccountant:
    """The process-wide default accountant.

    Returns
    -------
    accountant : BudgetAccountant
        An in-memory accountant with an unlimited budget, created on first
        use; each process has its own. It is in replay mode: every seeded
        spend gets ``seed_index=0`` (same seed, same model) and
        :meth:`~BudgetAccountant.spent` is ``inf`` once two spends share a
        seed key (such fits share their noise). Pickled to a worker, it is
        charged through its temporary ledger while its process lives.
    """
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None or _DEFAULT._origin_pid != os.getpid():
            acc = BudgetAccountant.__new__(BudgetAccountant)
            acc._setup(math.inf, 1.0, None, composition="basic", token=uuid.uuid4().hex,
                       origin_pid=os.getpid(), create=False, default=True)
            _DEFAULT = acc
        return _DEFAULT


def current_accountant() -> BudgetAccountant:
    """The accountant charged when none is given.

    Returns
    -------
    accountant : BudgetAccountant
        The innermost ``with accountant:`` block of the current thread or
        task (:func:`context_accountant`), else the process default
        (:func:`get_default_accountant`). Other threads' blocks are never seen.
    """
    entered = context_accountant()
    return entered if entered is not None else get_default_accountant()

r"""Empirical privacy audits: a statistical lower bound on epsilon.

An (epsilon, delta)-DP mechanism ``M`` satisfies, for every pair of
neighbouring data sets ``D`` and ``D' = D + {canary}`` and every set of
outputs ``S``,

.. math::

    P[M(D') \in S] \le e^\varepsilon P[M(D) \in S] + \delta, \qquad
    P[M(D) \in S] \le e^\varepsilon P[M(D') \in S] + \delta.

The audit runs the mechanism many times on ``D`` and on ``D'`` with
independent seeds, scores every output with a fixed statistic (large means
"the canary was in"), and takes ``S = {score > threshold}``. With ``TPR`` the
fraction of runs on ``D'`` above the threshold and ``FPR`` the fraction of
runs on ``D`` above it, the two inequalities give

.. math::

    \varepsilon \ge \log\frac{TPR - \delta}{FPR}, \qquad
    \varepsilon \ge \log\frac{(1 - FPR) - \delta}{1 - TPR}.

Replacing the rates by one-sided Clopper-Pearson bounds (a lower bound on
``TPR`` and an upper bound on ``FPR``, each at level ``(1 - confidence) / 2``)
makes both inequalities hold simultaneously with probability at least
``confidence``, so their maximum, :func:`epsilon_lower_bound`, is a valid
lower bound on the epsilon of the mechanism at that confidence. The
threshold is chosen on one part of the runs (the *selection* runs) and the
bound is computed on the others (the *evaluation* runs), so the choice does
not bias the bound.

An audit can only show that an implementation is *not* private (its lower
bound exceeds the claimed epsilon); a bound below the claim is evidence, not
proof, of privacy. See ``docs/audit.md``.

References
----------
.. [1] Jagielski, Ullman, Oprea, "Auditing Differentially Private Machine
   Learning: How Private is Private SGD?", NeurIPS 2020.
.. [2] Nasr, Song, Thakurta, Papernot, Carlini, "Adversary Instantiation:
   Lower Bounds for Differentially Private Machine Learning", IEEE S&P 2021.
.. [3] Clopper, Pearson, "The use of confidence or fiducial limits
   illustrated in the case of the binomial", Biometrika 1934.
.. [4] Balle, Wang, "Improving the Gaussian Mechanism for Differential
   Privacy: Analytical Calibration and Optimal Denoising", ICML 2018.
"""

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy import optimize, special

from ..accounting import Gaussian, release
from .audit_bounds import (
    _check_confidence,
    _check_delta,
    _epsilon_bounds,
    clopper_pearson,
    epsilon_lower_bound,
    max_epsilon_lower_bound,
)

__all__ = [
    "AuditResult",
    "clopper_pearson",
    "epsilon_lower_bound",
    "max_epsilon_lower_bound",
    "audit_scores",
    "audit_estimator",
    "audit_gaussian_mechanism",
    "gaussian_epsilon",
    "gaussian_noise_multiplier",
]


# --------------------------------------------------------------------------
# From scores to an audit result
# --------------------------------------------------------------------------
@dataclass
class AuditResult:
    """Outcome of a privacy audit.

    Built by :func:`audit_scores` (and so by :func:`audit_estimator` and
    :func:`audit_gaussian_mechanism`); every parameter is stored as an
    attribute of the same name.

    Parameters
    ----------
    epsilon_lower_bound : float
        Lower bound on epsilon, valid with probability ``confidence``
        (0 when the test found no significant difference).
    claimed_epsilon : float or None
        The epsilon the mechanism claims (None if unknown).
    delta : float
        The delta of the claim; the bound is for this delta.
    confidence : float
        Confidence level of the bound.
    threshold : float
        Decision threshold (a run is flagged "canary in" when its score is
        strictly above it), chosen on the selection runs.
    tail : {'upper', 'lower'}
        Which inequality gave the bound: 'upper' compares the rates above
        the threshold (TPR / FPR), 'lower' the rates at or below it
        (TNR / FNR).
    tp, fn, fp, tn : int
        Confusion counts on the evaluation runs.
    tpr, fpr : float
        Empirical true and false positive rates on the evaluation runs.
    tpr_lower, fpr_upper : float
        Their one-sided Clopper-Pearson bounds.
    n_runs : int
        Runs per data set (selection plus evaluation).
    n_selection : int
        Runs per data set used to choose the threshold.
    epsilon_ceiling : float
        The largest bound these evaluation counts allow
        (:func:`max_epsilon_lower_bound`).
    scores_out, scores_in : ndarray
        Scores of every run without / with the canary (selection runs first).
    n_nonfinite_out, n_nonfinite_in : int
        Runs whose statistic was NaN or infinite (a model that overflowed):
        scored as ``+inf``, "the canary was in", on both sides, so a
        mechanism that breaks only with the canary is caught.

    Attributes
    ----------
    passed : bool or None
        True when ``epsilon_lower_bound <= claimed_epsilon`` (no violation
        detected), False otherwise, None when there is no claim.
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    delta: float
    confidence: float
    threshold: float
    tail: str
    tp: int
    fn: int
    fp: int
    tn: int
    tpr: float
    fpr: float
    tpr_lower: float
    fpr_upper: float
    n_runs: int
    n_selection: int
    epsilon_ceiling: float
    scores_out: np.ndarray = field(repr=False, default=None)
    scores_in: np.ndarray = field(repr=False, default=None)
    n_nonfinite_out: int = 0
    n_nonfinite_in: int = 0

    @property
    def passed(self):
        """True when the bound does not exceed the claim (None if no claim)."""
        if self.claimed_epsilon is None:
            return None
        return bool(self.epsilon_lower_bound <= self.claimed_epsilon)

    def summary(self):
        """One line: the bound next to the claim, and the counts behind it.

        Returns
        -------
        str
            The bound, the claim, delta and confidence, the verdict ("ok" or
            "VIOLATION", empty without a claim), the evaluation rates, the
            tail, the threshold, the run counts and the ceiling; the counts of
            non-finite scores are appended when there are any.
        """
        claim = "?" if self.claimed_epsilon is None else f"{self.claimed_epsilon:.3g}"
        verdict = {None: "", True: "ok", False: "VIOLATION"}[self.passed]
        return (
            f"eps_lb={self.epsilon_lower_bound:.3f} claimed={claim} "
            f"(delta={self.delta:.3g}, {self.confidence:.0%}) {verdict} | "
            f"TPR={self.tpr:.4f} FPR={self.fpr:.4f} tail={self.tail} "
            f"threshold={self.threshold:.4g} runs={self.n_runs}x2 "
            f"(selection {self.n_selection}) ceiling={self.epsilon_ceiling:.2f}"
            + (f" non-finite={self.n_nonfinite_out}/{self.n_nonfinite_in}"
               if self.n_nonfinite_out or self.n_nonfinite_in else "")
        ).replace("  ", " ")

    def __str__(self):
        return self.summary()


def _as_scores(scores, name):
    scores = np.asarray(scores, dtype=np.float64).ravel()
    if scores.size == 0:
        raise ValueError(f"{name} is empty.")
    if np.isnan(scores).any():
        raise ValueError(
            f"{name} contains NaN at runs {np.flatnonzero(np.isnan(scores))[:10].tolist()}; "
            "the statistic must return a number for every model."
        )
    return scores


def _select_threshold(out_sel, in_sel, delta, confidence):
    """Threshold maximising the bound on the selection runs, and its tail."""
    pooled = np.unique(np.concatenate([out_sel, in_sel]))
    if pooled.size == 1:
        return float(pooled[0]), "upper"
    # midpoints between distinct scores, plus one below everything
    with np.errstate(invalid="ignore", over="ignore"):
        mids = pooled[:-1] + (pooled[1:] - pooled[:-1]) / 2.0
    mids = np.where(np.isfinite(mids), mids, pooled[:-1])
    below = pooled[0] - 1.0 if np.isfinite(pooled[0]) else pooled[0]
    candidates = np.concatenate([[below], mids])
    out_sorted = np.sort(out_sel)
    in_sorted = np.sort(in_sel)
    n_out, n_in = out_sorted.size, in_sorted.size
    fp = n_out - np.searchsorted(out_sorted, candidates, side="right")
    tp = n_in - np.searchsorted(in_sorted, candidates, side="right")
    upper, lower, _, _ = _epsilon_bounds(tp, n_in - tp, fp, n_out - fp, delta, confidence)
    best = np.maximum(upper, lower)
    if best.max() <= 0.0:
        # nothing significant yet: take the best smoothed point estimate
        tpr = (tp + 0.5) / (n_in + 1.0)
        fpr = (fp + 0.5) / (n_out + 1.0)
        upper = np.log(tpr) - np.log(fpr)
        lower = np.log1p(-fpr) - np.log1p(-tpr)
        best = np.maximum(upper, lower)
    i = int(np.argmax(best))
    return float(candidates[i]), ("upper" if upper[i] >= lower[i] else "lower")


def audit_scores(scores_out, scores_in, delta, *, claimed_epsilon=None, confidence=0.95,
                 selection_fraction=0.2, threshold=None):
    """Turn the scores of runs without and with the canary into an audit.

    The first ``selection_fraction`` of each score array chooses the
    threshold that maximises the bound on those runs; the rest gives the
    reported bound (:func:`epsilon_lower_bound`). Runs must be independent
    and identically distributed within each array.

    Parameters
    ----------
    scores_out : array-like of shape (n_runs_out,)
        Statistic of each run on the data set without the canary.
    scores_in : array-like of shape (n_runs_in,)
        Statistic of each run on the data set with the canary. Large scores
        should indicate the canary (the lower tail is tested as well).
    delta : float
        The delta of the privacy claim.
    claimed_epsilon : float or None, default=None
        Recorded in the result for comparison.
    confidence : float, default=0.95
        Probability, in (0, 1), that the reported bound is valid; it is also
        the level used when choosing the threshold.
    selection_fraction : float in (0, 1), default=0.2
        Fraction of the runs used to choose the threshold.
    threshold : float or None, default=None
        A threshold fixed in advance; then no runs are spent on selection
        and every run is used for the bound.

    Returns
    -------
    result : AuditResult
        The bound with its counts, rates and threshold, and the score arrays
        (``result.passed`` compares it with ``claimed_epsilon``).
    """
    delta = _check_delta(delta)
    confidence = _check_confidence(confidence)
    scores_out = _as_scores(scores_out, "scores_out")
    scores_in = _as_scores(scores_in, "scores_in")
    if threshold is None:
        if not 0 < selection_fraction < 1:
            raise ValueError(
                f"selection_fraction must be in (0, 1), got {selection_fraction!r}."
            )
        k_out = int(round(selection_fraction * scores_out.size))
        k_in = int(round(selection_fraction * scores_in.size))
        if min(k_out, k_in) < 1 or k_out == scores_out.size or k_in == scores_in.size:
            raise ValueError(
                "too few runs to split into selection and evaluation runs: "
                f"{scores_out.size} without and {scores_in.size} with the canary."
            )
        threshold, _ = _select_threshold(scores_out[:k_out], scores_in[:k_in], delta,
                                         confidence)
        n_selection = min(k_out, k_in)
    else:
        k_out = k_in = n_selection = 0
        threshold = float(threshold)
    ev_out, ev_in = scores_out[k_out:], scores_in[k_in:]
    tp = int(np.sum(ev_in > threshold))
    fp = int(np.sum(ev_out > threshold))
    fn, tn = ev_in.size - tp, ev_out.size - fp
    upper, lower, tpr_lo, fpr_hi = _epsilon_bounds(tp, fn, fp, tn, delta, confidence)
    upper, lower = float(upper), float(lower)
    return AuditResult(
        epsilon_lower_bound=max(upper, lower),
        claimed_epsilon=None if claimed_epsilon is None else float(claimed_epsilon),
        delta=delta,
        confidence=confidence,
        threshold=threshold,
        tail="upper" if upper >= lower else "lower",
        tp=tp, fn=fn, fp=fp, tn=tn,
        tpr=tp / ev_in.size,
        fpr=fp / ev_out.size,
        tpr_lower=float(tpr_lo),
        fpr_upper=float(fpr_hi),
        n_runs=int(max(scores_out.size, scores_in.size)),
        n_selection=n_selection,
        epsilon_ceiling=max_epsilon_lower_bound(ev_in.size, ev_out.size, delta, confidence),
        scores_out=scores_out,
        scores_in=scores_in,
    )


# --------------------------------------------------------------------------
# Auditing an estimator
# --------------------------------------------------------------------------
def _run_seeds(random_state, n):
    """``n`` distinct 63-bit integer seeds from one entropy source."""
    if isinstance(random_state, np.random.Generator):
        entropy = int(random_state.integers(0, 2**63))
    elif isinstance(random_state, np.random.RandomState):
        entropy = int(random_state.randint(0, 2**31 - 1))
    else:
        entropy = random_state
    ss = np.random.SeedSequence(entropy)
    seeds = ss.generate_state(n, dtype=np.uint64) >> np.uint64(1)
    if np.unique(seeds).size != n:  # pragma: no cover - probability ~ n^2 / 2^63
        raise RuntimeError("seed collision; use another random_state.")
    return [int(s) for s in seeds]


def _make_run_estimator(estimator, seed, accountant=None):
    """A fresh estimator for one run, seeded with ``seed`` (charged to ``accountant``)."""
    if hasattr(estimator, "get_params") and hasattr(estimator, "fit"):
        from sklearn.base import clone

        est = clone(estimator)
        est.set_params(random_state=seed)
    elif callable(estimator):
        est = estimator(seed)
    else:
        raise ValueError(
            "estimator must be a scikit-learn estimator or a callable seed -> estimator, "
            f"got {estimator!r}."
        )
    params = est.get_params(deep=False) if hasattr(est, "get_params") else {}
    if "accountant" in params and params["accountant"] is None:
        # one fresh, unlimited accountant per run: audit fits on synthetic
        # data never touch the current accountant's budget or ledger
        from ..accounting import BudgetAccountant

        est.set_params(accountant=BudgetAccountant() if accountant is None else accountant)
    return est


def _claim(est):
    spent = getattr(est, "privacy_spent_", None)
    if spent is not None:
        return float(spent[0]), float(spent[1])
    eps = getattr(est, "epsilon", None)
    delta = getattr(est, "delta", None)
    return (None if eps is None else float(eps)), (None if delta is None else float(delta))


def _fit_and_score(estimator, datasets, jobs, statistic, run_context=None, shared=False):
    """Fit one model per ``(dataset index, seed)`` job and score it.

    ``shared``: each job fits twice with the same seed, charged to one
    accountant, first on ``datasets[0]`` (D) then on its own data set, and
    scores the difference of the two statistics, as a search that clones a
    seeded estimator would run them. A non-finite score counts as ``+inf``.
    """
    if run_context is not None:
        with run_context():
            return _fit_and_score(estimator, datasets, jobs, statistic, shared=shared)
    from ..accounting import BudgetAccountant

    scores = np.empty(len(jobs))
    claims = set()
    for j, (which, seed) in enumerate(jobs):
        accountant = BudgetAccountant() if shared else None
        fits = [datasets[0], datasets[which]] if shared else [datasets[which]]
        values = []
        for X, y in fits:
            est = _make_run_estimator(estimator, seed, accountant)
            with np.errstate(all="ignore"):
                est.fit(X, y)
                value = statistic(est)
            try:
                values.append(float(value))
            except (TypeError, ValueError):
                raise ValueError(
                    f"statistic must return a real number, got {value!r} (run seed {seed})."
                ) from None
            claims.add(_claim(est))
        with np.errstate(all="ignore"):
            score = values[-1] - values[0] if shared else values[0]
        scores[j] = score if np.isfinite(score) else np.inf
    return scores, claims


def _stack(X, row):
    if sp.issparse(X):
        return sp.vstack([X, sp.csr_matrix(row)], format=X.format)
    return np.concatenate([np.asarray(X), row], axis=0)


def audit_estimator(estimator, X, y, canary_x, canary_y, statistic, *, n_runs=1000,
                    delta=None, claimed_epsilon=None, confidence=0.95,
                    selection_fraction=0.2, threshold=None, random_state=None,
                    n_jobs=1, run_context=None, seeding="fresh"):
    """Audit a private estimator with a canary record (black-box).

    Fits ``n_runs`` models on ``D = (X, y)`` and ``n_runs`` on the
    neighbouring ``D' = D + (canary_x, canary_y)`` (the canary appended as
    the last row), every fit with its own independent seed, scores each
    fitted model with ``statistic`` and passes the scores to
    :func:`audit_scores`.

    The bound is only as strong as the canary and the statistic: choose a
    canary whose (clipped) gradient points in a direction that the rest of
    the data does not touch, and a statistic that reads the model along
    that direction (see ``docs/audit.md``).

    Parameters
    ----------
    estimator : estimator or callable
        Either a scikit-learn estimator with a ``random_state`` parameter
        (cloned for every run, then given the run's seed), or a callable
        ``seed -> unfitted estimator``. Estimators with an ``accountant``
        parameter left at None are given a fresh unlimited
        :class:`~skdp.BudgetAccountant` per run, so the audit does not
        charge the current accountant.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The data set without the canary.
    y : array-like of shape (n_samples,)
        The targets of ``X``; the data set with the canary has ``canary_y``
        appended.
    canary_x : array-like of shape (n_features,) or (1, n_features)
        The canary record.
    canary_y : scalar
        The canary's target.
    statistic : callable
        ``fitted estimator -> float``; large values mean "the canary was in
        the training data". It must not depend on the run (no randomness).
        Non-finite statistics (a model that overflowed) are scored ``+inf``
        ("the canary was in") and counted in the result
        (``n_nonfinite_out`` / ``n_nonfinite_in``).
    n_runs : int, default=1000
        Fits per data set (``2 * n_runs`` fits in total), split between
        threshold selection and evaluation by ``selection_fraction``.
    delta : float or None, default=None
        Delta of the audited claim; None reads it from the fitted models'
        ``privacy_spent_`` (or the ``delta`` parameter).
    claimed_epsilon : float or None, default=None
        The claimed epsilon; None reads it the same way.
    confidence : float, default=0.95
        Probability, in (0, 1), that the reported bound is valid.
    selection_fraction : float, default=0.2
        Fraction, in (0, 1), of the runs of each data set used to choose the
        threshold (see :func:`audit_scores`); ignored when ``threshold`` is
        given.
    threshold : float or None, default=None
        A decision threshold fixed in advance (no selection runs).
    random_state : int, Generator or None, default=None
        Source of the per-run seeds.
    n_jobs : int, default=1
        Parallel fitting with joblib (processes); results do not depend on
        it. Monkeypatches made in the calling process do not reach worker
        processes: pass them as ``run_context``.
    run_context : callable or None, default=None
        A picklable zero-argument callable returning a context manager,
        entered around the fits in whichever process runs them. Tests use
        it to install patches, e.g. a deliberately broken variant (a
        negative control) that must also apply in joblib workers.
    seeding : {'fresh', 'shared'}, default='fresh'
        'fresh': every fit has its own seed. 'shared': every run fits twice
        with one seed and one accountant, as ``GridSearchCV`` /
        ``cross_validate`` fit clones of a seeded estimator: first on D,
        then on D (out) or D' (in); the statistic is the difference of the
        two fits. The first fit is on D in both worlds, so the claim of the
        pair is the claim of one fit; an implementation that reuses the
        seed's noise across charged fits fails this audit outright.

    Returns
    -------
    result : AuditResult
        ``scores_out`` / ``scores_in`` in run order.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import DPLogisticRegression
    >>> from skdp.testing import audit_estimator
    >>> X = np.zeros((20, 2)); X[:, 1] = np.repeat([1.0, -1.0], 10)
    >>> y = np.repeat([1, 0], 10)
    >>> est = DPLogisticRegression(epsilon=2.0, fit_intercept=False,
    ...                            clip_norm=0.01, max_iter=10, classes=[0, 1])
    >>> result = audit_estimator(est, X, y, canary_x=[1.0, 0.0], canary_y=1,
    ...                          statistic=lambda m: m.coef_[0, 0],
    ...                          n_runs=200, random_state=0)
    >>> result.epsilon_lower_bound <= result.claimed_epsilon
    True
    """
    if (isinstance(n_runs, bool) or not isinstance(n_runs, numbers.Integral)
            or n_runs < 2):
        raise ValueError(f"n_runs must be an integer >= 2, got {n_runs!r}.")
    if not callable(statistic):
        raise ValueError(f"statistic must be callable, got {statistic!r}.")
    if seeding not in ("fresh", "shared"):
        raise ValueError(f"seeding must be 'fresh' or 'shared', got {seeding!r}.")
    shared = seeding == "shared"
    n_runs = int(n_runs)
    canary_x = np.asarray(
        canary_x.toarray() if sp.issparse(canary_x) else canary_x, dtype=np.float64
    ).reshape(1, -1)
    n_features = X.shape[1] if hasattr(X, "shape") else np.asarray(X).shape[1]
    if canary_x.shape[1] != n_features:
        raise ValueError(
            f"canary_x has {canary_x.shape[1]} features, X has {n_features}."
        )
    y = np.asarray(y)
    datasets = [(X, y), (_stack(X, canary_x), np.concatenate([y, np.asarray([canary_y])]))]
    seeds = _run_seeds(random_state, 2 * n_runs)
    # interleave: run i without the canary, run i with it
    jobs = [(k % 2, s) for k, s in enumerate(seeds)]
    n_jobs = 1 if n_jobs is None else int(n_jobs)
    if n_jobs == 1:
        scores, claims = _fit_and_score(estimator, datasets, jobs, statistic, run_context,
                                        shared)
    else:
        from joblib import Parallel, cpu_count, delayed

        workers = cpu_count() if n_jobs < 0 else n_jobs
        chunks = np.array_split(np.arange(len(jobs)), 4 * workers)
        parts = Parallel(n_jobs=n_jobs)(
            delayed(_fit_and_score)(estimator, datasets, [jobs[i] for i in c], statistic,
                                    run_context, shared)
            for c in chunks if c.size
        )
        scores = np.concatenate([p[0] for p in parts])
        claims = set().union(*(p[1] for p in parts))
    if len(claims) > 1:
        raise ValueError(f"the runs report different privacy claims: {sorted(claims)}.")
    claim_eps, claim_delta = claims.pop()
    if delta is None:
        if claim_delta is None:
            raise ValueError("delta is unknown: pass delta=.")
        delta = claim_delta
    if claimed_epsilon is None:
        claimed_epsilon = claim_eps
    result = audit_scores(
        scores[0::2], scores[1::2], delta, claimed_epsilon=claimed_epsilon,
        confidence=confidence, selection_fraction=selection_fraction, threshold=threshold,
    )
    result.n_nonfinite_out = int(np.sum(np.isinf(scores[0::2])))
    result.n_nonfinite_in = int(np.sum(np.isinf(scores[1::2])))
    return result


# --------------------------------------------------------------------------
# The self-check: a plain Gaussian mechanism with a known epsilon
# --------------------------------------------------------------------------
def _gaussian_delta(eps, sigma):
    """delta(eps) of the Gaussian mechanism, sensitivity 1 (Balle & Wang, Thm 8)."""
    a = 0.5 / sigma - eps * sigma
    b = -0.5 / sigma - eps * sigma
    return special.ndtr(a) - math.exp(eps + special.log_ndtr(b))


def gaussian_epsilon(noise_multiplier, delta):
    """Exact epsilon of the Gaussian mechanism (analytic Gaussian).

    An independent reference implementation (Balle & Wang 2018, Theorem 8):
    the smallest epsilon with ``Phi(1/(2z) - eps z) - e^eps Phi(-1/(2z) -
    eps z) <= delta`` for noise standard deviation ``z`` per unit of
    sensitivity.

    Parameters
    ----------
    noise_multiplier : float
        Noise standard deviation divided by the L2 sensitivity, > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    epsilon : float
        The smallest epsilon (>= 0) for which one release with this noise
        multiplier is (epsilon, delta)-DP; 0 if it is (0, delta)-DP already.

    Examples
    --------
    >>> from skdp.testing import gaussian_epsilon
    >>> round(gaussian_epsilon(1.0, 1e-5), 3)
    4.377
    """
    z = float(noise_multiplier)
    delta = _check_delta(delta)
    if not z > 0 or delta == 0:
        raise ValueError("need noise_multiplier > 0 and delta > 0.")
    if _gaussian_delta(0.0, z) <= delta:
        return 0.0
    hi = 1.0
    while _gaussian_delta(hi, z) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda e: _gaussian_delta(e, z) - delta, 0.0, hi,
                                 xtol=1e-12, rtol=1e-12))


def gaussian_noise_multiplier(epsilon, delta):
    """Smallest noise multiplier making the Gaussian mechanism (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float
        In (0, 1).

    Returns
    -------
    noise_multiplier : float
        Noise standard deviation per unit of L2 sensitivity; the inverse of
        :func:`gaussian_epsilon` at this delta.
    """
    eps = float(epsilon)
    delta = _check_delta(delta)
    if not eps > 0 or delta == 0:
        raise ValueError("need epsilon > 0 and delta > 0.")
    lo, hi = 1e-3, 1.0
    while _gaussian_delta(eps, hi) > delta:
        hi *= 2.0
    return float(optimize.brentq(lambda s: _gaussian_delta(eps, s) - delta, lo, hi,
                                 xtol=1e-12, rtol=1e-12))


def audit_gaussian_mechanism(noise_multiplier=None, *, epsilon=None, delta=1e-5,
                             n_runs=100_000, confidence=0.95, selection_fraction=0.2,
                             random_state=None):
    """Audit a plain Gaussian mechanism whose epsilon is known exactly.

    The mechanism releases ``f(D) + N(0, z^2)`` with ``f(D) = 0`` and
    ``f(D') = 1`` (sensitivity 1); the statistic is the release itself,
    which is the most powerful test for this pair. This checks the audit
    machinery: the bound must stay below the true epsilon (with
    probability ``confidence``) and shows how close the audit gets with
    ``n_runs`` runs.

    Parameters
    ----------
    noise_multiplier : float or None
        Noise standard deviation z; give this or ``epsilon``.
    epsilon : float or None
        Target epsilon; z is then :func:`gaussian_noise_multiplier`.
    delta : float, default=1e-5
        The delta at which the exact epsilon and the bound are computed, in
        (0, 1).
    n_runs : int, default=100000
        Runs per data set.
    confidence : float, default=0.95
        Probability, in (0, 1), that the reported bound is valid.
    selection_fraction : float, default=0.2
        Fraction of the runs used to choose the threshold (see
        :func:`audit_scores`).
    random_state : int, Generator or None, default=None
        Seed of the noise draws (passed to :func:`numpy.random.default_rng`);
        None draws fresh entropy, so the result varies between calls.

    Returns
    -------
    result : AuditResult
        ``claimed_epsilon`` is the exact epsilon of the mechanism
        (:func:`gaussian_epsilon`).

    Examples
    --------
    >>> from skdp.testing import audit_gaussian_mechanism
    >>> r = audit_gaussian_mechanism(epsilon=2.0, n_runs=20000, random_state=0)
    >>> 0 < r.epsilon_lower_bound < 2.0
    True
    """
    if (noise_multiplier is None) == (epsilon is None):
        raise ValueError("give exactly one of noise_multiplier and epsilon.")
    delta = _check_delta(delta)
    if noise_multiplier is None:
        z = gaussian_noise_multiplier(epsilon, delta)
    else:
        z = float(noise_multiplier)
    true_eps = gaussian_epsilon(z, delta)
    rng = np.random.default_rng(random_state)
    # each run is one release of the query 0 (out) or 1 (in) through the door itself
    mechanism = Gaussian(z)
    scores_out = release(np.zeros(int(n_runs)), mechanism, 1.0, rng, what="audit run")
    scores_in = release(np.ones(int(n_runs)), mechanism, 1.0, rng, what="audit run")
    return audit_scores(scores_out, scores_in, delta, claimed_epsilon=true_eps,
                        confidence=confidence, selection_fraction=selection_fraction)

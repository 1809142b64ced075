"""Clopper-Pearson bounds and the epsilon lower bound they give (the statistics of an audit).

Part of :mod:`skdp.testing.audit` (every public name is importable from there as well).
"""

import numbers

import numpy as np
from scipy import special

__all__ = ["clopper_pearson", "epsilon_lower_bound", "max_epsilon_lower_bound"]


def _check_confidence(confidence):
    if (isinstance(confidence, bool) or not isinstance(confidence, numbers.Real)
            or not 0 < confidence < 1):
        raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}.")
    return float(confidence)


def _check_delta(delta):
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 <= delta < 1:
        raise ValueError(f"delta must be a number in [0, 1), got {delta!r}.")
    return float(delta)


def _cp_lower(k, n, alpha):
    """One-sided lower Clopper-Pearson bound at level ``alpha`` (vectorised)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = special.betaincinv(k, n - k + 1.0, alpha)
    return np.where(k > 0, lo, 0.0)


def _cp_upper(k, n, alpha):
    """One-sided upper Clopper-Pearson bound at level ``alpha`` (vectorised)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        hi = special.betaincinv(k + 1.0, n - k, 1.0 - alpha)
    return np.where(k < n, hi, 1.0)


def clopper_pearson(k, n, alpha=0.05, alternative="two-sided"):
    """Exact (Clopper-Pearson) confidence bounds for a binomial proportion.

    Parameters
    ----------
    k : int or array-like of int
        Number of successes, ``0 <= k <= n``.
    n : int or array-like of int
        Number of trials, ``n >= 1``.
    alpha : float, default=0.05
        Error probability: the returned interval contains the true
        proportion with probability at least ``1 - alpha``.
    alternative : {'two-sided', 'lower', 'upper'}, default='two-sided'
        'lower' returns a one-sided lower bound ``lo`` (``p >= lo`` with
        probability ``1 - alpha``), 'upper' a one-sided upper bound;
        'two-sided' splits ``alpha`` equally between the two ends.

    Returns
    -------
    bound : float or ndarray, or tuple (lower, upper) for 'two-sided'
        The bound(s) on the proportion ``k / n``: a float for scalar ``k`` and
        ``n``, else an array of their broadcast shape. The lower bound is 0
        when ``k == 0`` and the upper bound is 1 when ``k == n``.

    Examples
    --------
    >>> from skdp.testing import clopper_pearson
    >>> round(float(clopper_pearson(0, 100, 0.05, "upper")), 4)
    0.0295
    """
    k_arr = np.asarray(k)
    n_arr = np.asarray(n)
    if np.any(n_arr < 1) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    scalar = k_arr.ndim == 0 and n_arr.ndim == 0

    def out(x):
        return float(x) if scalar else x

    if alternative == "lower":
        return out(_cp_lower(k_arr, n_arr, alpha))
    if alternative == "upper":
        return out(_cp_upper(k_arr, n_arr, alpha))
    if alternative == "two-sided":
        return out(_cp_lower(k_arr, n_arr, alpha / 2)), out(_cp_upper(k_arr, n_arr, alpha / 2))
    raise ValueError(
        f"alternative must be 'two-sided', 'lower' or 'upper', got {alternative!r}."
    )


def _epsilon_bounds(tp, fn, fp, tn, delta, confidence):
    """Vectorised core: (eps_upper_tail, eps_lower_tail, tpr_lo, fpr_hi)."""
    alpha = (1.0 - confidence) / 2.0
    tpr_lo = _cp_lower(tp, np.asarray(tp) + fn, alpha)
    fpr_hi = _cp_upper(fp, np.asarray(fp) + tn, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        # P[M(D') in S] <= e^eps P[M(D) in S] + delta,  S = {score > t}
        upper = np.log(tpr_lo - delta) - np.log(fpr_hi)
        # P[M(D) in S^c] <= e^eps P[M(D') in S^c] + delta
        lower = np.log((1.0 - fpr_hi) - delta) - np.log(1.0 - tpr_lo)
    upper = np.where(np.isfinite(upper) & (tpr_lo > delta), upper, 0.0)
    lower = np.where(np.isfinite(lower) & (1.0 - fpr_hi > delta), lower, 0.0)
    return np.maximum(upper, 0.0), np.maximum(lower, 0.0), tpr_lo, fpr_hi


def epsilon_lower_bound(tp, fn, fp, tn, delta, confidence=0.95):
    r"""Lower bound on epsilon from a membership test's confusion counts.

    The test looked at ``tp + fn`` outputs of the mechanism on the data set
    with the canary (``tp`` of them flagged "in") and ``fp + tn`` outputs on
    the data set without it (``fp`` of them flagged "in"), with a decision
    rule fixed before seeing these outputs. With :math:`\underline{TPR}` a
    one-sided Clopper-Pearson lower bound on the true positive rate and
    :math:`\overline{FPR}` an upper bound on the false positive rate, each
    at level ``(1 - confidence) / 2``, the bound is

    .. math::

        \max\Big(0,\;
        \log\frac{\underline{TPR} - \delta}{\overline{FPR}},\;
        \log\frac{1 - \overline{FPR} - \delta}{1 - \underline{TPR}}\Big).

    Both tails use the same two rate bounds, so by a union bound the
    maximum is a valid lower bound with probability at least
    ``confidence``; 0 means no evidence against any epsilon.

    Parameters
    ----------
    tp, fn : int
        Runs on the data set with the canary flagged "in" / "out".
    fp, tn : int
        Runs on the data set without the canary flagged "in" / "out".
    delta : float
        The delta of the privacy claim being audited, in [0, 1).
    confidence : float, default=0.95
        Probability that the bound is valid.

    Returns
    -------
    epsilon : float
        A lower bound on the epsilon of any (epsilon, delta)-DP guarantee
        the mechanism can have, valid with probability ``confidence``.

    Examples
    --------
    >>> from skdp.testing import epsilon_lower_bound
    >>> round(epsilon_lower_bound(tp=100, fn=0, fp=0, tn=100, delta=1e-5), 2)
    3.28
    >>> epsilon_lower_bound(tp=50, fn=50, fp=50, tn=50, delta=1e-5)
    0.0
    """
    counts = [tp, fn, fp, tn]
    for name, value in zip(("tp", "fn", "fp", "tn"), counts):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {value!r}.")
    if tp + fn == 0 or fp + tn == 0:
        raise ValueError("need at least one run with and one run without the canary.")
    delta = _check_delta(delta)
    confidence = _check_confidence(confidence)
    upper, lower, _, _ = _epsilon_bounds(tp, fn, fp, tn, delta, confidence)
    return float(max(upper, lower))


def max_epsilon_lower_bound(n_in, n_out, delta, confidence=0.95):
    """The largest bound an audit with these run counts can ever report.

    It is :func:`epsilon_lower_bound` of a perfect test (every run
    classified correctly): a mechanism with no privacy at all scores this.
    An audit whose ceiling is below the claimed epsilon cannot detect any
    violation; increase the number of evaluation runs.

    Parameters
    ----------
    n_in, n_out : int
        Evaluation runs with and without the canary.
    delta : float
        The delta of the privacy claim being audited, in [0, 1).
    confidence : float, default=0.95
        Probability that the bound is valid, in (0, 1).

    Returns
    -------
    epsilon : float
        The bound of a test with ``tp = n_in``, ``fn = fp = 0`` and
        ``tn = n_out``; it grows with the number of runs.
    """
    return epsilon_lower_bound(int(n_in), 0, 0, int(n_out), delta, confidence)

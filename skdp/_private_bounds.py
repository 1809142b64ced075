r"""Private feature bounds: a noisy histogram over a public log-scale grid.

:class:`DPBoundsScaler` needs no public range. Each feature's values are
counted in the cells of one public grid, fixed before the data is read:
a cell ``[-t, t]`` around zero (``t`` the smallest magnitude of the grid)
and, on each side, the octaves ``(2^k, 2^{k+1}]`` of the magnitudes up to
the largest (values beyond it are counted in the last octave). The
``n_features x n_cells`` table of counts is released once with noise. Under
zero-out neighbours one record adds 1 to exactly one cell of each feature,
so the table's sensitivity is ``sqrt(n_features)`` in L2 (Gaussian noise)
and ``n_features`` in L1 (Laplace noise, ``delta = 0``), whatever the
number of cells; the noise multiplier comes from the accountant's
calibration, like :class:`~skdp.preprocessing.DPStandardScaler`'s.

The bounds are post-processing of the noisy table alone
(:func:`bounds_from_counts`): each cell costs a penalty in noise standard
deviations (more the further its magnitude is from 1); per feature, the best
run of negative octaves, the zero cell and the best run of positive octaves
compete by their sums of noisy count minus cost (the maximum subarray); the
best is kept, with any other whose sum clears a threshold; the bounds are the
kept cells' outer edges: signed powers of two, or the grid's ends.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin

from ._base import AccountedMixin
from ._docstrings import fill_doc
from ._bounded_map import linear_map
from ._scaler_base import (
    PRIVATE_SCALER_CONSTRAINTS,
    BoundedMapMixin,
    check_pair,
    fit_guard,
    public_shape,
    )
from ._scaler_charge import charge_scaler_fit
from .accounting import noise_mechanism
from .accounting.release import release  # the release door
from .losses import canonical_rows
from .validation import validate_data

__all__ = ["DPBoundsScaler"]

#: cost of a cell in the bounds' run, in noise standard deviations (chosen
#: on validation splits of training data: benchmarks/private_bounds.py)
PENALTY = 1.0
#: cost of a cell as a share of the records (when above the noise's cost):
#: at large n and epsilon, cells holding fewer records than this (rare
#: outliers) stay out of the bounds, like a quantile's trimming
TRIM = 0.0
#: extra cost of a cell per octave its magnitude lies from 1, in noise
#: standard deviations: a public preference for magnitudes near 1 that
#: keeps a lone noisy cell at 2^35 from beating a weak true run
DISTANCE_PENALTY = 0.2
#: a second part (sign side or the zero cell) joins the bounds when its sum
#: exceeds this many noise standard deviations
INCLUDE = 2.0
#: below this ratio of records to noise standard deviation per cell the fit
#: warns that the bounds may be wrong: the smallest whole number above every
#: validation case whose private pipeline fell more than 3 points below the
#: documented ranges (benchmarks/results/private_bounds_small_n.md)
LOW_SIGNAL = 10.0


def count_sensitivity(n_features, delta):
    """The grid table's sensitivity: one record adds 1 to one cell of each feature.

    L2 (``sqrt(n_features)``) for Gaussian noise, L1 (``n_features``) for
    Laplace noise (``delta = 0``).
    """
    return float(np.sqrt(n_features)) if delta > 0 else float(n_features)


def noise_std(z, n_features, delta):
    """Standard deviation of the noise on each count (public): Laplace's is ``sqrt(2)`` x scale."""
    return z * count_sensitivity(n_features, delta) * (1.0 if delta > 0 else np.sqrt(2.0))


def octave_grid(magnitudes):
    """The public grid's exponents ``(lo, hi)``: cells' edges are ``±2^k``, ``lo <= k <= hi``.

    Parameters
    ----------
    magnitudes : tuple (smallest, largest)
        Public magnitudes, ``0 < smallest < largest``, finite.

    Returns
    -------
    lo, hi : int
        ``2^lo <= smallest`` and ``2^hi >= largest``.
    """
    lo = int(np.floor(np.log2(magnitudes[0])))
    hi = int(np.ceil(np.log2(magnitudes[1])))
    return lo, max(hi, lo + 1)


def cell_edges(lo, hi):
    """Left and right edges of the grid's cells, in order of value.

    Cells ``0 .. m-1`` are the negative octaves from the most negative,
    cell ``m`` is ``[-2^lo, 2^lo]``, cells ``m+1 .. 2m`` the positive
    octaves, with ``m = hi - lo``.
    """
    powers = 2.0 ** np.arange(lo, hi + 1)
    right_pos, left_pos = powers[1:], powers[:-1]
    left = np.concatenate([-right_pos[::-1], [-powers[0]], left_pos])
    right = np.concatenate([-left_pos[::-1], [powers[0]], right_pos])
    return left, right


def cell_of(values, lo, hi):
    """Cell index of each value (any shape): see :func:`cell_edges`."""
    m = hi - lo
    magnitude = np.abs(values).astype(np.float64)
    with np.errstate(divide="ignore"):
        # octave (2^k, 2^{k+1}] holds magnitudes with ceil(log2) = k + 1
        k = np.ceil(np.log2(magnitude)) - 1 - lo
    k = np.clip(k, -1, m - 1).astype(np.int64)
    small = magnitude <= 2.0 ** lo
    return np.where(small, m, np.where(values > 0, m + 1 + k, m - 1 - k))


def cell_counts(X, lo, hi):
    """Exact ``(n_features, n_cells)`` counts: each row adds 1 to one cell per feature."""
    n, d = X.shape
    n_cells = 2 * (hi - lo) + 1
    if sp.issparse(X):
        X = canonical_rows(sp.csr_matrix(X))
        flat = X.indices.astype(np.int64) * n_cells + cell_of(X.data, lo, hi)
        counts = np.bincount(flat, minlength=d * n_cells).reshape(d, n_cells)
        # the implicit zeros: every row without a stored entry in the column
        counts[:, hi - lo] += n - np.bincount(X.indices, minlength=d)
        return counts
    flat = cell_of(X, lo, hi) + n_cells * np.arange(d)
    return np.bincount(flat.ravel(), minlength=d * n_cells).reshape(d, n_cells)


def _best_runs(gain):
    """Per row, the run of columns with the largest sum: ``(sum, first, last)``.

    Kadane's scan over the columns (the grid's cells, not the records),
    vectorised over rows.
    """
    d, n_cells = gain.shape
    best = np.full(d, -np.inf)
    best_first = np.zeros(d, dtype=np.int64)
    best_last = np.zeros(d, dtype=np.int64)
    run = np.zeros(d)
    run_first = np.zeros(d, dtype=np.int64)
    for k in range(n_cells):
        restart = run <= 0
        run = np.where(restart, gain[:, k], run + gain[:, k])
        run_first = np.where(restart, k, run_first)
        better = run > best
        best = np.where(better, run, best)
        best_first = np.where(better, run_first, best_first)
        best_last = np.where(better, k, best_last)
    return best, best_first, best_last


def bounds_from_counts(noisy, std, lo, hi, penalty=None, n_records=0):
    """Each feature's ``(lower, upper)`` from the noisy counts (post-processing only).

    Each cell costs ``penalty * std`` plus ``DISTANCE_PENALTY * std`` per
    octave between its magnitude and 1 (the zero cell costs ``penalty *
    std``). Three parts compete per feature: the run of negative octaves
    with the largest sum of ``noisy - cost`` (the maximum subarray), the
    zero cell, and the best run of positive octaves. The part with the
    largest sum is kept, with any other whose sum exceeds ``INCLUDE * std``
    (so a feature of zeros and of values in ``(4, 16]`` gets ``[-t, 16]``,
    ``t`` the zero cell's half-width); the bounds are the kept parts' outer
    cell edges.

    Parameters
    ----------
    noisy : ndarray of shape (n_features, n_cells)
        The released counts.
    std : float
        The noise's standard deviation per cell (public).
    lo, hi : int
        The grid (:func:`octave_grid`).
    penalty : float or None, default=None
        Cost of a cell in noise standard deviations; None uses ``PENALTY``.
    n_records : int, default=0
        The public number of records: a cell costs at least ``TRIM *
        n_records``.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)
        The kept parts' outer cell edges.
    """
    d, n_cells = noisy.shape
    m = hi - lo
    octave = np.abs(np.arange(n_cells) - m) - 1 + lo  # log2 of each cell's left magnitude
    distance = np.where(np.arange(n_cells) == m, 0, octave).astype(np.float64)
    cost = np.maximum((PENALTY if penalty is None else penalty) * std, TRIM * n_records)
    gain = noisy - cost - DISTANCE_PENALTY * np.abs(distance) * std
    negative, positive = _best_runs(gain[:, :m]), _best_runs(gain[:, m + 1:])
    sums = np.column_stack([negative[0], gain[:, m], positive[0]])
    firsts = np.column_stack([negative[1], np.full(d, m), positive[1] + m + 1])
    lasts = np.column_stack([negative[2], np.full(d, m), positive[2] + m + 1])
    kept = (sums >= INCLUDE * std) | (sums == sums.max(axis=1, keepdims=True))
    first = np.where(kept, firsts, n_cells).min(axis=1)
    last = np.where(kept, lasts, -1).max(axis=1)
    left, right = cell_edges(lo, hi)
    return left[first], right[last]


@fill_doc
class DPBoundsScaler(BoundedMapMixin, AccountedMixin, OneToOneFeatureMixin, TransformerMixin,
                     BaseEstimator):
    r"""Find each feature's range privately, then clip and scale to it.

    For raw tables with no documented ranges. ``fit`` releases one noisy
    table: the count of each feature's values in each cell of a public
    log-scale grid (zero, and the octaves ``(2^k, 2^{k+1}]`` of
    ``magnitudes`` on either sign). Its sensitivity under zero-out
    neighbours is ``sqrt(n_features)`` (L2; ``n_features`` in L1 for
    ``delta = 0``), the noise multiplier is calibrated by skdp's accountant
    to ``(epsilon, delta)`` and the fit is charged like any private fit. The
    bounds are read from the noisy table only: each feature's cells whose
    noisy counts stand out of the noise (see Notes), so they are signed
    powers of two (or the grid's ends) and hold no unnoised value of the
    data.

    ``transform`` is :class:`BoundedScaler`'s with these bounds: clip, then
    map ``[lower_, upper_]`` linearly to ``feature_range`` (sparse input:
    divide by ``max(|lower_|, |upper_|)``, zeros stay zeros). Every output
    row then has the public norm bound ``sqrt(n_features)`` (for
    ``feature_range=(-1, 1)``), and the default ``data_norm=1`` of the
    estimators after it rescales longer rows.

    Measured in ``benchmarks/results/private_bounds.md``: the pipeline
    ``make_pipeline(DPBoundsScaler(epsilon=e_b), DPLogisticRegression(
    epsilon=e_m))`` with ``e_b, e_m = split_budget(1.0, 1e-5, (0.3, 0.7))``,
    charged to ``BudgetAccountant(1.0, 1e-5, composition='gaussian')``,
    against the same estimator behind :class:`BoundedScaler` with the
    documented ranges at epsilon 1.

    Parameters
    ----------
    epsilon : float, default=0.35
        Privacy budget of the fit, > 0. In a pipeline under a total budget,
        give this step 30% of the budget's ``mu^2`` under Gaussian
        composition (:func:`~skdp.preprocessing.split_budget`), the share
        chosen on validation splits of training data (``python
        benchmarks/private_bounds.py --validation``); 0.35 is about a third
        of a total of 1 under basic composition.
    delta : 'auto' or float, default='auto'
        In [0, 1); 0 gives pure epsilon-DP (Laplace noise). ``'auto'`` is
        ``min(1e-5, 1 / (10 n))`` for the public n (see
        :func:`skdp.validation.resolve_delta`).
    feature_range : tuple (min, max), default=(-1, 1)
        Where ``[lower_, upper_]`` is mapped, for dense input.
    magnitudes : tuple (smallest, largest), default=(1e-6, 1e12)
        The public grid: magnitudes up to the smallest count as zero, the
        ones beyond the largest as the largest. Finite, ``0 < smallest <
        largest``. A wider grid costs nothing in noise per cell but has more
        cells for noise to pass the far-cell threshold.
    {{scaler_accountant}}
    secure_mode : bool, default=False
        Add discrete Gaussian (``delta > 0``) or discrete Laplace (``delta =
        0``) noise to the integer counts, sampled exactly from the OS CSPRNG
        and charged as those discrete mechanisms (see
        :class:`~skdp.DPLogisticRegression`). ``random_state`` is then
        ignored, with a warning.

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
        The private bounds (edges of the grid's cells).
    scale_, min_ : ndarray of shape (n_features,)
        The dense map: ``transform(X) = clip(X) * scale_ + min_``.
    noise_multiplier_ : float
        The calibrated multiplier ``z`` (noise std ``z sqrt(n_features)``,
        Gaussian).
    {{scaler_fit_record_}}

    See Also
    --------
    BoundedScaler : The same map from public bounds, at no privacy cost.
    DPStandardScaler : Noisy mean and variance within public bounds.

    Notes
    -----
    The bounds from the noisy counts: each cell costs one noise standard
    deviation plus 0.2 of one per octave between its magnitude and 1 (a
    public preference for magnitudes near 1); per feature the best run of
    negative octaves, the zero cell and the best run of positive octaves
    compete by their sums of noisy count minus cost; the best is kept with
    any other whose sum exceeds 2 noise standard deviations, and the bounds
    are the kept cells' outer edges. These constants, and the default
    epsilon, were chosen on validation splits of training data
    (``python benchmarks/private_bounds.py --validation``).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from skdp import BudgetAccountant
    >>> from skdp.preprocessing import DPBoundsScaler
    >>> X, _ = load_breast_cancer(return_X_y=True)
    >>> accountant = BudgetAccountant(epsilon=1.0)
    >>> scaler = DPBoundsScaler(epsilon=0.35, accountant=accountant, random_state=0).fit(X)
    >>> scaler.lower_[:3], scaler.upper_[:3]
    (array([ 8.,  8., 64.]), array([ 32.,  32., 128.]))
    >>> accountant.spent()
    (0.35, 1e-05)
    """

    _parameter_constraints = dict(PRIVATE_SCALER_CONSTRAINTS)

    def __init__(self, epsilon=0.35, delta="auto", feature_range=(-1, 1),
                 magnitudes=(1e-6, 1e12), accountant=None, random_state=None,
                 secure_mode=False):
        self.epsilon = epsilon
        self.delta = delta
        self.feature_range = feature_range
        self.magnitudes = magnitudes
        self.accountant = accountant
        self.random_state = random_state
        self.secure_mode = secure_mode

    @fill_doc
    def fit(self, X, y=None):
        """Release the noisy grid counts and set the bounds from them (charged).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training data (dense or sparse, float64 or float32).
        {{scaler_fit_returns:DPBoundsScaler}}
        """
        with fit_guard(self):
            self._charged_fit(X)
        return self

    def _charged_fit(self, X):
        a, b = check_pair("DPBoundsScaler", "feature_range", self.feature_range)
        lo, hi = octave_grid(check_pair("DPBoundsScaler", "magnitudes", self.magnitudes,
                                        positive=True))
        X, n, d = public_shape(self, X, accept_sparse=("csr", "csc"),
                               dtype=[np.float64, np.float32])

        def warn_if_low_signal(z, delta):
            std = noise_std(z, d, delta)
            if n < LOW_SIGNAL * std:
                warnings.warn(
                    f"DPBoundsScaler: with {n} records, {d} features and "
                    f"epsilon={self.epsilon} the noise on each count has standard deviation "
                    f"{std:.3g}, more than 1/{LOW_SIGNAL:g} of the records: the private bounds "
                    "may miss features' ranges. Give this step more epsilon (or the pipeline a "
                    "larger total), or public ranges to BoundedScaler.", UserWarning, stacklevel=5)

        X, z, delta, mechanism, rng = charge_scaler_fit(
            self, n, lambda z, delta: noise_mechanism(delta)(z),
            lambda raw=X: validate_data(self, raw, accept_sparse=("csr", "csc"),
                                        dtype=[np.float64, np.float32]),
            before_check=warn_if_low_signal)
        std = noise_std(z, d, delta)
        noisy = release(cell_counts(X, lo, hi), mechanism, count_sensitivity(d, delta), rng,
                        what="DPBoundsScaler grid counts")
        lower, upper = bounds_from_counts(noisy, std, lo, hi, n_records=n)
        if sp.issparse(X):
            # zeros stay zeros: the scale-only map needs 0 inside the range
            lower, upper = np.minimum(lower, 0.0), np.maximum(upper, 0.0)
        self.lower_, self.upper_ = lower, upper
        self.scale_, self.min_ = linear_map(lower, upper, a, b)
        self.noise_multiplier_ = float(z)
        self.n_samples_seen_ = int(n)
        self.privacy_spent_ = (float(self.epsilon), delta)

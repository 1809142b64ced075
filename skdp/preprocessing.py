"""Preprocessing for private pipelines: scaling from public bounds.

A transformer fitted on private data is part of what a pipeline releases.
scikit-learn's ``StandardScaler`` learns means and variances from the data
without noise, so a pipeline that starts with it is not private, whatever
the estimator after it. Three replacements:

* :class:`BoundedScaler` clips each feature to a public range and maps it
  linearly; its ``fit`` learns nothing from the values, so it costs no
  privacy. Public ranges come from the data's documentation, a schema, or
  domain knowledge (age 0-120, pixels 0-16).
* :class:`DPStandardScaler` centres and scales by a noisy mean and variance
  of the clipped values, charged to the accountant like an estimator fit.
* :class:`DPBoundsScaler` (when no public range is known) finds each
  feature's range from noisy counts on a public log-scale grid, charged,
  then maps like :class:`BoundedScaler`.

On scikit-learn's small data sets the bounded map in front of an estimator
stays within 3 points of the non-private scaler at epsilon 1
(``tests/test_private_pipelines.py`` checks it), and the noisy
standardisation pays off only at large n (at n of a few hundred its noise
costs more than centring gains). The measurements are in
``docs/preprocessing.md``.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._base import AccountedMixin
from ._docstrings import fill_doc
from ._bounded_map import clip_columns, linear_map
from ._budget_split import split_budget
from ._private_bounds import DPBoundsScaler
from ._scaler_base import (
    PRIVATE_SCALER_CONSTRAINTS,
    BoundedMapMixin,
    check_pair,
    fit_guard,
    public_shape,
)
from ._scaler_charge import charge_scaler_fit
from .accounting import BudgetAccountant, Repeated, noise_mechanism
from .accounting.release import release  # the release door
from .losses import column_totals
from .validation import validate_data

__all__ = ["BoundedScaler", "DPBoundsScaler", "DPStandardScaler", "pipeline_privacy_spent",
           "split_budget"]


def _public_bounds(bounds, n_features, owner):
    """``(lower, upper)`` as float64 arrays of shape ``(n_features,)``, checked."""
    try:
        lower, upper = bounds
        lower = np.asarray(lower, dtype=np.float64)
        upper = np.asarray(upper, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{owner}: bounds must be a pair (lower, upper) of numbers or of arrays of "
            f"shape (n_features,), got {bounds!r}. From a table of per-feature "
            "(min, max) rows, pass tuple(numpy.transpose(table))."
        ) from None
    for name, value in (("lower", lower), ("upper", upper)):
        if value.ndim > 1 or value.size not in (1, n_features):
            raise ValueError(
                f"{owner}: the {name} bound has shape {value.shape}; it must be a number or "
                f"have one value per feature ({n_features})."
            )
    lower = np.broadcast_to(lower.ravel(), (n_features,)).copy()
    upper = np.broadcast_to(upper.ravel(), (n_features,)).copy()
    if not (np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
        raise ValueError(f"{owner}: every bound must be finite; got lower={lower}, "
                         f"upper={upper}.")
    bad = np.flatnonzero(lower >= upper)
    if bad.size:
        raise ValueError(
            f"{owner}: each feature needs lower < upper; features {bad.tolist()} have "
            f"lower={lower[bad].tolist()}, upper={upper[bad].tolist()}."
        )
    return lower, upper


def _n_features_of_bounds(bounds):
    """Number of features the bounds describe (None for scalar bounds)."""
    try:
        sizes = {np.size(b) for b in bounds}
    except TypeError:
        return None
    sizes.discard(1)
    return sizes.pop() if len(sizes) == 1 else None


class BoundedScaler(BoundedMapMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Clip each feature to a public range and map it linearly: no privacy cost.

    ``fit`` reads the data's shape only (it validates the input and records
    ``n_features_in_``): what it learns is a function of the public
    ``bounds`` alone, so it is safe to fit on private data, and a pipeline
    ``make_pipeline(BoundedScaler(bounds), DPLogisticRegression(...))`` is
    as private as its estimator.

    Parameters
    ----------
    bounds : tuple (lower, upper)
        The public range of each feature: numbers (the same for every
        feature) or arrays of shape ``(n_features,)``, finite, with
        ``lower < upper``. They must not be computed from the private data
        (that would leak it): take them from the data's documentation, a
        schema, or domain knowledge.
    feature_range : tuple (min, max), default=(-1, 1)
        Where ``[lower, upper]`` is mapped, for dense input.

    Attributes
    ----------
    lower_, upper_ : ndarray of shape (n_features,)
        The bounds per feature.
    scale_ : ndarray of shape (n_features,)
        Multiplier of the map (dense input).
    min_ : ndarray of shape (n_features,)
        Offset of the map: ``transform(X) = clip(X) * scale_ + min_``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Defined only when X has feature names that are all strings.

    Notes
    -----
    Sparse input keeps its zeros: a feature is then scaled by
    ``1 / max(|lower|, |upper|)`` without a shift (it needs ``lower <= 0 <=
    upper``), which maps a range with ``lower = 0`` to ``[0, 1]`` and any
    range into ``[-1, 1]``. Values outside the bounds are clipped (dense and
    sparse alike), so every output row has a public norm bound: at most
    ``sqrt(n_features) * max(|min|, |max|)`` of ``feature_range``, a
    ``data_norm`` for the estimator after it.

    Examples
    --------
    >>> from skdp.preprocessing import BoundedScaler
    >>> BoundedScaler(bounds=(0, 16)).fit_transform([[0.0, 8.0], [16.0, 20.0]])
    array([[-1.,  0.],
           [ 1.,  1.]])
    """

    def __init__(self, bounds, feature_range=(-1, 1)):
        self.bounds = bounds
        self.feature_range = feature_range

    def fit(self, X, y=None):
        """Check ``X``'s shape against the bounds; read no value.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The training data; only its shape (and its feature names) are
            read. Sparse input needs ``lower <= 0 <= upper`` on every feature.
        y : None
            Ignored.

        Returns
        -------
        self : BoundedScaler
            The fitted scaler (``lower_``, ``upper_``, ``scale_``, ``min_``
            set from the bounds alone). Nothing is charged to any accountant.
        """
        a, b = check_pair("BoundedScaler", "feature_range", self.feature_range)
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=[np.float64, np.float32], reset=True)
        lower, upper = _public_bounds(self.bounds, X.shape[1], "BoundedScaler")
        if sp.issparse(X) and not np.all((lower <= 0) & (upper >= 0)):
            bad = np.flatnonzero((lower > 0) | (upper < 0)).tolist()
            raise ValueError(
                f"BoundedScaler: sparse input keeps its zeros, so every range must contain "
                f"0 (features {bad} do not); densify X (X.toarray()) to map such ranges."
            )
        self.lower_, self.upper_ = lower, upper
        self.scale_, self.min_ = linear_map(lower, upper, a, b)
        return self


@fill_doc
class DPStandardScaler(AccountedMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    r"""Centre and scale by a noisy mean and variance of the clipped values.

    Each feature is clipped to its public range ``[l_j, u_j]`` and centred at
    its midpoint ``m_j``, so each record's value lies in ``[-h_j, h_j]``
    (``h_j = (u_j - l_j) / 2``). Two sums are released with noise (``n``
    is public):

    .. math::

        S_1 = \sum_i (\bar x_i - m) + \xi_1, \qquad
        S_2 = \sum_i (\bar x_i - m)^2 + \xi_2,

    whose sensitivities under zero-out neighbours are ``||h||`` and
    ``||h^2||`` (L2; L1 norms with ``delta = 0``), with Gaussian (Laplace for
    ``delta = 0``) noise of scale ``z`` times each, ``z`` calibrated by
    skdp's accountant so that the two releases compose to ``(epsilon,
    delta)``. Then ``mean_ = m + S_1 / n`` (clipped to the range) and
    ``var_ = S_2 / n - (S_1 / n)^2``, floored at ``(h / 100)^2``.
    ``transform`` clips to the bounds and returns ``(x - mean_) / scale_``.

    ``fit`` follows the estimators' rules: parameters and data are validated
    before the accountant is charged (bad input costs nothing), an exhausted
    budget is refused before the data is read, and every charged fit draws
    its own noise (see :class:`~skdp.BudgetAccountant`).

    When it pays off: the noise on ``S_1 / n`` is of order ``z h / n`` per
    feature, so on a few hundred rows spending part of the budget here
    instead of using :class:`BoundedScaler` costs accuracy
    (``docs/preprocessing.md``). Use it when n is large (tens of thousands)
    or the public ranges are much wider than the data.

    Parameters
    ----------
    bounds : tuple (lower, upper)
        Public range of each feature, as for :class:`BoundedScaler`.
    epsilon : float, default=1.0
        Privacy budget of the fit, > 0.
    delta : 'auto' or float, default='auto'
        In [0, 1); 0 gives pure epsilon-DP (Laplace noise). 'auto' resolves
        at fit from the public n to ``min(1e-5, 1 / (10 n))``
        (:func:`skdp.validation.resolve_delta`), an order below the
        ``1 / n`` at which the guarantee is void; the resolved value is what
        is charged and what ``privacy_spent_`` shows.
    {{scaler_accountant}}
    secure_mode : bool, default=False
        Round the two sums to a public grid and add discrete Gaussian
        (``delta > 0``) or discrete Laplace (``delta = 0``) noise sampled
        exactly from the OS CSPRNG, charged as those discrete mechanisms (see
        :class:`~skdp.DPLogisticRegression`). ``random_state`` is then
        ignored, with a warning.

    Attributes
    ----------
    mean_, var_, scale_ : ndarray of shape (n_features,)
        The released statistics (``scale_ = sqrt(var_)``).
    lower_, upper_ : ndarray of shape (n_features,)
        The public bounds per feature.
    noise_multiplier_ : float
        The calibrated ``z``.
    {{scaler_fit_record_}}

    See Also
    --------
    BoundedScaler : Scaling from the public bounds alone, at no privacy cost.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from skdp import BudgetAccountant
    >>> from skdp.datasets import documented_bounds
    >>> from skdp.preprocessing import DPStandardScaler
    >>> X, _ = load_iris(return_X_y=True)
    >>> accountant = BudgetAccountant(epsilon=2.0)
    >>> scaler = DPStandardScaler(bounds=documented_bounds("iris"), epsilon=1.0,
    ...                           accountant=accountant, random_state=0).fit(X)
    >>> scaler.mean_.round(2)
    array([6.04, 2.94, 3.86, 1.2 ])
    >>> scaler.transform(X[:2]).round(2)
    array([[-0.93,  1.28, -1.33, -1.09],
           [-1.12,  0.15, -1.33, -1.09]])
    >>> accountant.spent()
    (1.0, 1e-05)
    """

    _parameter_constraints = dict(PRIVATE_SCALER_CONSTRAINTS)

    def __init__(self, bounds, epsilon=1.0, delta="auto", accountant=None, random_state=None,
                 secure_mode=False):
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state
        self.secure_mode = secure_mode

    @staticmethod
    def _mechanism(z, delta):
        return Repeated(noise_mechanism(delta)(z), 2)

    @fill_doc
    def fit(self, X, y=None):
        """Release the noisy mean and variance of the clipped features (charged).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense (centring would densify sparse input).
        {{scaler_fit_returns:DPStandardScaler}}
        """
        with fit_guard(self):
            self._charged_fit(X)
        return self

    def _charged_fit(self, X):
        if sp.issparse(X):
            raise TypeError(
                "DPStandardScaler does not accept sparse input: centring would densify "
                "it. Use BoundedScaler (zeros stay zeros) or X.toarray()."
            )
        X, n, d = public_shape(self, X, dtype=[np.float64, np.float32])
        size = _n_features_of_bounds(self.bounds)
        lower, upper = _public_bounds(self.bounds, d if size is None else size,
                                      "DPStandardScaler")
        def read_data(raw=X):
            X = validate_data(self, raw, dtype=[np.float64, np.float32])
            if X.shape[1] != lower.size:
                raise ValueError(f"DPStandardScaler: X has {X.shape[1]} features, the "
                                 f"bounds describe {lower.size}.")
            return X

        X, z, delta, _, rng = charge_scaler_fit(self, n, self._mechanism, read_data)
        mid, half = (lower + upper) / 2.0, (upper - lower) / 2.0
        # clipped in float64 to the float64 bounds (float32 bounds round outwards by
        # up to half a float32 spacing, more than the width of narrow bounds), and the
        # centred values held to [-half, half] against the subtraction's rounding:
        # every record then moves the sums by at most the sensitivities below
        centred = np.clip(np.clip(np.asarray(X, dtype=np.float64), lower, upper) - mid,
                          -half, half)
        norm = 2 if delta > 0 else 1
        sens_1 = float(np.linalg.norm(half, ord=norm))
        sens_2 = float(np.linalg.norm(half ** 2, ord=norm))
        noise = noise_mechanism(delta)(z)
        s1 = release(column_totals(centred), noise, sens_1, rng, what="DPStandardScaler sum")
        s2 = release(column_totals(np.square(centred)), noise, sens_2, rng,
                     what="DPStandardScaler sum of squares")
        shift = np.clip(s1 / n, -half, half)
        var = np.clip(s2 / n - shift ** 2, (half / 100.0) ** 2, half ** 2)
        self.lower_, self.upper_ = lower, upper
        self.mean_ = mid + shift
        self.var_ = var
        self.scale_ = np.sqrt(var)
        self.noise_multiplier_ = float(z)
        self.n_samples_seen_ = int(n)
        self.privacy_spent_ = (float(self.epsilon), delta)

    def transform(self, X):
        """Clip to the bounds, centre by ``mean_`` and divide by ``scale_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense data with the features the scaler was fitted with. This
            post-processing of the released statistics costs no privacy.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            ``(clip(X) - mean_) / scale_``, of X's float dtype.
        """
        check_is_fitted(self)
        if sp.issparse(X):
            raise TypeError("DPStandardScaler does not accept sparse input; use "
                            "BoundedScaler or X.toarray().")
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        out = clip_columns(X, self.lower_, self.upper_)
        out -= self.mean_.astype(X.dtype)
        out /= self.scale_.astype(X.dtype)
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def pipeline_privacy_spent(pipeline):
    """Total ``(epsilon, delta)`` of the private fits a fitted pipeline ran, by basic composition.

    A private estimator's ``privacy_spent_`` covers its whole fit (for
    :class:`~skdp.model_selection.PrivateGridSearchCV`, the whole search).
    Inside a ``Pipeline``, ``FeatureUnion`` or ``ColumnTransformer`` (nested
    ones included) every fitted step is kept, so those steps'
    ``privacy_spent_`` are summed.

    Any other estimator that holds a private estimator (a meta-estimator:
    ``BaggingClassifier``, ``OneVsRestClassifier``, ``GridSearchCV``,
    ``CalibratedClassifierCV``, ``StackingClassifier``, ...) may have run
    private fits that its fitted model does not keep (a search discards the
    fits of every candidate and fold; stacking discards its cross-validated
    fits), so they cannot be read from the model. For those the function
    reports what the accountants of the private estimators inside it have
    recorded, in total (``accountant.spent()``): exact when those
    accountants served only this pipeline, an over-report when they also
    hold other fits, never an under-report. If such a private estimator has
    ``accountant=None`` (it charged whatever accountant was in force when it
    was fitted, which cannot be known afterwards), a ValueError is raised
    instead.

    The private estimators are found through the estimators' parameters and
    fitted attributes (lists, tuples and dicts of them included, and
    scikit-learn's helper objects). A private fit hidden from both, e.g.
    made inside a function given to ``FunctionTransformer``, is not seen.
    Basic composition is always valid; an accountant with
    ``composition='gaussian'`` may report a smaller total for the same fits.

    Parameters
    ----------
    pipeline : fitted estimator
        A ``Pipeline``, ``ColumnTransformer``, a meta-estimator, or a single
        fitted estimator.

    Returns
    -------
    (epsilon, delta) : tuple of float
        The sum of the kept steps' ``privacy_spent_`` and of the totals of
        the accountants behind meta-estimators (each counted once);
        ``(0.0, 0.0)`` when nothing was charged.

    Raises
    ------
    ValueError
        If a meta-estimator holds a private estimator with
        ``accountant=None``.
    """
    charged, accountants = [], {}
    _collect_private_fits(pipeline, set(), charged, accountants)
    eps = [acc.spent()[0] for acc in accountants.values()]
    delta = [acc.spent()[1] for acc in accountants.values()]
    for step in charged:
        if id(_accountant_param(step)) not in accountants:
            eps.append(float(step.privacy_spent_[0]))
            delta.append(float(step.privacy_spent_[1]))
    return float(sum(eps)), float(sum(delta))


def _is_private(estimator):
    """A private estimator: it takes an ``accountant`` (and charges it when fitted)."""
    return "accountant" in estimator.get_params(deep=False)


def _accountant_param(estimator):
    return estimator.get_params(deep=False).get("accountant")


def _collect_private_fits(node, seen, charged, accountants):
    """Walk a fitted estimator: kept charged fits into ``charged``; accountants to report whole.

    A private estimator is a leaf (its charge covers its fit). Pipelines,
    feature unions and column transformers keep every step they fit; any
    other estimator holding private estimators has its accountants put in
    ``accountants`` (by id), since its discarded fits are known only there.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import FeatureUnion, Pipeline

    if id(node) in seen or isinstance(node, (BudgetAccountant, _AccountantNone)):
        return
    seen.add(id(node))
    if isinstance(node, BaseEstimator) and _is_private(node):
        if getattr(node, "privacy_spent_", None) is not None:
            charged.append(node)
        return
    if isinstance(node, BaseEstimator) and not isinstance(
            node, (Pipeline, FeatureUnion, ColumnTransformer)):
        _add_accountants_within(node, accountants)
    for obj in _held_objects(node):
        _collect_private_fits(obj, seen, charged, accountants)


def _add_accountants_within(node, accountants):
    """Add to ``accountants`` every accountant a private fit run by ``node`` may have charged.

    When ``node`` holds private estimators (not descending into them): their
    accountants, and any accountant among its other parameters (e.g. a
    parameter grid). ValueError where one is None (unknown now).
    """
    seen, todo = {id(node)}, list(_held_objects(node))
    found, private, unknown = {}, False, False
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, BaseEstimator) and _is_private(obj):
            private = True
            obj = _accountant_param(obj)
            unknown = unknown or obj is None
        if isinstance(obj, _AccountantNone):
            unknown = True
        elif isinstance(obj, BudgetAccountant):
            found[id(obj)] = obj
        elif obj is not None:
            todo.extend(_held_objects(obj))
    if not private:
        return
    if unknown:
        raise ValueError(
            f"pipeline_privacy_spent: {type(node).__name__} holds a private estimator "
            "with accountant=None. A meta-estimator may run private fits it does not "
            "keep (a search discards every candidate's fits), so its cost can only be "
            "read from the accountant those fits charged, and accountant=None charged "
            "whichever accountant was in force at fit time, which is not known now. "
            "Pass accountant=BudgetAccountant(...) to the private estimators and "
            "refit, or read that accountant's spent()."
        )
    accountants.update(found)


class _AccountantNone:
    """Marks an ``accountant`` parameter set to None in a parameter grid or dict."""


def _held_objects(obj):
    """Estimators, helper objects and accountants held by ``obj``'s attributes.

    Looks into the parameters and fitted attributes (an object's
    ``__dict__``), through lists, tuples, sets and dicts: estimators,
    scikit-learn's and skdp's helper objects, :class:`BudgetAccountant`
    objects, and a ``_AccountantNone`` for a dict entry ``'...accountant'``
    that is or lists None (a parameter grid over the accountant).
    """
    stack = list(getattr(obj, "__dict__", {}).values())
    while stack:
        value = stack.pop()
        if isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(key, str) and key.endswith("accountant") and (
                        item is None or (isinstance(item, (list, tuple))
                                         and any(v is None for v in item))):
                    yield _AccountantNone()
                stack.append(item)
        elif isinstance(value, (BaseEstimator, BudgetAccountant)) or (
                hasattr(value, "__dict__") and not isinstance(value, type)
                and type(value).__module__.split(".")[0] in ("sklearn", "skdp")):
            yield value

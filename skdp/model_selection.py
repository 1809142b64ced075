r"""Private hyperparameter search: the chosen model and its score are private too.

:class:`sklearn.model_selection.GridSearchCV` over a private estimator charges
every fit, but the *choice* (``best_params_``, ``best_score_``,
``cv_results_``) is computed from exact validation scores on the private
data, which the accountant never sees. :class:`PrivateGridSearchCV` and
:class:`PrivateRandomizedSearchCV` make the whole search one mechanism with a
stated (epsilon, delta), charged before any value of the data is read.

The mechanism (Papernot and Steinke [1]_, Theorem 2):

1. The rows are split at random, independently of the data, into a training
   part and a validation part of public sizes.
2. One *trial* picks a candidate uniformly at random, fits it on the
   training part (its own private fit) and releases the number of validation
   rows it predicts correctly plus noise calibrated to the candidate's
   (epsilon, delta) with sensitivity 1 (a null record adds nothing), divided
   by the validation size. A record is in exactly one part, so a trial's
   Rényi divergence is at most the larger of the fit's and the score's
   (parallel composition): :class:`~skdp.accounting.AnyOf` of both, over all
   candidates.
3. The number of trials K is drawn from the truncated negative binomial
   distribution with mean ``n_trials`` and shape ``shape``
   (:class:`~skdp.accounting.RepeatAndSelect`), and only the trial with the
   highest noisy score is released: its model, its parameters, its noisy
   score. K itself, the other trials' scores and their ranking are not
   released (releasing K would void the theorem).
4. ``refit=True`` fits the chosen parameters again on all rows; that fit is
   charged in the same single charge, as :class:`~skdp.accounting.AnyOf` the
   candidates' full-data fits (it is chosen by the selection, so it could
   be any of them).

References
----------
.. [1] N. Papernot and T. Steinke, "Hyperparameter Tuning with Renyi
   Differential Privacy", ICLR 2022.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_classifier,
)
from sklearn.model_selection import ParameterGrid, ParameterSampler
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._base import AccountedMixin, PrivateEstimatorMixin
from ._seeding import covered_stream, noise_generator, seed_key
from .accounting import (
    AnyOf,
    BudgetAccountant,
    Composed,
    RepeatAndSelect,
    calibrate,
    get_epsilon,
    noise_mechanism,
)
from .exceptions import warn_if_seed_replays, warn_labels_read_from_y
from .validation import (
    RANDOM_STATE,
    Boolean,
    InstanceOf,
    Interval,
    resolve_delta,
    validate_data,
    validate_params,
)

__all__ = ["PrivateGridSearchCV", "PrivateRandomizedSearchCV"]


def _estimator_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)
    return check


def _covered_fit(estimator, rng, X, y):
    """A fit already covered by the search's charge.

    It runs with a fresh accountant of its own (the released model's then
    holds one spend, never the number of trials), silent (a line per trial
    would release the number of trials, which the selection theorem needs
    hidden), and draws its noise from a child of the search's stream passed
    through :func:`~skdp._seeding.covered_stream`: the model keeps the
    template's ``random_state`` and ``verbose``, and holds no seed that
    would replay its noise.
    """
    model = clone(estimator).set_params(accountant=BudgetAccountant(), verbose=0)
    with covered_stream(rng.bit_generator.seed_seq.spawn(1)[0]):
        model.fit(X, y)
    return model.set_params(verbose=estimator.verbose)


class _PrivateSearchBase(ClassifierMixin, MetaEstimatorMixin, AccountedMixin, BaseEstimator):
    """Fit, release and delegation shared by the grid and randomised searches."""

    _parameter_constraints = {
        "n_trials": [None, Interval(Real, 1, None, closed="neither")],
        "shape": [Interval(Real, 0, None, closed="left")],
        "validation_size": [Interval(Real, 0, 1, closed="neither")],
        "refit": [Boolean],
        "delta": [None, Interval(Real, 0, 1, closed="left")],
        "accountant": [None, InstanceOf(BudgetAccountant, name="a BudgetAccountant")],
        "random_state": RANDOM_STATE,
    }

    # -- what subclasses provide -------------------------------------------
    def _candidates(self):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- accountant ----------------------------------------------------------
    def _accountant_in_force(self):
        if self.accountant is None and getattr(self.estimator, "accountant", None) is not None:
            return self.estimator.accountant
        return super()._accountant_in_force()

    # -- the search ----------------------------------------------------------
    def _check_params(self):
        validate_params(type(self).__name__, self.get_params(deep=False),
                        self._parameter_constraints)
        if not isinstance(self.estimator, PrivateEstimatorMixin) or not is_classifier(
                self.estimator):
            raise TypeError(
                f"{type(self).__name__}: estimator must be one of skdp's private classifiers "
                f"(DPLogisticRegression, DPLinearSVC), got {type(self.estimator).__name__}. "
                "Its fit cost is planned from public quantities before the search reads data; "
                "put preprocessing that learns nothing from the data (skdp.preprocessing."
                "BoundedScaler) before the search, not inside it."
            )
        candidates = self._candidates()
        if not candidates:
            raise ValueError(f"{type(self).__name__}: the parameter grid is empty.")
        return candidates

    def _plan(self, candidates, n_samples, n_features, labels):
        """Trial and refit mechanisms from public quantities only (no data value)."""
        n_val = max(1, int(math.ceil(self.validation_size * n_samples)))
        n_train = n_samples - n_val
        if n_train < 1:
            raise ValueError(
                f"{type(self).__name__}: {n_samples} rows leave no training rows with "
                f"validation_size={self.validation_size}; use more rows or a smaller "
                "validation_size.")
        estimators, trials, refits, scores, deltas = [], [], [], [], []
        for params in candidates:
            est = clone(self.estimator).set_params(**params)
            if "classes" in est.get_params():
                # the public label set: a part missing a label is no error
                est.set_params(classes=labels)
            fit = est._planned_mechanism(n_train, n_features, labels)
            eps, delta = float(est.epsilon), resolve_delta(est.delta, n_train)
            score = noise_mechanism(delta)(calibrate(noise_mechanism(delta), eps, delta))
            estimators.append(est)
            trials.append(AnyOf([fit, score]))
            scores.append(score)
            deltas.append(delta)
            if self.refit:
                refits.append(est._planned_mechanism(n_samples, n_features, labels))
        n_trials = (max(2.0, 2.0 * len(candidates)) if self.n_trials is None
                    else float(self.n_trials))
        selection = RepeatAndSelect.from_mean(AnyOf(trials), n_trials, float(self.shape))
        mechanism = Composed([selection, AnyOf(refits)]) if self.refit else selection
        delta = max(deltas) if self.delta is None else float(self.delta)
        epsilon = get_epsilon(mechanism, delta)
        if not math.isfinite(epsilon):
            raise ValueError(
                f"{type(self).__name__}: the search has no finite epsilon at delta={delta!r} "
                "(pure-DP candidates mixed with Gaussian ones, or delta=0 with Gaussian "
                "candidates); pass delta > 0.")
        return (n_train, n_val, estimators, scores, selection, mechanism,
                float(epsilon), float(delta))

    def fit(self, X, y):
        """Run the private search; charge its whole cost first.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; the split into training and validation parts is
            drawn independently of it.
        y : array-like of shape (n_samples,)
            Labels (the label set is public, as for the estimator).

        Returns
        -------
        self : object
            The fitted search.

        Raises
        ------
        BudgetError
            If the accountant cannot afford the whole search; raised after
            the data is validated (which costs nothing) and before any trial
            runs.
        """
        candidates = self._check_params()
        X, y = validate_data(self, X, y, accept_sparse="csr",
                             dtype=[np.float64, np.float32], reset=True)
        labels = self.estimator._public_labels(y)
        if len(labels) < 2:
            raise ValueError(
                f"{type(self).__name__}: y has {len(labels)} class; a classifier needs at "
                "least 2 (or pass the public label set as classes= to the estimator).")
        if not np.isin(y, labels).all():
            # the message quotes no label of y: they are private
            raise ValueError(
                f"{type(self).__name__}: y holds labels that are not in the estimator's "
                "classes=; pass classes= covering every label that can occur in y (the "
                "label set is public), or drop those records before fitting.")
        n_samples, n_features = X.shape
        (n_train, n_val, estimators, scores, selection, mechanism,
         epsilon, delta) = self._plan(candidates, n_samples, n_features, labels)
        accountant = self._accountant_in_force()
        warn_if_seed_replays(self.random_state, accountant, type(self).__name__)
        if getattr(self.estimator, "classes", None) is None:
            warn_labels_read_from_y(type(self).__name__)
        record = accountant.charge(
            epsilon, delta, mechanism=mechanism,
            label=f"{type(self).__name__}({type(self.estimator).__name__})",
            seed_key=seed_key(self.random_state))
        rng = noise_generator(self.random_state, record.seed_index)

        # everything below is drawn from rng, after the charge
        order = rng.permutation(n_samples)
        train, val = np.sort(order[n_val:]), np.sort(order[:n_val])
        best = None
        for _ in range(selection.sample_runs(rng)):
            j = int(rng.integers(len(candidates)))
            est = _covered_fit(estimators[j], rng, X[train], y[train])
            correct = float(np.sum(est.predict(X[val]) == y[val]))
            score = self._release_score(correct, n_val, scores[j], rng)
            if best is None or score > best[0]:
                best = (score, j, est)
        score, j, model = best
        if self.refit:
            model = _covered_fit(estimators[j], rng, X, y)
        self.best_estimator_ = model
        self.best_index_ = j
        self.best_params_ = dict(candidates[j])
        self.best_score_ = float(score)
        released = np.full(len(candidates), np.nan)
        released[j] = score
        self.cv_results_ = {
            "params": [dict(p) for p in candidates],
            "mean_test_score": released,
            "selected": np.arange(len(candidates)) == j,
        }
        self.classes_ = model.classes_
        self.n_train_, self.n_validation_ = n_train, n_val
        self.privacy_spent_ = (epsilon, delta)
        if getattr(self.estimator, "verbose", 0):
            # released quantities only: never the number of trials
            print(f"[{type(self).__name__}] chose {self.best_params_} (noisy validation "
                  f"accuracy {self.best_score_:.4g}); the whole search charged "
                  f"epsilon={epsilon:.4g} delta={delta:.3g} once")
        return self

    @staticmethod
    def _release_score(correct, n_val, mechanism, rng):
        """Noisy validation accuracy: the correct count (sensitivity 1) plus noise."""
        from .accounting.release import release  # the release door

        return release(float(correct), mechanism, 1.0, rng, what="validation score") / n_val

    # -- delegation to the released model ------------------------------------
    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with ``best_estimator_``.

        Post-processing of the released model: no privacy cost.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples to classify.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted labels, from ``classes_``.
        """
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``best_estimator_``.

        Available when the estimator has ``predict_proba``
        (``DPLogisticRegression``); post-processing of the released model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            The probability of each class, in the order of ``classes_``.
        """
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``best_estimator_``.

        Post-processing of the released model: no privacy cost.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The released model's decision values: one column for two
            classes (positive for ``classes_[1]``), one per class otherwise.
        """
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def score(self, X, y):
        """Accuracy of ``best_estimator_`` on (X, y) (not private: for public test data).

        The exact accuracy is returned without noise, so calling it on private
        data releases that data's accuracy outside any accountant: use it on
        public or already-released test data only.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            Their true labels.

        Returns
        -------
        score : float
            Fraction of the samples whose label ``predict`` gets right.
        """
        check_is_fitted(self)
        return self.best_estimator_.score(X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.non_deterministic = True
        return tags


_SEARCH_PARAMS_DOC = r"""
    n_trials : float or None, default=None
        Expected number of trials, > 1 (each fits one candidate chosen
        uniformly at random); None uses twice the number of candidates (at
        least 2). The cost grows like its logarithm.
    shape : float, default=1.0
        Shape :math:`\eta \ge 0` of the truncated negative binomial number of
        trials: 1 is geometric; 0 (logarithmic) costs less but gives more
        runs with a single trial.
    validation_size : float, default=0.2
        Fraction of the rows held out to score the trials (drawn at random,
        independently of the data and of the labels).
    refit : bool, default=False
        False: ``best_estimator_`` is the winning trial's model, fitted on
        the training part (no cost beyond the selection). True: the chosen
        parameters are fitted again on all rows, charged in the same single
        charge as the selection (unlike scikit-learn, ``best_estimator_``
        exists in both cases).
    delta : float or None, default=None
        The delta at which the whole search's epsilon is stated; None uses
        the largest delta of the candidates (a candidate's ``delta='auto'``
        resolved from the training part's rows by
        :func:`skdp.validation.resolve_delta`).
    accountant : BudgetAccountant or None, default=None
        Charged with the whole search; None uses the estimator's
        ``accountant`` if set, else the accountant in force (as for a fit).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the split, the number of trials, the candidates drawn, the
        score noise and each trial's fit (never shared between two charged
        searches, see :mod:`skdp`). The trials and the refit run silent,
        whatever the estimator's ``verbose`` (one line per trial would
        release the number of trials); with ``verbose`` set the search
        prints one line of released values.

    Attributes
    ----------
    best_estimator_ : estimator
        The released model (see ``refit``). It keeps the estimator's own
        ``random_state`` and ``verbose``: its noise was drawn from the
        search's stream and no seed on it replays that noise.
    best_params_ : dict
        Its parameters.
    best_score_ : float
        Its released noisy validation accuracy (may fall outside [0, 1]).
    best_index_ : int
        Index of the chosen candidate in ``cv_results_['params']``.
    cv_results_ : dict
        Released quantities only: ``params`` (every candidate),
        ``mean_test_score`` (the noisy score of the chosen candidate, NaN
        for the others, whose scores are not released) and ``selected``.
    privacy_spent_ : tuple of (float, float)
        (epsilon, delta) of the whole search, as charged.
    classes_ : ndarray
        The label set.
    n_train_, n_validation_ : int
        Sizes of the training and validation parts (public).

    Notes
    -----
    Privacy: the cost is computed by :mod:`skdp.accounting` from Theorem 2
    of Papernot and Steinke (ICLR 2022), :class:`~skdp.accounting.RepeatAndSelect`,
    applied to the Rényi DP curve of one trial; see :mod:`skdp.model_selection`.
    ``privacy_spent_`` is what the accountant recorded. The search raises
    the accountant's ``BudgetError`` before any trial runs when the budget
    cannot afford it. The run time depends on the number of trials drawn
    (a timing side channel on K, which is independent of the data).
"""


class PrivateGridSearchCV(_PrivateSearchBase):
    __doc__ = r"""Private selection over a parameter grid, charged as one mechanism.

    Each trial fits one grid point chosen uniformly at random on a training
    part and releases its noisy validation accuracy; a random number of
    trials is run and only the best is released (Papernot and Steinke,
    ICLR 2022, Theorem 2). See :mod:`skdp.model_selection`.

    Parameters
    ----------
    estimator : DPLogisticRegression or DPLinearSVC
        The private classifier to tune; its ``epsilon`` and ``delta`` (or
        those in the grid) are each trial fit's.
    param_grid : dict or list of dicts
        As for :class:`sklearn.model_selection.GridSearchCV`.
""" + _SEARCH_PARAMS_DOC + r"""
    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from skdp import BudgetAccountant, DPLogisticRegression
    >>> from skdp.datasets import documented_bounds
    >>> from skdp.model_selection import PrivateGridSearchCV
    >>> from skdp.preprocessing import BoundedScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = BoundedScaler(documented_bounds("breast_cancer")).fit_transform(X)
    >>> acc = BudgetAccountant()
    >>> search = PrivateGridSearchCV(
    ...     DPLogisticRegression(epsilon=0.5, classes=[0, 1]), {"alpha": [1e-4, 1e-2]},
    ...     accountant=acc, random_state=0).fit(X, y)
    >>> search.best_params_
    {'alpha': 0.0001}
    >>> round(search.best_score_, 3)
    0.65
    >>> eps, delta = search.privacy_spent_
    >>> round(eps, 3), delta
    (1.05, 1e-05)
    >>> search.privacy_spent_ == acc.spent()
    True
    """

    def __init__(self, estimator, param_grid, *, n_trials=None, shape=1.0,
                 validation_size=0.2, refit=False, delta=None, accountant=None,
                 random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.n_trials = n_trials
        self.shape = shape
        self.validation_size = validation_size
        self.refit = refit
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def _candidates(self):
        return list(ParameterGrid(self.param_grid))


class PrivateRandomizedSearchCV(_PrivateSearchBase):
    __doc__ = r"""Private selection over parameter distributions, charged as one mechanism.

    ``n_iter`` candidates are drawn from ``param_distributions`` before the
    charge (independently of the data, with
    :class:`sklearn.model_selection.ParameterSampler` seeded from
    ``random_state``); the search is then :class:`PrivateGridSearchCV` over
    them.

    Parameters
    ----------
    estimator : DPLogisticRegression or DPLinearSVC
        The private classifier to tune.
    param_distributions : dict or list of dicts
        As for :class:`sklearn.model_selection.RandomizedSearchCV`.
    n_iter : int, default=10
        Number of candidates drawn.
""" + _SEARCH_PARAMS_DOC + r"""
    Examples
    --------
    >>> from scipy.stats import loguniform
    >>> from sklearn.datasets import load_breast_cancer
    >>> from skdp import BudgetAccountant, DPLogisticRegression
    >>> from skdp.datasets import documented_bounds
    >>> from skdp.model_selection import PrivateRandomizedSearchCV
    >>> from skdp.preprocessing import BoundedScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = BoundedScaler(documented_bounds("breast_cancer")).fit_transform(X)
    >>> acc = BudgetAccountant()
    >>> search = PrivateRandomizedSearchCV(
    ...     DPLogisticRegression(epsilon=0.5, classes=[0, 1]),
    ...     {"alpha": loguniform(1e-5, 1e-1)},
    ...     n_iter=4, accountant=acc, random_state=0).fit(X, y)
    >>> round(float(search.best_params_["alpha"]), 5)
    0.00258
    >>> round(search.best_score_, 3)
    0.875
    >>> eps, delta = search.privacy_spent_
    >>> round(eps, 3), delta
    (1.178, 1e-05)
    >>> int(search.cv_results_["selected"].sum())  # only the chosen score is released
    1
    """

    _parameter_constraints = {
        **_PrivateSearchBase._parameter_constraints,
        "n_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=10, n_trials=None,
                 shape=1.0, validation_size=0.2, refit=False, delta=None, accountant=None,
                 random_state=None):
        self.estimator = estimator
        self.param_distributions = param_distributions
        self.n_iter = n_iter
        self.n_trials = n_trials
        self.shape = shape
        self.validation_size = validation_size
        self.refit = refit
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def _candidates(self):
        # a public stream of its own, so that drawing candidates consumes
        # nothing the charged fit's noise is drawn from
        state = self.random_state
        if isinstance(state, (np.random.RandomState, np.random.Generator)):
            state = int(seed_key(state)[:8], 16)
        return list(ParameterSampler(self.param_distributions, self.n_iter,
                                     random_state=state))

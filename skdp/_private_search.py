"""The private search's mechanism: trials on a random split, a noisy score each, one release.

:class:`PrivateSearchBase` runs the selection of Papernot and Steinke
(ICLR 2022, Theorem 2) that :mod:`skdp.model_selection` describes: a secret
number of trials drawn from the truncated negative binomial law, each fitting
a candidate on the training rows and releasing its validation accuracy
through the release door, the best trial released; the whole search is one
charge, planned from public quantities before any value is read.
"""

import math
import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_classifier,
)
from sklearn.pipeline import Pipeline
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._base import AccountedMixin, PrivateEstimatorMixin
from ._planned_charges import (
    charged_steps,
    check_search_pipeline,
    final_estimator,
    planned_charges,
)
from ._seeding import covered_stream
from .accounting import (
    AnyOf,
    BudgetAccountant,
    Composed,
    RepeatAndSelect,
    calibrate,
    discretize,
    get_epsilon,
    noise_mechanism,
    secure_accounting,
)
from .accounting.release import release, secret_run_count  # the release door
from .exceptions import warn_if_seed_replays, warn_labels_read_from_y
from .validation import (
    RANDOM_STATE,
    Boolean,
    InstanceOf,
    Interval,
    validate_data,
    validate_params,
)

__all__ = ["PrivateSearchBase"]


def _estimator_has(attr):
    def check(self):
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)
    return check


def _released_model_method(name, summary, verb, returns,
                           note="Post-processing of the released model: no privacy cost."):
    """The search's ``name``: ``best_estimator_``'s, when the estimator has it."""
    def method(self, X):
        check_is_fitted(self)
        return getattr(self.best_estimator_, name)(X)

    method.__name__, method.__qualname__ = name, f"PrivateSearchBase.{name}"
    method.__doc__ = (f"{summary}\n\n{note}\n\nParameters\n----------\n"
                      f"X : {{array-like, sparse matrix}} of shape (n_samples, n_features)\n"
                      f"    The samples to {verb}.\n\nReturns\n-------\n{returns}\n")
    return available_if(_estimator_has(name))(method)


def _name_of(estimator):
    if isinstance(estimator, Pipeline):
        return "Pipeline(" + ", ".join(type(step).__name__ for _, step in estimator.steps) + ")"
    return type(estimator).__name__


def _covered_fit(estimator, rng, X, y, secure=False):
    """A fit already covered by the search's charge.

    It runs with a fresh accountant of its own (the released model's then
    holds the fit's own spends, one per charged step, never the number of
    trials), silent (a line per trial would release the number of trials,
    which the selection theorem needs hidden), and every charged step draws
    its noise from a child of the search's stream passed through
    :func:`~skdp._seeding.covered_stream`: the model keeps the template's
    ``random_state`` and ``verbose``, and holds no seed that would replay
    its noise. In secure mode (``secure``: every charged step has
    ``secure_mode=True``) the steps draw secure noise whatever the stream,
    and their ``random_state``, which secure noise ignores, is set aside
    during the fit (no warning per trial).
    """
    accountant = BudgetAccountant()
    quiet, loud = {}, {}
    if isinstance(estimator, Pipeline):
        quiet["verbose"], loud["verbose"] = False, estimator.verbose
    for prefix, step in charged_steps(estimator):
        quiet[f"{prefix}accountant"] = accountant
        params = step.get_params(deep=False)
        if "verbose" in params:
            quiet[f"{prefix}verbose"], loud[f"{prefix}verbose"] = 0, step.verbose
        if secure and "random_state" in params:
            quiet[f"{prefix}random_state"] = None
            loud[f"{prefix}random_state"] = step.random_state
    model = clone(estimator).set_params(**quiet)
    with covered_stream(rng.bit_generator.seed_seq.spawn(1)[0]):
        model.fit(X, y)
    return model.set_params(**loud)


class PrivateSearchBase(ClassifierMixin, MetaEstimatorMixin, AccountedMixin, BaseEstimator):
    """Fit, release and delegation shared by the grid and randomised searches."""

    _parameter_constraints = {
        "n_trials": [None, Interval(Real, 1, None, closed="neither")],
        "shape": [Interval(Real, 0, None, closed="left")],
        "validation_size": [Interval(Real, 0, 1, closed="neither")],
        "refit": [Boolean],
        "delta": [None, Interval(Real, 0, 1, closed="left")],
        "accountant": [None, InstanceOf(BudgetAccountant, name="a BudgetAccountant")],
        "random_state": RANDOM_STATE,
        "secure_mode": [Boolean],
    }

    # -- what subclasses provide -------------------------------------------
    def _candidates(self):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- accountant ----------------------------------------------------------
    def _accountant_in_force(self):
        if self.accountant is None:
            for _, step in charged_steps(self.estimator):
                if step.accountant is not None:
                    return step.accountant
        return super()._accountant_in_force()

    # -- the search ----------------------------------------------------------
    def _check_params(self):
        validate_params(type(self).__name__, self.get_params(deep=False),
                        self._parameter_constraints)
        self._check_estimator(self.estimator)
        candidates = self._candidates()
        if not candidates:
            raise ValueError(f"{type(self).__name__}: the parameter grid is empty.")
        return candidates

    def _check_estimator(self, estimator):
        """A skdp classifier, or a Pipeline of steps that learn nothing or are charged,
        ending in one (checked for the template and again for every candidate)."""
        final = final_estimator(estimator)
        if not isinstance(final, PrivateEstimatorMixin) or not is_classifier(final):
            raise TypeError(
                f"{type(self).__name__}: estimator must be one of skdp's private classifiers "
                f"(DPLogisticRegression, DPLinearSVC), or a Pipeline ending in one, got "
                f"{type(final).__name__}. Its fit cost is planned from public quantities "
                "before the search reads data."
            )
        check_search_pipeline(type(self).__name__, estimator)
        if not self._secure() and any(
                step.get_params(deep=False).get("secure_mode", False) is True
                for _, step in charged_steps(estimator)):
            raise ValueError(
                f"{type(self).__name__}: a step of the estimator has secure_mode=True but "
                "the search has secure_mode=False; the search's own noise (the validation "
                "scores) and its number of trials would not be secure. Pass "
                "secure_mode=True to the search (its fits then all run in secure mode).")
        if self._secure():
            lacking = [type(step).__name__ for _, step in charged_steps(estimator)
                       if "secure_mode" not in step.get_params(deep=False)]
            if lacking:
                raise ValueError(
                    f"{type(self).__name__}: secure_mode=True needs every charged step to "
                    f"run in secure mode, but {', '.join(lacking)} has no secure_mode "
                    "parameter; drop that step or use secure_mode=False.")
        accountants = {id(step.accountant): step.accountant
                       for _, step in charged_steps(estimator) if step.accountant is not None}
        if len(accountants) > 1:
            raise ValueError(
                f"{type(self).__name__}: the pipeline's charged steps name different "
                "accountants; the whole search is one charge to one accountant. Pass "
                "accountant= to the search (or the same accountant to every step).")

    def _as_run(self, estimator):
        """``estimator`` as the search fits it: in secure mode every charged step has
        ``secure_mode=True`` (its own noise secure, its charge the discrete one)."""
        if self._secure():
            estimator.set_params(**{f"{prefix}secure_mode": True
                                    for prefix, step in charged_steps(estimator)
                                    if "secure_mode" in step.get_params(deep=False)})
        return estimator

    def _planned_fit(self, estimator, n_samples, n_features, labels, data):
        """The charges of one fit of ``estimator`` (every charged step, in order)."""
        charges = planned_charges(estimator, n_samples, n_features, labels,
                                  sparse=sp.issparse(data), dtype=data.dtype)
        if not charges or any(mechanism is None for _, _, mechanism in charges):
            raise TypeError(  # pragma: no cover - every skdp fit charges a mechanism
                f"{type(self).__name__}: a charged step of {type(estimator).__name__} did "
                "not declare the mechanism it runs; the search cannot compose its cost.")
        return charges

    @staticmethod
    def _composed(charges):
        mechanisms = [mechanism for _, _, mechanism in charges]
        return mechanisms[0] if len(mechanisms) == 1 else Composed(mechanisms)

    def _plan(self, candidates, n_samples, n_features, labels, data):
        """Trial and refit mechanisms from public quantities only.

        ``data`` is read for its kind (sparse or dense) and dtype only. In
        secure mode the trials' fits are planned as they run (secure), the
        scores' noise is calibrated for the discrete mechanism and the whole
        search is charged as its :func:`~skdp.accounting.discretize` form.
        """
        with secure_accounting(self._secure()):
            return self._plan_as_run(candidates, n_samples, n_features, labels, data)

    def _plan_as_run(self, candidates, n_samples, n_features, labels, data):
        n_val = max(1, int(math.ceil(self.validation_size * n_samples)))
        n_train = n_samples - n_val
        if n_train < 1:
            raise ValueError(
                f"{type(self).__name__}: {n_samples} rows leave no training rows with "
                f"validation_size={self.validation_size}; use more rows or a smaller "
                "validation_size.")
        estimators, trials, refits, scores, deltas = [], [], [], [], []
        for params in candidates:
            est = self._as_run(clone(self.estimator).set_params(**params))
            self._check_estimator(est)  # a grid may put any step in any place
            final = final_estimator(est)
            if "classes" in final.get_params(deep=False):
                # the public label set: a part missing a label is no error
                final.set_params(classes=labels)
            fit = self._planned_fit(est, n_train, n_features, labels, data)
            # the final estimator charges last: the score gets its (epsilon, delta)
            eps, delta = fit[-1][0], fit[-1][1]
            score = noise_mechanism(delta)(calibrate(noise_mechanism(delta), eps, delta))
            estimators.append(est)
            trials.append(AnyOf([self._composed(fit), score]))
            scores.append(score)
            deltas += [charge[1] for charge in fit]
            if self.refit:
                refits.append(self._composed(
                    self._planned_fit(est, n_samples, n_features, labels, data)))
        n_trials = (max(2.0, 2.0 * len(candidates)) if self.n_trials is None
                    else float(self.n_trials))
        selection = RepeatAndSelect.from_mean(AnyOf(trials), n_trials, float(self.shape))
        mechanism = Composed([selection, AnyOf(refits)]) if self.refit else selection
        if self._secure():  # what runs: the discrete scores (the fits are discrete already)
            selection, mechanism = discretize(selection), discretize(mechanism)
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
        with secure_accounting(self._secure()):
            return self._fit_as_run(X, y)

    def _fit_as_run(self, X, y):
        candidates = self._check_params()
        X, y = validate_data(self, X, y, accept_sparse="csr",
                             dtype=[np.float64, np.float32], reset=True)
        final = final_estimator(self.estimator)
        labels = final._public_labels(y)
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
         epsilon, delta) = self._plan(candidates, n_samples, n_features, labels, X)
        accountant = self._accountant_in_force()
        # warnings point at the caller of fit (fit -> _fit_as_run -> here)
        key = self._secure_seed_key(type(self).__name__, stacklevel=3)
        if key is not None:
            warn_if_seed_replays(self.random_state, accountant, type(self).__name__,
                                 stacklevel=4)
        if getattr(final, "classes", None) is None:
            warn_labels_read_from_y(type(self).__name__, stacklevel=4)
        record = accountant.charge(
            epsilon, delta, mechanism=mechanism,
            label=f"{type(self).__name__}({_name_of(self.estimator)})",
            seed_key=key)
        rng = self._noise_rng(record.seed_index)  # a SecureGenerator in secure mode

        # everything below is drawn from rng, after the charge
        order = rng.permutation(n_samples)
        train, val = np.sort(order[n_val:]), np.sort(order[:n_val])
        best = None
        for _ in range(secret_run_count(selection, rng)):
            j = int(rng.integers(len(candidates)))
            # a trial's warnings are held back: one per trial would release the number
            # of trials, and the trials' models are not released (the chosen one's fit
            # warnings are re-issued below when it is the released model; its scoring
            # on the validation rows releases nothing but the noisy score)
            with warnings.catch_warnings(record=True) as heard:
                warnings.simplefilter("always")
                est = _covered_fit(estimators[j], rng, X[train], y[train], self._secure())
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                correct = float(np.sum(est.predict(X[val]) == y[val]))
            score = self._release_score(correct, n_val, scores[j], rng)
            if best is None or score > best[0]:
                best = (score, j, est, heard)
        score, j, model, heard = best
        if self.refit:
            model = _covered_fit(estimators[j], rng, X, y, self._secure())
        else:
            for w in heard:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno,
                                       source=w.source)
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
        if getattr(final, "verbose", 0):
            # released quantities only: never the number of trials
            print(f"[{type(self).__name__}] chose {self.best_params_} (noisy validation "
                  f"accuracy {self.best_score_:.4g}); the whole search charged "
                  f"epsilon={epsilon:.4g} delta={delta:.3g} once")
        return self

    @staticmethod
    def _release_score(correct, n_val, mechanism, rng):
        """Noisy validation accuracy: the correct count (sensitivity 1) plus noise."""
        return release(float(correct), mechanism, 1.0, rng, what="validation score") / n_val

    # -- delegation to the released model ------------------------------------
    predict = _released_model_method(
        "predict", "Predict with ``best_estimator_``.", "classify",
        "y_pred : ndarray of shape (n_samples,)\n"
        "    The predicted labels, from ``classes_``.")
    predict_proba = _released_model_method(
        "predict_proba", "Class probabilities of ``best_estimator_``.", "score",
        "proba : ndarray of shape (n_samples, n_classes)\n"
        "    The probability of each class, in the order of ``classes_``.",
        note="Available when the estimator has ``predict_proba``\n"
             "(``DPLogisticRegression``); post-processing of the released model.")
    decision_function = _released_model_method(
        "decision_function", "Decision function of ``best_estimator_``.", "score",
        "scores : ndarray of shape (n_samples,) or (n_samples, n_classes)\n"
        "    The released model's decision values: one column for two\n"
        "    classes (positive for ``classes_[1]``), one per class otherwise.")

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

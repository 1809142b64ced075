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

The estimator may be a :class:`~sklearn.pipeline.Pipeline` ending in a skdp
classifier. Each step before it must either learn nothing from the data
(:class:`~skdp.preprocessing.BoundedScaler`;
:class:`~sklearn.preprocessing.OneHotEncoder` with the public ``categories``
given, ``handle_unknown='ignore'``, ``drop=None`` and no frequency options;
:class:`~sklearn.preprocessing.Normalizer`,
:class:`~sklearn.preprocessing.Binarizer`;
:class:`~sklearn.preprocessing.FunctionTransformer` with ``func=None`` or
an element-wise numpy ufunc that is finite on finite input, such as
``np.tanh``: an allow-list by type, with these parameters checked) or be
charged (any skdp step that charges an accountant, such as
:class:`~skdp.preprocessing.DPStandardScaler`). A trial's fit is then the
composition of every charged step's mechanism, planned from public
quantities (see :func:`planned_privacy`); every charged step of every
trial and of the refit draws its noise from the search's stream. Any other
step (``StandardScaler``, ``PCA``, ``OneHotEncoder(categories='auto')``)
would learn from the data without a charge and is refused, naming the
step, before anything is charged. Grid parameters use the pipeline's
``step__parameter`` names.

References
----------
.. [1] N. Papernot and T. Steinke, "Hyperparameter Tuning with Renyi
   Differential Privacy", ICLR 2022.
"""

from numbers import Integral

import numpy as np
from sklearn.model_selection import ParameterGrid, ParameterSampler

from ._private_search import PrivateSearchBase
from ._seeding import seed_key
from .validation import Interval

__all__ = ["PrivateGridSearchCV", "PrivateRandomizedSearchCV", "planned_privacy"]


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
        prints one line of released values. With ``secure_mode=True`` it
        seeds nothing but :class:`PrivateRandomizedSearchCV`'s public list
        of candidates (see ``secure_mode``).
    secure_mode : bool, default=False
        True runs the whole search in secure mode: the validation scores'
        noise is the discrete mechanism drawn exactly from the operating
        system's CSPRNG through the release door, the secret number of trials
        is drawn exactly too, every trial's and the refit's charged steps run
        with ``secure_mode=True``, and the search is charged (and
        ``privacy_spent_`` stated) as those discrete mechanisms (see
        :mod:`skdp.accounting.discrete`). No seed steers secure noise: a
        ``random_state`` is ignored with a warning, as for the estimators
        (the split and the trials' candidates come from a generator seeded
        by the OS); only :class:`PrivateRandomizedSearchCV`'s public list
        of candidates is still drawn from it. A step with
        ``secure_mode=True`` under a search with ``secure_mode=False``, and a
        charged step with no ``secure_mode``, are refused before any charge.

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


class PrivateGridSearchCV(PrivateSearchBase):
    __doc__ = r"""Private selection over a parameter grid, charged as one mechanism.

    Each trial fits one grid point chosen uniformly at random on a training
    part and releases its noisy validation accuracy; a random number of
    trials is run and only the best is released (Papernot and Steinke,
    ICLR 2022, Theorem 2). See :mod:`skdp.model_selection`.

    Parameters
    ----------
    estimator : DPLogisticRegression, DPLinearSVC or Pipeline
        The private classifier to tune, or a ``Pipeline`` ending in one whose
        other steps learn nothing from the data or are charged (see
        :mod:`skdp.model_selection`); its (and its charged steps')
        ``epsilon`` and ``delta``, or those in the grid, are each trial
        fit's.
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
                 random_state=None, secure_mode=False):
        self.estimator = estimator
        self.param_grid = param_grid
        self.n_trials = n_trials
        self.shape = shape
        self.validation_size = validation_size
        self.refit = refit
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state
        self.secure_mode = secure_mode

    def _candidates(self):
        return list(ParameterGrid(self.param_grid))


class PrivateRandomizedSearchCV(PrivateSearchBase):
    __doc__ = r"""Private selection over parameter distributions, charged as one mechanism.

    ``n_iter`` candidates are drawn from ``param_distributions`` before the
    charge (independently of the data, with
    :class:`sklearn.model_selection.ParameterSampler` seeded from
    ``random_state``); the search is then :class:`PrivateGridSearchCV` over
    them.

    Parameters
    ----------
    estimator : DPLogisticRegression, DPLinearSVC or Pipeline
        The private classifier to tune, or a ``Pipeline`` ending in one (as
        for :class:`PrivateGridSearchCV`).
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
        **PrivateSearchBase._parameter_constraints,
        "n_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator, param_distributions, *, n_iter=10, n_trials=None,
                 shape=1.0, validation_size=0.2, refit=False, delta=None, accountant=None,
                 random_state=None, secure_mode=False):
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
        self.secure_mode = secure_mode

    def _candidates(self):
        # a public stream of its own, so that drawing candidates consumes
        # nothing the charged fit's noise is drawn from
        state = self.random_state
        if isinstance(state, (np.random.RandomState, np.random.Generator)):
            state = int(seed_key(state)[:8], 16)
        return list(ParameterSampler(self.param_distributions, self.n_iter,
                                     random_state=state))


from ._budget_planner import planned_privacy  # noqa: E402  (it plans the searches above)

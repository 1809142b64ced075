"""The budget planner: what a search or a cross-validation will charge, before it runs."""

import copy
import math
import os
import uuid
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    ParameterGrid,
    ParameterSampler,
    RandomizedSearchCV,
    StratifiedKFold,
    check_cv,
)

from ._planned_charges import charged_steps, final_estimator, planned_charges
from ._private_search import PrivateSearchBase
from ._seeding import seed_key
from .accounting import BudgetAccountant, current_accountant

__all__ = ["planned_privacy"]


def planned_privacy(estimator, X=None, y=None, *, shape=None, cv=None, groups=None,
                    accountant=None):
    """The (epsilon, delta) a search, a cross-validation or a fit will charge.

    Computed from public quantities only, before anything runs: the
    parameter grid or distributions, ``cv``, ``n_iter``, ``refit``, the
    estimators' parameters, and the number of rows and features (plus, for
    a classifier without ``classes=``, the label set). Every fit the
    configuration runs is planned as its ``fit`` plans it (its solver's
    plan, or a dry run of a charged preprocessing step on zeros), and the
    charges are composed on a scratch accountant with the same composition
    rule and delta as ``accountant``: the figure is what that accountant
    records for the configuration, so a budget can be sized first.

    Parameters
    ----------
    estimator : estimator
        One of:

        - :class:`sklearn.model_selection.GridSearchCV` or
          :class:`~sklearn.model_selection.RandomizedSearchCV` over a skdp
          estimator or a ``Pipeline`` with skdp steps: every candidate on
          every split, plus the refit when ``refit`` is set;
        - :class:`~skdp.model_selection.PrivateGridSearchCV` or
          :class:`~skdp.model_selection.PrivateRandomizedSearchCV`: its one
          charge (``privacy_spent_`` after the fit);
        - a skdp estimator, a charged skdp transformer or a ``Pipeline``
          with skdp steps: one ``fit`` (``cv=None``), or
          :func:`~sklearn.model_selection.cross_validate` /
          :func:`~sklearn.model_selection.cross_val_score` with ``cv``.
    X : {array-like, sparse matrix} of shape (n_samples, n_features), default=None
        The data the configuration will be fitted on; only its shape and
        kind (dense or sparse, dtype) are read, and the sizes of the
        splits ``cv`` makes of it. None: give ``shape``.
    y : array-like of shape (n_samples,), default=None
        The labels; read only for the label set of a classifier without
        ``classes=`` and by a splitter that needs it. (The label set read
        from ``y`` is what the fits would read too; pass ``classes=`` to the
        estimator to keep it out.)
    shape : tuple (n_samples, n_features), default=None
        The data's shape, instead of ``X``.
    cv : int, cross-validation generator, iterable or None, default=None
        For a plain estimator only: None plans one ``fit``; otherwise the
        ``cv`` of ``cross_validate(estimator, X, y, cv=cv)`` (pass 5 for
        its default). A search uses its own ``cv``. Without ``X``, an int,
        :class:`~sklearn.model_selection.KFold` or
        :class:`~sklearn.model_selection.StratifiedKFold` (their training
        sizes depend on n only); other splitters need ``X`` (and ``y``,
        ``groups``).
    groups : array-like of shape (n_samples,), default=None
        Passed to a splitter that needs groups.
    accountant : BudgetAccountant or None, default=None
        Whose composition rule and delta to follow; None: the accountant
        the fits would charge (the estimators' ``accountant``, else the one
        in force).

    Returns
    -------
    epsilon, delta : tuple of float
        What the configuration adds to an empty accountant with that rule.
        With ``composition='basic'`` totals add up, so it is also what the
        configuration adds to any accountant. ``inf`` epsilon on the process
        default accountant when two fits would share a seed (it then
        reports ``inf`` too).

    Raises
    ------
    ValueError
        If the shape or label set cannot be known, if a randomised search
        without an integer ``random_state`` would draw candidates that the
        planner cannot see, or if a parameter is invalid (the estimator's
        own message).
    BudgetError
        If ``accountant`` uses ``composition='gaussian'`` and a charge has
        no Gaussian-DP form (the fit would be refused the same way).

    Notes
    -----
    ``refit`` of :class:`~sklearn.model_selection.GridSearchCV` fits the
    best candidate once more on all rows; which one is chosen from the data,
    so when candidates differ in cost the planner counts the most expensive
    refit (an upper bound, equal when the candidates' refits cost alike).

    The planner lets a user size the budget before starting; it does not
    reserve it. With ``n_jobs > 1`` the fits of a scikit-learn search are
    charged in an order that depends on the workers, so under a budget
    smaller than the planned figure, which fits are refused (and whether
    the refit still fits) changes from run to run: ``n_jobs=1`` may return
    a model where ``n_jobs=2`` spends everything and then refuses the refit.
    Give the accountant at least the planned figure.

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skdp import BudgetAccountant, DPLogisticRegression
    >>> from skdp.model_selection import planned_privacy
    >>> search = GridSearchCV(DPLogisticRegression(epsilon=0.5, classes=[0, 1]),
    ...                       {"alpha": [1e-4, 1e-2]}, cv=3)
    >>> planned_privacy(search, shape=(569, 30), accountant=BudgetAccountant())
    (3.5, 7.000000000000001e-05)
    """
    n_samples, n_features, sparse, dtype = _data_shape(X, shape)
    target = accountant if accountant is not None else _accountant_of(estimator)
    if isinstance(estimator, PrivateSearchBase):
        if cv is not None:
            raise ValueError("planned_privacy: a private search has no cv; pass cv=None.")
        labels = _labels(final_estimator(estimator.estimator), y)
        candidates = estimator._check_params()
        if getattr(estimator, "param_distributions", None) is not None and (
                estimator.random_state is None):
            candidates = _drawn_in_full(estimator)
            if candidates is None:
                raise _unseen_candidates(estimator)
        stand_in = _zeros_like(sparse, dtype)
        *_, mechanism, epsilon, delta = estimator._plan(candidates, n_samples, n_features,
                                                        labels, stand_in)
        return _compose(target, [[(epsilon, delta, mechanism,
                                   seed_key(estimator.random_state))]])
    if isinstance(estimator, (GridSearchCV, RandomizedSearchCV)):
        if cv is not None:
            raise ValueError("planned_privacy: the search has its own cv; pass cv=None.")
        base, search_cv = estimator.estimator, estimator.cv
        candidates = _sklearn_candidates(estimator)
        refit = bool(estimator.refit)
    else:
        base, candidates, refit = estimator, [{}], cv is None
        search_cv = cv
    if not charged_steps(base):
        raise TypeError(
            f"planned_privacy: {type(base).__name__} charges no accountant; pass a skdp "
            "estimator, a charged skdp transformer, or a Pipeline with skdp steps (or a "
            "search or cross-validation over one).")
    final = final_estimator(base)
    splits = [] if search_cv is None and base is estimator else _train_indices(
        search_cv, X, y, groups, n_samples, is_classifier(base))
    fits = []
    for params in candidates:
        model = clone(base).set_params(**params)
        for train in splits:
            # a fold's fit reads the labels of its training rows, as it will then
            labels = _labels(final_estimator(model),
                             None if y is None else np.asarray(y)[np.asarray(train)])
            fits.append(_fit_charges(model, len(train), n_features, labels, sparse, dtype))
    if not refit:
        return _compose(target, fits)
    labels = _labels(final, y)
    options = [_fit_charges(clone(base).set_params(**params), n_samples, n_features,
                            labels, sparse, dtype) for params in candidates]
    totals = [_compose(target, fits + [option]) for option in options]
    return max(totals)


def _fit_charges(model, n_samples, n_features, labels, sparse, dtype):
    """One fit's charges, each with the seed key its fit records."""
    charges = planned_charges(model, n_samples, n_features, labels, sparse=sparse,
                              dtype=dtype)
    keys = [seed_key(step.random_state) if "random_state" in step.get_params(deep=False)
            else None for _, step in charged_steps(model)]
    if len(keys) != len(charges):  # a step charging more than once: no seed bookkeeping
        keys = [None] * len(charges)
    return [(eps, delta, mechanism, key)
            for (eps, delta, mechanism), key in zip(charges, keys)]


def _compose(target, fits):
    """(epsilon, delta) of these charges on a scratch copy of ``target``'s rule."""
    if target.composition == "gaussian":
        scratch = BudgetAccountant(delta=target.delta, composition="gaussian")
    elif getattr(target, "_default", False):
        # the process default accountant's replay mode: a seed used twice reports inf
        scratch = BudgetAccountant.__new__(BudgetAccountant)
        scratch._setup(math.inf, 1.0, None, composition="basic", token=uuid.uuid4().hex,
                       origin_pid=os.getpid(), create=False, default=True)
    else:
        scratch = BudgetAccountant()
    for charges in fits:
        for eps, delta, mechanism, key in charges:
            scratch.charge(eps, delta, mechanism, seed_key=key)
    epsilon, delta = scratch.spent()
    return float(epsilon), float(delta)


def _accountant_of(estimator):
    """The accountant the configuration's fits would charge."""
    if isinstance(estimator, PrivateSearchBase):
        return estimator._accountant_in_force()
    base = estimator.estimator if isinstance(
        estimator, (GridSearchCV, RandomizedSearchCV)) else estimator
    for _, step in charged_steps(base):
        return step._accountant_in_force()
    return current_accountant()


def _data_shape(X, shape):
    if (X is None) == (shape is None):
        raise ValueError("planned_privacy: pass the data X or its shape=(n_samples, "
                         "n_features), not both.")
    if X is not None:
        if not hasattr(X, "shape"):
            X = np.asarray(X)
        if len(X.shape) != 2:
            raise ValueError(f"planned_privacy: X must be 2-D, got shape {X.shape}.")
        dtype = getattr(X, "dtype", None)
        dtype = dtype if dtype in (np.float32, np.float64) else np.float64
        return int(X.shape[0]), int(X.shape[1]), sp.issparse(X), dtype
    try:
        n_samples, n_features = (int(v) for v in shape)
    except (TypeError, ValueError):
        raise ValueError(f"planned_privacy: shape must be (n_samples, n_features), got "
                         f"{shape!r}.") from None
    if n_samples < 1 or n_features < 1:
        raise ValueError(f"planned_privacy: shape must be positive, got {shape!r}.")
    return n_samples, n_features, False, np.float64


def _zeros_like(sparse, dtype):
    return sp.csr_matrix((1, 1), dtype=dtype) if sparse else np.zeros((1, 1), dtype=dtype)


def _labels(final, y):
    """The public label set a fit plans with (None for a regressor)."""
    if not is_classifier(final):
        return None
    classes = final.get_params(deep=False).get("classes")
    if classes is not None:
        return np.asarray(classes)
    if y is None:
        raise ValueError(
            f"planned_privacy: {type(final).__name__} has classes=None, so its label set "
            "would be read from y; pass y, or the public label set as classes=[...].")
    return np.unique(np.asarray(y))


def _sklearn_candidates(search):
    if isinstance(search, GridSearchCV):
        return list(ParameterGrid(search.param_grid))
    state = search.random_state
    if isinstance(state, (np.random.RandomState, np.random.Generator)):
        state = copy.deepcopy(state)  # plan the draws without consuming the user's state
    elif state is None:
        full = _drawn_in_full(search)
        if full is None:
            raise _unseen_candidates(search)
        return full
    return list(ParameterSampler(search.param_distributions, search.n_iter,
                                 random_state=state))


def _drawn_in_full(search):
    """Every point of a list grid that ``n_iter`` draws in full (in some order), or None."""
    grids = search.param_distributions
    grids = grids if isinstance(grids, list) else [grids]
    if all(all(isinstance(v, (list, tuple, np.ndarray)) for v in g.values()) for g in grids):
        if search.n_iter >= len(ParameterGrid(grids)):
            return list(ParameterGrid(grids))
    return None


def _unseen_candidates(search):
    return ValueError(
        f"planned_privacy: {type(search).__name__}(random_state=None) draws candidates the "
        "planner cannot see; pass an int random_state (the search then draws the "
        "candidates the planner plans).")


def _train_indices(cv, X, y, groups, n_samples, classifier):
    """The training rows of every split (stand-ins of the right sizes where the
    sizes depend on n only)."""
    if isinstance(cv, Integral) or cv is None or type(cv) in (KFold, StratifiedKFold):
        # training sizes of KFold and StratifiedKFold depend on n only
        k = 5 if cv is None else (cv if isinstance(cv, Integral) else cv.n_splits)
        if X is None or y is None or not classifier:
            return list(_kfold_train_sizes(n_samples, k))
    if X is None:
        raise ValueError(
            f"planned_privacy: the sizes of {type(cv).__name__}'s splits need the data; "
            "pass X (and y, groups).")
    splitter = check_cv(cv, y, classifier=classifier)
    return [np.asarray(train) for train, _ in splitter.split(X, y, groups)]


def _kfold_train_sizes(n_samples, k):
    """Stand-in training parts of KFold's sizes (only their lengths are used)."""
    if k < 2 or k > n_samples:
        raise ValueError(f"planned_privacy: cv={k} needs 2 <= cv <= n_samples.")
    sizes = np.full(k, n_samples // k)
    sizes[: n_samples % k] += 1
    return [range(n_samples - size) for size in sizes]

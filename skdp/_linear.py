"""The label layer of the private linear classifiers (logistic regression, SVM).

The linear plumbing is :class:`~skdp._private_linear.PrivateLinearModel`'s; this
module adds what a classifier needs: the public label set, label encoding,
decision scores and predicted labels.
"""

import functools
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin

from ._dask import is_dask_collection
from ._dask import public_labels as dask_public_labels
from ._labels import label_targets
from ._private_linear import PrivateLinearModel
from .penalties import PENALTIES
from .validation import (
    ALPHA,
    Interval,
    StrOptions,
    check_classification_targets,
    column_or_1d,
)

__all__ = ["PrivateLinearClassifier"]

#: the penalty parameters the linear models take
PENALTY_CONSTRAINTS = {
    "alpha": ALPHA,
    "penalty": [None, StrOptions(set(PENALTIES))],
    "l1_ratio": [Interval(numbers.Real, 0, 1, closed="both")],
}

_CLASSES_HOW = (
    "Pass the public set of labels as a 1-D list of at least 2 distinct labels of one "
    "type, e.g. classes=[0, 1] or classes=['no', 'yes'], or classes=None to take the "
    "labels from y (not private)."
)


def public_classes(classes):
    """The label set given as ``classes=``, checked and sorted (reads no data).

    Parameters
    ----------
    classes : array-like of shape (n_classes,) or None
        The public labels (a set is accepted too).

    Returns
    -------
    classes : ndarray of shape (n_classes,) or None
        The distinct labels in sorted order, as :class:`~sklearn.preprocessing.LabelEncoder`
        orders them; None for None.

    Raises
    ------
    ValueError
        If ``classes`` is not a 1-D array-like of at least 2 distinct,
        hashable labels of one sortable type.
    """
    if classes is None:
        return None
    if isinstance(classes, (set, frozenset)):
        classes = list(classes)
    if isinstance(classes, (str, bytes)) or sp.issparse(classes):
        raise ValueError(
            f"classes must be a 1-D array-like of labels, got {classes!r}. {_CLASSES_HOW}"
        )
    try:
        arr = np.asarray(classes)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 1:
        shape = "" if arr is None else f" of shape {arr.shape}"
        raise ValueError(
            f"classes must be a 1-D array-like of labels, got {classes!r}{shape}. "
            f"{_CLASSES_HOW}"
        )
    kinds = {_label_kind(label) for label in np.asarray(classes, dtype=object)}
    if len(kinds) > 1:  # numpy would silently turn [0, 'a'] into ['0', 'a']
        raise ValueError(
            f"classes must hold labels of one type (e.g. all int or all str), got "
            f"{classes!r}. {_CLASSES_HOW}"
        )
    if arr.dtype.kind not in "biufUSO":
        raise ValueError(
            f"classes must hold integer, string or other hashable labels, got an array "
            f"of dtype {arr.dtype}. {_CLASSES_HOW}"
        )
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"classes must not contain NaN or infinity, got {classes!r}. "
                         f"{_CLASSES_HOW}")
    if arr.dtype.kind == "O":
        for label in arr:  # the public labels, not the data
            try:
                hash(label)
            except TypeError:
                raise ValueError(
                    f"classes must hold hashable labels, got {label!r} in {classes!r}. "
                    f"{_CLASSES_HOW}"
                ) from None
    if len(arr) < 2:
        raise ValueError(
            f"classes must contain at least 2 labels, got {len(arr)}: {classes!r}. "
            f"{_CLASSES_HOW}"
        )
    try:
        uniq = np.unique(arr)
    except TypeError:
        raise ValueError(
            f"classes must hold labels of one sortable type (e.g. all int or all str), "
            f"got {classes!r}. {_CLASSES_HOW}"
        ) from None
    if len(uniq) != len(arr):
        values, counts = np.unique(arr, return_counts=True)
        raise ValueError(
            f"classes must not contain duplicates, got {classes!r} "
            f"(repeated: {values[counts > 1].tolist()!r}). {_CLASSES_HOW}"
        )
    return uniq


def _label_kind(label):
    if isinstance(label, str):
        return "str"
    if isinstance(label, bytes):
        return "bytes"
    if isinstance(label, (numbers.Number, np.bool_)):
        return "number"
    return type(label).__name__


def _labels(scores, classes):
    """The predicted label of each row of scores (two classes: the sign)."""
    if scores.ndim == 1:
        return classes[(scores > 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]


class PrivateLinearClassifier(ClassifierMixin, PrivateLinearModel):
    """Base of private linear classifiers: the label layer over the linear model.

    Subclasses take a ``classes`` parameter (the public label set, or None)
    and implement ``_loss_class(n_classes)`` -> ``(GLM loss class, its public
    parameters)`` and ``_target_encoder(y_index, n_classes)`` (a module-level
    function: the targets that loss takes); coefficients have shape
    ``(n_params,)`` for two classes and ``(n_params, n_classes)`` otherwise.
    """

    def _validate_specific_params(self):
        # parameters only: the label set given as classes= is public
        public_classes(self.classes)

    def _validate_data(self, X, y):
        X, y = self._validated_rows(X, y, y_numeric=False)
        check_classification_targets(y)
        return X, y

    def _public_labels(self, y):
        """The label set: ``classes=`` (public), or read from y (released in ``classes_``)."""
        if self.classes is not None:
            return public_classes(self.classes)
        if is_dask_collection(y):
            return dask_public_labels(y)
        labels = np.unique(column_or_1d(y, warn=False))
        # the label set has the type of y (binary, multiclass, continuous...):
        # checked on it, y is read once here
        check_classification_targets(labels)
        return labels

    def _datafit(self, labels):
        # fewer than 2 labels in y: the fit fails when the data is validated,
        # after the budget check, so an exhausted budget is reported first
        n_classes = max(2, len(labels))
        loss_cls, params = self._loss_class(n_classes)
        return loss_cls, params, None if n_classes == 2 else n_classes

    def _fitted_labels(self):
        return self.classes_

    def _targets(self, y):
        if self.classes is None:
            classes = np.unique(y)
            self._check_two_classes(classes)
        else:
            classes = public_classes(self.classes)
        self.classes_ = classes
        return label_targets(y, classes, self.classes is not None, self._target_encoder)

    def _dask_targets(self, y):
        if self.classes is None:
            classes = dask_public_labels(y)
            self._check_two_classes(classes)
        else:
            classes = public_classes(self.classes)
        self.classes_ = classes
        return classes, functools.partial(label_targets, classes=classes,
                                          classes_given=self.classes is not None,
                                          encode=self._target_encoder)

    def _check_two_classes(self, classes):
        if len(classes) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes, but y "
                "contains only one class. Pass the public label set as classes= "
                "(then a y with one label present is fine), or fit on data with "
                "at least 2 classes."
            )

    def decision_function(self, X):
        """Confidence scores: the linear predictor of each sample.

        Rows are scaled to norm at most ``data_norm`` first, exactly as in
        ``fit``, so the scores are those of the model that was trained.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples to score, with the features seen in ``fit``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
            ``x @ coef_.T + intercept_`` for each (norm-bounded) row ``x``.
            For two classes, positive scores predict ``classes_[1]``; else
            column ``k`` is the score of ``classes_[k]``. Computed from the
            released model alone: no privacy cost.
        """
        return self._linear_predictor(X)

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples to classify, with the features seen in ``fit``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            For each sample, the label of ``classes_`` with the largest
            decision score (for two classes: ``classes_[1]`` where the score
            is > 0). No privacy cost.
        """
        scores = self.decision_function(X)
        if is_dask_collection(scores):
            return scores.map_blocks(_labels, self.classes_, dtype=self.classes_.dtype,
                                     drop_axis=1 if scores.ndim == 2 else None)
        return _labels(scores, self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        # On scikit-learn's check data (a few hundred rows) the solver says
        # whether it scores poorly there (its poor_on_few_rows). The bounded
        # sigmoid loss has flat basins where a noisy walk can end, the
        # inverted one included, with any solver; it needs thousands of rows
        # (docs/solvers/second_order.md, tests/test_second_order.py).
        tags.classifier_tags.poor_score = (
            self._solver_poor_score() or getattr(self, "loss", None) == "sigmoid")
        return tags

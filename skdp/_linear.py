"""Shared base of the private linear classifiers (logistic regression, SVM)."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import PrivateEstimatorMixin
from .losses import LinearDesign
from .solvers import Problem

__all__ = ["PrivateLinearClassifier"]


class PrivateLinearClassifier(ClassifierMixin, PrivateEstimatorMixin, BaseEstimator):
    """Base of private linear classifiers: data handling and prediction.

    Subclasses implement ``_make_loss(design, classes_index, n_classes)``
    returning a GLM loss whose coefficients have shape ``(n_params,)`` for
    two classes and ``(n_params, n_classes)`` otherwise.
    """

    def _build_problem(self, X, y):
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
            y_numeric=False,
        )
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes, but the "
                f"data contains only one class: {self.classes_[0]!r}."
            )
        design = LinearDesign(X, self.fit_intercept, self.data_norm)
        loss = self._make_loss(design, encoder.transform(y), len(self.classes_))
        penalised = np.ones(loss.coef_shape, dtype=bool)
        if self.fit_intercept:
            penalised[-1] = False
        return Problem(loss=loss, alpha=float(self.alpha), clip_norm=float(self.clip_norm),
                       penalised=penalised)

    def _set_coef(self, W):
        d = self.n_features_in_
        if W.ndim == 1:
            W = W[:, None]
        self.coef_ = np.ascontiguousarray(W[:d].T)
        self.intercept_ = W[d].copy() if self.fit_intercept else np.zeros(W.shape[1])

    def decision_function(self, X):
        """Confidence scores: the linear predictor of each sample.

        Rows are scaled to norm at most ``data_norm`` first, exactly as in
        ``fit``, so the scores are those of the model that was trained.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        design = LinearDesign(X, self.fit_intercept, self.data_norm_)
        W = np.vstack([self.coef_.T, self.intercept_[None, :]]) if self.fit_intercept \
            else self.coef_.T
        scores = design.decision(W)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def fit(self, X, y):
        """Fit the model privately; the whole privacy cost is charged first.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; rows above ``data_norm`` are scaled down to it.
        y : array-like of shape (n_samples,)
            Class labels. The set of labels is treated as public (it is
            released in ``classes_``).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._private_fit(X, y)
        self.data_norm_ = self.data_norm
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = True
        return tags

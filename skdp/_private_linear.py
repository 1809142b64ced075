"""PrivateLinearModel: the target-neutral private linear model every linear estimator shares.

In the style of skglm's ``GeneralizedLinearEstimator``: one model owns the
linear plumbing (the design ``[s_i x_i, c]`` with rows clipped to
``data_norm``, the intercept feature, the loss bound to the design, the
release of ``coef_`` / ``intercept_``, the linear predictor, the Dask
binding) and the fit skeleton of :class:`~skdp._base.PrivateEstimatorMixin`;
a named estimator only says which loss (``_datafit``), which targets
(``_targets``) and which penalty (``penalty`` / ``alpha`` / ``l1_ratio``)
it fits. Targets are the subclass's business: labels for the classifiers
(:class:`~skdp._linear.PrivateLinearClassifier`), bounded responses for
the regressors.
"""


import functools

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._base import PrivateEstimatorMixin
from ._dask import DaskLoss, as_dask_arrays, dask_decision_function, is_dask_collection
from ._dask import feature_names as dask_feature_names
from .losses import LinearDesign, sum_is_finite
from .validation import validate_data

__all__ = ["PrivateLinearModel"]

class PrivateLinearModel(PrivateEstimatorMixin, BaseEstimator):
    """A private linear model: a GLM loss on the design ``[s_i x_i, c]`` and a penalty.

    Subclasses implement, from public quantities only:

    - ``_datafit(labels)`` -> ``(loss class, its public parameters,
      n_outputs)``, ``n_outputs`` None for one coefficient vector
      (``labels``: what ``_public_labels`` returned, None for regressors);
    - ``_validate_data(X, y)`` and ``_targets(y)``: the targets the loss
      takes (validated y in, encoded targets out; may set fitted attributes
      such as ``classes_``);
    - ``_dask_targets(y)`` (optional): ``(labels, a picklable function of a
      block of y giving its targets)`` for the Dask back end.

    Coefficients have shape ``(n_params,)`` for one output and
    ``(n_params, n_outputs)`` otherwise, the intercept in the last row;
    ``_set_coef`` releases them as ``coef_`` of shape ``(n_outputs,
    n_features)`` and ``intercept_`` of shape ``(n_outputs,)``.
    """

    # -- the public problem -------------------------------------------------
    def _datafit(self, labels):  # pragma: no cover - abstract
        raise NotImplementedError

    def _public_loss(self, n_features, labels, intercept_scale=None):
        loss_cls, params, n_outputs = self._datafit(labels)
        n_params = n_features + int(self.fit_intercept)
        coef_shape = (n_params,) if n_outputs is None else (n_params, n_outputs)
        mask = np.ones(coef_shape, dtype=bool)
        if self.fit_intercept:
            mask[-1] = False
        row_bound = None
        if self.data_norm is not None:
            c = 0.0
            if self.fit_intercept:
                c = loss_cls.intercept_scale if intercept_scale is None else intercept_scale
            row_bound = float(np.hypot(self.data_norm, c))
        return loss_cls, params, coef_shape, n_outputs, row_bound, mask

    def _fitted_labels(self):
        """The labels of the fit, as ``_datafit`` takes them (None: no labels)."""
        return None

    # -- binding the loss to the data ----------------------------------------
    def _validated_rows(self, X, y, y_numeric):
        """``validate_data`` for a fit: X as float64 / float32, dense or CSR, finite.

        scikit-learn's finite check first sums X in one thread; a large dense
        X is summed here by row blocks in threads instead, and only a sum
        that is not finite runs scikit-learn's whole check again on the
        input as given (the same error as without the fast path, naming the
        offending value's kind and column, or none when finite entries merely
        overflowed the sum).
        """
        checked = functools.partial(validate_data, self, accept_sparse="csr",
                                    dtype=[np.float64, np.float32], y_numeric=y_numeric)
        X_valid, y_valid = checked(X, y, ensure_all_finite=False)
        if not sum_is_finite(X_valid):
            X_valid, y_valid = checked(X, y)
        return X_valid, y_valid

    def _bind_loss(self, X, y, spec):
        if is_dask_collection(X):
            return self._bind_dask_loss(X, y, spec)
        X, y = self._validate_data(X, y)
        targets = self._targets(y)
        loss_cls, params, _ = self._datafit(self._fitted_labels())
        design = LinearDesign(X, self.fit_intercept, self.data_norm,
                              self._intercept_feature(loss_cls, spec))
        return loss_cls(design, targets, **params)

    @staticmethod
    def _intercept_feature(loss_cls, spec):
        """The intercept feature's value in this fit: the solver's (in the spec), else the loss's."""
        chosen = getattr(spec, "intercept_scale", None)
        return loss_cls.intercept_scale if chosen is None else chosen

    def _dask_targets(self, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _bind_dask_loss(self, X, y, spec):
        """The loss on a dask array: each block validated and bound on its worker."""
        labels, targets = self._dask_targets(y)
        loss_cls, params, _ = self._datafit(labels)
        recipe = {
            "owner": type(self).__name__, "n_features": int(X.shape[1]),
            "targets": targets, "loss_class": loss_cls, "loss_params": params,
            "fit_intercept": bool(self.fit_intercept), "data_norm": self.data_norm,
            "intercept_scale": self._intercept_feature(loss_cls, spec),
        }
        loss = DaskLoss(X, y, recipe, spec.coef_shape)
        self.n_features_in_ = int(X.shape[1])
        self.__dict__.pop("feature_names_in_", None)
        return loss

    def _check_dask_solver(self, solver):
        """Every solver of the linear models runs on the Dask back end."""

    # -- the released model -------------------------------------------------
    def _set_coef(self, W, loss):
        d = self.n_features_in_
        if W.ndim == 1:
            W = W[:, None]
        self.coef_ = np.ascontiguousarray(W[:d].T)
        # the model's intercept is the design's constant feature times W[d]
        scale = loss.intercept_feature
        self.intercept_ = scale * W[d] if self.fit_intercept else np.zeros(W.shape[1])

    def _linear_predictor(self, X):
        """``x @ coef_.T + intercept_`` of each row clipped to ``data_norm_`` (no cost).

        Shape (n_samples,) for one output, else (n_samples, n_outputs); a
        lazy dask array for dask input.
        """
        check_is_fitted(self)
        coef = np.atleast_2d(self.coef_)
        intercept = np.atleast_1d(self.intercept_)
        W = np.vstack([coef.T, intercept[None, :]]) if self.fit_intercept else coef.T
        if is_dask_collection(X):
            return dask_decision_function(X, W, self.fit_intercept, self.data_norm_,
                                          self.n_features_in_)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        design = LinearDesign(X, self.fit_intercept, self.data_norm_)
        scores = design.decision(W)
        return scores.ravel() if scores.shape[1] == 1 else scores

    # -- fit ------------------------------------------------------------------
    def fit(self, X, y):
        """Fit the model privately; the whole privacy cost is charged first.

        ``X`` and ``y`` are both in memory or both dask collections (a dask
        fit runs where the blocks live; see the scaling guide).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; rows above ``data_norm`` are scaled down to it.
        y : array-like of shape (n_samples,)
            Targets. Class labels for a classifier: with ``classes`` given,
            every label must be one of them (else a ValueError is raised
            before any privacy is spent); with ``classes=None`` the set of
            labels present in y is released in ``classes_`` (not private).
            Responses for a regressor, clipped to ``[-y_bound, y_bound]``
            when ``y_bound`` is set.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        # no frame between fit and _private_fit: warnings point at the user's call
        if is_dask_collection(y) and not is_dask_collection(X):
            raise TypeError("y is a dask collection but X is not: pass both as dask "
                            "collections, or both in memory.")
        if is_dask_collection(X):
            names = dask_feature_names(X)  # a dataframe's columns: public metadata
            X, y = as_dask_arrays(X, y)  # block sizes are metadata; no value is read
            self._private_fit(X, y)
            if names is not None:
                self.feature_names_in_ = names
            return self
        return self._private_fit(X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

"""DPLogisticRegression and DPLinearRegression: private linear models of scikit-learn's
``linear_model`` (a classifier and a regressor on the shared private linear model)."""

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import RegressorMixin

from ._docstrings import fill_doc
from ._dask import is_dask_collection
from ._linear import PENALTY_CONSTRAINTS, PrivateLinearClassifier, public_classes
from ._private_linear import PrivateLinearModel
from .losses import BinaryLogisticLoss, MultinomialLogisticLoss, SquaredLoss
from .validation import POSITIVE, check_array

__all__ = ["DPLogisticRegression", "DPLinearRegression"]



def logistic_targets(y_index, n_classes):
    """Targets of the logistic losses: 0/1 for two classes, one-hot otherwise."""
    if n_classes == 2:
        return y_index.astype(np.float64)
    onehot = np.zeros((len(y_index), n_classes))
    onehot[np.arange(len(y_index)), y_index] = 1.0
    return onehot


def _probabilities(scores):
    if scores.ndim == 1:
        p = expit(scores)
        return np.column_stack([1.0 - p, p])
    return softmax(scores, axis=1)


def _proba_chunks(scores, n_classes):
    if scores.ndim == 1:
        return {"new_axis": 1, "chunks": (scores.chunks[0], (n_classes,))}
    return {}

@fill_doc
class DPLogisticRegression(PrivateLinearClassifier):
    r"""Logistic regression with (epsilon, delta)-differential privacy.

    Minimises the penalised logistic loss (binary, or multinomial for
    more than two classes)

    .. math::

        \min_{W} \frac{1}{n}\sum_{i=1}^n \ell(y_i, W^\top \tilde x_i)
        + r(W_{\text{coef}}),
        \qquad \tilde x_i = [s_i x_i, 1],\; s_i = \min(1, \text{data\_norm}/\|x_i\|_2),

    with :math:`r(w) = \frac{\alpha}{2}\|w\|_2^2` (``penalty='l2'``),
    :math:`\alpha\|w\|_1` (``'l1'``), the elastic net, or the non-convex
    :math:`r(w) = \sum_j \alpha w_j^2 / (1 + w_j^2)` (``'nonconvex'``), and a
    private solver that only ever sees per-example gradients clipped to
    ``clip_norm`` plus calibrated noise.

    **Privacy guarantee.** The fitted model (``coef_``, ``intercept_``,
    ``n_iter_``) is (``epsilon``, ``delta``)-differentially private with
    respect to *zero-out* neighbours: two training sets are neighbours when
    one record is replaced by a null record that contributes nothing to any
    query (Kairouz et al. 2021 [3]_). The number of records n is public
    under this relation. Replacing one record by another is a group of two
    such steps, so for replace-one neighbours epsilon doubles: the fit is
    (2 ``epsilon``, (1 + exp(``epsilon``)) ``delta``)-DP. The set of class
    labels is public only when given through ``classes=``; with
    ``classes=None``, ``classes_`` reveals which labels occur in the
    training data. The whole cost is charged to the accountant before the
    data is read.

    Parameters
    ----------
    {{epsilon}}
    {{delta}}
    {{solver}}
    classes : array-like of shape (n_classes,) or None, default=None
        The public set of class labels: at least 2 distinct labels of one
        type, e.g. ``[0, 1]`` or ``['no', 'yes']``. ``classes_`` is then
        this set, sorted, and the model is fitted over it: binary for 2
        classes (one coefficient row), multinomial otherwise, where a class
        absent from the training data still gets coefficients. A label in
        ``y`` that is not in ``classes`` raises a ValueError before any
        privacy is spent. None takes the label set from ``y``, which is
        **not private**: ``classes_`` reveals the set of labels present in
        the training data (a label held by a single record is revealed).
        Private deployments should pass ``classes``.
    penalty : {'l2', 'l1', 'elasticnet', 'nonconvex'} or None, default='l2'
        The penalty (never applied to the intercept), with the strengths of
        :class:`~sklearn.linear_model.SGDClassifier`: ridge
        :math:`\frac{\alpha}{2}\|w\|^2`; lasso :math:`\alpha\|w\|_1`
        and the elastic net :math:`\alpha(\rho\|w\|_1 + \frac{1 -
        \rho}{2}\|w\|^2)`, which set coefficients exactly to zero and are
        taken by their proximal operator (``'gd'`` and ``'dual_averaging'``;
        the solvers that need a smooth penalty are then not available); the
        non-convex :math:`\sum_j \alpha w_j^2 / (1 + w_j^2)` of the
        ``'second_order'`` solver's paper
        (:class:`~skdp.penalties.NonConvexPenalty`), which shrinks small
        weights like the ridge but leaves large ones
        alone (solvers that need a convex objective are then not available;
        ``'second_order'`` is); or None for none. A penalty reads no data
        and costs no privacy.
    alpha : 'auto' or float, default='auto'
        Strength of the penalty. The data term is a *mean* over the n
        examples, so ``alpha`` relates to scikit-learn's ``C`` (which
        multiplies a *sum*) by ``alpha = 1 / (C * n)``. 'auto':
        ``min(1e-4, 1 / n)``, scikit-learn's default ``C=1.0`` capped at
        1e-4 (SGDClassifier's default, which it equals at n = 10,000); n is
        public (see :func:`~skdp.validation.resolve_alpha` for the measurements).
    l1_ratio : float in [0, 1], default=0.15
        The elastic-net mixing :math:`\rho` (``penalty='elasticnet'`` only):
        1 is the lasso, 0 the ridge.
    {{fit_intercept}}
    {{clip_norm}}
    data_norm : float or None, default=1.0
        Public bound on the L2 norm of each row: rows above it are scaled
        down to it (in fit and predict). Solvers derive smoothness
        constants from it. Scale features so that rows have norm near 1
        (e.g. :class:`~skdp.preprocessing.BoundedScaler` from public
        feature ranges, or :class:`~sklearn.preprocessing.Normalizer`).
        None leaves rows untouched; step sizes must then be given in ``solver_params``.
    {{run_controls}}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels, sorted: those of ``classes`` when given, else the labels
        present in ``y`` (not private, see ``classes``).
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    {{feature_names_in_}}
    {{fit_record_}}

    See Also
    --------
    sklearn.linear_model.LogisticRegression : The non-private model.
    DPLinearSVC : Private linear support vector classification.

    References
    ----------
    .. [1] Chaudhuri, Monteleoni, Sarwate, "Differentially Private Empirical
       Risk Minimization", JMLR 2011.
    .. [2] Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.
    .. [3] Kairouz, McMahan, Song, Thakkar, Thakurta, Xu, "Practical and
       Private (Deep) Learning without Sampling or Shuffling", ICML 2021
       (zero-out neighbours).

    Examples
    --------
    :class:`~skdp.preprocessing.BoundedScaler` maps each feature from its
    public range (digits' pixels are 0-16, by the data set's documentation)
    to [-1, 1] and reads no value of the data, and the label set is given
    with ``classes``: the whole pipeline below is as private as the
    estimator's fit. A step fitted on the private data without privacy
    (``StandardScaler``, feature selection) would not be covered; see
    :mod:`skdp.preprocessing`.

    >>> from sklearn.datasets import load_digits
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdp import BudgetAccountant, DPLogisticRegression
    >>> from skdp.preprocessing import BoundedScaler
    >>> X, y = load_digits(return_X_y=True)
    >>> X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    >>> acc = BudgetAccountant(epsilon=2.0)
    >>> clf = make_pipeline(
    ...     BoundedScaler(bounds=(0, 16)),
    ...     DPLogisticRegression(epsilon=1.0, classes=list(range(10)),
    ...                          accountant=acc, random_state=0))
    >>> clf.fit(X_train, y_train).score(X_test, y_test) > 0.75
    True
    >>> clf[-1].classes_
    array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """

    def __init__(
        self,
        epsilon=1.0,
        delta="auto",
        solver="auto",
        classes=None,
        penalty="l2",
        alpha="auto",
        l1_ratio=0.15,
        fit_intercept=True,
        clip_norm=1.0,
        data_norm=1.0,
        max_iter=None,
        batch_size=None,
        solver_params=None,
        accountant=None,
        random_state=None,
        verbose=0,
        secure_mode=False,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.classes = classes
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.fit_intercept = fit_intercept
        self.clip_norm = clip_norm
        self.data_norm = data_norm
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.solver_params = solver_params
        self.accountant = accountant
        self.random_state = random_state
        self.verbose = verbose
        self.secure_mode = secure_mode

    _specific_constraints = PENALTY_CONSTRAINTS

    def _loss_capabilities(self):
        classes = public_classes(self.classes) if self.classes is not None else None
        if classes is None:  # binary or multinomial: what both offer
            return BinaryLogisticLoss.capabilities & MultinomialLogisticLoss.capabilities
        return self._loss_class(len(classes))[0].capabilities

    def _loss_class(self, n_classes):
        return (BinaryLogisticLoss if n_classes == 2 else MultinomialLogisticLoss), {}

    _target_encoder = staticmethod(logistic_targets)

    def predict_proba(self, X):
        """Class probabilities.

        The logistic function of the decision score for two classes, its
        softmax otherwise; post-processing of the released model, so it
        costs no privacy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples to score, with the features seen in ``fit``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``; each row sums to 1.
        """
        scores = self.decision_function(X)
        if is_dask_collection(scores):
            return scores.map_blocks(_probabilities, dtype=np.float64,
                                     **_proba_chunks(scores, len(self.classes_)))
        return _probabilities(scores)

    def predict_log_proba(self, X):
        """Logarithm of the class probabilities (columns follow ``classes_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples to score, with the features seen in ``fit``.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            ``log(predict_proba(X))``; ``-inf`` where a probability
            underflows to 0.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


def _block_responses(y):
    """A block of responses as float64, checked like in-memory y (on a Dask worker)."""
    return check_array(y, ensure_2d=False, dtype=np.float64, ensure_min_samples=0).ravel()


@fill_doc
class DPLinearRegression(RegressorMixin, PrivateLinearModel):
    r"""Linear least squares (ridge) regression with (epsilon, delta)-differential privacy.

    Minimises the penalised squared loss

    .. math::

        \min_{w, b} \frac{1}{n}\sum_{i=1}^n \frac{1}{2}(w^\top s_i x_i + b - y_i)^2
        + \frac{\alpha}{2}\|w\|_2^2,
        \qquad s_i = \min(1, \text{data\_norm}/\|x_i\|_2),

    with a private solver that only ever sees per-example gradients
    :math:`(w^\top s_i x_i + b - y_i)\,[s_i x_i, 1]` clipped to L2 norm
    ``clip_norm`` plus calibrated noise. The residual has no bound of its
    own: the clip is what bounds one record's influence, whatever its
    response (a record with a huge ``y`` moves a gradient sum by at most
    ``clip_norm``, like any other). Clipping the gradient is the gradient
    of a Huber loss of the residual, so scale the responses (a public map,
    e.g. :class:`~sklearn.compose.TransformedTargetRegressor`) so that most
    residuals stay below ``clip_norm / sqrt(data_norm**2 + 1)``: responses
    in [-1, 1] with the defaults.

    **Privacy guarantee.** The fitted model (``coef_``, ``intercept_``,
    ``n_iter_``) is (``epsilon``, ``delta``)-differentially private with
    respect to *zero-out* neighbours (one record replaced by a null record
    that contributes nothing to any query; Kairouz et al. 2021); n is
    public. For replace-one neighbours it is (2 ``epsilon``, (1 +
    exp(``epsilon``)) ``delta``)-DP. The whole cost is charged to the
    accountant before the data is read.

    Parameters
    ----------
    {{epsilon}}
    {{delta}}
    {{solver}}
        Every solver whose needs a smooth convex loss with a Hessian meets
        is available.
    alpha : float, default=1e-4
        Ridge strength, never applied to the intercept. The data term is a
        *mean* of halved squares, so scikit-learn's
        :class:`~sklearn.linear_model.Ridge` (a *sum* of squares plus
        ``alpha_ridge * ||w||**2``) has ``alpha_ridge = n * alpha``.
    {{fit_intercept}}
    {{clip_norm}}
    data_norm : float or None, default=1.0
        Public bound on the L2 norm of each row: rows above it are scaled
        down to it (in fit and predict); solvers derive their step sizes
        from it. None leaves rows untouched; step sizes must then be given
        in ``solver_params``.
    y_bound : float or None, default=None
        Public bound on ``|y|``: responses are clipped to ``[-y_bound,
        y_bound]`` in ``fit`` (like ``data_norm`` for rows), and solvers that
        use a bound on the objective at 0 get ``y_bound**2 / 2``. None
        leaves responses as they are; the gradient clip alone keeps the
        guarantee.
    {{run_controls}}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    {{feature_names_in_}}
    {{fit_record_}}

    See Also
    --------
    sklearn.linear_model.Ridge : The non-private model.
    DPLogisticRegression : Private logistic regression.

    Notes
    -----
    Accuracy against scikit-learn's ``Ridge`` and diffprivlib's
    ``LinearRegression``: :doc:`/regression` (``benchmarks/regression.py``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdp import BudgetAccountant, DPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20000, 5))
    >>> X /= np.linalg.norm(X, axis=1, keepdims=True)  # rows of norm 1
    >>> y = np.clip(X @ [0.5, -0.5, 0.3, 0.0, 0.2] + 0.05 * rng.normal(size=20000), -1, 1)
    >>> reg = DPLinearRegression(epsilon=1.0, y_bound=1.0, accountant=BudgetAccountant(),
    ...                          random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.8)
    True
    """

    def __init__(self, epsilon=1.0, delta="auto", solver="auto", alpha=1e-4,
                 fit_intercept=True, clip_norm=1.0, data_norm=1.0, y_bound=None,
                 max_iter=None, batch_size=None, solver_params=None, accountant=None,
                 random_state=None, verbose=0, secure_mode=False):
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.clip_norm = clip_norm
        self.data_norm = data_norm
        self.y_bound = y_bound
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.solver_params = solver_params
        self.accountant = accountant
        self.random_state = random_state
        self.verbose = verbose
        self.secure_mode = secure_mode

    _specific_constraints = {"y_bound": [None, POSITIVE]}

    def _loss_capabilities(self):
        return SquaredLoss.capabilities

    def _datafit(self, labels):
        y_bound = None if self.y_bound is None else float(self.y_bound)
        return SquaredLoss, {"y_bound": y_bound}, None

    def _validate_data(self, X, y):
        return self._validated_rows(X, y, y_numeric=True)

    def _targets(self, y):
        return y  # SquaredLoss clips them to y_bound

    def _dask_targets(self, y):
        return None, _block_responses

    def _set_coef(self, W, loss):
        super()._set_coef(W, loss)
        self.coef_ = self.coef_[0]
        self.intercept_ = float(self.intercept_[0])

    def predict(self, X):
        """Predicted responses ``x @ coef_ + intercept_`` of rows clipped to ``data_norm``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples, with the features seen in ``fit``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Computed from the released model alone: no privacy cost.
        """
        return self._linear_predictor(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the solver says whether it scores poorly on check_regressors_train's
        # few hundred rows (its poor_on_few_rows), as for the classifiers
        tags.regressor_tags.poor_score = self._solver_poor_score()
        return tags

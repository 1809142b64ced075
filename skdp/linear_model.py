"""DPLogisticRegression: differentially private logistic regression."""

import numpy as np
from scipy.special import expit, softmax

from ._linear import PrivateLinearClassifier
from .losses import BinaryLogisticLoss, MultinomialLogisticLoss

__all__ = ["DPLogisticRegression"]


class DPLogisticRegression(PrivateLinearClassifier):
    r"""Logistic regression with (epsilon, delta)-differential privacy.

    Minimises the L2-penalised logistic loss (binary, or multinomial for
    more than two classes)

    .. math::

        \min_{W} \frac{1}{n}\sum_{i=1}^n \ell(y_i, W^\top \tilde x_i)
        + \frac{\alpha}{2}\|W_{\text{coef}}\|_2^2,
        \qquad \tilde x_i = [s_i x_i, 1],\; s_i = \min(1, \text{data\_norm}/\|x_i\|_2),

    with a private solver that only ever sees per-example gradients clipped
    to ``clip_norm`` plus calibrated noise.

    **Privacy guarantee.** The fitted model (``coef_``, ``intercept_``,
    ``n_iter_``) is (``epsilon``, ``delta``)-differentially private with
    respect to adding or removing one training record. The number of
    records and the set of class labels are treated as public. The whole
    cost is charged to ``accountant`` before the data is read.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of one fit; must be > 0.
    delta : float, default=1e-5
        Privacy failure probability, in [0, 1). ``delta=0`` runs a pure
        epsilon-DP solver (Laplace noise).
    solver : str, default='auto'
        Name of a registered solver (see
        :func:`skdp.solvers.available_solvers`); 'auto' picks the best
        available one and records it in ``solver_``.
    alpha : float, default=1e-4
        Strength of the L2 penalty (not applied to the intercept).
    fit_intercept : bool, default=True
        Whether to fit an intercept (a constant feature 1, clipped with the
        rest of the gradient).
    clip_norm : float, default=1.0
        Per-example gradient norm bound: the sensitivity of every gradient
        sum.
    data_norm : float or None, default=1.0
        Public bound on the L2 norm of each row: rows above it are scaled
        down to it (in fit and predict). Solvers derive smoothness
        constants from it. Scale features so that rows have norm near 1
        (e.g. with :class:`~sklearn.preprocessing.Normalizer`). None leaves
        rows untouched; step sizes must then be given in ``solver_params``.
    max_iter : int or None, default=None
        Number of private iterations; None lets the solver choose.
    batch_size : int or None, default=None
        Expected batch size of Poisson-sampled minibatches (DP-SGD); None
        uses full batches.
    solver_params : dict or None, default=None
        Solver-specific options (see each solver's documentation).
    accountant : BudgetAccountant or None, default=None
        Budget accountant charged with every fit; None uses the current one
        (see :func:`skdp.accounting.current_accountant`). Cloning the
        estimator keeps the same accountant.
    random_state : int, RandomState, Generator or None, default=None
        Seed of the noise. None draws fresh entropy (use it in production:
        a fixed seed makes the noise predictable).
    verbose : int, default=0
        Progress messages; they only show released quantities.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.
    n_iter_ : int
        Private iterations run.
    solver_ : str
        The solver used ('auto' resolved).
    privacy_spent_ : tuple of (float, float)
        The (epsilon, delta) charged to the accountant by this fit.

    See Also
    --------
    sklearn.linear_model.LogisticRegression : the non-private model.

    References
    ----------
    .. [1] Chaudhuri, Monteleoni, Sarwate, "Differentially Private Empirical
       Risk Minimization", JMLR 2011.
    .. [2] Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import Normalizer, StandardScaler
    >>> from skdp import DPLogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), Normalizer(),
    ...                     DPLogisticRegression(epsilon=1.0, random_state=0))
    >>> clf.fit(X, y).score(X, y) > 0.9
    True
    """

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-5,
        solver="auto",
        alpha=1e-4,
        fit_intercept=True,
        clip_norm=1.0,
        data_norm=1.0,
        max_iter=None,
        batch_size=None,
        solver_params=None,
        accountant=None,
        random_state=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.clip_norm = clip_norm
        self.data_norm = data_norm
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.solver_params = solver_params
        self.accountant = accountant
        self.random_state = random_state
        self.verbose = verbose

    def _loss_capabilities(self):
        return BinaryLogisticLoss.capabilities | {"hessian"}

    def _make_loss(self, design, y_index, n_classes):
        if n_classes == 2:
            return BinaryLogisticLoss(design, y_index.astype(np.float64))
        onehot = np.zeros((len(y_index), n_classes))
        onehot[np.arange(len(y_index)), y_index] = 1.0
        return MultinomialLogisticLoss(design, onehot)

    def predict_proba(self, X):
        """Class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p = expit(scores)
            return np.column_stack([1.0 - p, p])
        return softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of the class probabilities (columns follow ``classes_``)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

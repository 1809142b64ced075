"""DPMatrixSensing: differentially private low-rank matrix sensing.

Also :func:`make_matrix_sensing`, the synthetic generator of Xu, Tao, Ding, Fan
and Wang (paper 000 of the solvers page).
"""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ._docstrings import fill_doc
from ._base import PrivateEstimatorMixin
from .validation import make_rng, validate_data
from .losses import LinearDesign, MatrixSensingLoss, factor_step

__all__ = ["DPMatrixSensing", "make_matrix_sensing"]

#: the intercept's step times its curvature (with the loss's stand-in step)
INTERCEPT_RATE = 1.0
#: standard deviation of the entries of the public random initial factors
INIT_SCALE = 0.1


def _intercept_scale(shape, data_norm):
    """Public scale ``s`` of the intercept, ``c = s w_c``.

    The intercept's curvature in ``w_c`` is ``s**2``; with the loss's stand-in
    step (:func:`skdp.losses.factor_step`) ``s**2 * step = INTERCEPT_RATE`` for every shape, a stable and
    fast rate for that quadratic direction.
    """
    return float(np.sqrt(INTERCEPT_RATE / factor_step(shape, data_norm)))


def _check_shape(shape):
    if (not isinstance(shape, (tuple, list)) or len(shape) != 2
            or not all(isinstance(s, numbers.Integral) and not isinstance(s, bool)
                       for s in shape)
            or not all(s >= 1 for s in shape)):
        raise ValueError(
            f"shape must be None or a pair of positive integers (p, q), got {shape!r}."
        )
    return int(shape[0]), int(shape[1])


def _check_rank(rank, shape):
    if not isinstance(rank, numbers.Integral) or isinstance(rank, bool) or rank < 1:
        raise ValueError(f"rank must be an integer >= 1, got {rank!r}.")
    if shape is not None and rank > min(shape):
        raise ValueError(
            f"rank must be at most min(p, q) = {min(shape)} for shape={tuple(shape)}, "
            f"got rank={rank}."
        )
    return int(rank)


def make_matrix_sensing(n_samples=400, shape=(20, 20), rank=3, noise=0.01, random_state=None):
    r"""Synthetic low-rank matrix sensing data (the generator of Xu et al.).

    Draws a rank-``rank`` ground truth :math:`X^\star = U^\star V^{\star\top}`
    from Gaussian factors, rescaled to :math:`\|X^\star\|_F = \sqrt{pq}/4`,
    measurement matrices :math:`A_i` with i.i.d. :math:`N(0, 1/(pq))`
    entries (so :math:`\|A_i\|_F \approx 1` and the measurements have
    standard deviation about 0.25), and measurements
    :math:`b_i = \langle A_i, X^\star \rangle + N(0, \text{noise}^2)`.

    Parameters
    ----------
    n_samples : int, default=400
        Number of measurements (rows of ``X``), >= 1.
    shape : tuple of int (p, q), default=(20, 20)
        Shape of the ground-truth matrix and of each measurement matrix;
        ``X`` has ``p * q`` columns.
    rank : int, default=3
        At most ``min(p, q)``.
    noise : float, default=0.01
        Standard deviation of the measurement noise (>= 0).
    random_state : int, RandomState, Generator or None, default=None
        Seed of every draw (factors, measurement matrices and noise), for
        reproducible data; None draws fresh entropy. The data are synthetic,
        so the seed has no privacy role.

    Returns
    -------
    X : ndarray of shape (n_samples, p * q)
        The vectorised measurement matrices (C order), one per row.
    y : ndarray of shape (n_samples,)
        The measurements :math:`b_i`.
    X_star : ndarray of shape (p, q)
        The ground-truth matrix.

    References
    ----------
    .. [1] Xu, Tao, Ding, Fan, Wang, "Finding Differentially Private Second Order
       Stationary Points in Stochastic Minimax Optimization",
       arXiv 2602.01339, section 5.
    """
    p, q = _check_shape(shape)
    rank = _check_rank(rank, (p, q))
    if (not isinstance(n_samples, numbers.Integral) or isinstance(n_samples, bool)
            or n_samples < 1):
        raise ValueError(f"n_samples must be an integer >= 1, got {n_samples!r}.")
    if (not isinstance(noise, numbers.Real) or isinstance(noise, bool)
            or not np.isfinite(noise) or noise < 0):
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}.")
    rng = make_rng(random_state)
    # public randomness: synthetic data, drawn from its own seed, releases nothing
    U = rng.standard_normal((p, rank))
    V = rng.standard_normal((q, rank))
    X_star = U @ V.T
    X_star *= np.sqrt(p * q) / 4.0 / np.linalg.norm(X_star)
    A = rng.normal(0.0, 1.0 / np.sqrt(p * q), size=(n_samples, p * q))
    y = A @ X_star.ravel() + rng.normal(0.0, noise, size=n_samples)
    return A, y, X_star


def public_random_factors(rng, p, q, rank):
    """A random start ``(U0, V0)`` with i.i.d. ``N(0, INIT_SCALE^2)`` entries.

    Public randomness: the start is drawn before any data is read and does not
    depend on it, so it is not a release.
    """
    return (rng.normal(0.0, INIT_SCALE, size=(p, rank)),
            rng.normal(0.0, INIT_SCALE, size=(q, rank)))


@fill_doc
class DPMatrixSensing(RegressorMixin, PrivateEstimatorMixin, BaseEstimator):
    r"""Low-rank matrix sensing with (epsilon, delta)-differential privacy.

    Each row of ``X`` is a measurement matrix :math:`A_i` of shape
    ``shape = (p, q)``, vectorised in C order (``A.ravel()``), and ``y``
    holds the measurements :math:`b_i \approx \langle A_i, X^\star\rangle`.
    The model is a rank-``rank`` factorisation :math:`U V^\top` fitted by

    .. math::

        \min_{U, V, c} \frac{1}{2n}\sum_{i=1}^n
        \big(\langle A_i, U V^\top \rangle + c - b_i\big)^2
        + \frac{\alpha}{2}\big(\|U\|_F^2 + \|V\|_F^2\big)

    (``c`` only with ``fit_intercept=True``) with a private solver that only
    sees per-example gradients in :math:`(U, V, c)`, each clipped *as a
    whole* to ``clip_norm``, plus calibrated noise. The penalty is the
    variational form of :math:`\alpha \|U V^\top\|_*` (nuclear norm).

    **Privacy guarantee.** The fitted model (``coef_``,
    ``low_rank_matrix_``, ``components_``, ``intercept_``, ``n_iter_``) is
    (``epsilon``, ``delta``)-differentially private with respect to adding
    or removing one record :math:`(A_i, b_i)`. The number of records is
    treated as public. The whole cost is charged to ``accountant`` before
    the data is read.

    Parameters
    ----------
    shape : tuple of int (p, q) or None, default=None
        Shape of each measurement matrix; ``n_features`` must equal
        ``p * q``. None treats each row as a ``(n_features, 1)`` matrix:
        with ``rank=1`` the model is then an ordinary linear model
        :math:`\langle a_i, u\rangle v` (rank one, factored), so the
        estimator works on any regression data.
    rank : int, default=1
        Rank ``r`` of the factorisation, ``1 <= r <= min(p, q)``.
    {{epsilon}}
    delta : 'auto' or float, default='auto'
        Privacy failure probability, in (0, 1). 'auto' resolves at fit from
        the public number of rows n to ``min(1e-5, 1 / (10 n))``
        (:func:`skdp.validation.resolve_delta`), an order below the
        ``1 / n`` at which the guarantee is void; the resolved value is what
        is charged and what ``privacy_spent_`` shows. The per-example
        gradient norm is only available in L2, so only Gaussian-noise
        (``delta > 0``) solvers apply.
    solver : str, default='auto'
        Name of a registered solver (see
        :func:`skdp.solvers.available_solvers`); 'auto' picks ``'gd'``.
        The loss is smooth but not convex: solvers that require convexity
        are not available.
    alpha : float, default=1e-5
        Strength of the L2 penalty on the factors. It shrinks each singular
        value of :math:`UV^\top` by about :math:`\alpha\, pq / B^2` (0.004
        for 20 x 20 measurements of norm 1), a bias that grows with
        ``alpha``: keep it small.
    fit_intercept : bool, default=False
        Whether to fit an intercept ``c`` (unpenalised; part of the clipped
        gradient). Matrix sensing has none; turn it on for data that is not
        centred. It is parametrised as ``c = s * w_c`` with the public scale
        :math:`s = (pq)^{-1/4} B / \sqrt{3}`, so that gd's default step
        suits it too (see Notes).
    clip_norm : float, default=0.05
        Per-example gradient norm bound: the sensitivity of every gradient
        sum. The gradient of a record is its residual times
        :math:`(A_i V, A_i^\top U)`; with measurement matrices of norm about
        1 and measurements of standard deviation about 0.25 (the scale of
        :func:`make_matrix_sensing`) it is of order 0.1 or less. The default
        was chosen with ``max_iter`` on held-out training measurements (see
        Notes).
    data_norm : float or None, default=None
        Public bound on the Frobenius norm of each :math:`A_i`: larger rows
        are scaled down to it (in fit and predict; the measurement is not
        rescaled, so choose it above the norms of typical rows). None leaves
        rows untouched; clipping the gradient is what bounds the
        sensitivity either way. It also sets ``B`` in the default step size.
    max_iter : int or None, default=None
        Number of private iterations; None uses 100 with ``gd`` and lets other
        solvers choose.
    {{batch_size}}
    solver_params : dict or None, default=None
        Solver-specific options. The loss has no global smoothness constant,
        so ``gd`` gets a default ``learning_rate`` (see Notes) and
        ``average=0.5`` (release the mean of the last half of the iterates:
        free post-processing that cancels much of the noise); both can be
        overridden here. ``solver='rgda'`` runs the y-free form by default;
        ``solver_params={'dual': 'per_record'}`` runs the minimax form of
        Xu et al. [1]_, with one private dual per record (see the solvers
        page of the documentation).
    accountant : BudgetAccountant or None, default=None
        Budget accountant charged with every fit; None uses the current one.
        Cloning the estimator keeps the same accountant.
    random_state : int, RandomState, Generator or None, default=None
        Seed of the initialisation and of the noise. None draws fresh
        entropy.
    {{verbose}}
    {{secure_mode}}

    Attributes
    ----------
    low_rank_matrix_ : ndarray of shape (p, q)
        The fitted matrix :math:`U V^\top`.
    components_ : tuple of ndarray (U, V)
        The fitted factors, of shapes ``(p, rank)`` and ``(q, rank)``.
    coef_ : ndarray of shape (n_features,)
        ``low_rank_matrix_.ravel()``: the coefficients of the linear
        predictor, so ``predict(X) = X @ coef_ + intercept_``.
    intercept_ : float
        0.0 unless ``fit_intercept=True``.
    shape_ : tuple of int
        The resolved ``(p, q)``.
    data_norm_ : float or None
        ``data_norm`` at fit time (``predict`` clips rows with it).
    n_features_in_ : int
        Number of features seen during ``fit`` (``p * q``).
    feature_names_in_ : ndarray of shape (n_features,)
        Defined only when X has feature names that are all strings.
    {{fit_record_}}

    See Also
    --------
    make_matrix_sensing : The synthetic generator of Xu et al.

    Notes
    -----
    *Initialisation.* :math:`U = V = 0` is a saddle point where every
    gradient vanishes, so gradient methods started there never move. The
    solver starts instead from public random factors with i.i.d.
    :math:`N(0, 0.1^2)` entries (as in the experiment of Xu et al. [1]_),
    drawn from ``random_state`` independently of the noise and of the data,
    so the starting point costs no privacy.

    *Step size.* The loss has no global smoothness constant; it reports
    public stand-ins instead (:mod:`skdp.losses` ``factor_step`` and
    ``ProblemSpec.stand_ins``), from which every solver derives its
    defaults: the step ``3 sqrt(p q) / B**2`` with ``B = data_norm``, or 1
    when ``data_norm`` is None (the scale of :func:`make_matrix_sensing`). The
    reasoning: measurements with i.i.d. entries of variance :math:`B^2/(pq)`
    give :math:`\mathbb{E}\langle A, M\rangle^2 = B^2\|M\|_F^2/(pq)`, so near
    a solution the largest curvature in the factors is about
    :math:`2 B^2 \sigma_1(X^\star)/(pq)`, and with measurements of standard
    deviation :math:`s_b`, :math:`\sigma_1(X^\star) \le \|X^\star\|_F
    \approx s_b \sqrt{pq}/B`. Gradient descent is stable below the step
    :math:`\sqrt{pq}/(B s_b)`, i.e. ``4 sqrt(pq) / B**2`` for
    :math:`s_b = B/4`; the default takes 3/4 of that (stable even for a
    rank-one truth), and half of the 100 iterates are averaged. For
    measurements on another scale, give ``solver_params={'learning_rate':
    ...}`` (and ``clip_norm``).

    *Iterations and clipping.* ``max_iter=None`` (100 gd steps) and
    ``clip_norm=0.05`` were chosen on held-out *training* measurements, never
    on the ground truth (``python benchmarks/matrix_sensing_defaults.py``),
    and checked on instances the grid did not see (``--check``: other seeds
    and shapes); the grid, the check and the measured errors are in
    ``docs/solvers/gd.md`` and ``benchmarks/results/matrix_sensing_defaults.md``.

    References
    ----------
    .. [1] Xu, Tao, Ding, Fan, Wang, "Finding Differentially Private Second Order
       Stationary Points in Stochastic Minimax Optimization",
       arXiv 2602.01339 (the matrix-sensing experiment).
    .. [2] Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.matrix_sensing import DPMatrixSensing, make_matrix_sensing
    >>> X, y, X_star = make_matrix_sensing(20000, shape=(20, 20), rank=3,
    ...                                    noise=0.01, random_state=0)
    >>> est = DPMatrixSensing(shape=(20, 20), rank=3, epsilon=1.0,
    ...                       random_state=0).fit(X, y)
    >>> err = np.linalg.norm(est.low_rank_matrix_ - X_star) / np.linalg.norm(X_star)
    >>> bool(err < 0.2)
    True
    """

    def __init__(
        self,
        shape=None,
        rank=1,
        epsilon=1.0,
        delta="auto",
        solver="auto",
        alpha=1e-5,
        fit_intercept=False,
        clip_norm=0.05,
        data_norm=None,
        max_iter=None,
        batch_size=None,
        solver_params=None,
        accountant=None,
        random_state=None,
        verbose=0,
        secure_mode=False,
    ):
        self.shape = shape
        self.rank = rank
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
        self.secure_mode = secure_mode

    # -- parameters ---------------------------------------------------------
    def _validate_specific_params(self):
        shape = None if self.shape is None else _check_shape(self.shape)
        _check_rank(self.rank, shape)
        if self.delta == 0:
            raise ValueError(
                "DPMatrixSensing needs delta > 0: its per-example gradients are clipped "
                "in the L2 norm, which only Gaussian (delta > 0) solvers use."
            )

    def _loss_capabilities(self):
        return MatrixSensingLoss.capabilities

    # -- fit ----------------------------------------------------------------
    def _validate_data(self, X, y):
        return validate_data(
            self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32], y_numeric=True,
        )

    def _matrix_shape(self, n_features):
        """(p, q): the parameter, checked against the number of columns, or (d, 1)."""
        if self.shape is None:
            return (int(n_features), 1)
        shape = _check_shape(self.shape)
        if shape[0] * shape[1] != n_features:
            raise ValueError(
                f"X has {n_features} features, but shape={tuple(self.shape)} needs "
                f"p * q = {shape[0] * shape[1]}: each row must be a measurement matrix "
                "vectorised in C order (A.ravel())."
            )
        return shape

    def _public_loss(self, n_features, labels):
        shape = self._matrix_shape(n_features)
        rank = _check_rank(self.rank, shape)
        n_params = (shape[0] + shape[1]) * rank + int(self.fit_intercept)
        mask = np.ones(n_params, dtype=bool)
        if self.fit_intercept:
            mask[-1] = False
        return MatrixSensingLoss, {"shape": shape}, (n_params,), None, None, mask

    def _bind_loss(self, X, y, spec):
        X, y = self._validate_data(X, y)
        shape = self._matrix_shape(X.shape[1])
        self.shape_ = shape
        design = LinearDesign(X, False, self.data_norm)
        return MatrixSensingLoss(design, np.asarray(y, dtype=np.float64), shape,
                                 _check_rank(self.rank, shape),
                                 fit_intercept=self.fit_intercept,
                                 intercept_scale=_intercept_scale(shape, self.data_norm))

    def _initial_coef(self, loss, rng):
        # U = V = 0 is an exact saddle: start from small public random factors
        (p, q), rank = loss.shape, loss.rank
        U0, V0 = public_random_factors(rng, p, q, rank)
        return loss.pack(U0, V0, 0.0)

    def _set_coef(self, W, loss):
        U, V, c = loss.unpack(W)
        self.components_ = (U.copy(), V.copy())
        self.low_rank_matrix_ = U @ V.T
        self.coef_ = self.low_rank_matrix_.ravel()
        self.intercept_ = float(c)

    def fit(self, X, y):
        """Fit the factorisation privately; the whole privacy cost is charged first.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, p * q)
            Vectorised measurement matrices, one per row (C order).
        y : array-like of shape (n_samples,)
            Measurements.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._private_fit(X, y)

    def predict(self, X):
        """Predicted measurements ``<A_i, U V^T> + intercept_``.

        Rows are scaled to norm at most ``data_norm`` first, exactly as in
        ``fit``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, p * q)
            Vectorised measurement matrices, one per row (C order).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``X @ coef_ + intercept_`` on the norm-bounded rows. Computed
            from the released model alone: no privacy cost.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        design = LinearDesign(X, False, self.data_norm_)
        return design.decision(self.coef_) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # the solver's own word on a few hundred rows (its poor_on_few_rows)
        tags.regressor_tags.poor_score = self._solver_poor_score()
        return tags


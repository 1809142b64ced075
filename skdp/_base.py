"""PrivateEstimatorMixin: the fit skeleton shared by every skdp estimator.

``fit`` always runs in this order (see also the developers guide in the
documentation):

1. validate every parameter and solver option against its declared
   constraints (no data is read; a bad parameter costs nothing);
2. build the public :class:`~skdp.solvers.ProblemSpec` from parameters and
   metadata (n and the number of features; for classifiers the label set,
   public when given as ``classes=``) and let the solver *plan* once;
3. check the plan against the accountant: an exhausted budget raises
   :class:`~skdp.BudgetError` before the data is read;
4. validate the data (a malformed input raises and costs nothing) and bind
   the loss to it;
5. charge the accountant with the plan's mechanism (and the seed's key);
6. solve through :class:`~skdp.solvers.PrivateQueries` (noise from the
   fit's own stream; a query beyond the plan fails before it runs), check
   that what ran composes to no more than the charge, and store only
   released quantities.

A fit that fails at any step leaves the estimator exactly as it was.

Which accountant a fit is charged to: ``accountant`` if given; else the
innermost ``with accountant:`` block of the current thread or task; else the
accountant in force where this estimator (or the template it was cloned
from) was cloned or pickled, so the clones of a grid search or of
``cross_validate``, in threads or worker processes, are charged to the budget
in force where the search started; else the process default.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import is_classifier

from .validation import (
    AUTO_ALPHA_CAP,
    NONNEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    DELTA,
    RANDOM_STATE,
    Boolean,
    InstanceOf,
    Interval,
    resolve_alpha,
    resolve_delta,
    validate_params,
)
from ._seeding import noise_generator, seed_key
from ._dask import is_dask_collection
from .exceptions import (
    warn_if_delta_voids_guarantee,
    warn_if_seed_replays,
    warn_labels_read_from_y,
)
from .accounting import (
    BudgetAccountant,
    context_accountant,
    current_accountant,
    discretize,
    get_epsilon,
    secure_accounting,
)
from .accounting.release import SecureGenerator
from .penalties import PENALTIES, make_penalty
from .solvers import (
    FitProgress,
    PrivateQueries,
    ProblemSpec,
    auto_solver,
    available_solvers,
    get_solver,
    unmet_requirements,
)

__all__ = ["AccountedMixin", "PrivateEstimatorMixin"]

#: attribute holding the accountant in force where an estimator was cloned or pickled
_INHERITED = "_inherited_accountant"


def n_rows(X):
    """Number of rows from metadata only (no values are read), or None."""
    shape = getattr(X, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) >= 1 else None
    try:
        return len(X)
    except TypeError:
        return None


def n_columns(X):
    """Number of columns from metadata only (no values are read), or None."""
    shape = getattr(X, "shape", None)
    if shape is None:
        try:
            shape = np.asarray(X).shape  # a list or an array-like: its layout only
        except Exception:  # malformed input: data validation reports it
            return None
    return int(shape[1]) if len(shape) == 2 else None


class AccountedMixin:
    """Which accountant a charged fit goes to, and which noise stream it draws.

    Shared by every object whose ``fit`` is charged (the estimators, and the
    private transformers of :mod:`skdp.preprocessing`): it needs the
    parameters ``accountant`` and ``random_state``. See the module docstring
    for the rule that picks the accountant, which survives cloning and
    pickling.
    """

    def _accountant_in_force(self):
        """The accountant this estimator's fits are charged to (see the module doc)."""
        if self.accountant is not None:
            return self.accountant
        entered = context_accountant()
        if entered is not None:
            return entered
        inherited = self.__dict__.get(_INHERITED)
        return inherited if inherited is not None else current_accountant()

    def __sklearn_clone__(self):
        clone = super().__sklearn_clone__()
        if self.accountant is None:
            if context_accountant() is not None:
                # a search clones its template first in the caller's thread,
                # later from joblib's dispatch threads (no context there): the
                # template remembers the budget in force for those clones
                self.__dict__[_INHERITED] = context_accountant()
            setattr(clone, _INHERITED, self._accountant_in_force())
        return clone

    def __getstate__(self):
        state = super().__getstate__()
        if self.accountant is None and state.get(_INHERITED) is None:
            state = dict(state)
            state[_INHERITED] = self._accountant_in_force()
        return state

    def _noise_rng(self, seed_index):
        """The generator a charged fit draws its noise from.

        ``seed_index`` is the accountant's count of earlier spends with this
        seed (None for ``random_state=None``): fits charged to one
        accountant never share noise. With ``secure_mode=True`` a fresh
        :class:`~skdp.accounting.release.SecureGenerator`, whatever the seed.
        """
        if self._secure():
            return SecureGenerator()
        return noise_generator(self.random_state, seed_index)

    def _secure(self):
        """True when this object's fits run in secure mode (``secure_mode is True``)."""
        return getattr(self, "secure_mode", False) is True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # secure noise cannot be seeded: a fixed random_state does not fix the fit
        tags.non_deterministic = tags.non_deterministic or self._secure()
        return tags

    def _secure_seed_key(self, name, stacklevel):
        """The seed key of a fit: None in secure mode, whose noise no seed steers."""
        if not self._secure():
            return seed_key(self.random_state)
        if self.random_state is not None:
            warnings.warn(
                f"{name}: random_state is ignored with secure_mode=True: secure noise is "
                "drawn from the operating system's CSPRNG and cannot be seeded (nor can the "
                "fit's other randomness). Pass random_state=None to silence this warning.",
                UserWarning, stacklevel=stacklevel + 1)
        return None



class PrivateEstimatorMixin(AccountedMixin):
    """Common parameters, validation and the private fit skeleton.

    Subclasses define, from public quantities only:

    - ``_loss_capabilities()``: what the loss is, from the parameters;
    - ``_public_labels(y)``: the label set (None for regressors);
    - ``_public_loss(n_features, labels, intercept_scale=None)``: ``(loss
      class, loss parameters, coef_shape, n_outputs, row_bound, penalty
      mask)``, the row bound with the given value of the intercept feature
      (None: the loss's own; see :meth:`~skdp.solvers.Solver.intercept_feature`);

    and, on the data: ``_validate_data(X, y)``, ``_bind_loss(X, y, spec)``
    (validates the data, returns the loss bound to it) and
    ``_set_coef(coef, loss)``. Optional: ``_specific_constraints`` (declared
    like ``_common_constraints``), ``_validate_specific_params()`` and
    ``_initial_coef(loss, rng)`` (a public random start drawn after the
    charge). An estimator names no solver: every solver default is derived
    in the solver's ``plan`` from the public constants the loss reports
    (``ProblemSpec``, its ``stand_ins`` included).
    """

    _common_constraints = {
        "epsilon": [POSITIVE],
        "delta": DELTA,
        "solver": [InstanceOf(str, name="a str")],
        "alpha": [NONNEGATIVE],
        "fit_intercept": [Boolean],
        "clip_norm": [POSITIVE],
        "data_norm": [None, POSITIVE],
        "max_iter": [None, POSITIVE_INT],
        "batch_size": [None, POSITIVE_INT],
        "solver_params": [None, InstanceOf(dict, name="a dict")],
        "accountant": [None, InstanceOf(BudgetAccountant, name="a skdp.BudgetAccountant")],
        "random_state": RANDOM_STATE,
        "verbose": [Interval(Integral, 0, None, closed="left")],
        "secure_mode": [Boolean],
    }
    _specific_constraints = {}
    _constraint_hints = {
        "epsilon": " For a non-private model use the scikit-learn estimator instead.",
        "delta": " Use delta='auto' (min(1e-5, 1/(10 n_samples))), delta=0 for pure "
                 "epsilon-DP, or a value well below 1/n_samples.",
    }

    # -- parameters ---------------------------------------------------------
    def _validate_params(self):
        constraints = {**self._common_constraints, **self._specific_constraints}
        validate_params(type(self).__name__, self.get_params(deep=False), constraints,
                        hints=self._constraint_hints)
        self._validate_specific_params()

    def _validate_specific_params(self):
        """Estimator-specific checks beyond the declared constraints (override)."""

    def _check_dask_solver(self, solver):
        """Refuse dask input before the charge (estimators with a Dask back end override)."""
        raise TypeError(
            f"{type(self).__name__} does not accept dask input; pass a numpy array or a "
            "scipy sparse matrix (DPLogisticRegression and DPLinearSVC fit on dask arrays)."
        )

    def _initial_coef(self, loss, rng):
        """Public starting point drawn after the charge (override); None starts at 0."""
        return None

    def _public_labels(self, y):
        """The public label set (classifiers); None for regressors."""
        return None

    def _loss_capabilities(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _penalty(self, mask=None, n_samples=None):
        """The penalty object of ``penalty`` (ridge when the estimator has none), ``alpha``
        (``'auto'`` resolved from the public ``n_samples``; without it, its cap) and
        ``l1_ratio``."""
        name = getattr(self, "penalty", "l2")
        alpha = self.alpha
        if isinstance(alpha, str) and alpha == "auto":
            alpha = AUTO_ALPHA_CAP if n_samples is None else resolve_alpha(alpha, n_samples)
        alpha = alpha if isinstance(alpha, Real) else 0.0
        l1_ratio = getattr(self, "l1_ratio", 0.15)
        if not isinstance(l1_ratio, Real) or not 0 <= l1_ratio <= 1:
            l1_ratio = 0.15  # invalid: reported by fit
        if name is not None and name not in PENALTIES:  # invalid: reported by fit
            name = "l2"
        return make_penalty(name, float(alpha), mask, l1_ratio=float(l1_ratio))

    def _capabilities(self):
        """What the loss and the penalty offer solvers (see ``ProblemSpec.capabilities``)."""
        penalty = self._penalty().capabilities
        return frozenset(self._loss_capabilities()) | {f"penalty:{c}" for c in penalty}

    def _auto_solver_name(self, n_samples, n_features):
        """The solver ``solver='auto'`` takes: the registry's pick (public facts only)."""
        delta = self.delta
        facts = {
            "n_samples": n_samples,
            "n_params": (None if n_features is None
                         else int(n_features) + int(bool(self.fit_intercept))),
            "delta_positive": delta == "auto" or (isinstance(delta, Real) and delta > 0),
            "full_batch": getattr(self, "batch_size", None) is None,
            "row_bound": self.data_norm is not None,
        }
        return auto_solver(self._capabilities(), facts)

    def _solver_poor_score(self):
        """The chosen solver's own word on fits of a few hundred rows (``poor_score`` tags)."""
        if not isinstance(self.solver, str) or self.solver == "auto":
            return False
        try:
            solver = get_solver(self.solver)
        except ValueError:
            return False  # an unknown name is reported by fit
        return bool(solver.poor_on_few_rows(frozenset(self._loss_capabilities())))

    def _resolve_solver(self, n_samples=None, n_features=None):
        valid = available_solvers(self)
        name = (self._auto_solver_name(n_samples, n_features) if self.solver == "auto"
                else self.solver)
        if name not in valid:
            needs = ""
            try:
                missing = unmet_requirements(get_solver(name), self._capabilities())
                needs = f" (it needs {missing}, which these parameters do not offer)"
            except ValueError:
                pass
            raise ValueError(
                f"solver={self.solver!r} is not available for {type(self).__name__} "
                f"with these parameters{needs}; choose 'auto' or one of {valid}."
            )
        return name

    # -- the fit skeleton ---------------------------------------------------
    def _private_fit(self, X, y):
        saved = dict(self.__dict__)
        try:
            self._charged_fit(X, y)
        except BaseException:
            # a refused or failed fit leaves the estimator as it was
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise
        return self

    def _charged_fit(self, X, y):
        # secure mode: every tree is accounted as the discrete mechanisms it runs
        with secure_accounting(self._secure()):
            self._secure_or_float_fit(X, y)

    def _secure_or_float_fit(self, X, y):
        self._validate_params()
        name = self._resolve_solver()  # an unknown or unavailable solver is reported first
        accountant = self._accountant_in_force()
        key = self._secure_seed_key(type(self).__name__, stacklevel=6)
        n, n_features = n_rows(X), n_columns(X)
        if n is None or n_features is None or n < 1 or n_features < 1:
            # no usable metadata: data validation says what is wrong (costs nothing)
            X, y = self._validate_data(X, y)
            n, n_features = X.shape
        if self.solver == "auto":
            name = self._resolve_solver(n, n_features)  # the shape is public
        solver = get_solver(name)
        if is_dask_collection(X):
            self._check_dask_solver(solver)
        delta = resolve_delta(self.delta, n)  # what is charged and shown
        warn_if_delta_voids_guarantee(delta, n, type(self).__name__, stacklevel=6)
        if key is not None:
            warn_if_seed_replays(self.random_state, accountant, type(self).__name__,
                                 stacklevel=6)
        if is_classifier(self) and getattr(self, "classes", None) is None:
            warn_labels_read_from_y(type(self).__name__, stacklevel=6)
        spec = self._problem_spec(solver, n, n_features, self._public_labels(y))
        plan = solver.plan(spec)  # once: this plan is what is checked and charged
        solver.check_backend(spec, "dask" if is_dask_collection(X) else "memory")
        # secure mode charges what runs: the discrete form of the plan's tree
        # (a part with no secure form is refused here, before any charge)
        charged = discretize(plan.mechanism) if self._secure() else plan.mechanism
        accountant.check(self.epsilon, delta, mechanism=charged)
        loss = self._bind_loss(X, y, spec)
        if loss.n_samples != spec.n_samples or tuple(loss.coef_shape) != spec.coef_shape:
            raise ValueError(  # pragma: no cover - metadata and validated data disagree
                "X's validated shape differs from its metadata; pass a numpy array, a "
                "scipy sparse matrix or a pandas DataFrame."
            )
        record = accountant.charge(
            self.epsilon, delta, mechanism=charged,
            label=f"{type(self).__name__}(solver={name!r})", seed_key=key,
        )
        rng = self._noise_rng(record.seed_index)
        # the public random start (if any) has its own stream, apart from the noise
        start = self._initial_coef(loss, np.random.default_rng(rng.bit_generator.spawn(1)[0]))
        # progress lines (verbose >= 1): counts against the public plan and times only
        progress = FitProgress(type(self).__name__, plan.n_iter) if self.verbose else None
        queries = PrivateQueries(loss, plan, rng, start=start, progress=progress)
        result = solver.solve(queries, plan)
        ran = get_epsilon(queries.ran, delta) if queries.ran.mechanisms else 0.0
        if not ran <= float(self.epsilon) * (1 + 1e-6):  # pragma: no cover - enforced per query
            raise RuntimeError(
                f"solver {name!r} ran queries worth epsilon {ran:.6g}, more than the "
                f"{self.epsilon} charged; nothing is released. This is a bug in the solver."
            )
        self._set_coef(np.asarray(result.coef), loss)
        self.n_iter_ = int(result.n_iter)
        for attribute in self.__dict__.pop("_solver_attributes", ()):
            self.__dict__.pop(attribute, None)  # a previous fit's solver-specific attributes
        for attribute, value in result.attributes.items():
            setattr(self, attribute, value)  # released quantities (see SolverResult)
        self._solver_attributes = tuple(result.attributes)
        self.solver_ = name
        self.solver_params_ = dict(plan.spec.options)  # with the plan's derived defaults
        self.privacy_spent_ = (float(self.epsilon), delta)
        self.data_norm_ = self.data_norm
        if self.verbose:
            # ``ran`` is a function of the queries run, i.e. of released outputs
            print(
                f"[{type(self).__name__}] solver={name} n_iter={self.n_iter_} "
                f"epsilon={self.epsilon} delta={delta:.3g} (charged); the queries run "
                f"spent epsilon={ran:.4g}"
            )

    def _planned_mechanism(self, n_samples, n_features, labels):
        """The mechanism a fit on ``n_samples`` x ``n_features`` with these labels
        would be charged (public quantities only; the parameters are validated)."""
        self._validate_params()
        solver = get_solver(self._resolve_solver(n_samples, n_features))
        if not self._secure():
            return solver.plan(self._problem_spec(solver, n_samples, n_features,
                                                  labels)).mechanism
        with secure_accounting():
            return discretize(solver.plan(self._problem_spec(solver, n_samples, n_features,
                                                             labels)).mechanism)

    def _problem_spec(self, solver, n_samples, n_features, labels):
        """The public :class:`~skdp.solvers.ProblemSpec` of this fit (no data value)."""
        loss_cls, loss_params, coef_shape, n_outputs, row_bound, mask = self._public_loss(
            n_features, labels)
        options = solver.check_options(dict(self.solver_params or {}))
        intercept_scale = None  # the loss's own value of the intercept feature
        # None: a loss that sets it per fit (matrix sensing), which no solver overrides
        own = getattr(loss_cls, "intercept_scale", None)
        if getattr(self, "fit_intercept", False) and own is not None:
            own = float(own)
            chosen = float(solver.intercept_feature(own, coef_shape[0], options))
            if chosen != own:  # the solver's value: the row bound follows it
                intercept_scale = chosen
                loss_cls, loss_params, coef_shape, n_outputs, row_bound, mask = \
                    self._public_loss(n_features, labels, intercept_scale=chosen)
        capabilities, smoothness, initial_value = loss_cls.public_constants(
            row_bound, n_outputs, **loss_params)
        hessian_bound, hessian_lipschitz = loss_cls.hessian_constants(
            row_bound, n_outputs, **loss_params)
        stand_ins = loss_cls.stand_ins(row_bound, n_outputs,
                                       data_norm=self.data_norm,
                                       fit_intercept=bool(self.fit_intercept), **loss_params)
        return ProblemSpec(
            n_samples=int(n_samples), coef_shape=tuple(coef_shape),
            loss_capabilities=frozenset(capabilities), smoothness=smoothness,
            # F(0) bounds the objective at the start only when the start is 0
            initial_value=(initial_value if type(self)._initial_coef
                           is PrivateEstimatorMixin._initial_coef else None),
            penalty=self._penalty(mask, n_samples),
            clip_norm=float(self.clip_norm),
            data_norm=None if self.data_norm is None else float(self.data_norm),
            epsilon=float(self.epsilon), delta=resolve_delta(self.delta, n_samples),
            batch_size=self.batch_size, max_iter=self.max_iter, options=options,
            hessian_bound=hessian_bound, hessian_lipschitz=hessian_lipschitz,
            row_bound=None if row_bound is None else float(row_bound),
            stand_ins=dict(stand_ins), intercept_scale=intercept_scale,
        )

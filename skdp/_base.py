"""PrivateEstimatorMixin: the fit skeleton shared by every skdp estimator.

``fit`` always runs in this order (DESIGN.md section 2):

1. validate every parameter and solver option against its declared
   constraints (no data is read; a bad parameter costs nothing);
2. resolve the solver and let it *plan* the run from public quantities
   (n_samples and the shapes from metadata, epsilon, delta, max_iter,
   batch_size): the plan holds the calibrated mechanism tree;
3. check the plan against the accountant: an exhausted budget raises
   :class:`~skdp.BudgetError` before the data is read;
4. validate the data (a malformed input raises and costs nothing) and check
   the options against the problem's public constants;
5. charge the accountant with the plan's mechanism (and the seed's key);
6. solve with noise from the fit's own stream, then store only released
   quantities.

A fit that fails at any step leaves the estimator exactly as it was.

Which accountant a fit is charged to: ``accountant`` if given; else the
innermost ``with accountant:`` block of the current thread or task; else the
accountant in force where this estimator (or the template it was cloned
from) was cloned or pickled, so the clones of a grid search or of
``cross_validate``, in threads or worker processes, are charged to the budget
in force where the search started; else the process default.
"""

from numbers import Integral, Real

import numpy as np

from ._param_validation import (
    NONNEGATIVE,
    POSITIVE,
    POSITIVE_INT,
    RANDOM_STATE,
    Boolean,
    InstanceOf,
    Interval,
    validate_params,
)
from ._seeding import noise_generator, seed_key
from .accounting import BudgetAccountant, context_accountant, current_accountant
from .solvers import available_solvers, get_solver

__all__ = ["PrivateEstimatorMixin"]

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


class PrivateEstimatorMixin:
    """Common parameters, validation and the private fit skeleton.

    Subclasses define ``_auto_solver`` (the name 'auto' resolves to),
    ``_loss_capabilities()``, ``_build_problem(X, y)`` (validates data,
    returns a :class:`~skdp.solvers.Problem`) and ``_set_coef(coef)``;
    optionally ``_specific_constraints`` (declared like
    ``_common_constraints``), ``_validate_specific_params()`` (checks that
    need more than one parameter), ``_default_solver_params(solver_name,
    n_features)`` and ``_default_max_iter(solver_name)`` (per-estimator
    defaults; public constants only) and ``_initial_coef(problem, rng)``
    (a public random starting point).
    """

    _auto_solver = "gd"

    _common_constraints = {
        "epsilon": [POSITIVE],
        "delta": [Interval(Real, 0, 1, closed="left")],
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
    }
    _specific_constraints = {}
    _constraint_hints = {
        "epsilon": " For a non-private model use the scikit-learn estimator instead.",
        "delta": " Use delta=0 for pure epsilon-DP, or a value well below 1/n_samples "
                 "(e.g. 1e-5).",
    }

    # -- parameters ---------------------------------------------------------
    def _validate_params(self):
        constraints = {**self._common_constraints, **self._specific_constraints}
        validate_params(type(self).__name__, self.get_params(deep=False), constraints,
                        hints=self._constraint_hints)
        self._validate_specific_params()

    def _validate_specific_params(self):
        """Estimator-specific checks beyond the declared constraints (override)."""

    def _default_solver_params(self, solver_name, n_features=None):
        """Estimator-specific defaults of ``solver_name``'s options (override).

        Public constants only (never data-derived); ``solver_params`` given
        by the user take precedence key by key.
        """
        return {}

    def _default_max_iter(self, solver_name):
        """Iterations used when ``max_iter=None`` (override); None lets the solver choose."""
        return None

    def _initial_coef(self, problem, rng):
        """Public starting point drawn after the charge (override); None starts at 0."""
        return None

    def _loss_capabilities(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _resolve_solver(self):
        valid = available_solvers(self)
        name = self._auto_solver if self.solver == "auto" else self.solver
        if name not in valid:
            raise ValueError(
                f"solver={self.solver!r} is not available for {type(self).__name__} "
                f"with these parameters; choose 'auto' or one of {valid}."
            )
        return name

    # -- which accountant, which noise ------------------------------------
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
        accountant never share noise.
        """
        return noise_generator(self.random_state, seed_index)

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
        self._validate_params()
        name = self._resolve_solver()
        solver = get_solver(name)
        options = solver.check_options(
            {**self._default_solver_params(name, n_columns(X)), **(self.solver_params or {})}
        )
        max_iter = self.max_iter if self.max_iter is not None else self._default_max_iter(name)
        accountant = self._accountant_in_force()
        key = seed_key(self.random_state)

        def make_plan(n, **problem):
            return solver.plan(
                n, self.epsilon, self.delta,
                max_iter=max_iter, batch_size=self.batch_size, **problem, **options,
            )

        n_meta = n_rows(X)
        plan = None
        if n_meta is not None and n_meta >= 1:
            plan = make_plan(n_meta)
            accountant.check(self.epsilon, self.delta, mechanism=plan.mechanism)

        problem = self._build_problem(X, y)
        solver.check_problem(problem, options)
        if getattr(solver, "plan_uses_problem", False):
            # the exact per-step tree needs the problem's public constants
            # (smoothness, strong convexity, coefficient shape); it is still
            # charged before the solver reads the data
            plan = make_plan(problem.n_samples, problem=problem)
        elif plan is None or problem.n_samples != n_meta:
            plan = make_plan(problem.n_samples)
        record = accountant.charge(
            self.epsilon, self.delta, mechanism=plan.mechanism,
            label=f"{type(self).__name__}(solver={name!r})", seed_key=key,
        )
        rng = self._noise_rng(record.seed_index)
        init = self._initial_coef(problem, rng)
        if init is not None:
            problem.init = init
        result = solver.solve(
            problem, self.epsilon, self.delta, rng, plan=plan,
            verbose=self.verbose, **options,
        )
        self._set_coef(np.asarray(result.coef), problem)
        self.n_iter_ = int(result.n_iter)
        self.solver_ = name
        self.privacy_spent_ = (float(self.epsilon), float(self.delta))
        self.data_norm_ = self.data_norm
        if self.verbose:
            print(
                f"[{type(self).__name__}] solver={name} n_iter={self.n_iter_} "
                f"epsilon={self.epsilon} delta={self.delta}"
            )

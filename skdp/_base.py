"""PrivateEstimatorMixin: the fit skeleton shared by every skdp estimator.

``fit`` always runs in this order (DESIGN.md section 2):

1. validate the parameters (no data is read; a bad parameter costs nothing);
2. resolve the solver and its options, and let it *plan* the run from
   public quantities (n_samples, epsilon, delta, max_iter, batch_size):
   the plan holds the calibrated mechanism tree (solvers with
   ``plan_uses_problem = True`` are planned again after step 4 from the
   problem's public constants; both plans meet the same target);
3. check the plan against the accountant: an exhausted budget raises
   :class:`~skdp.BudgetError` before the data is read;
4. validate the data (a malformed input raises and costs nothing);
5. charge the accountant with the plan's mechanism;
6. solve, then store only released quantities.
"""

import numpy as np

from ._validation import (
    check_bool,
    check_delta,
    check_nonnegative,
    check_optional_int,
    check_positive,
    make_rng,
)
from .accounting import current_accountant
from .solvers import available_solvers, get_solver

__all__ = ["PrivateEstimatorMixin"]


def _n_rows(X):
    """Number of rows from metadata only (no values are read), or None."""
    shape = getattr(X, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) >= 1 else None
    try:
        return len(X)
    except TypeError:
        return None


class PrivateEstimatorMixin:
    """Common parameters, validation and the private fit skeleton.

    Subclasses define ``_auto_solver`` (the name 'auto' resolves to),
    ``_loss_capabilities()``, ``_validate_specific_params()``,
    ``_build_problem(X, y)`` (validates data, returns a
    :class:`~skdp.solvers.Problem`) and ``_set_coef(coef)``; optionally
    ``_default_solver_params(solver_name)`` and ``_default_max_iter(solver_name)``
    (per-estimator defaults for a solver; public constants only).
    """

    _auto_solver = "gd"

    # -- parameters ---------------------------------------------------------
    def _validate_common_params(self):
        check_positive(
            "epsilon", self.epsilon,
            hint=" For a non-private model use the scikit-learn estimator instead.",
        )
        check_delta(self.delta)
        check_nonnegative("alpha", self.alpha)
        check_bool("fit_intercept", self.fit_intercept)
        check_positive("clip_norm", self.clip_norm)
        check_positive("data_norm", self.data_norm, allow_none=True)
        check_optional_int("max_iter", self.max_iter)
        check_optional_int("batch_size", self.batch_size)
        if self.solver_params is not None and not isinstance(self.solver_params, dict):
            raise ValueError(
                f"solver_params must be None or a dict, got {type(self.solver_params).__name__}."
            )
        if self.accountant is not None and not hasattr(self.accountant, "spend"):
            raise ValueError(
                "accountant must be None or a skdp.BudgetAccountant, got "
                f"{type(self.accountant).__name__}."
            )
        if not isinstance(self.verbose, (int, np.integer)) or isinstance(self.verbose, bool):
            raise ValueError(f"verbose must be an int, got {self.verbose!r}.")
        make_rng(self.random_state)  # type check only; the generator is made in fit

    def _validate_specific_params(self):
        """Estimator-specific parameter checks (override)."""

    def _default_solver_params(self, solver_name):
        """Estimator-specific defaults of ``solver_name``'s options (override).

        Public constants only (never data-derived); ``solver_params`` given
        by the user take precedence key by key.
        """
        return {}

    def _default_max_iter(self, solver_name):
        """Iterations used when ``max_iter=None`` (override); None lets the solver choose."""
        return None

    def _loss_capabilities(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _resolve_solver(self):
        valid = available_solvers(self)
        name = self._auto_solver if self.solver == "auto" else self.solver
        if not isinstance(name, str) or name not in valid:
            raise ValueError(
                f"solver={self.solver!r} is not available for {type(self).__name__} "
                f"with these parameters; choose 'auto' or one of {valid}."
            )
        return name

    # -- the fit skeleton ---------------------------------------------------
    def _private_fit(self, X, y):
        self._validate_common_params()
        self._validate_specific_params()
        name = self._resolve_solver()
        solver = get_solver(name)
        options = solver.check_options(
            {**self._default_solver_params(name), **(self.solver_params or {})}
        )
        max_iter = self.max_iter if self.max_iter is not None else self._default_max_iter(name)
        accountant = self.accountant if self.accountant is not None else current_accountant()

        def make_plan(n, **problem):
            return solver.plan(
                n, self.epsilon, self.delta,
                max_iter=max_iter, batch_size=self.batch_size, **problem, **options,
            )

        n_meta = _n_rows(X)
        plan = None
        if n_meta is not None and n_meta >= 1:
            plan = make_plan(n_meta)
            accountant.check(self.epsilon, self.delta, mechanism=plan.mechanism)

        problem = self._build_problem(X, y)
        if getattr(solver, "plan_uses_problem", False):
            # the exact per-step tree needs the problem's public constants
            # (smoothness, strong convexity, coefficient shape); it is still
            # charged before the solver reads the data
            plan = make_plan(problem.n_samples, problem=problem)
        elif plan is None or problem.n_samples != n_meta:
            plan = make_plan(problem.n_samples)
        accountant.spend(
            self.epsilon, self.delta, mechanism=plan.mechanism,
            label=f"{type(self).__name__}(solver={name!r})",
        )
        rng = make_rng(self.random_state)
        result = solver.solve(
            problem, self.epsilon, self.delta, rng, plan=plan,
            verbose=self.verbose, **options,
        )
        self._set_coef(np.asarray(result.coef))
        self.n_iter_ = int(result.n_iter)
        self.solver_ = name
        self.privacy_spent_ = (float(self.epsilon), float(self.delta))
        if self.verbose:
            print(
                f"[{type(self).__name__}] solver={name} n_iter={self.n_iter_} "
                f"epsilon={self.epsilon} delta={self.delta}"
            )
        return self

"""Private solvers and the registry that names them.

Every solver has the shape ``solve(problem, epsilon, delta, rng, *, plan,
**options) -> SolverResult`` and a ``plan(n_samples, epsilon, delta, ...)``
that calibrates its mechanism tree from public quantities, so estimators
can charge the accountant before reading the data.
"""

from ._base import Plan, Problem, Solver, SolverResult
from ._registry import available_solvers, get_solver, register_solver, unregister_solver
from . import gd  # noqa: F401  (registers 'gd')
from . import accelerated  # noqa: F401  (registers 'heavy_ball', 'nesterov', 'multistage_nesterov')

__all__ = [
    "Plan",
    "Problem",
    "Solver",
    "SolverResult",
    "available_solvers",
    "get_solver",
    "register_solver",
    "unregister_solver",
]

"""Private solvers, the registry that names them, and the seam they use.

A solver is ``plan(spec) -> Plan`` (public quantities only) and
``solve(queries, plan) -> SolverResult``; it reaches the data only through
:class:`PrivateQueries`. See ``docs/developers.md``.
"""

from ._base import L2Penalty, Plan, ProblemSpec, Solver, SolverResult
from ._progress import FitProgress
from ._queries import PrivateBatch, PrivateDuals, PrivateQueries, PrivateShards, QueryBudgetError
from ._registry import (
    auto_solver,
    available_solvers,
    get_solver,
    register_solver,
    unmet_requirements,
    unregister_solver,
)
from . import gd  # noqa: F401  (registers 'gd')
from . import accelerated  # noqa: F401  (registers 'heavy_ball', 'nesterov', 'multistage_nesterov')
from . import line_search  # noqa: F401  (registers 'line_search')
from . import second_order  # noqa: F401  (registers 'second_order')
from . import dual_averaging  # noqa: F401  (registers 'dual_averaging')
from . import minimax  # noqa: F401  (registers 'rgda')
from . import preconditioned  # noqa: F401  (registers 'preconditioned_gd')

__all__ = [
    "FitProgress",
    "L2Penalty",
    "Plan",
    "PrivateBatch",
    "PrivateDuals",
    "PrivateQueries",
    "PrivateShards",
    "ProblemSpec",
    "QueryBudgetError",
    "Solver",
    "SolverResult",
    "auto_solver",
    "available_solvers",
    "get_solver",
    "register_solver",
    "unmet_requirements",
    "unregister_solver",
]

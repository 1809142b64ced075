"""skdp: differentially private estimators for scikit-learn."""

from .accounting import BudgetAccountant, BudgetError
from .linear_model import DPLogisticRegression

__version__ = "0.1.0"

__all__ = [
    "BudgetAccountant",
    "BudgetError",
    "DPLogisticRegression",
    "__version__",
]

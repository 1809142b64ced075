"""skdp: differentially private estimators for scikit-learn."""

from .accounting import BudgetAccountant, BudgetError
from .linear_model import DPLogisticRegression
from .matrix_sensing import DPMatrixSensing
from .svm import DPLinearSVC

__version__ = "0.1.0"

__all__ = [
    "BudgetAccountant",
    "BudgetError",
    "DPLogisticRegression",
    "DPLinearSVC",
    "DPMatrixSensing",
    "__version__",
]

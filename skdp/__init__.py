"""skdp: differentially private estimators for scikit-learn."""

from .accounting import BudgetAccountant, BudgetError
from .linear_model import DPLinearRegression, DPLogisticRegression
from .exceptions import PrivacyWarning
from .matrix_sensing import DPMatrixSensing, make_matrix_sensing
from .preprocessing import DPBoundsScaler
from .svm import DPLinearSVC

__version__ = "0.1.0"

__all__ = [
    "BudgetAccountant",
    "BudgetError",
    "DPBoundsScaler",
    "DPLinearRegression",
    "DPLogisticRegression",
    "DPLinearSVC",
    "DPMatrixSensing",
    "PrivacyWarning",
    "make_matrix_sensing",
    "__version__",
]

"""Testing utilities for skdp: the empirical privacy audit.

See :mod:`skdp.testing.audit` and ``docs/audit.md``.
"""

from .audit import (
    AuditResult,
    audit_estimator,
    audit_gaussian_mechanism,
    audit_scores,
    clopper_pearson,
    epsilon_lower_bound,
    gaussian_epsilon,
    gaussian_noise_multiplier,
    max_epsilon_lower_bound,
)

__all__ = [
    "AuditResult",
    "audit_estimator",
    "audit_gaussian_mechanism",
    "audit_scores",
    "clopper_pearson",
    "epsilon_lower_bound",
    "gaussian_epsilon",
    "gaussian_noise_multiplier",
    "max_epsilon_lower_bound",
]

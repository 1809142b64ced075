"""Privacy accounting: mechanism descriptions, RDP curves, calibration, budgets.

Describe what a private algorithm runs as a tree of mechanisms
(:class:`Gaussian`, :class:`Laplace`, :class:`PureDP`, :class:`ZCDP`,
:class:`SparseVector`, wrapped in :class:`PoissonSampled`,
:class:`Composed` and :class:`Repeated`), evaluate it with
:func:`get_epsilon` / :func:`get_rdp`, find the noise for a target budget
with :func:`calibrate`, and charge it to a :class:`BudgetAccountant`
(composition ``'basic'`` or ``'gaussian'``, both valid privacy filters).
Every noisy value is then produced by the release door, :func:`release`
(module :mod:`skdp.accounting.release`), which :func:`recording` can watch.

Neighbouring datasets are zero-out neighbours (Kairouz et al. 2021): one
record is replaced by a null record that contributes nothing; n is public, a
clipped sum has sensitivity ``clip_norm`` and Poisson-sampled accounting is
that of add/remove neighbours.
"""

from . import mechanisms
from .accountant import (
    BudgetAccountant,
    BudgetError,
    Spend,
    context_accountant,
    current_accountant,
    get_default_accountant,
)
from .calibrate import calibrate
from .discrete import DiscreteGaussian, DiscreteLaplace, discretize, secure_accounting
from .filter import PrivacyFilter, best_order
from .mechanisms import *  # noqa: F401,F403  (the mechanism classes, see mechanisms.__all__)
from .release import *  # noqa: F401,F403  (the release door, see release.__all__)
from .release import __all__ as _door_names
from .epsilon_delta import get_delta, get_epsilon
from .rdp import DEFAULT_ORDERS, get_rdp, rdp_to_epsilon

__all__ = [
    *mechanisms.__all__,
    "DiscreteGaussian",
    "DiscreteLaplace",
    "discretize",
    "secure_accounting",
    "get_epsilon",
    "get_delta",
    "get_rdp",
    "rdp_to_epsilon",
    "DEFAULT_ORDERS",
    "calibrate",
    "PrivacyFilter",
    "best_order",
    "BudgetAccountant",
    "BudgetError",
    "Spend",
    "context_accountant",
    "current_accountant",
    "get_default_accountant",
    *_door_names,
]

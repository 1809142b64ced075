"""Split one (epsilon, delta) budget between the charged steps of a pipeline.

Under ``BudgetAccountant(composition='gaussian')`` each Gaussian step is a
mu-Gaussian-DP release and the steps compose as ``mu^2 = sum_i mu_i^2``
(Dong, Roth & Su 2022). Giving each step a share of ``mu^2`` therefore
spends the whole budget, and each step gets more epsilon than its share of
a sum of epsilons would give it (two steps at shares 0.2 / 0.8 of a total
epsilon of 1 get 0.415 and 0.885, where basic composition splits 0.2 / 0.8).
"""

import math
import numbers

from .accounting.gdp import gdp_epsilon, gdp_mu_budget

__all__ = ["split_budget"]


def split_budget(epsilon, delta, shares):
    r"""Each step's epsilon when a Gaussian-DP budget is shared out by ``mu^2``.

    For a pipeline of Gaussian steps (:class:`DPBoundsScaler`,
    :class:`DPStandardScaler` with ``delta > 0``, the estimators' full-batch
    solvers) charged to ``BudgetAccountant(epsilon, delta,
    composition='gaussian')``: step ``i`` gets the epsilon, at ``delta``, of
    the Gaussian with :math:`\mu_i^2 = s_i \mu^2`, where :math:`\mu` is the
    largest whose Gaussian is ``(epsilon, delta)``-DP. Give each step that
    epsilon and ``delta``; the accountant then shows a total of at most
    ``epsilon`` at ``delta``. Under basic composition the same epsilons add
    up to more than ``epsilon``: use ``shares`` times ``epsilon`` there.

    Parameters
    ----------
    epsilon : float
        The pipeline's total epsilon, > 0.
    delta : float
        The accountant's delta, in (0, 1); each step is charged at it.
    shares : sequence of float
        Positive shares of ``mu^2``, summing to at most 1.

    Returns
    -------
    epsilons : tuple of float
        One epsilon per share, rounded down (never above the share's).

    Examples
    --------
    >>> from skdp.preprocessing import split_budget
    >>> [round(e, 3) for e in split_budget(1.0, 1e-5, (0.2, 0.8))]
    [0.415, 0.885]
    """
    if not (isinstance(epsilon, numbers.Real) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"split_budget: epsilon must be a finite number > 0, got {epsilon!r}.")
    if not (isinstance(delta, numbers.Real) and 0 < delta < 1):
        raise ValueError(f"split_budget: delta must be in (0, 1) (Gaussian-DP totals are "
                         f"quoted at a delta), got {delta!r}.")
    try:
        shares = [float(s) for s in shares]
    except (TypeError, ValueError):
        shares = []
    if not shares or not all(s > 0 for s in shares) or math.fsum(shares) > 1 + 1e-12:
        raise ValueError("split_budget: shares must be a non-empty sequence of positive "
                         "numbers summing to at most 1.")
    mu2 = gdp_mu_budget(float(epsilon), float(delta)) ** 2
    # a hair below each share keeps the composed total within the budget's slack
    return tuple(gdp_epsilon(s * mu2, float(delta)) * (1 - 1e-9) for s in shares)

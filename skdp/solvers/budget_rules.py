"""Rules the solvers share: step counts, step sizes and noise from public quantities.

The default step count of a budget (:func:`budget_max_iter`), the cap on the
rows a default run reads (:func:`work_capped_steps`), the zCDP parameter an
(epsilon, delta) budget affords (:func:`zcdp_rho`), the default step size
(:func:`default_learning_rate`) and the cached calibration of a run of
noisy steps (:func:`calibrated_noise_multiplier`). Every rule reads only
public quantities; the noise itself is always calibrated by the accountant.
"""

import numpy as np

from ..accounting import Repeated, calibrate, noise_mechanism
from ..accounting.discrete import calibration_cache

__all__ = ["STEPS_PER_RECORD", "MIN_BUDGET_ITER", "MAX_BUDGET_ITER", "MAX_DEFAULT_WORK",
           "GD_LEARNING_RATE_SCALE",
           "budget_max_iter", "calibrated_noise_multiplier", "default_learning_rate",
           "work_capped_steps", "zcdp_rho"]

#: Full-batch steps per record per unit of sqrt(rho), and the range of the rule.
STEPS_PER_RECORD = 0.3
MIN_BUDGET_ITER, MAX_BUDGET_ITER = 10, 500


#: gd's ``learning_rate='auto'`` is :func:`default_learning_rate` at this scale
#: (``4 / L`` for a weak penalty); rgda refreshes with gd's step
GD_LEARNING_RATE_SCALE = 4.0


def zcdp_rho(epsilon, delta):
    r"""The zCDP parameter :math:`\rho` an (epsilon, delta) budget affords.

    For ``delta > 0`` the largest :math:`\rho` with :math:`\rho +
    2\sqrt{\rho \log(1/\delta)} = \epsilon` (Bun & Steinke 2016, Prop. 1.3:
    :math:`\sqrt\rho = \sqrt{\log(1/\delta) + \epsilon} -
    \sqrt{\log(1/\delta)}`); for ``delta = 0``, :math:`\epsilon^2 / 2`
    (pure epsilon-DP implies it). Used only to size runs: the noise itself is
    always calibrated by the accountant.
    """
    if delta <= 0:
        return epsilon ** 2 / 2.0
    log_inv = np.log(1.0 / delta)
    return float((np.sqrt(log_inv + epsilon) - np.sqrt(log_inv)) ** 2)


def budget_max_iter(n_samples, epsilon, delta, step_reach=16.0):
    r"""Full-batch steps for ``max_iter=None``: :math:`0.3 n \sqrt{\rho} (16 / r)` in [10, 500].

    From public quantities only: n, epsilon, delta (through the zCDP
    :math:`\rho` they afford, :func:`zcdp_rho`) and ``step_reach`` :math:`r =
    \eta R^2`, how far one step of size :math:`\eta` can move a linear
    predictor on rows of norm at most R per unit of gradient (16 for
    logistic loss at gd's default step, 6 for the smoothed hinge with h =
    1.5: a shorter step needs proportionally more steps).

    With T full-batch steps the noise multiplier grows like
    :math:`\sqrt{T / (2\rho)}`, so each step's noise on the mean gradient is
    :math:`\sqrt{T/(2\rho)}\, C / n`: more steps make more progress but
    each is noisier, and the released average of the last half of the
    iterates (``average=0.5``) cancels part of the noise. The best T grows
    with n and with the budget. The constant 0.3 (``STEPS_PER_RECORD``) was
    chosen on validation splits of training data only; the cap of 500 steps
    because more steps cost time without gaining accuracy; below 10 steps gd
    makes no progress. The measurements: ``docs/solvers/gd.md`` ("Where the
    defaults come from").
    """
    sqrt_rho = np.sqrt(zcdp_rho(float(epsilon), float(delta)))
    return _clamp_steps(STEPS_PER_RECORD * int(n_samples) * sqrt_rho * 16.0 / float(step_reach))


#: The default step counts (``max_iter=None``) read at most this many rows in
#: all: a public cap on the work, binding from n = 100,000 for gd (its 500 full
#: passes) and from 50,000 for the accelerated solvers (their 1000).
#: Where n is that large each step's noise is small against the gradient and the
#: fit converges in few steps, as a non-private one does (docs/solvers/gd.md).
MAX_DEFAULT_WORK = 50_000_000


def work_capped_steps(steps, n_samples, rate=1.0, floor=10, passes=1):
    """``steps``, at most ``MAX_DEFAULT_WORK / (passes * rate * n)`` (never below ``floor``).

    A cap on the rows a default run reads, from public quantities (n, the
    sampling rate, the passes over a batch each step makes). Applied by the
    solvers' ``max_iter=None`` rules only.

    Parameters
    ----------
    steps : int
        The step count a solver's default rule chose.
    n_samples : int
        Number of records (public).
    rate : float, default=1.0
        Expected fraction of the records each step reads (Poisson batches).
    floor : int, default=10
        Fewest steps the cap leaves.
    passes : int, default=1
        Passes over a step's batch (2 for a line search: the gradient and the
        search's line).

    Returns
    -------
    int
        ``min(steps, max(floor, MAX_DEFAULT_WORK // (passes * rate * n)))``.
    """
    rows = max(1.0, float(passes) * float(rate) * float(n_samples))
    return int(min(int(steps), max(int(floor), int(MAX_DEFAULT_WORK // rows))))


def _clamp_steps(steps):
    return int(min(max(round(steps), MIN_BUDGET_ITER), MAX_BUDGET_ITER))


@calibration_cache(maxsize=256)
def calibrated_noise_multiplier(n_steps, rate, epsilon, delta):
    """Noise multiplier of ``n_steps`` (sampled) steps meeting (epsilon, delta).

    A pure function of public quantities, cached: a grid search re-plans the
    same run many times.
    """
    make = noise_mechanism(delta, rate)
    return calibrate(lambda z: Repeated(make(z), n_steps), epsilon, delta)


def default_learning_rate(spec, learning_rate, scale=1.0):
    r"""Resolve ``learning_rate='auto'`` from the public smoothness of the objective.

    The step is :math:`\eta = 1 / (L_\ell / c + \alpha)` with :math:`L_\ell`
    the loss's public smoothness, :math:`\alpha` the penalty's and ``c =
    scale``: ``c / L_\ell`` when the penalty is weak, and never more than
    ``1 / alpha``, so the penalty's contraction ``1 - \eta \alpha`` stays in
    [0, 1) for every penalty strength (a plain ``c / (L_\ell + \alpha)``
    diverges once ``c > 2``, e.g. ``alpha >= 1`` on unit-norm rows). A
    penalty that is not smooth is taken by its proximal operator, stable
    for every step: the step is then :math:`c / L_\ell`.
    """
    if learning_rate != "auto":
        return float(learning_rate)
    if spec.smoothness is None:
        raise ValueError(
            "learning_rate='auto' needs a public smoothness bound, which requires "
            "data_norm (a bound on the row norms) and a smooth loss; set data_norm, or "
            "pass solver_params={'learning_rate': <float>}."
        )
    penalty_smoothness = spec.penalty.smoothness or 0.0  # None: a proximal step
    return 1.0 / (spec.smoothness / scale + penalty_smoothness)

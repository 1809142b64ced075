r"""Noisy clipped gradient descent (DP-GD) and Poisson-sampled DP-SGD.

The baseline every paper on the solvers page of the documentation compares
with. Each step releases the sum of per-example gradients clipped to norm
``C`` plus noise,

.. math::

    \tilde g_t = \frac{1}{m}\Big(\sum_{i \in B_t} \mathrm{clip}_C(\nabla \ell_i(W_t))
                 + \xi_t\Big) + \alpha W_t, \qquad W_{t+1} = W_t - \eta \tilde g_t,

with ``B_t`` the whole data set (``m = n``) or a Poisson sample of rate
``q = batch_size / n`` (``m = q n``, the expected batch size, so the
normaliser is public). ``delta > 0``: clipping in L2 and
``xi_t ~ N(0, (z C)^2 I)``; the T steps form ``Repeated(Gaussian(z), T)``
(exactly one Gaussian mechanism, converted with the analytic Gaussian) or
``Repeated(PoissonSampled(q, Gaussian(z)), T)`` (RDP). ``delta = 0``:
clipping in L1 and Laplace noise of scale ``z C`` per coordinate, a pure
epsilon-DP run. In every case ``z`` comes from the accountant's
calibration for the target (epsilon, delta).

Privacy: (epsilon, delta)-DP with respect to zero-out neighbours (one record
replaced by a null record);
the number of records n is public.

References
----------
.. [1] Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.
.. [2] Bassily, Smith, Thakurta, "Private Empirical Risk Minimization:
   Efficient Algorithms and Tight Error Bounds", FOCS 2014.
"""


import numpy as np

from ..validation import POSITIVE, UNIT_INTERVAL_RIGHT_OPEN, StrOptions
from ..accounting import Repeated, calibrate, noise_mechanism
from ..accounting.discrete import calibration_cache
from ._base import Plan, Solver, SolverResult
from ._first_order import noisy_first_order
from ._registry import register_solver

__all__ = ["GradientDescent", "budget_max_iter", "default_learning_rate",
           "calibrated_noise_multiplier", "work_capped_steps", "zcdp_rho"]

#: Full-batch steps per record per unit of sqrt(rho), and the range of the rule.
STEPS_PER_RECORD = 0.3
MIN_BUDGET_ITER, MAX_BUDGET_ITER = 10, 500


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


class GradientDescent(Solver):
    """DP gradient descent; Poisson-sampled DP-SGD when ``batch_size`` is set.

    Options (``solver_params``)
    ---------------------------
    learning_rate : 'auto' or float, default='auto'
        Step size; 'auto' is ``1 / (L / 4 + alpha)`` with ``L`` the loss's
        public worst-case smoothness (from ``data_norm``), see
        :func:`default_learning_rate`. The worst case (curvature 1/4 at
        margin 0 along rows that are all aligned) is far from what real data
        attain, and clipped gradients are bounded by ``clip_norm``: the
        multiple 4 of ``1 / L`` is the largest that stayed stable (see
        ``docs/solvers/gd.md``).
        The ``alpha`` term keeps the penalty's contraction stable for every
        penalty strength.
    average : 'auto' or float in [0, 1), default='auto'
        Release the average of the last ``average`` fraction of iterates
        (post-processing of the noisy iterates: free). 0 releases the last.
        Averaging the last half cancels part of the noise once the iterates
        hover around the optimum (``docs/solvers/gd.md``).
        'auto' is 0.5 for smooth penalties and 0 for those taken by their
        proximal operator (L1, elastic net), whose exact zeros an average
        would lose.

    Steps
    -----
    ``max_iter=None`` takes :func:`budget_max_iter` steps on full batches
    with ``delta > 0``
    (from n, epsilon, delta and the step's reach ``learning_rate *
    row_bound**2``: between 10 and 500, more for larger data and budgets
    and for shorter steps); with ``delta = 0`` (linear composition) 100
    steps of logistic length (``100 * 16 / (learning_rate * row_bound**2)``);
    100 with Poisson minibatches (``batch_size``). Every one of these is then
    capped by :func:`work_capped_steps` (at most 50,000,000 rows read: 50
    full-batch steps on 1,000,000 rows, no change below 100,000).
    """

    name = "gd"
    paper = "baseline (Bassily et al. 2014; Abadi et al. 2016)"
    requires = frozenset({"gradient", ("penalty:smooth", "penalty:prox")})
    options = {"learning_rate": "auto", "average": "auto"}
    option_constraints = {
        "learning_rate": [StrOptions({"auto"}), POSITIVE],
        "average": [StrOptions({"auto"}), UNIT_INTERVAL_RIGHT_OPEN],
    }
    default_max_iter = 100
    learning_rate_scale = 4.0

    def plan(self, spec):
        """Calibrate one noise multiplier for the whole run; resolve the step."""
        rate = spec.sampling_rate
        lr = default_learning_rate(spec, spec.options["learning_rate"], self.learning_rate_scale)
        if spec.max_iter is not None:
            T = int(spec.max_iter)
        else:
            reach = 16.0 if spec.row_bound is None else lr * spec.row_bound ** 2
            if rate < 1:
                T = self.default_max_iter
            elif spec.delta == 0:
                # pure DP composes linearly (Laplace scale grows like T, not
                # sqrt T): the zCDP rule does not apply; 100 logistic-length steps
                T = _clamp_steps(self.default_max_iter * 16.0 / reach)
            else:
                T = budget_max_iter(spec.n_samples, spec.epsilon, spec.delta, reach)
            T = work_capped_steps(T, spec.n_samples, rate, floor=MIN_BUDGET_ITER)
        average = spec.options["average"]
        if average == "auto":
            average = 0.0 if spec.penalty.smoothness is None else 0.5
        z = calibrated_noise_multiplier(T, float(rate), float(spec.epsilon), float(spec.delta))
        return Plan(spec=spec, mechanism=Repeated(spec.noise(z), T), n_iter=T,
                    noise_multiplier=z, details={"learning_rate": lr, "average": average})

    def solve(self, queries, plan):
        """Run the planned noisy iterations and return the released iterate."""
        T = plan.n_iter
        coef = noisy_first_order(
            queries, plan, steps=np.full(T, plan.details["learning_rate"]),
            noise_multipliers=np.full(T, plan.noise_multiplier),
            average=plan.details["average"],
        )
        return SolverResult(coef=coef, n_iter=T)


register_solver(GradientDescent())

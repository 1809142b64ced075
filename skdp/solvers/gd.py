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
from ..accounting import Repeated
from ._base import Plan, Solver, SolverResult
from ._first_order import noisy_first_order
from ._registry import register_solver
from .budget_rules import (  # noqa: F401  (MAX_DEFAULT_WORK, zcdp_rho: public here as well)
    GD_LEARNING_RATE_SCALE,
    MAX_DEFAULT_WORK,
    MIN_BUDGET_ITER,
    _clamp_steps,
    budget_max_iter,
    calibrated_noise_multiplier,
    default_learning_rate,
    work_capped_steps,
    zcdp_rho,
)

__all__ = ["GradientDescent", "budget_max_iter", "default_learning_rate",
           "calibrated_noise_multiplier", "work_capped_steps", "zcdp_rho"]


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
        would lose; 0.5 where the step is the loss's stand-in (below).

    Where the loss has no smoothness bound (the hinge; the factored loss of
    matrix sensing) but reports a stand-in step (``ProblemSpec.stand_ins``),
    ``learning_rate='auto'`` is that step; where rows have no public bound
    and the loss reports the run length its stand-ins were measured for
    (``'iterations'``), ``max_iter=None`` runs that many steps.

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
    learning_rate_scale = GD_LEARNING_RATE_SCALE
    auto_priority = 0  # solver='auto''s fallback

    def plan(self, spec):
        """Calibrate one noise multiplier for the whole run; resolve the step."""
        if spec.smoothness is None and "step" in spec.stand_ins:
            # no smoothness bound: the loss's stand-in step, and the average of
            # the last half of the iterates (the subgradient method's output)
            spec = self.with_options(spec, {"learning_rate": spec.stand_ins["step"],
                                            "average": 0.5})
        rate = spec.sampling_rate
        lr = default_learning_rate(spec, spec.options["learning_rate"], self.learning_rate_scale)
        if spec.max_iter is not None:
            T = int(spec.max_iter)
        elif spec.row_bound is None and "iterations" in spec.stand_ins:
            T = int(spec.stand_ins["iterations"])  # no reach to size the run from
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

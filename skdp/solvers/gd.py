r"""Noisy clipped gradient descent (DP-GD) and Poisson-sampled DP-SGD.

The baseline every paper in ``papers/`` compares with. Each step releases
the sum of per-example gradients clipped to norm ``C`` plus noise,

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

import functools

import numpy as np

from .._param_validation import POSITIVE, UNIT_INTERVAL_RIGHT_OPEN, StrOptions
from ..accounting import Gaussian, Laplace, PoissonSampled, Repeated, calibrate
from ._base import Plan, Solver, SolverResult
from ._registry import register_solver

__all__ = ["GradientDescent", "noise_mechanism", "default_learning_rate", "calibrated_noise_multiplier"]


def noise_mechanism(delta, rate=1.0):
    """Per-step base mechanism factory ``z -> Mechanism`` (Gaussian or Laplace)."""
    base = Laplace if delta == 0 else Gaussian

    def make(z):
        mech = base(z)
        return mech if rate >= 1.0 else PoissonSampled(rate, mech)

    return make


@functools.lru_cache(maxsize=256)
def calibrated_noise_multiplier(n_steps, rate, epsilon, delta):
    """Noise multiplier of ``n_steps`` (sampled) steps meeting (epsilon, delta).

    A pure function of public quantities, cached: a grid search re-plans the
    same run many times.
    """
    make = noise_mechanism(delta, rate)
    return calibrate(lambda z: Repeated(make(z), n_steps), epsilon, delta)


def default_learning_rate(problem, learning_rate, scale=1.0):
    r"""Resolve ``learning_rate='auto'`` from the public smoothness of the objective.

    The step is :math:`\eta = 1 / (L_\ell / c + \alpha)` with :math:`L_\ell`
    the loss's public smoothness, :math:`\alpha` the penalty's and ``c =
    scale``: ``c / L_\ell`` when the penalty is weak, and never more than
    ``1 / alpha``, so the penalty's contraction ``1 - \eta \alpha`` stays in
    [0, 1) for every penalty strength (a plain ``c / (L_\ell + \alpha)``
    diverges once ``c > 2``, e.g. ``alpha >= 1`` on unit-norm rows).
    """
    if learning_rate != "auto":
        return float(learning_rate)
    L = problem.loss.smoothness()
    if L is None:
        raise ValueError(
            "learning_rate='auto' needs a public smoothness bound, which requires "
            "data_norm (a bound on the row norms) and a smooth loss; set data_norm, or "
            "pass solver_params={'learning_rate': <float>}."
        )
    return 1.0 / (L / scale + problem.alpha)


def sampling_rate(n_samples, batch_size):
    """Poisson sampling rate ``batch_size / n`` (1.0 for full batches)."""
    if batch_size is None or batch_size >= n_samples:
        return 1.0
    return batch_size / n_samples


class GradientDescent(Solver):
    """DP gradient descent; Poisson-sampled DP-SGD when ``batch_size`` is set.

    Options (``solver_params``)
    ---------------------------
    learning_rate : 'auto' or float, default='auto'
        Step size; 'auto' is ``1 / (L / 4 + alpha)`` with ``L`` the loss's
        public worst-case smoothness (from ``data_norm``), see
        :func:`default_learning_rate`. The worst case (curvature 1/4 at
        margin 0 along rows that are all aligned) is far from what real data
        attain, and clipped gradients are bounded by ``clip_norm``; 4/L was
        the largest stable multiple on Adult (1/L needs about 4x more
        iterations, hence 4x more noise per step, for the same progress).
        The ``alpha`` term keeps the penalty's contraction stable for every
        penalty strength.
    average : float in [0, 1), default=0.0
        Release the average of the last ``average`` fraction of iterates
        (post-processing of the noisy iterates: free). 0 releases the last.
    """

    name = "gd"
    paper = "baseline (Bassily et al. 2014; Abadi et al. 2016)"
    requires = frozenset({"gradient"})
    options = {"learning_rate": "auto", "average": 0.0}
    option_constraints = {
        "learning_rate": [StrOptions({"auto"}), POSITIVE],
        "average": [UNIT_INTERVAL_RIGHT_OPEN],
    }
    default_max_iter = 100
    learning_rate_scale = 4.0

    def plan(self, n_samples, epsilon, delta, *, max_iter=None, batch_size=None, **options):
        """Calibrate the per-step noise multiplier for the whole run."""
        T = int(max_iter) if max_iter is not None else self.default_max_iter
        rate = sampling_rate(n_samples, batch_size)
        make = noise_mechanism(delta, rate)
        z = calibrated_noise_multiplier(T, float(rate), float(epsilon), float(delta))
        return Plan(
            mechanism=Repeated(make(z), T),
            noise_multiplier=z,
            n_iter=T,
            details={"rate": rate, "norm": 1 if delta == 0 else 2},
        )

    def check_problem(self, problem, options):
        """The step must be known from public constants before the charge."""
        default_learning_rate(problem, options["learning_rate"], self.learning_rate_scale)

    def solve(self, problem, epsilon, delta, rng, *, plan, learning_rate="auto",
              average=0.0, verbose=0, **unused):
        """Run the planned noisy iterations and return the released iterate."""
        lr = default_learning_rate(problem, learning_rate, self.learning_rate_scale)
        n = problem.n_samples
        C = problem.clip_norm
        rate = plan.details["rate"]
        norm = plan.details["norm"]
        scale = plan.noise_multiplier * C
        m = rate * n
        T = plan.n_iter
        W = problem.initial_coef()
        avg_start = T - int(np.floor(average * T)) if average > 0 else T
        W_sum = np.zeros_like(W)
        n_avg = 0
        for t in range(T):
            idx = None if rate >= 1.0 else np.flatnonzero(rng.random(n) < rate)
            G = problem.loss.clipped_grad_sum(W, C, idx=idx, norm=norm)
            if norm == 2:
                G += rng.normal(0.0, scale, size=G.shape)
            else:
                G += rng.laplace(0.0, scale, size=G.shape)
            W = W - lr * (G / m + problem.penalty_grad(W))
            if t + 1 > avg_start:
                W_sum += W
                n_avg += 1
            if verbose > 1:
                print(f"[gd] iteration {t + 1}/{T}")
        if n_avg:
            W = W_sum / n_avg
        return SolverResult(coef=W, n_iter=T, cost=plan.mechanism)


register_solver(GradientDescent())

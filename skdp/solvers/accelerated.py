r"""DP accelerated gradient methods: heavy ball, Nesterov (NAG) and multistage NAG.

Paper 001 (Kuru, Birbil, Gürbüzbalaban, Yildirim 2022). Three solvers share
one loop over noisy clipped gradients of the problem

.. math::

    F(W) = \frac{1}{n} \sum_i \ell_i(W) + \frac{\alpha}{2} \|W_{pen}\|^2,
    \qquad \tilde g_t(V) = \frac{1}{m}\Big(\sum_{i \in B_t}
    \mathrm{clip}_C(\nabla \ell_i(V)) + \eta_t\Big) + \alpha V_{pen},

- ``heavy_ball`` (DP-HB, eq. 3.1):
  :math:`x_{t+1} = x_t - a \tilde g_t(x_t) + \beta (x_t - x_{t-1})`;
- ``nesterov`` (DP-NAG, eq. 4.1):
  :math:`z_t = (1 + \beta) x_t - \beta x_{t-1}`,
  :math:`x_{t+1} = z_t - a \tilde g_t(z_t)`;
- ``multistage_nesterov`` (DP-MASG, Sec. 4.2): NAG in stages of lengths
  (4.7), :math:`n_1 = \lceil \sqrt\kappa \ln\kappa \rceil`,
  :math:`n_k = 2^k \lceil \sqrt\kappa \ln 2^{p+2} \rceil`, step
  :math:`a^{(1)} = c/L`, :math:`a^{(k)} = c / (2^{2k} L)`, momentum restarted
  (:math:`x_{t-1} := x_t`) at the first step of every stage,

with :math:`a = c / L` and :math:`\beta = (1 - \sqrt{\mu a}) / (1 + \sqrt{\mu a})`.
``L = problem.smoothness()`` (from the public ``data_norm`` and ``alpha``)
and ``mu = problem.strong_convexity()`` (``alpha``) are public constants,
never estimated from the data. The released model is the last iterate.

Noise dividing and the choice of T
----------------------------------
Theorem 4.1 (4.8 for the stages) bounds the error after T steps as
:math:`E_T \le a_{T,0} E_0 + \sum_{t=1}^T a_{T,t} \, \mathbb{E}\|\eta_t/m\|^2 / 2`
with :math:`a_{T,t} = 2^{s_T - s_t} \prod_{i=t+1}^T (1 - \sqrt{\mu a_i})
\, a_t (1 + a_t L)`, :math:`a_{T,0} = 2^{s_T - 1} \prod_{i=1}^T (1 - \sqrt{\mu a_i})`
(:math:`s_t` the stage of step t; one stage for NAG). The per-step noise
levels minimise that bound for the privacy budget (``budget_split='optimal'``)
or are all equal (``'uniform'``). When ``max_iter`` is None, T is the
minimiser over :math:`1 \le T \le` ``max_iter_cap`` of the resulting bound
with :math:`E_0` = ``initial_gap`` (Remark 4.1); every quantity in it is
public, so the choice costs no privacy. The default ``initial_gap='auto'``
is a public *bound*, not a guess: from :math:`x_0 = 0` every margin is 0
and the penalty vanishes, so :math:`F(0)` is the loss at margin 0 whatever
the data (binary logistic :math:`\log 2`, multinomial :math:`\log K`,
hinge and squared hinge 1, the smoothed hinge's value at 0), and the losses
are non-negative, so :math:`E_0 = F(0) - F^* \le F(0)`
(:func:`public_initial_gap`; 1 where no such constant is known, e.g. matrix
sensing). The paper's :math:`E_0 = 10` was for its start
:math:`x_0 = 10 \cdot \mathbf 1` and picks 2-3 times more steps on Adult,
for a worse model.

**Defaults, measured on Adult** (unit-norm rows, alpha = 1e-3, delta =
1e-5, mean excess empirical risk over 10 seeds at epsilon 0.1 / 0.5 / 1;
``gd`` at its defaults: 0.0205 / 0.00214 / 0.00140). The release is the
last iterate, the step is 1/L and the split optimal:

- ``initial_gap='auto'`` (:math:`E_0 = \log 2` instead of 1) moves T from
  52 / 167 / 222 to 42 / 151 / 206: 0.0264 / 0.00307 / 0.00101 (was
  0.0333 / 0.00308 / 0.00103).
- Averaging the last 25 / 50 / 75 % of the iterates (free post-processing)
  is worse except at epsilon 0.1: the optimal split puts the precision on
  the last steps, so earlier iterates add noise (epsilon 1: 0.00138 /
  0.00201 / 0.00311; epsilon 0.5: 0.0040 / 0.0052 / 0.0063). Weighting
  the average by the steps' noise precision does not help either.
- A larger step c/L (Theorem 4.1 needs c <= 1) with T by the bound: c = 2
  gives 0.0205 / 0.00314 / 0.00102, c = 4 gives 0.0197 / 0.0045 /
  0.0032; no c wins at every epsilon, so c = 1 keeps the bound valid.
- At epsilon 0.5 no variant tried beats gd: c in {0.5, 1, 2, 4}, T from
  40 to 400, split powers 0, 1/4, 1/2, tail and precision-weighted
  averages; best 0.0023 with the optimal split (c = 2, T = 40-50) and
  0.0022 with the uniform split averaged over all 200 iterates. Both
  methods are at the privacy-noise floor, where momentum amplifies the
  noise of the last steps as much as it speeds up the bias.

**Pure DP, delta = 0 (the paper).** Per-example gradients are clipped in
the L1 norm to C, so the gradient sum has L1 sensitivity C under add/remove
neighbours (skdp's convention; the paper's replace-one relation gives
:math:`S_1 = 2C`, so the paper's noise is ours with ``clip_norm`` =
:math:`S_1`). Each coordinate of :math:`\eta_t` is Laplace with scale
:math:`b_t = C / \varepsilon_t` (variance :math:`2 b_t^2`; scale b, not
:math:`b/\sqrt 2`), an :math:`\varepsilon_t`-DP step, and basic composition
gives :math:`\sum_t \varepsilon_t = \varepsilon`. Minimising
:math:`\sum_t a_{T,t} b_t^2` under that constraint (Prop. 4.2) gives

.. math::

    \varepsilon_t = \varepsilon \, a_{T,t}^{1/3} / \textstyle\sum_j a_{T,j}^{1/3},
    \qquad E_T \le a_{T,0} E_0 + \frac{d C^2}{n^2 \varepsilon^2}
    \Big(\sum_j a_{T,j}^{1/3}\Big)^3 \quad (4.6).

The uniform split has :math:`\varepsilon_t = \varepsilon / T` and noise term
:math:`\frac{d C^2}{n^2\varepsilon^2} T^2 \sum_j a_{T,j}`. The run is the
mechanism ``Composed([Laplace(1 / eps_t) for t])``.

**Gaussian, delta > 0 (derived here).** Per-example gradients are clipped
in L2 to C and :math:`\eta_t \sim \mathcal N(0, z_t^2 C^2 I)`: step t is
:math:`\rho_t`-zCDP with :math:`\rho_t = 1 / (2 z_t^2)`. A composition of
Gaussian mechanisms is *exactly* one Gaussian mechanism with
:math:`z_{\mathrm{eff}}^{-2} = \sum_t z_t^{-2}` (the privacy-loss variables
are Gaussian and add), so every split with the same
:math:`\sum_t z_t^{-2}` has the same privacy profile, under zCDP, RDP or
the exact (analytic Gaussian) conversion alike. The bound's noise term is
:math:`\sum_t a_{T,t} d z_t^2 C^2 / (2 n^2)`; minimising
:math:`\sum_t a_{T,t} z_t^2` subject to
:math:`\sum_t z_t^{-2} = z_{\mathrm{eff}}^{-2}` (Lagrange:
:math:`a_{T,t} z_t^4 = \lambda`) gives

.. math::

    z_t^{-2} \propto \sqrt{a_{T,t}} \;\; (\rho_t = \rho \sqrt{a_{T,t}} /
    \textstyle\sum_j \sqrt{a_{T,j}}), \qquad
    z_t = z_{\mathrm{eff}} \Big(\sum_j \sqrt{a_{T,j}}\Big)^{1/2} a_{T,t}^{-1/4},

    E_T \le a_{T,0} E_0 + \frac{d C^2 z_{\mathrm{eff}}^2}{2 n^2}
    \Big(\sum_j \sqrt{a_{T,j}}\Big)^2,

against :math:`\frac{d C^2 z_{\mathrm{eff}}^2}{2 n^2} T \sum_j a_{T,j}` for
the uniform split :math:`z_t = z_{\mathrm{eff}} \sqrt T` (the optimal one is
never worse, by Cauchy-Schwarz). The power is 1/2 instead of 1/3: the
noise precision, not its scale, adds up. The solver fixes the relative
weights :math:`w_t = a_{T,t}^{-1/4}` and the accountant calibrates the
common factor z of ``Composed([Gaussian(z * w_t) for t])`` to the target
(epsilon, delta), converted exactly through :math:`z_{\mathrm{eff}}`.

**Poisson subsampling** (``batch_size``, rate ``q``, normaliser
``m = q n``). Pure DP follows Remark 4.2: the amplified per-step budgets
:math:`\varepsilon'_t` are split as above and each step's Laplace scale
inverts :math:`\varepsilon'_t = \log(1 + q (e^{\varepsilon_t} - 1))`; the
run is ``Composed([PoissonSampled(q, Laplace(1 / eps_t))])``. Gaussian:
the same relative weights, the common factor calibrated by RDP on
``Composed([PoissonSampled(q, Gaussian(z * w_t))])``. T is chosen with the
full-batch bound plus the sampling variance :math:`(1 - q) C^2 / (q n)`
(a heuristic, as in the paper).

Planning
--------
``plan`` accepts the public constants through ``problem=`` (the solvers set
``plan_uses_problem = True``; only
``smoothness()``, ``strong_convexity()``, ``coef_shape``, ``clip_norm`` and
``n_samples`` are read, never the data); the plan then holds the exact
per-step tree. Without it (the estimator skeleton plans before it has a
problem) a full-batch plan charges a mechanism that dominates every split
(delta > 0: ``Gaussian(z_eff)``, privacy-equivalent to any Gaussian
composition with that :math:`z_{\mathrm{eff}}`; delta = 0:
``Laplace(1 / epsilon)``, whose RDP curve, convex in epsilon and 0 at 0, is
superadditive, so it bounds every Laplace composition with budgets summing
to epsilon) and ``solve`` fixes T and the split from the problem's public
constants; a subsampled plan without the problem falls back to the uniform
split with T = ``max_iter`` or 100.

Privacy: epsilon-DP (delta = 0) or (epsilon, delta)-DP with respect to
zero-out neighbours (one record replaced by a null record); the number of
records n is public.

References
----------
.. [1] Y. Kuru, S. I. Birbil, M. Gürbüzbalaban, S. Yildirim, "Differentially
   Private Accelerated Optimization Algorithms", SIAM J. Optim. 32(2), 2022.
.. [2] N. S. Aybat, A. Fallah, M. Gürbüzbalaban, A. Ozdaglar, "A Universally
   Optimal Multistage Accelerated Stochastic Gradient Method", NeurIPS 2019.
.. [3] M. Bun, T. Steinke, "Concentrated Differential Privacy:
   Simplifications, Extensions, and Lower Bounds", TCC 2016.
"""

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ..accounting import Composed, Gaussian, Laplace, Repeated, calibrate, get_epsilon
from ..losses import BinaryLogisticLoss, MultinomialLogisticLoss
from ..losses.hinge import _MarginLoss
from .._param_validation import POSITIVE, POSITIVE_INT, StrOptions
from ._base import Plan, Solver, SolverResult
from ._registry import register_solver
from .gd import noise_mechanism, sampling_rate

__all__ = [
    "HeavyBall",
    "Nesterov",
    "MultistageNesterov",
    "accelerated_schedule",
    "bound_curve",
    "log_weights",
    "public_initial_gap",
    "split_weights",
]

_SPLITS = ("uniform", "optimal")
_SAFETY = 1.0 + 1e-12  # relative margin on noise scales computed in closed form
_LEVELS = 48  # most distinct noise levels of a subsampled Gaussian run (RDP cost)


def _tree(make, zs):
    """``Composed`` of the per-step mechanisms, consecutive equal levels as ``Repeated``."""
    parts = []
    start = 0
    for t in range(1, len(zs) + 1):
        if t == len(zs) or zs[t] != zs[start]:
            mech = make(float(zs[start]))
            parts.append(mech if t - start == 1 else Repeated(mech, t - start))
            start = t
    return Composed(parts)


# -- schedules and bounds (public quantities only) ----------------------------


@dataclass(frozen=True)
class _Schedule:
    """Step sizes, momenta, stages and restarts of the first ``len(steps)`` steps."""

    steps: np.ndarray
    momenta: np.ndarray
    stages: np.ndarray
    restarts: np.ndarray

    def truncate(self, T):
        return _Schedule(self.steps[:T], self.momenta[:T], self.stages[:T], self.restarts[:T])


def _masg_stage_lengths(kappa, first_stage_length, p, total):
    """Stage lengths (4.7) until they cover ``total`` steps (the last is truncated later)."""
    root = math.sqrt(kappa)
    if first_stage_length is None:
        n1 = math.ceil(root * math.log(kappa)) if kappa > 1 else 1
    else:
        n1 = int(first_stage_length)
    lengths = [max(1, n1)]
    base = max(1, math.ceil(root * math.log(2.0 ** (p + 2))))
    k = 2
    while sum(lengths) < total:
        lengths.append(2**k * base)
        k += 1
    return lengths


def accelerated_schedule(method, T, L, mu, step, *, first_stage_length=None, stage_p=1):
    """Step sizes, momenta, stages and momentum restarts of ``T`` steps.

    Parameters
    ----------
    method : {'heavy_ball', 'nesterov', 'multistage_nesterov'}
    T : int
        Number of steps.
    L, mu : float
        Public smoothness and strong convexity (``mu > 0``).
    step : float
        Step size of the (first) stage, ``c / L``.
    first_stage_length : int or None
        MASG stage-1 length; None is ``ceil(sqrt(kappa) ln kappa)``.
    stage_p : int
        The ``p`` of (4.7) (stage lengths ``2^k ceil(sqrt(kappa) ln 2^(p+2))``).

    Returns
    -------
    schedule : _Schedule
    """
    if method == "multistage_nesterov":
        kappa = L / mu
        lengths = _masg_stage_lengths(kappa, first_stage_length, stage_p, T)
        stages = np.concatenate([np.full(n, k + 1) for k, n in enumerate(lengths)])[:T]
        # stage 1: c / L; stage k >= 2: c / (2^(2k) L)   (4.7, scaled by c)
        steps = np.where(stages == 1, step, step / 4.0 ** stages)
        restarts = np.zeros(T, dtype=bool)
        restarts[1:] = stages[1:] != stages[:-1]
    else:
        stages = np.ones(T, dtype=int)
        steps = np.full(T, float(step))
        restarts = np.zeros(T, dtype=bool)
    root = _root(mu, steps)
    momenta = (1.0 - root) / (1.0 + root)
    return _Schedule(steps=steps, momenta=momenta, stages=stages, restarts=restarts)


def _root(mu, steps):
    # sqrt(mu a) <= 1 when a <= 1 / L <= 1 / mu (Theorem 4.1); capped for larger steps
    return np.minimum(np.sqrt(mu * np.asarray(steps, dtype=float)), 0.999)


def _log_terms(schedule, L, mu):
    """Per-step log contraction ``log q_t`` and log gain ``log a_t (1 + a_t L)``."""
    steps = schedule.steps
    log_q = np.log1p(-_root(mu, steps))
    log_k = np.log(steps) + np.log1p(steps * L)
    return log_q, log_k


def log_weights(schedule, L, mu):
    """``log a_{T,0}`` and ``log a_{T,t}``, t = 1..T, of bound (4.3) / (4.8).

    Returns
    -------
    log_a0 : float
    log_a : ndarray of shape (T,)
    """
    log_q, log_k = _log_terms(schedule, L, mu)
    s = schedule.stages
    ln2 = math.log(2.0)
    # sum_{i=t+1}^T log q_i for t = 1..T
    tail = np.concatenate([np.cumsum(log_q[::-1])[::-1][1:], [0.0]])
    log_a = (s[-1] - s) * ln2 + tail + log_k
    log_a0 = (s[-1] - 1) * ln2 + float(np.sum(log_q))
    return log_a0, log_a


def split_weights(log_a, delta, split):
    """Relative per-step privacy shares (summing to 1) of a budget split.

    ``delta == 0``: shares of epsilon, proportional to ``a_t^(1/3)`` (4.5).
    ``delta > 0``: shares of the zCDP budget rho (of the noise precision
    ``1 / z_t^2``), proportional to ``a_t^(1/2)``. ``'uniform'``: ``1 / T``.
    """
    T = len(log_a)
    if split == "uniform":
        return np.full(T, 1.0 / T)
    power = 1.0 / 3.0 if delta == 0 else 0.5
    x = power * np.asarray(log_a)
    w = np.exp(x - x.max())
    return w / w.sum()


def public_initial_gap(problem):
    r"""A public upper bound on :math:`E_0 = F(x_0) - F^*`, or None.

    At :math:`x_0 = 0` every margin is 0 and the penalty vanishes, so
    :math:`F(0)` is the loss at margin 0, whatever the data: :math:`\log 2`
    for binary logistic, :math:`\log K` for multinomial over K classes, the
    margin loss at 0 (per one-vs-rest column) for the hinge family (1 for
    hinge and squared hinge, :math:`1 - h/2` or :math:`1 / (2h)` for the
    smoothed hinge of width h <= 1 or > 1). These
    losses and the L2 penalty are non-negative, so :math:`F^* \ge 0` and
    :math:`E_0 \le F(0)`. Only the loss's type, its public parameters and
    the coefficient shape are read (never the data); a loss may also give
    the constant itself as ``value_at_zero``. None when the start is not 0
    or the loss is unknown (matrix sensing).
    """
    if np.any(problem.initial_coef() != 0):
        return None
    loss = problem.loss
    shape = tuple(problem.coef_shape)
    value = getattr(loss, "value_at_zero", None)
    if callable(value):
        value = value()
    if value is None:
        if isinstance(loss, BinaryLogisticLoss):
            value = math.log(2.0)
        elif isinstance(loss, MultinomialLogisticLoss):
            value = math.log(shape[-1])
        elif isinstance(loss, _MarginLoss):
            columns = shape[1] if len(shape) == 2 else 1
            value = columns * float(loss._loss(np.zeros(1))[0])  # a function of 0 only
    if value is None or not np.isfinite(value) or value <= 0:
        return None
    return float(value)


def _initial_gap(problem, option):
    """``initial_gap`` option resolved: 'auto' is :func:`public_initial_gap` or 1."""
    if not (isinstance(option, str) and option == "auto"):
        return float(option)
    gap = public_initial_gap(problem)
    return 1.0 if gap is None else gap


def bound_curve(schedule, L, mu, *, n_params, n_samples, clip_norm, epsilon, delta,
                split, initial_gap, z_eff=None, rate=1.0):
    """Bound (4.6) (or its Gaussian / uniform analogue) for every ``T' <= len(schedule)``.

    Parameters
    ----------
    schedule : _Schedule
        Schedule of the longest run; shorter runs are its prefixes.
    L, mu : float
        Public smoothness and strong convexity.
    n_params, n_samples : int
        Dimension d and number of records n.
    clip_norm : float
        Sensitivity C of one gradient sum.
    epsilon, delta : float
        Target budget (delta = 0: Laplace, else Gaussian).
    split : {'uniform', 'optimal'}
    initial_gap : float
        Guess of :math:`E_0 = F(x_0) - F^*`.
    z_eff : float or None
        Noise multiplier of the single Gaussian equivalent to the run
        (delta > 0 only).
    rate : float
        Poisson sampling rate; adds the sampling variance ``(1 - q) C^2 / (q n)``.

    Returns
    -------
    bound : ndarray of shape (len(schedule),)
        ``bound[T' - 1]`` is the bound after ``T'`` steps.
    """
    log_q, log_k = _log_terms(schedule, L, mu)
    s = schedule.stages
    Tmax = len(log_q)
    ln2 = math.log(2.0)
    P = np.cumsum(log_q)                      # P_T = sum_{i<=T} log q_i
    lead = s * ln2 + P                         # log a_{T,j} = lead_T + u_j
    u = -s * ln2 - P + log_k
    log_a0 = (s - 1) * ln2 + P
    counts = np.arange(1, Tmax + 1, dtype=float)
    log_sum_a = lead + np.logaddexp.accumulate(u)
    if delta == 0:
        scale = n_params * clip_norm**2 / (n_samples**2 * epsilon**2)
        if split == "optimal":
            log_phi = 3.0 * (lead / 3.0 + np.logaddexp.accumulate(u / 3.0))
        else:
            log_phi = 2.0 * np.log(counts) + log_sum_a
    else:
        scale = n_params * clip_norm**2 * z_eff**2 / (2.0 * n_samples**2)
        if split == "optimal":
            log_phi = 2.0 * (lead / 2.0 + np.logaddexp.accumulate(u / 2.0))
        else:
            log_phi = np.log(counts) + log_sum_a
    bound = initial_gap * np.exp(log_a0) + scale * np.exp(log_phi)
    if rate < 1.0:
        sampling_var = (1.0 - rate) * clip_norm**2 / (rate * n_samples)
        bound = bound + 0.5 * sampling_var * np.exp(log_sum_a)
    return bound


# -- the solvers ---------------------------------------------------------------


_COMMON_OPTIONS = {
    "learning_rate": "auto",
    "step_scale": 1.0,
    "initial_gap": "auto",
    "max_iter_cap": 1000,
}
_COMMON_CONSTRAINTS = {
    "learning_rate": [StrOptions({"auto"}), POSITIVE],
    "step_scale": [POSITIVE],
    "initial_gap": [StrOptions({"auto"}), POSITIVE],
    "max_iter_cap": [POSITIVE_INT],
    "budget_split": [StrOptions(_SPLITS)],
    "first_stage_length": [None, POSITIVE_INT],
    "stage_p": [POSITIVE_INT],
}


class _Accelerated(Solver):
    """Shared planning and loop of the paper-001 solvers (see the module docstring)."""

    requires = frozenset({"gradient", "smooth"})
    option_constraints = _COMMON_CONSTRAINTS
    paper = ("001: Kuru, Birbil, Gürbüzbalaban, Yildirim, 'Differentially Private "
             "Accelerated Optimization Algorithms', SIAM J. Optim. 2022")
    method = None
    default_max_iter = 100  # subsampled runs planned without the problem
    plan_uses_problem = True  # plan(..., problem=) gives the exact per-step tree

    # -- public constants --------------------------------------------------
    def _constants(self, problem, options):
        """``(L, mu, step)`` from public quantities; clear errors when missing."""
        mu = problem.strong_convexity()
        if mu is None or not mu > 0:
            raise ValueError(
                f"solver {self.name!r} needs a strongly convex objective: set alpha > 0 "
                f"(got strong convexity {mu!r})."
            )
        L = problem.smoothness()
        lr = options["learning_rate"]
        if L is None:
            if lr == "auto":
                raise ValueError(
                    f"solver {self.name!r} needs a public smoothness bound L (step c / L, "
                    "noise split, choice of T), which requires data_norm (a bound on the "
                    "row norms); set data_norm, or pass solver_params={'learning_rate': "
                    "<float>} to use the given step with L = 1 / learning_rate."
                )
            step = float(lr)
            L = 1.0 / step
        else:
            L = float(L)
            step = float(options["step_scale"]) / L if lr == "auto" else float(lr)
        if mu >= L:
            L = float(mu)  # a bound below mu is impossible; keep the weights finite
        return L, float(mu), float(step)

    def _check(self, options):
        return self.check_options(options)

    def _schedule(self, T, L, mu, step, options):
        extra = {}
        if self.method == "multistage_nesterov":
            extra = {"first_stage_length": options["first_stage_length"],
                     "stage_p": options["stage_p"]}
        return accelerated_schedule(self.method, T, L, mu, step, **extra)

    # -- planning ----------------------------------------------------------
    def plan(self, n_samples, epsilon, delta, *, max_iter=None, batch_size=None,
             problem=None, **options):
        """Calibrate the run from public quantities.

        Parameters
        ----------
        n_samples : int
        epsilon, delta : float
        max_iter : int or None
            Number of steps; None chooses T by the bound (needs ``problem``
            here or in ``solve``).
        batch_size : int or None
            Expected Poisson batch size; None for full batches.
        problem : Problem or None
            Read for its public constants only (smoothness, strong
            convexity, coefficient shape, clip norm).
        **options
            ``solver_params``.

        Returns
        -------
        plan : Plan
        """
        options = self._check(options)
        rate = sampling_rate(n_samples, batch_size)
        norm = 1 if delta == 0 else 2
        if problem is not None:
            return self._exact_plan(problem, n_samples, epsilon, delta, max_iter, rate, options)
        if rate < 1.0:
            T = int(max_iter) if max_iter is not None else self.default_max_iter
            if options["budget_split"] != "uniform" or max_iter is None:
                warnings.warn(
                    f"solver {self.name!r} with batch_size planned without the problem's "
                    f"public constants: using the uniform budget split and T = {T}.",
                    UserWarning, stacklevel=2,
                )
            make = noise_mechanism(delta, rate)
            z = calibrate(lambda z: Repeated(make(z), T), epsilon, delta)
            return Plan(
                mechanism=Repeated(make(z), T), noise_multiplier=z, n_iter=T,
                details={"rate": rate, "norm": norm, "deferred": False,
                         "noise_multipliers": np.full(T, z), "schedule": None,
                         "max_iter": max_iter},
            )
        if delta == 0:
            mechanism, z = Laplace(1.0 / epsilon), 1.0 / epsilon
        else:
            z = calibrate(Gaussian, epsilon, delta)
            mechanism = Gaussian(z)
        return Plan(
            mechanism=mechanism, noise_multiplier=z, n_iter=0,
            details={"rate": rate, "norm": norm, "deferred": True, "max_iter": max_iter},
        )

    def _exact_plan(self, problem, n_samples, epsilon, delta, max_iter, rate, options,
                    z_eff=None):
        L, mu, step = self._constants(problem, options)
        split = options["budget_split"]
        n_params = int(np.prod(problem.coef_shape))
        C = float(problem.clip_norm)
        if delta > 0 and z_eff is None:
            z_eff = calibrate(Gaussian, epsilon, delta)
        bound = None
        initial_gap = _initial_gap(problem, options["initial_gap"])
        if max_iter is None:
            cap = int(options["max_iter_cap"])
            full = self._schedule(cap, L, mu, step, options)
            bound = bound_curve(
                full, L, mu, n_params=n_params, n_samples=n_samples, clip_norm=C,
                epsilon=epsilon, delta=delta, split=split,
                initial_gap=initial_gap, z_eff=z_eff, rate=rate,
            )
            T = int(np.argmin(bound)) + 1
            schedule = full.truncate(T)
        else:
            T = int(max_iter)
            schedule = self._schedule(T, L, mu, step, options)
        _, log_a = log_weights(schedule, L, mu)
        shares = split_weights(log_a, delta, split)
        make = noise_mechanism(delta, rate)
        if delta == 0:
            if rate < 1.0:
                # Remark 4.2: split the amplified budgets, invert the amplification
                eps_inner = np.log1p(np.expm1(epsilon * shares) / rate)
            else:
                eps_inner = epsilon * shares
            zs = _SAFETY / eps_inner
            common = float(zs.min())
        else:
            w = shares ** -0.5
            w = w / w.min()  # z_t = z * w_t; the last (least noisy) steps have w = 1
            if rate >= 1.0:
                # exact: the composition is one Gaussian with z_eff^-2 = sum z_t^-2
                common = z_eff * math.sqrt(float(np.sum(w**-2.0))) * _SAFETY
                target = get_epsilon(Composed([Gaussian(common * wt) for wt in w]), delta)
                if not target <= epsilon * (1 + 1e-9):
                    common = calibrate(
                        lambda z: Composed([Gaussian(z * wt) for wt in w]), epsilon, delta)
            else:
                # the sampled-Gaussian RDP is computed once per distinct noise level:
                # round the weights up to a geometric grid of at most _LEVELS levels
                # (ratio >= 1.01), i.e. a few percent more noise on some steps
                grid = max(math.log(1.01), float(np.log(w.max())) / _LEVELS)
                w = np.exp(np.ceil(np.log(w) / grid - 1e-9) * grid)
                levels, counts = np.unique(w, return_counts=True)
                common = calibrate(
                    lambda z: Composed([Repeated(make(z * lv), int(k))
                                        for lv, k in zip(levels, counts)]),
                    epsilon, delta)
            zs = common * w
        mechanism = _tree(make, zs)
        return Plan(
            mechanism=mechanism, noise_multiplier=float(common), n_iter=T,
            details={
                "rate": rate, "norm": 1 if delta == 0 else 2, "deferred": False,
                "noise_multipliers": zs, "schedule": schedule, "shares": shares,
                "log_weights": log_a, "smoothness": L, "strong_convexity": mu,
                "bound": bound, "max_iter": max_iter, "z_eff": z_eff,
                "initial_gap": initial_gap,
            },
        )

    # -- solving -----------------------------------------------------------
    def solve(self, problem, epsilon, delta, rng, *, plan, verbose=0, **options):
        """Run the planned noisy iterations; return the last iterate.

        A deferred plan (made without the problem) is completed here from
        the problem's public constants; its charged mechanism dominates the
        run (see the module docstring).
        """
        options = self._check(options)
        details = plan.details
        rate = details["rate"]
        if details.get("deferred"):
            run = self._exact_plan(
                problem, problem.n_samples, epsilon, delta, details["max_iter"], rate,
                options, z_eff=None if delta == 0 else plan.noise_multiplier,
            )
            zs = run.details["noise_multipliers"]
            if delta > 0:
                # the run must be no less private than the charged Gaussian(z_eff)
                ok = float(np.sum(zs ** -2.0)) ** -0.5 >= plan.noise_multiplier
            else:
                ok = float(np.sum(1.0 / zs)) <= epsilon
            if not ok:  # pragma: no cover - guards the closed forms
                raise RuntimeError(
                    f"solver {self.name!r}: the completed run would cost more than the "
                    "charged mechanism; this is a bug, please report it."
                )
            plan = run
            details = plan.details
        schedule = details["schedule"]
        if schedule is None:  # subsampled plan without the problem: uniform
            L, mu, step = self._constants(problem, options)
            schedule = self._schedule(plan.n_iter, L, mu, step, options)
        coef = _run(problem, schedule, details["noise_multipliers"], rate, details["norm"],
                    rng, heavy_ball=self.method == "heavy_ball", verbose=verbose,
                    label=self.name)
        return SolverResult(coef=coef, n_iter=plan.n_iter, cost=plan.mechanism)


def _run(problem, schedule, noise_multipliers, rate, norm, rng, *, heavy_ball,
         verbose=0, label=""):
    """The shared loop: heavy ball, or NAG with per-step steps, momenta and restarts."""
    n = problem.n_samples
    C = problem.clip_norm
    m = rate * n
    draw = rng.laplace if norm == 1 else rng.normal
    T = len(schedule.steps)
    x = problem.initial_coef()
    x_prev = x.copy()
    for t in range(T):
        if schedule.restarts[t]:
            x_prev = x
        beta = schedule.momenta[t]
        point = x if heavy_ball else x + beta * (x - x_prev)
        idx = None if rate >= 1.0 else np.flatnonzero(rng.random(n) < rate)
        G = problem.loss.clipped_grad_sum(point, C, idx=idx, norm=norm)
        G += draw(0.0, noise_multipliers[t] * C, size=G.shape)
        g = G / m + problem.penalty_grad(point)
        step = schedule.steps[t]
        if heavy_ball:
            x_new = x - step * g + beta * (x - x_prev)
        else:
            x_new = point - step * g
        x_prev, x = x, x_new
        if verbose > 1:
            print(f"[{label}] iteration {t + 1}/{T}")
    return x


class HeavyBall(_Accelerated):
    r"""DP heavy ball (DP-HB, paper 001 eq. 3.1).

    :math:`x_{t+1} = x_t - a \tilde g_t(x_t) + \beta (x_t - x_{t-1})` with
    :math:`a = c / L`, :math:`\beta = (1 - \sqrt{\mu a}) / (1 + \sqrt{\mu a})`:
    momentum averages the noisy gradients (post-processing, no extra
    privacy cost). The paper has no heavy-ball bound of the form (4.3);
    T selection and ``budget_split='optimal'`` use NAG's weights as a
    heuristic.

    Options (``solver_params``)
    ---------------------------
    learning_rate : 'auto' or float, default='auto'
        Step size; 'auto' is ``step_scale / L``.
    step_scale : float, default=1.0
        The constant c of the step ``c / L``.
    budget_split : {'uniform', 'optimal'}, default='uniform'
    initial_gap : 'auto' or float, default='auto'
        :math:`E_0`, the bound on :math:`F(x_0) - F^*` used to choose T;
        'auto' is the public :math:`F(0)` of the loss (``log 2`` for binary
        logistic, see :func:`public_initial_gap`), or 1 where none is known.
    max_iter_cap : int, default=1000
        Largest T considered when ``max_iter`` is None.
    """

    name = "heavy_ball"
    method = "heavy_ball"
    options = dict(_COMMON_OPTIONS, budget_split="uniform")


class Nesterov(_Accelerated):
    r"""DP Nesterov accelerated gradient with the noise-dividing split (DP-NAG-opt).

    :math:`z_t = (1 + \beta) x_t - \beta x_{t-1}`,
    :math:`x_{t+1} = z_t - a \tilde g_t(z_t)` with :math:`a = c / L`,
    :math:`\beta = (1 - \sqrt{\mu a}) / (1 + \sqrt{\mu a})`; per-step
    budgets :math:`\propto a_{T,t}^{1/3}` (pure DP, eq. 4.5) or zCDP shares
    :math:`\propto a_{T,t}^{1/2}` (Gaussian); T by bound (4.6) when
    ``max_iter`` is None.

    Options (``solver_params``)
    ---------------------------
    learning_rate : 'auto' or float, default='auto'
        Step size; 'auto' is ``step_scale / L``.
    step_scale : float, default=1.0
        The constant c of the step ``c / L``.
    budget_split : {'uniform', 'optimal'}, default='optimal'
    initial_gap : 'auto' or float, default='auto'
        :math:`E_0`, the bound on :math:`F(x_0) - F^*` used to choose T;
        'auto' is the public :math:`F(0)` of the loss (``log 2`` for binary
        logistic, see :func:`public_initial_gap`), or 1 where none is known.
    max_iter_cap : int, default=1000
        Largest T considered when ``max_iter`` is None.
    """

    name = "nesterov"
    method = "nesterov"
    options = dict(_COMMON_OPTIONS, budget_split="optimal")


class MultistageNesterov(_Accelerated):
    r"""DP multistage accelerated gradient (DP-MASG-opt, paper 001 Sec. 4.2).

    NAG in stages (4.7) with momentum restarts; the budget split and T use
    the stage-dependent weights of (4.8).

    Options (``solver_params``)
    ---------------------------
    learning_rate : 'auto' or float, default='auto'
        Stage-1 step size; 'auto' is ``step_scale / L``.
    step_scale : float, default=1.0
        The constant c scaling every stage's step.
    budget_split : {'uniform', 'optimal'}, default='optimal'
    initial_gap : 'auto' or float, default='auto'
        :math:`E_0`, the bound on :math:`F(x_0) - F^*` used to choose T;
        'auto' is the public :math:`F(0)` of the loss (``log 2`` for binary
        logistic, see :func:`public_initial_gap`), or 1 where none is known.
    max_iter_cap : int, default=1000
        Largest T considered when ``max_iter`` is None.
    first_stage_length : int or None, default=None
        :math:`n_1`; None is :math:`\lceil\sqrt\kappa \ln\kappa\rceil`.
    stage_p : int, default=1
        The p of (4.7).
    """

    name = "multistage_nesterov"
    method = "multistage_nesterov"
    options = dict(_COMMON_OPTIONS, budget_split="optimal", first_stage_length=None,
                   stage_p=1)


register_solver(HeavyBall())
register_solver(Nesterov())
register_solver(MultistageNesterov())

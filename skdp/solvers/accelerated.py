r"""DP accelerated gradient methods: heavy ball, Nesterov (NAG), multistage NAG.

Paper 001 (Kuru, Birbil, Gürbüzbalaban, Yildirim 2022): ``heavy_ball``
(DP-HB, eq. 3.1), ``nesterov`` (DP-NAG, eq. 4.1) and ``multistage_nesterov``
(DP-MASG, Sec. 4.2) share the noisy first-order loop of
:mod:`skdp.solvers._first_order`. Each plan fixes the step schedule from the
spec's public smoothness ``L`` and strong convexity ``mu``, divides the noise
across steps by the paper's bound (eq. 4.5 / 4.6 for pure DP; the Gaussian
analogue, per-step precision proportional to :math:`\sqrt{a_{T,t}}`, for
delta > 0), chooses T when ``max_iter`` is None by the privacy budget
(full batches, delta > 0) or by that bound (option ``max_iter_rule``), and lets
the accountant calibrate the common noise factor. The derivations, the
subsampled variants and the measurements behind the defaults are in
``docs/solvers/accelerated.md``.

Privacy: epsilon-DP (delta = 0) or (epsilon, delta)-DP with respect to
zero-out neighbours (one record replaced by a null record); the number of
records n is public.

References
----------
.. [1] N. Kuru, S. I. Birbil, M. Gürbüzbalaban, S. Yildirim, "Differentially
   Private Accelerated Optimization Algorithms", SIAM J. Optim. 32(2), 2022.
.. [2] N. S. Aybat, A. Fallah, M. Gürbüzbalaban, A. Ozdaglar, "A Universally
   Optimal Multistage Accelerated Stochastic Gradient Method", NeurIPS 2019.
.. [3] M. Bun, T. Steinke, "Concentrated Differential Privacy:
   Simplifications, Extensions, and Lower Bounds", TCC 2016.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..validation import POSITIVE, POSITIVE_INT, UNIT_INTERVAL_RIGHT_OPEN, StrOptions
from ..accounting import (Composed, Gaussian, Repeated, calibrate, compose_runs, get_epsilon,
                          noise_mechanism)
from ._base import Plan, Solver, SolverResult
from ._first_order import noisy_first_order
from .budget_rules import work_capped_steps, zcdp_rho
from ._registry import register_solver


__all__ = [
    "HeavyBall",
    "Nesterov",
    "MultistageNesterov",
    "accelerated_schedule",
    "bound_curve",
    "log_weights",
    "split_weights",
]

_SPLITS = ("uniform", "optimal")
_SAFETY = 1.0 + 1e-12  # relative margin on noise scales computed in closed form
_LEVELS = 48  # most distinct noise levels of a subsampled Gaussian run (RDP cost)


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


#: Full-batch steps per record per unit of sqrt(rho) of ``max_iter_rule='budget'``,
#: and its smallest T. Chosen on validation splits of training files only; the
#: measurements are in ``docs/solvers/accelerated.md`` ("The default T: the budget").
BUDGET_STEPS_PER_RECORD = 0.1
MIN_BUDGET_STEPS = 10

_COMMON_OPTIONS = {
    "learning_rate": "auto",
    "step_scale": 1.0,
    "initial_gap": "auto",
    "max_iter_cap": 1000,
    "max_iter_rule": "auto",
    "average": 0.0,
}
_COMMON_CONSTRAINTS = {
    "learning_rate": [StrOptions({"auto"}), POSITIVE],
    "step_scale": [POSITIVE],
    "initial_gap": [StrOptions({"auto"}), POSITIVE],
    "max_iter_cap": [POSITIVE_INT],
    "max_iter_rule": [StrOptions({"auto", "budget", "bound"})],
    "average": [UNIT_INTERVAL_RIGHT_OPEN],
    "budget_split": [StrOptions(_SPLITS)],
    "first_stage_length": [None, POSITIVE_INT],
    "stage_p": [POSITIVE_INT],
}


class _Accelerated(Solver):
    """Shared planning of the paper-001 solvers (see the module docstring).

    Options (``solver_params``)
    ---------------------------
    learning_rate : 'auto' or float, default='auto'
        Step size; 'auto' is ``step_scale / L``.
    step_scale : float, default=1.0
        The constant c of the step ``c / L``.
    budget_split : {'uniform', 'optimal'}
        Per-step noise: equal, or minimising bound (4.6) (default of
        ``nesterov`` and ``multistage_nesterov``).
    initial_gap : 'auto' or float, default='auto'
        :math:`E_0`, the bound on :math:`F(x_0) - F^*` used to choose T;
        'auto' is the loss's public :math:`F(0)` (``log 2`` for binary
        logistic), or 1 where none is known.
    max_iter_cap : int, default=1000
        Largest T considered when ``max_iter`` is None.
    max_iter_rule : {'auto', 'budget', 'bound'}, default='auto'
        How T is chosen when ``max_iter`` is None. 'bound': the minimiser of
        the paper's bound (4.6) over ``1 <= T <= max_iter_cap`` (Remark 4.1).
        'budget': ``0.1 n sqrt(rho)`` steps in ``[10, max_iter_cap]``, with
        rho the zCDP budget of (epsilon, delta) (as ``gd``'s rule, at a
        third of its steps). The bound grows with the dimension through
        the noise's norm, so in high dimension it stops after a step or two
        (``docs/solvers/accelerated.md``). The budget rule's T
        is also capped by the default work cap
        (:func:`skdp.solvers.gd.work_capped_steps`: 50 steps on 1,000,000
        rows).
        'auto': 'budget' on full batches with delta > 0, else 'bound'.
    average : float in [0, 1), default=0.0 (0.5 for ``heavy_ball``)
        Release the mean of the last ``average`` fraction of the iterates
        (post-processing, free); 0 releases the last iterate (the paper).
        The default stays the paper's last iterate, whose objective the
        paper's bounds are about; on validation splits of training files
        averaging gained no accuracy beyond the spread over seeds
        (``docs/solvers/accelerated.md``, options table).
        ``heavy_ball`` releases the mean of the last half: its last iterate
        oscillates (the stationary noise of heavy ball grows like
        :math:`(1 + \beta) / (1 - \beta)`, paper 001's Thm 3.5, and
        :math:`\beta` is near 1 when ``alpha`` is small); 0.5 is also gd's
        default.
    """

    requires = frozenset({"gradient", "smooth", "convex", "penalty:smooth",
                         "penalty:strongly_convex"})
    option_constraints = _COMMON_CONSTRAINTS
    paper = ("001: Kuru, Birbil, Gürbüzbalaban, Yildirim, 'Differentially Private "
             "Accelerated Optimization Algorithms', SIAM J. Optim. 2022")
    method = None

    def _constants(self, spec):
        """``(L, mu, step)`` from the spec's public constants."""
        mu = spec.strong_convexity
        L = spec.objective_smoothness
        options = spec.options
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

    def _schedule(self, T, L, mu, step, options):
        extra = {}
        if self.method == "multistage_nesterov":
            extra = {"first_stage_length": options["first_stage_length"],
                     "stage_p": options["stage_p"]}
        return accelerated_schedule(self.method, T, L, mu, step, **extra)

    def plan(self, spec):
        """Choose T, the step schedule and the per-step noise; calibrate them."""
        options = spec.options
        epsilon, delta, rate = spec.epsilon, spec.delta, spec.sampling_rate
        L, mu, step = self._constants(spec)
        split = options["budget_split"]
        z_eff = None if delta == 0 else calibrate(Gaussian, epsilon, delta)
        bound = None
        initial_gap = options["initial_gap"]
        if initial_gap == "auto":
            initial_gap = spec.initial_value if spec.initial_value is not None else 1.0
        rule = options["max_iter_rule"]
        if rule == "auto":
            rule = "budget" if rate >= 1.0 and delta > 0 else "bound"
        if spec.max_iter is None and rule == "budget":
            steps = BUDGET_STEPS_PER_RECORD * spec.n_samples * math.sqrt(zcdp_rho(epsilon, delta))
            T = int(min(max(round(steps), MIN_BUDGET_STEPS), int(options["max_iter_cap"])))
            T = work_capped_steps(T, spec.n_samples, rate, floor=MIN_BUDGET_STEPS)
            schedule = self._schedule(T, L, mu, step, options)
        elif spec.max_iter is None:
            full = self._schedule(int(options["max_iter_cap"]), L, mu, step, options)
            bound = bound_curve(
                full, L, mu, n_params=spec.n_params, n_samples=spec.n_samples,
                clip_norm=spec.clip_norm, epsilon=epsilon, delta=delta, split=split,
                initial_gap=float(initial_gap), z_eff=z_eff, rate=rate,
            )
            T = int(np.argmin(bound)) + 1
            schedule = full.truncate(T)
        else:
            T = int(spec.max_iter)
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
        return Plan(
            # consecutive steps of one level charged as one Repeated
            spec=spec, mechanism=compose_runs(make(float(z)) for z in zs), n_iter=T,
            noise_multiplier=float(common),
            details={
                "noise_multipliers": zs, "schedule": schedule, "shares": shares,
                "log_weights": log_a, "smoothness": L, "strong_convexity": mu,
                "bound": bound, "z_eff": z_eff, "initial_gap": float(initial_gap),
            },
        )

    def solve(self, queries, plan):
        """Run the planned noisy iterations; return the last iterate or the tail average."""
        schedule = plan.details["schedule"]
        coef = noisy_first_order(
            queries, plan, steps=schedule.steps,
            noise_multipliers=plan.details["noise_multipliers"],
            momenta=schedule.momenta, restarts=schedule.restarts,
            nesterov=self.method != "heavy_ball",
            average=float(plan.spec.options["average"]),
        )
        return SolverResult(coef=coef, n_iter=plan.n_iter)


class HeavyBall(_Accelerated):
    r"""DP heavy ball (DP-HB, paper 001 eq. 3.1).

    :math:`x_{t+1} = x_t - a \tilde g_t(x_t) + \beta (x_t - x_{t-1})` with
    :math:`a = c / L`, :math:`\beta = (1 - \sqrt{\mu a}) / (1 + \sqrt{\mu a})`:
    momentum averages the noisy gradients (post-processing, no extra
    privacy cost). The paper has no heavy-ball bound of the form (4.3);
    T selection and ``budget_split='optimal'`` use NAG's weights as a
    heuristic. Options: those of :class:`_Accelerated`, ``budget_split``
    defaulting to 'uniform' and ``average`` to 0.5 (the mean of the last
    half of the iterates: see ``average``).
    """

    name = "heavy_ball"
    method = "heavy_ball"
    options = dict(_COMMON_OPTIONS, budget_split="uniform", average=0.5)


class Nesterov(_Accelerated):
    r"""DP Nesterov accelerated gradient with the noise-dividing split (DP-NAG-opt).

    :math:`z_t = (1 + \beta) x_t - \beta x_{t-1}`,
    :math:`x_{t+1} = z_t - a \tilde g_t(z_t)` with :math:`a = c / L`,
    :math:`\beta = (1 - \sqrt{\mu a}) / (1 + \sqrt{\mu a})`; per-step
    budgets :math:`\propto a_{T,t}^{1/3}` (pure DP, eq. 4.5) or zCDP shares
    :math:`\propto a_{T,t}^{1/2}` (Gaussian); T by bound (4.6) when
    ``max_iter`` is None. Options: those of :class:`_Accelerated`.
    """

    name = "nesterov"
    method = "nesterov"
    options = dict(_COMMON_OPTIONS, budget_split="optimal")


class MultistageNesterov(_Accelerated):
    r"""DP multistage accelerated gradient (DP-MASG-opt, paper 001 Sec. 4.2).

    NAG in stages (4.7) with momentum restarts; the budget split and T use
    the stage-dependent weights of (4.8). Options: those of
    :class:`_Accelerated` (the step is stage 1's), and

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

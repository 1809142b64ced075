r"""Private second-order stationary points (paper 004): gradient and negative-curvature steps.

Gao and Wright [1]_. Every iteration takes
a noisy clipped gradient :math:`\tilde g`. While :math:`\|\tilde g\| >
\epsilon_g` it steps along :math:`-\tilde g`; otherwise it forms a noisy
Hessian :math:`\tilde H` (each example's Hessian clipped to Frobenius norm
``hessian_clip``, symmetric Gaussian noise) and takes its smallest eigenpair
:math:`(\tilde\lambda, \tilde p)`, signed so that :math:`\tilde p^\top \tilde g
\le 0` (eq. 5): if :math:`\tilde\lambda < -\epsilon_H` it steps along
:math:`\tilde p`, else the point passed the noisy
:math:`(\epsilon_g, \epsilon_H)` second-order test and is returned,
certified (w.h.p. a :math:`((1 + c_1)\epsilon_g, (1 + c)\epsilon_H)`
second-order stationary point, eq. 11).

Steps. ``learning_rate='short'`` (Algorithm 1): :math:`1/G` for gradients and
:math:`2|\tilde\lambda|/M` for curvature (eq. 7), with ``G`` the objective's
public smoothness and ``M`` the public Lipschitz constant of its Hessian.
``learning_rate='line_search'`` (Algorithm 3, the default): backtracking from ``b``
times the safe step (eq. 17's :math:`\bar\gamma_g = 2(1 - c_1 - c_g)/G`,
:math:`\bar\gamma_H = t_2|\tilde\lambda|/M`) by the factor 1/2, each
candidate tested for sufficient decrease (SD1 / SD2, eq. 13a/b) by
AboveThreshold (Algorithm 2) on the loss decreases, each example's clipped
to ``relative_loss_clip`` times :math:`\pm\gamma B_g \|d\|` (the
mean-value-theorem bound at the candidate's own step :math:`\gamma`,
:math:`B_g` = ``clip_norm``, :math:`d` the step direction; the paper's is
``relative_loss_clip=1``) and the query scaled by :math:`\gamma_{init} / \gamma`,
so that every query has the sensitivity of the first (the paper's
:math:`\Delta_q`, which it uses for every candidate) and a shorter step is
not tested under noise sized for the longest; the safe step when no
candidate passes. Constants are the notes' checked defaults:
:math:`c_1 = 0.25`, :math:`c_g = 0.25`, :math:`c = 0.1`, :math:`c_2 = 0.05`
(0.1 for short steps), :math:`c_H = 0.4`, :math:`t_2 = 1.262`.

Convex objectives (every loss but the sigmoid, with ``penalty='l2'``) have
a positive semi-definite Hessian: the second-order condition holds for any
:math:`\epsilon_H \ge 0`, so the solver never forms a Hessian, certifies on
the gradient test alone and gives the Hessian's budget to the gradients.

Iterations and privacy. The iteration bound :math:`T = \lceil (f(w_0) -
f_{low}) / \mathrm{MIN\_DEC} \rceil` (eq. 6, with eq. 10 / 17's
MIN_DEC and :math:`f_{low} = 0`: losses and penalties are non-negative)
comes from public quantities when :math:`f(w_0)` is public (the logistic
and sigmoid losses at :math:`w_0 = 0`); otherwise the solver first releases
a noisy mean of the losses clipped to ``[0, loss_clip]`` and uses
:math:`\min(\tilde f + 3\sigma_f, \mathrm{value\_clip})` (the notes' safe
form of eq. 6; ``loss_clip`` bounds the clipped mean, so the plan's
:math:`T` for ``f(w_0) = loss_clip`` is an upper bound). ``max_iter`` caps
:math:`T` (the noise is then calibrated for the cap: private, only the
convergence guarantee is lost). The paper's zCDP split (eq. 8 / 14: equal
budgets for the gradient, the Hessian and the search of every iteration,
:math:`\lambda = \sigma`) is kept as *ratios* of a mechanism tree whose
overall scale our accountant calibrates to exactly (epsilon, delta): a
phase gives ``hessian_share`` of its budget to at most ``max_hessians``
noisy Hessians (one per second-order test) and the rest to its iterations,
gradient and search in the ratio ``1 : search_weight`` (the paper's split:
``1/3``, one Hessian per iteration, ``1``). With two phases
(``two_phase=True``, Section 3.4) the first ``phase1_share`` of the budget
goes to an aggressive first run of ``phase1_iter`` iterations and the rest
to a run of :math:`T`, warm-started, only if the first did not certify. The run is
adaptive (which branch, when to stop, :math:`T` after :math:`\tilde f`), so
it runs under a :class:`~skdp.accounting.PrivacyFilter` charged up front
(Feldman and Zrnic 2021); with Poisson batches (``batch_size``) each
iteration's queries share one batch, charged once (composed, then
amplified). Everything the fit stores (``n_iter_``, ``certified_``, the
step counts, the tolerances) is a function of the noisy outputs and public
constants.

Privacy: (epsilon, delta)-DP with respect to zero-out neighbours (one record
replaced by a null record); n is public.

References
----------
.. [1] C. Gao and S. J. Wright, "Differentially Private Optimization for
   Smooth Non-convex ERM", arXiv 2302.04972, 2023 (Algorithms 1-3,
   Section 3.4).
.. [2] V. Feldman and T. Zrnic, "Individual Privacy Accounting via a Rényi
   Filter", NeurIPS 2021.
"""

import math
from collections import namedtuple
from numbers import Real

import numpy as np
from scipy import optimize

from ..accounting import (
    Composed,
    PoissonSampled,
    PrivacyFilter,
    Repeated,
    SparseVector,
    calibrate,
)
from ..validation import POSITIVE, POSITIVE_INT, UNIT_INTERVAL_OPEN, Boolean, Interval, StrOptions
from ._base import Plan, Solver, SolverResult
from ._registry import register_solver
from .budget_rules import default_learning_rate, work_capped_steps

__all__ = ["SecondOrder"]

# paper 004's constants, the notes' checked defaults (section 4)
C1 = 0.25        # ||e_k|| <= c1 eps_g (eq. 9)
C_HESS = 0.1     # ||E_k|| <= c eps_H (eq. 9)
C_G = 0.25       # SD1's constant: gamma_bar_g = 2 (1 - c1 - c_g) / G = 1 / G
C_H = 0.4        # SD2's constant
C2_LS, C2_SHORT = 0.05, 0.1
_A = 1.0 - C_HESS - C_H
T1_ROOT, T2_ROOT = (1.5 * _A - 3.0 * math.sqrt(_A * _A / 4.0 - 2.0 * C2_LS / 3.0),
                    1.5 * _A + 3.0 * math.sqrt(_A * _A / 4.0 - 2.0 * C2_LS / 3.0))  # Lemma 6
BACKTRACK = 0.5  # beta_g = beta_H, above t1 / t2 = 0.19
#: smoothness='auto' is L / SMOOTHNESS_SCALE + alpha, gd's step scale
SMOOTHNESS_SCALE = 4.0
#: ``max_iter_cap='auto'`` where the loss reports no run length of its own
DEFAULT_MAX_ITER_CAP = 100
#: ``tol_gradient='auto'``, times the loss's ``'loss_scale'`` stand-in (1 if none)
DEFAULT_TOL_GRADIENT = 0.005


#: the public constants of a run (see ``SecondOrder._constants``)
_Constants = namedtuple("_Constants", "G M curvature hessian_clip eps_g eps_H")


def min_decrease(step, G, M, tol_gradient, tol_hessian, curvature):
    """MIN_DEC of eq. 10 (short steps) or eq. 17 (line search): the least decrease per step."""
    if step == "short":
        grad = (1.0 - 2.0 * C1) / (2.0 * G) * tol_gradient ** 2
    else:
        grad = (1.0 - C1 - C_G) * C_G * tol_gradient ** 2 / G
    if not curvature:
        return grad
    if step == "short":
        curv = 2.0 * (1.0 / 3.0 - C2_SHORT - C_HESS) * tol_hessian ** 3 / M ** 2
    else:
        curv = C_H * T2_ROOT ** 2 * tol_hessian ** 3 / (4.0 * M ** 2)
    return min(grad, curv)


def _phase_lengths(T, two_phase, phase1_iter, cap):
    """Iterations of each phase: ``[T]``, or ``[ceil(T * phase1_iter), T]``; at most ``cap``."""
    first = max(1, math.ceil(T / 10)) if phase1_iter == "auto" else int(phase1_iter)
    phases = [first, T] if two_phase else [T]
    if cap is not None:
        capped, left = [], int(cap)
        for length in phases:
            if left > 0:
                capped.append(min(length, left))
                left -= capped[-1]
        phases = capped
    return phases


class _Schedule:
    """The public noise schedule of a run: phases, their shares, the parts of their budgets.

    Phase ``j`` (share ``share_j`` of what the value estimate leaves) gives
    ``hessian_share`` of its budget to at most ``K_j`` noisy Hessians and the
    rest to ``T_j`` iterations, each a gradient and (``learning_rate='line_search'``)
    a search in the ratio ``1 : search_weight``. Paper 004's eq. 14 is
    ``K_j = T_j``, ``hessian_share = 1/3`` and ``search_weight = 1``: every
    part of every iteration equal.
    """

    def __init__(self, spec, phases, shares, value_share, curvature, search, search_weight,
                 hessian_share, max_hessians):
        self.spec = spec
        self.pure = spec.delta == 0
        self.phases = list(phases)
        self.shares = list(shares)
        self.value_share = float(value_share)
        self.curvature = curvature
        self.search = search
        self.search_weight = float(search_weight) if search else 0.0
        self.hessian_share = float(hessian_share) if curvature else 0.0
        self.hessians = [(T if max_hessians is None else min(int(max_hessians), T))
                         if curvature else 0 for T in self.phases]

    def _scale(self, u, weight):
        return u / weight if self.pure else u / math.sqrt(weight)

    def noise(self, u, j):
        """``(z_gradient, z_hessian, lambda)`` of phase ``j`` at overall scale ``u``.

        Each is the noise multiplier of a part whose zCDP (epsilon for pure
        DP) is its share of the total: the paper's split kept as ratios, the
        overall scale ``u`` left to the accountant's calibration. None for
        parts the run does not have.
        """
        budget = (1.0 - self.value_share) * self.shares[j]
        per_iteration = budget * (1.0 - self.hessian_share) / self.phases[j]
        total = 1.0 + self.search_weight
        z_g = self._scale(u, per_iteration / total)
        lam = self._scale(u, per_iteration * self.search_weight / total) if self.search else None
        z_h = (self._scale(u, budget * self.hessian_share / self.hessians[j])
               if self.curvature else None)
        return z_g, z_h, lam

    def value_noise(self, u):
        return self._scale(u, self.value_share)

    def parts(self, zs):
        """The mechanisms of one iteration (gradient, search), unsampled."""
        out = [self.spec.noise(zs[0], 1.0)]
        if self.search:
            # paper 004's Algorithm 2: threshold Lap(2 lambda Delta), queries
            # Lap(4 lambda Delta), 1/lambda-DP
            out.append(SparseVector(1.0 / (2.0 * zs[2]), 1.0 / (2.0 * zs[2])))
        return out

    def hessian(self, zs):
        """The mechanism of one noisy Hessian (Gaussian), unsampled."""
        return self.spec.noise(zs[1], 1.0)

    def _sampled(self, mechanism):
        rate = self.spec.sampling_rate
        return mechanism if rate >= 1.0 else PoissonSampled(rate, mechanism)

    def tree(self, u, with_value):
        parts = [self.spec.noise(self.value_noise(u), 1.0)] if with_value else []
        for j, T in enumerate(self.phases):
            zs = self.noise(u, j)
            parts.append(Repeated(self._sampled(Composed(self.parts(zs))), T))
            if self.curvature:
                parts.append(Repeated(self._sampled(self.hessian(zs)), self.hessians[j]))
        return Composed(parts)


class SecondOrder(Solver):
    """Paper 004's 2OPT / 2OPT-LS: noisy gradient and negative-curvature steps.

    Options (``solver_params``)
    ---------------------------
    learning_rate : {'auto', 'line_search', 'short'}, default='auto'
        Algorithm 3 (AboveThreshold backtracking from ``max_step`` times the
        safe step) or Algorithm 1 (the safe steps of eq. 7). 'auto' is
        'line_search' on a convex loss and 'short' on one that is not (the
        sigmoid loss, matrix sensing), whose flat basins noisy searched
        steps fall into. Formerly ``step``.
    two_phase : bool, default=False
        Section 3.4: first ``phase1_share`` of the budget on a run of
        ``phase1_iter`` iterations, then, if it did not certify, the rest on
        a run of ``T`` from where it stopped. Off by default: when nothing
        certifies, the second phase's quarter of the budget leaves a noisy
        last iterate (``docs/solvers/second_order.md``, "Departures from the
        paper"). With the default ``max_iter_cap`` the first phase takes all
        100 iterations.
    phase1_share : float in (0, 1), default=0.75
    phase1_iter : int or 'auto', default=100
        Iterations of the first phase; 'auto' is the notes' ``ceil(T / 10)``
        (the paper leaves it open). 100 is gd's count on the same data.
    tol_gradient : 'auto' or float, default='auto'
        :math:`\\epsilon_g`: the gradient test's threshold; 'auto' is 0.005
        times the loss's ``'loss_scale'`` stand-in (5e-4 for matrix sensing).
        The paper's looser tolerances certify the majority-class model of an
        imbalanced data set, whose gradient is already small; the default
        lets the run learn (``docs/solvers/second_order.md``).
    max_iter_cap : 'auto', int or None, default='auto'
        Used when ``max_iter`` is None: the run never exceeds this many
        iterations. 'auto' is the run length the loss reports
        (``ProblemSpec.stand_ins['iterations']``: 300 for ``DPLinearSVC``'s
        losses with ``data_norm``, 100 for matrix sensing) or 100. Eq. 6's
        ``T`` for a tight ``tol_gradient`` is far more than a budget can pay
        for (``docs/solvers/second_order.md``); capping calibrates the
        noise for the cap (still exactly private; only the paper's
        convergence guarantee is lost, as the notes say). On large data
        the cap is lowered to the default work cap
        (:func:`skdp.solvers.gd.work_capped_steps`: 50 on 1,000,000 rows). None uses ``T``.
    tol_hessian : 'auto' or float, default='auto'
        :math:`\\epsilon_H`; 'auto' is :math:`\\sqrt{M \\epsilon_g}` (the
        paper's pairing).
    max_step : float > 1, default=2.0
        ``b_g = b_H``: the search's first candidate in units of the safe
        step (candidates ``b, b/2, ..., >= 1`` times it; the paper's 4 with
        gd's safe step overshoots: ``docs/solvers/second_order.md``).
    smoothness : 'auto' or float, default='auto'
        ``G`` of the safe step ``1/G`` and of MIN_DEC. 'auto' is gd's
        stand-in ``L / 4 + alpha`` (``L`` the loss's worst-case public
        smoothness, which real data are far from; the sigmoid loss collapses
        to the majority class with steps below ``4 / L``:
        ``docs/solvers/second_order.md``); where the loss has none,
        ``1 / step`` for the loss's
        stand-in step (``ProblemSpec.stand_ins['step']``).
    hessian_lipschitz : 'auto' or float, default='auto'
        ``M``: the public Lipschitz constant of the objective's Hessian
        ('auto'; the loss's stand-in where it has none).
    hessian_clip : 'auto' or float, default='auto'
        Frobenius-norm bound of each example's Hessian (the noisy Hessian's
        sensitivity); 'auto' is the loss's public bound from ``data_norm``
        (then nothing is clipped), or the loss's stand-in clip where it has
        none.
    loss_clip : float, default=1.0
        Clip of each example's loss in the noisy estimate of
        :math:`f(w_0)` (only when it is not public).
    value_share : float in (0, 1), default=0.1
        ``c_f``: the share of the budget of that estimate.
    search_weight : float, default=0.25
        An iteration's search budget relative to its gradient's (zCDP, or
        epsilon for pure DP); 1 is the paper's eq. 14.
    hessian_share : float in (0, 1), default=0.1
        Share of each phase's budget reserved for noisy Hessians (non-convex
        objectives only); 1/3 with ``max_hessians=None`` is the paper's.
    relative_loss_clip : float in (0, 1], default=0.25
        Each example's loss decrease in a search query is clipped to this
        fraction of the mean-value bound ``gamma_init * clip_norm * ||d||``
        (1 is the paper's): the query's sensitivity and noise shrink with it.
        Real per-example decreases are far below the bound, so the test is
        rarely biased, and at small epsilon the smaller noise helps
        (``docs/solvers/second_order.md``, "Departures from the paper").
    max_hessians : int or None, default=5
        Noisy Hessians each phase reserves (None: one per iteration, the
        paper's). A run draws one per second-order test (each ends in a
        curvature step or a certificate: the paper's "minimal" number);
        once the reserve is spent, a small gradient gives a gradient step.
    """

    name = "second_order"
    paper = "004 (DP second-order stationary points; 2OPT, 2OPT-LS)"
    requires = frozenset({"gradient", "values", "smooth", "hessian", "penalty:hessian"})
    options = {
        "learning_rate": "auto", "two_phase": False, "phase1_share": 0.75, "phase1_iter": 100,
        "tol_gradient": "auto", "max_iter_cap": "auto", "tol_hessian": "auto", "max_step": 2.0,
        "smoothness": "auto", "hessian_lipschitz": "auto", "hessian_clip": "auto",
        "loss_clip": 1.0, "value_share": 0.1, "search_weight": 0.25,
        "hessian_share": 0.1, "max_hessians": 5, "relative_loss_clip": 0.25,
    }
    renamed_options = {"step": "learning_rate", "iteration_cap": "max_iter_cap",
                       "value_clip": "loss_clip", "search_clip": "relative_loss_clip"}

    def poor_on_few_rows(self, loss_capabilities):
        """True: on a few hundred rows the searches, Hessians and phases leave noise.

        Part of every iteration goes to searches (and Hessians), so on a
        few hundred rows the last iterate is noisy; it needs thousands of
        rows. The noisy Hessian of matrix sensing on a few hundred rows has
        curvature of order -||E|| / n, so its curvature steps are noise (the
        paper's analysis needs n above its n_min, Thm 4).
        See ``docs/solvers/second_order.md`` ("Departures from the paper").

        Parameters
        ----------
        loss_capabilities : frozenset of str

        Returns
        -------
        bool
        """
        return True
    option_constraints = {
        "learning_rate": [StrOptions({"auto", "line_search", "short"})],
        "two_phase": [Boolean],
        "phase1_share": [UNIT_INTERVAL_OPEN],
        "phase1_iter": [StrOptions({"auto"}), POSITIVE_INT],
        "tol_gradient": [StrOptions({"auto"}), POSITIVE],
        "max_iter_cap": [StrOptions({"auto"}), None, POSITIVE_INT],
        "tol_hessian": [StrOptions({"auto"}), POSITIVE],
        "max_step": [Interval(Real, 1, None, closed="neither")],
        "smoothness": [StrOptions({"auto"}), POSITIVE],
        "hessian_lipschitz": [StrOptions({"auto"}), POSITIVE],
        "hessian_clip": [StrOptions({"auto"}), POSITIVE],
        "loss_clip": [POSITIVE],
        "value_share": [UNIT_INTERVAL_OPEN],
        "search_weight": [POSITIVE],
        "hessian_share": [UNIT_INTERVAL_OPEN],
        "max_hessians": [None, POSITIVE_INT],
        "relative_loss_clip": [Interval(Real, 0, 1, closed="right")],
    }

    # -- public constants --------------------------------------------------
    @staticmethod
    def _derived_options(spec):
        """Defaults from the loss's public constants (``ProblemSpec.stand_ins``)."""
        stand_ins = spec.stand_ins
        derived = {
            # a non-convex loss has flat basins that noisy searched steps fall
            # into (docs/solvers/second_order.md, "Sigmoid intercept")
            "learning_rate": "line_search" if "convex" in spec.loss_capabilities else "short",
            "max_iter_cap": int(stand_ins.get("iterations", DEFAULT_MAX_ITER_CAP)),
            "tol_gradient": DEFAULT_TOL_GRADIENT * stand_ins.get("loss_scale", 1.0),
        }
        if spec.smoothness is None and "step" in stand_ins:
            derived["smoothness"] = 1.0 / stand_ins["step"]
        if spec.hessian_lipschitz is None and "hessian_lipschitz" in stand_ins:
            derived["hessian_lipschitz"] = stand_ins["hessian_lipschitz"]
        if spec.hessian_bound is None and "hessian_clip" in stand_ins:
            derived["hessian_clip"] = stand_ins["hessian_clip"]
        return derived

    @staticmethod
    def _constants(spec):
        """The run's :data:`_Constants` from public quantities; every refusal is raised here."""
        o = spec.options
        if o["smoothness"] != "auto":
            G = float(o["smoothness"])
        elif spec.smoothness is None:
            G = None
        else:
            # gd's 'auto' scale: the worst-case L / 4 plus the penalty's (see gd)
            G = 1.0 / default_learning_rate(spec, "auto", SMOOTHNESS_SCALE)
        if G is None:
            raise ValueError(
                "second_order needs the objective's public smoothness G (its gradient "
                "steps are 1/G): set data_norm, or pass solver_params={'smoothness': <float>}."
            )
        curvature = not spec.convex_objective
        M = hessian_clip = None
        if curvature:
            M = (spec.objective_hessian_lipschitz if o["hessian_lipschitz"] == "auto"
                 else float(o["hessian_lipschitz"]))
            hessian_clip = (spec.hessian_bound if o["hessian_clip"] == "auto"
                            else float(o["hessian_clip"]))
            if M is None or hessian_clip is None:
                raise ValueError(
                    "second_order on a non-convex objective needs the public Lipschitz "
                    "constant of the Hessian and a bound on each example's Hessian, which "
                    "come from data_norm: set data_norm, or pass solver_params="
                    "{'hessian_lipschitz': <float>, 'hessian_clip': <float>}."
                )
            if spec.delta == 0:
                raise ValueError(
                    "second_order on a non-convex objective forms noisy Hessians (Gaussian "
                    "noise), which needs delta > 0; use delta=1e-5, say, or a convex model "
                    "(penalty='l2' and a convex loss), whose runs need no Hessian."
                )
        eps_g = float(o["tol_gradient"])
        if o["tol_hessian"] != "auto":
            eps_H = float(o["tol_hessian"])
        else:
            eps_H = math.sqrt(M * eps_g) if curvature else 0.0
        return _Constants(G, M, curvature, hessian_clip, eps_g, eps_H)

    @staticmethod
    def _iterations(spec, c, initial_value):
        o = spec.options
        dec = min_decrease(o["learning_rate"], c.G, c.M, c.eps_g, c.eps_H, c.curvature)
        T = max(1, math.ceil(max(0.0, float(initial_value)) / dec))   # eq. 6, f_low = 0
        cap = spec.max_iter
        if cap is None and o["max_iter_cap"] is not None:
            cap = work_capped_steps(o["max_iter_cap"], spec.n_samples, spec.sampling_rate)
        return _phase_lengths(T, o["two_phase"], o["phase1_iter"], cap)

    @staticmethod
    def _schedule(spec, c, phases, with_value):
        o = spec.options
        shares = ([o["phase1_share"], 1.0 - o["phase1_share"]] if len(phases) == 2 else [1.0])
        return _Schedule(spec, phases, shares, o["value_share"] if with_value else 0.0,
                         c.curvature, o["learning_rate"] == "line_search", o["search_weight"],
                         o["hessian_share"], o["max_hessians"])

    def plan(self, spec):
        """Fix the iteration bound from public quantities and calibrate the run; fix the filter."""
        spec = self.with_options(spec, self._derived_options(spec))
        o = spec.options
        c = self._constants(spec)  # every refusal happens here, before the charge
        public_start = spec.initial_value is not None
        initial = spec.initial_value if public_start else o["loss_clip"]
        phases = self._iterations(spec, c, initial)
        schedule = self._schedule(spec, c, phases, not public_start)
        method = "pure" if spec.delta == 0 else "rdp"  # what the filter composes in
        u = calibrate(lambda u: schedule.tree(u, not public_start), spec.epsilon, spec.delta,
                      method=method)
        planned = schedule.tree(u, not public_start)
        privacy_filter = PrivacyFilter.for_plan(planned, spec.epsilon, spec.delta)
        return Plan(spec=spec, mechanism=privacy_filter.mechanism, n_iter=sum(phases),
                    noise_multiplier=u, adaptive=True,
                    details={"phases": phases, "public_start": public_start})

    # -- the run -----------------------------------------------------------
    def _recalibrate(self, queries, schedule):
        """The scale at which ``schedule`` uses exactly what the filter has left."""
        fltr = queries.privacy_filter

        def excess(log_u):
            return fltr.cost(schedule.tree(math.exp(log_u), False)) - fltr.remaining

        lo, hi = math.log(1e-3), math.log(1e8)
        if excess(lo) <= 0:
            return math.exp(lo)
        log_u = optimize.brentq(excess, lo, hi, xtol=1e-10)
        # the conservative side: a little more noise, never less
        while excess(log_u) > 0:
            log_u += 1e-9
        return math.exp(log_u)

    def solve(self, queries, plan):
        """Run the phases until the noisy second-order test certifies a point."""
        spec, o = plan.spec, plan.spec.options
        c = self._constants(spec)
        u = plan.noise_multiplier
        W = queries.initial_coef()
        phases = plan.details["phases"]
        schedule = self._schedule(spec, c, phases, not plan.details["public_start"])
        if not plan.details["public_start"]:
            z_f = schedule.value_noise(u)
            C_f = float(o["loss_clip"])
            f_tilde = queries.batch(spec.noise(z_f, 1.0), 1.0).noisy_mean_loss(W, z_f, C_f)
            f_tilde += spec.penalty.value(W)
            sigma = z_f * C_f / spec.n_samples
            start_value = min(f_tilde + 3.0 * sigma, C_f + spec.penalty.value(W))
            phases = self._iterations(spec, c, start_value)
            schedule = self._schedule(spec, c, phases, False)
            u = self._recalibrate(queries, schedule)
        counts = {"gradient": 0, "curvature": 0, "hessian": 0, "reserve": 0}
        certified, n_iter, phase = False, 0, 0
        for j, T in enumerate(phases):
            phase = j + 1
            z = schedule.noise(u, j)
            counts["reserve"] = schedule.hessians[j]  # this phase's Hessians
            for _ in range(T):
                if not queries.affordable(Composed(schedule.parts(z))):
                    break  # float rounding at the very end of the budget: stop, never overrun
                n_iter += 1
                W, done = self._iteration(queries, schedule, z, W, c, counts, o)
                if done:
                    certified = True
                    break
            if certified:
                break
        attributes = {
            "certified_": certified,
            "gradient_tolerance_": (1.0 + C1) * c.eps_g,
            "curvature_tolerance_": (1.0 + C_HESS) * c.eps_H,
            "n_gradient_steps_": counts["gradient"],
            "n_curvature_steps_": counts["curvature"],
            "n_hessian_evaluations_": counts["hessian"],
            "phase_": phase,
        }
        return SolverResult(coef=W, n_iter=n_iter, attributes=attributes)

    def _iteration(self, queries, schedule, z, W, c, counts, o):
        """One iteration of Algorithm 1 / 3; returns ``(W, certified)``."""
        spec = schedule.spec
        penalty = spec.penalty
        parts = schedule.parts(z)
        sampled = spec.sampling_rate < 1.0
        shared = queries.batch(Composed(parts)) if sampled else None

        def batch(mechanism):
            return shared if sampled else queries.batch(mechanism, 1.0)

        g = batch(parts[0]).noisy_gradient(W, z[0]) + penalty.gradient(W)
        norm = float(np.linalg.norm(g))
        search = parts[-1] if schedule.search else None
        hessian = schedule.hessian(z) if schedule.curvature else None
        # the phase's Hessians spent (or, by float rounding, the filter's last
        # crumb too small for one): no second-order test, a gradient step
        testable = hessian is None or (counts["reserve"] > 0 and queries.affordable(hessian))
        if norm > c.eps_g or not testable:
            counts["gradient"] += 1
            safe = 2.0 * (1.0 - C1 - C_G) / c.G if search is not None else 1.0 / c.G
            step = self._step(batch, search, W, -g, safe, o, norm,
                              lambda gamma: C_G * gamma * norm * norm, spec)
            return W - step * g, False
        if not schedule.curvature:
            return W, True  # a convex objective: the Hessian is positive semi-definite
        counts["hessian"] += 1
        counts["reserve"] -= 1
        lam, p = queries.batch(hessian).noisy_hessian_eigenpair(
            W, z[1], c.hessian_clip, public_diagonal=penalty.hessian_diagonal(W))
        if float(np.vdot(p, g)) > 0:
            p = -p  # eq. 5
        if lam >= -c.eps_H:
            return W, True
        counts["curvature"] += 1
        size = abs(lam)
        safe = T2_ROOT * size / c.M if search is not None else 2.0 * size / c.M
        step = self._step(batch, search, W, p, safe, o, 1.0,
                          lambda gamma: 0.5 * C_H * gamma * gamma * size, spec)
        return W + step * p, False

    @staticmethod
    def _step(batch, search, W, direction, safe, o, direction_norm, required, spec):
        """The safe step, or the AboveThreshold search's pick among ``max_step * safe / 2**i``."""
        if search is None:
            return safe
        first = o["max_step"] * safe
        steps = []
        gamma = first
        while gamma >= safe * (1.0 - 1e-12):
            steps.append(gamma)
            gamma *= BACKTRACK
        query_batch = batch(search)
        m = query_batch.expected_size
        penalty = spec.penalty
        reg = penalty.value(W)
        # each example's decrease moves by at most gamma ||grad l_i|| ||d||
        # (mean value theorem): clipped to relative_loss_clip of that bound at each
        # candidate's own gamma and the query scaled by first / gamma, so
        # every query has the first candidate's sensitivity (the paper's
        # Delta_q) and a shorter step is not tested under noise sized for the
        # longest
        clip = o["relative_loss_clip"] * first * spec.clip_norm * direction_norm

        def candidates():
            for gamma in steps:
                W_k = W + gamma * direction
                yield (W_k, m * (reg - penalty.value(W_k)) - m * required(gamma),
                       min(clip, clip * gamma / first))

        k = query_batch.above_threshold(W, candidates(), search, clip)
        return safe if k is None else steps[k]


register_solver(SecondOrder())

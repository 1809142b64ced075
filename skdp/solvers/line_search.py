r"""DP-BLSGD (paper 002): noisy gradient steps whose size a private Armijo search picks.

Chen and Lee [1]_. Every iteration takes a noisy clipped gradient
:math:`\tilde g` on a batch and searches the step by backtracking, privately:
the candidates :math:`\eta_k = \eta_0 \beta^k` are tested with the Armijo
condition (their eq. 2) on the batch's loss, clipped per example to
:math:`[0, C_{obj}]`,

.. math::

    q_k = \sum_{i \in B} [\bar\ell_i(w) - \bar\ell_i(w - \eta_k \tilde g)]
          + \bar m [R(w) - R(w - \eta_k \tilde g)] - a \eta_k \bar m \|\tilde g\|^2
          \ \ge\ 0,

answered by AboveThreshold (their Algorithm 1, NoisyBTLS; sensitivity
:math:`C_{obj}`; :math:`\bar m = qn` the public expected batch size, so every
term is on one scale). When no candidate passes, a second noisy gradient on a
fresh batch is averaged in (inverse-variance weights) and the angle between
the two decides which budget grows (their Algorithm 3, CHEB): the gradient's
when they disagree by more than :math:`\phi_{max} \bar\theta`, the search's
when they agree within :math:`\phi_{min} \bar\theta`, with :math:`\bar\theta`
the moving angle between successive step directions (their eq. 7). Every
``reset_every`` iterations :math:`\eta_0` shrinks to ``reset_factor`` times the
largest step chosen meanwhile (intelligent backtracking). With
``batch_size=None`` every query uses the whole data (DP-BLGD).

Privacy. The run is adaptive (how many searches, which budgets), so the fit
charges its whole (epsilon, delta) up front and runs under a
:class:`~skdp.accounting.PrivacyFilter`: an RDP filter at one order fixed
from public quantities (Feldman and Zrnic 2021), or a pure-epsilon filter
when ``delta = 0``. Each batch is charged once for everything run on it
(``PoissonSampled(q, Composed([gradient, search]))``: composed, then
amplified once), before it is drawn. The search is
``SparseVector(e/2, e/2)`` (Laplace, pure ``e``-DP for any number of
candidates) or, with ``search_noise='gaussian'``, ``GaussianSparseVector``
(Zhu and Wang 2020; its cost grows with ``max_backtracks``); never paper
002's Theorem 3. The initial budgets are calibrated by the accountant so that
``max_iter_cap`` iterations at those budgets use the whole budget exactly
(``docs/solvers/line_search.md``); budget increases make the run stop earlier. The
number of iterations run is a function of the noisy outputs only, so it is
released as ``n_iter_``.

Privacy: (epsilon, delta)-DP with respect to zero-out neighbours (one record
replaced by a null record); n is public.

References
----------
.. [1] C. Chen and J. Lee, "Stochastic Adaptive Line Search for
   Differentially Private Optimization", IEEE BigData 2020.
"""

import math
from numbers import Integral, Real

import numpy as np

from ..accounting import (
    Composed,
    GaussianSparseVector,
    PoissonSampled,
    PrivacyFilter,
    Repeated,
    SparseVector,
    calibrate,
)
from ..validation import (
    POSITIVE,
    POSITIVE_INT,
    UNIT_INTERVAL_OPEN,
    UNIT_INTERVAL_RIGHT_OPEN,
    Boolean,
    Interval,
    StrOptions,
)
from ._base import Plan, Solver, SolverResult
from ._registry import register_solver
from .budget_rules import work_capped_steps

__all__ = ["LineSearch"]

#: Fewest planned iterations the ``gradient_noise_cap`` rule leaves.
MIN_PLANNED_ITER = 10
#: ``max_iter_cap='auto'`` where the loss reports no run length of its own;
#: like ``average``, ``search_share`` and ``KINKED_ARMIJO``, chosen on
#: validation splits of the training data (docs/solvers/line_search.md)
DEFAULT_MAX_ITER_CAP = 300
#: ``loss_clip='auto'``, times the loss's ``'loss_scale'`` stand-in (1 if none)
DEFAULT_LOSS_CLIP = 1.0
#: ``armijo='auto'`` on smooth losses
DEFAULT_ARMIJO = 0.5
#: ``armijo='auto'`` on losses that are not smooth: along a subgradient of a
#: kinked loss (the hinge) a sufficient decrease of 0.5 fails more often;
#: chosen on validation splits of the training data (docs/solvers/line_search.md)
KINKED_ARMIJO = 0.3
#: ``learning_rate='auto'`` without a smoothness bound: the first candidate is
#: this many times the loss's stand-in step (the hinge: 64 / B**2 against gd's
#: 16 / B**2; matrix sensing: 4 times gd's step); the search goes down from
#: there
STAND_IN_STEPS = 4.0


def _angle(u, v):
    """Angle in degrees between two arrays (90 when one is zero)."""
    # sqrt(x.x) of the flattened array is numpy.linalg.norm(x), without its checks
    u_flat, v_flat = np.ravel(u), np.ravel(v)
    nu, nv = math.sqrt(u_flat.dot(u_flat)), math.sqrt(v_flat.dot(v_flat))
    if nu == 0 or nv == 0:
        return 90.0
    return math.degrees(math.acos(max(-1.0, min(1.0, float(np.vdot(u, v)) / (nu * nv)))))


class _Budgets:
    """The per-query budgets of the run: they only grow (public state)."""

    def __init__(self, spec, noise_multiplier, search_share, max_backtracks, gaussian_search):
        self.spec = spec
        self.pure = spec.delta == 0
        self.z = float(noise_multiplier)
        self.gaussian_search = gaussian_search
        self.max_backtracks = int(max_backtracks)
        ratio = search_share / (1.0 - search_share)
        # the search gets `ratio` times the gradient's budget: in epsilon for
        # pure DP, in zCDP rho (an eps-DP search is eps^2/2-zCDP) otherwise
        if self.pure:
            self.search_epsilon = ratio / self.z
        else:
            self.search_epsilon = math.sqrt(ratio) / self.z
        self._search_rho = ratio / (2.0 * self.z ** 2)
        self._mechanisms = {}   # built once per budget (the budgets change only on growth)

    def gradient(self):
        if "gradient" not in self._mechanisms:
            self._mechanisms["gradient"] = self.spec.noise(self.z, 1.0)
        return self._mechanisms["gradient"]

    def search(self):
        if "search" not in self._mechanisms:
            self._mechanisms["search"] = self._search()
        return self._mechanisms["search"]

    def iteration(self):
        """``Composed([gradient, search])``: what an iteration's first batch runs."""
        if "iteration" not in self._mechanisms:
            self._mechanisms["iteration"] = Composed([self.gradient(), self.search()])
        return self._mechanisms["iteration"]

    def _search(self):
        if self.gaussian_search:
            # RDP alpha/s1^2 + 2 alpha/s2^2 = alpha * rho for s1^2 = 2/rho, s2^2 = 4/rho
            s1 = math.sqrt(2.0 / self._search_rho)
            return GaussianSparseVector(s1, math.sqrt(2.0) * s1, self.max_backtracks)
        e = self.search_epsilon
        return SparseVector(e / 2.0, e / 2.0)

    def grow_gradient(self, factor):
        self.z /= factor if self.pure else math.sqrt(factor)
        self._mechanisms.clear()

    def grow_search(self, factor):
        self.search_epsilon *= factor
        self._search_rho *= factor ** 2 if self.pure else factor
        self._mechanisms.clear()

    def gradient_variance(self, clip_norm):
        """Noise variance per coordinate of one gradient, up to a common factor."""
        return (self.z * clip_norm) ** 2


def _planned_iteration(spec, z, search_share, max_backtracks, gaussian_search):
    budgets = _Budgets(spec, z, search_share, max_backtracks, gaussian_search)
    inner = budgets.iteration()
    rate = spec.sampling_rate
    return inner if rate >= 1.0 else PoissonSampled(rate, inner)


class LineSearch(Solver):
    """DP-BLSGD / DP-BLGD: private Armijo backtracking under a privacy filter (paper 002).

    Options (``solver_params``)
    ---------------------------
    learning_rate : 'auto' or float, default='auto'
        First candidate step. 'auto' is ``step_scale / L`` with ``L`` the
        objective's public smoothness; where the loss has none (hinge, matrix
        sensing), ``STAND_IN_STEPS`` (4) times the loss's stand-in step
        (``ProblemSpec.stand_ins['step']``).
    step_scale : float, default=64.0
        Used by ``learning_rate='auto'``: with the default 40 candidates they span
        ``[64 beta**39, 64] / L`` = ``[0.01, 64] / L``, around the
        worst-case step 1/L (the search finds the steps the data allow).
    armijo : 'auto' or float in (0, 1), default='auto'
        Sufficient-decrease constant ``a`` of the Armijo condition; 'auto'
        is 0.5 on smooth losses and 0.3 on losses that are not (the hinge).
    backtrack : float in (0, 1), default=0.8
        Ratio ``beta`` of successive candidates.
    max_backtracks : int, default=40
        Candidates per search. The Laplace search's privacy does not depend
        on it (the Gaussian one's grows with its log); a search that
        finds nothing costs a retry, so the range is wide.
    loss_clip : 'auto' or float, default='auto'
        ``C_obj``, the search's sensitivity: what one example's term may
        contribute to an Armijo query. 'auto' is 1 times the loss's
        ``'loss_scale'`` stand-in (0.1 for matrix sensing; 1 where none).
    clip_loss : {'decrease', 'values'}, default='decrease'
        Clip each example's loss decrease to ``[-C_obj, C_obj]``, or each
        loss value to ``[0, C_obj]`` (paper 002). Values clipping biases the
        test once losses exceed ``C_obj`` (the clipped loss can fall while the
        real one grows); decreases of small steps are rarely clipped at all
        (``docs/solvers/line_search.md``).
    search_noise : {'laplace', 'gaussian'}, default='laplace'
    search_share : float in (0, 1), default=0.25
        Share of an iteration's budget given to the search at the start.
        Like the defaults of ``max_iter_cap``, ``average`` and ``armijo``,
        chosen on validation splits of the training data
        (``docs/solvers/line_search.md``).
    max_iter_cap : 'auto' or int, default='auto'
        Iterations the initial budgets are calibrated for: 'auto' is the
        run length the loss reports (``'iterations'``: 100 for matrix
        sensing) or 300 (``max_iter``
        overrides it and also caps the run); at most
        :data:`skdp.solvers.gd.MAX_DEFAULT_WORK` rows read in all, two
        passes an iteration (the gradient, and the search's line; its
        candidates reuse that pass): 25 iterations on 1,000,000 rows
        (:func:`skdp.solvers.gd.work_capped_steps`).
    budget_increase : {'angle', 'always', 'never'}, default='angle'
        What a failed search does: CHEB's angle test, grow both budgets, or
        neither (the second gradient is averaged in every case).
    increase : float, default=0.3
        ``xi``: a budget grows by the factor ``1 + xi``.
    max_retries : int, default=3
        Failed searches retried per iteration (each costs a gradient and a
        search).
    angle_max, angle_min, angle_decay : float, defaults 1.1, 0.5, 0.8
        ``phi_max``, ``phi_min`` and ``psi`` of CHEB and the moving angle.
    reset_every : int, default=10
        ``tau``: iterations between shrinks of the first candidate step.
    reset_factor : float, default=1.2
        ``varsigma``: the first candidate step shrinks to this times the largest step chosen.
    adaptive_clipping : bool, default=False
        DP-BLSGD-AC: when the gradient's budget grows, ``clip_norm`` and
        ``loss_clip`` shrink by the factor ``1 - clip_decay``.
    clip_decay : float in (0, 1), default=0.05
    average : float in [0, 1), default=0.5
        Release the mean of the iterates after the first ``1 - average``
        fraction of the planned iterations (post-processing: free); 0
        releases the last iterate (paper 002).
    gradient_noise_cap : float or None, default=0.25
        High-dimension rule for full batches (DP-BLGD; Poisson batches are
        left as they are), from public quantities only. With ``P`` the
        number of parameters, ``m`` the expected batch size and ``z`` the
        noise multiplier calibrated for ``max_iter_cap``, one noisy mean
        gradient carries noise of expected squared norm ``r C^2``,
        ``r = P z^2 / m^2`` (twice that for Laplace noise; see
        :meth:`gradient_noise_ratio`), against a true gradient of norm at
        most ``C``. When ``r`` exceeds the cap (and ``max_iter`` is unset),
        the planned iterations shrink to ``max(10, max_iter_cap * cap / r)``
        (recalibrated by the accountant, so ``r`` is about the cap) and the
        Armijo offset is debiased (``armijo_norm='auto'``). Above the cap
        the offset ``a eta m ||g~||^2`` exceeds any true decrease, no step
        passes except by the search's noise and the fit stays at the
        majority class; the cap was chosen on validation splits of training
        data (``docs/solvers/line_search.md``). None disables the rule.
    armijo_norm : {'auto', 'debiased', 'noisy'}, default='auto'
        The squared gradient norm in the Armijo offset: ``'noisy'`` uses
        ``||g~||^2`` (paper 002); ``'debiased'`` uses the post-processed
        unbiased estimate ``max(||g~||^2 - P s^2, 0)`` of the true one,
        ``s^2`` the public noise variance of one coordinate of ``g~``
        (inverse-variance averaged after retries); ``'auto'`` debiases
        exactly when the ``gradient_noise_cap`` rule applies (debiasing
        at small ``r`` lowered validation accuracy;
        ``docs/solvers/line_search.md``).
    """

    name = "line_search"
    paper = "002 (Chen & Lee 2020, DP-BLSGD)"
    requires = frozenset({"gradient", "values", "penalty:smooth"})
    options = {
        "learning_rate": "auto", "step_scale": 64.0, "armijo": "auto", "backtrack": 0.8,
        "max_backtracks": 40, "loss_clip": "auto", "clip_loss": "decrease",
        "search_noise": "laplace",
        "search_share": 0.25, "max_iter_cap": "auto", "budget_increase": "angle",
        "increase": 0.3, "max_retries": 3, "angle_max": 1.1, "angle_min": 0.5,
        "angle_decay": 0.8, "reset_every": 10, "reset_factor": 1.2,
        "adaptive_clipping": False, "clip_decay": 0.05, "average": 0.5,
        "armijo_norm": "auto", "gradient_noise_cap": 0.25,
    }
    renamed_options = {"eta0": "learning_rate", "eta0_scale": "step_scale",
                       "planned_iter": "max_iter_cap"}

    def poor_on_few_rows(self, loss_capabilities):
        """True on a loss that is not convex (matrix sensing, the sigmoid loss) or least squares.

        The Armijo tests are sums over the data compared under noise of
        scale ``loss_clip / epsilon``: on a few hundred rows of matrix
        sensing (the size of scikit-learn's checks) they decide nothing and
        the fit is poor; it needs thousands of rows
        (``docs/solvers/line_search.md``). On the convex losses of the
        linear classifiers it passes the checks.

        Parameters
        ----------
        loss_capabilities : frozenset of str

        Returns
        -------
        bool
        """
        return "convex" not in loss_capabilities or "least_squares" in loss_capabilities
    option_constraints = {
        "learning_rate": [StrOptions({"auto"}), POSITIVE],
        "step_scale": [POSITIVE],
        "armijo": [StrOptions({"auto"}), UNIT_INTERVAL_OPEN],
        "backtrack": [UNIT_INTERVAL_OPEN],
        "max_backtracks": [POSITIVE_INT],
        "loss_clip": [StrOptions({"auto"}), POSITIVE],
        "clip_loss": [StrOptions({"decrease", "values"})],
        "search_noise": [StrOptions({"laplace", "gaussian"})],
        "search_share": [UNIT_INTERVAL_OPEN],
        "max_iter_cap": [StrOptions({"auto"}), POSITIVE_INT],
        "budget_increase": [StrOptions({"angle", "always", "never"})],
        "increase": [POSITIVE],
        "max_retries": [Interval(Integral, 0, None, closed="left")],
        "angle_max": [POSITIVE],
        "angle_min": [POSITIVE],
        "angle_decay": [Interval(Real, 0, 1, closed="left")],
        "reset_every": [POSITIVE_INT],
        "reset_factor": [POSITIVE],
        "adaptive_clipping": [Boolean],
        "clip_decay": [UNIT_INTERVAL_OPEN],
        "average": [UNIT_INTERVAL_RIGHT_OPEN],
        "armijo_norm": [StrOptions({"auto", "debiased", "noisy"})],
        "gradient_noise_cap": [None, POSITIVE],
    }

    def plan(self, spec):
        """Calibrate the initial budgets for ``max_iter_cap`` iterations; fix the filter."""
        spec = self.with_options(spec, self._derived_options(spec))
        o = spec.options
        T = (int(spec.max_iter) if spec.max_iter is not None
             else work_capped_steps(o["max_iter_cap"], spec.n_samples, spec.sampling_rate,
                                    floor=MIN_PLANNED_ITER, passes=2))
        if o["learning_rate"] == "auto" and spec.objective_smoothness is None:
            raise ValueError(
                "line_search: learning_rate='auto' needs a public smoothness bound (a smooth loss and "
                "data_norm); set data_norm, or pass solver_params={'learning_rate': <float>}."
            )
        gaussian_search = o["search_noise"] == "gaussian"
        if gaussian_search and spec.delta == 0:
            raise ValueError(
                "line_search: search_noise='gaussian' needs delta > 0; use "
                "search_noise='laplace' for pure epsilon-DP (delta=0)."
            )

        def planned(z, T):
            one = _planned_iteration(spec, z, o["search_share"], o["max_backtracks"],
                                     gaussian_search)
            return Repeated(one, T)

        method = "pure" if spec.delta == 0 else "rdp"  # what the filter composes in

        def calibrated(T):
            try:
                return calibrate(lambda z: planned(z, T), spec.epsilon, spec.delta,
                                 method=method)
            except ValueError as exc:
                if not gaussian_search:
                    raise
                raise ValueError(
                    f"line_search: the Gaussian search's privacy bound has a term log("
                    f"max_backtracks) / (order - 1) per search that no amount of noise "
                    f"removes, and {T} planned searches exceed epsilon={spec.epsilon:g} with "
                    f"it ({exc}). Use search_noise='laplace' (the default), or fewer "
                    "max_iter_cap or max_backtracks."
                ) from None

        z = calibrated(T)
        cap = o["gradient_noise_cap"]
        # full batches only (DP-BLGD): on Poisson batches the rule is not measured
        ratio = self.gradient_noise_ratio(spec, z)
        noisy_regime = cap is not None and spec.sampling_rate >= 1.0 and ratio > cap
        if spec.max_iter is None and noisy_regime:
            # public rule: fewer iterations when one gradient's noise would swamp
            # the largest possible signal (z^2 grows about linearly in T)
            T_cap = max(MIN_PLANNED_ITER, int(T * cap / ratio))
            if T_cap < T:
                T = T_cap
                z = calibrated(T)
        privacy_filter = PrivacyFilter.for_plan(planned(z, T), spec.epsilon, spec.delta)
        eta0 = (o["step_scale"] / spec.objective_smoothness if o["learning_rate"] == "auto"
                else float(o["learning_rate"]))
        return Plan(spec=spec, mechanism=privacy_filter.mechanism, n_iter=T,
                    noise_multiplier=z, adaptive=True,
                    details={"eta0": eta0, "max_iter": spec.max_iter,
                             "filter_order": privacy_filter.order,
                             "debiased": (o["armijo_norm"] == "debiased"
                                          or (o["armijo_norm"] == "auto" and noisy_regime))})

    @staticmethod
    def _derived_options(spec):
        """Defaults from the loss's public constants (``ProblemSpec.stand_ins``)."""
        stand_ins = spec.stand_ins
        derived = {
            "loss_clip": DEFAULT_LOSS_CLIP * stand_ins.get("loss_scale", 1.0),
            "max_iter_cap": int(stand_ins.get("iterations", DEFAULT_MAX_ITER_CAP)),
            "armijo": (DEFAULT_ARMIJO if "smooth" in spec.loss_capabilities
                       else KINKED_ARMIJO),
        }
        if spec.objective_smoothness is None and "step" in stand_ins:
            derived["learning_rate"] = STAND_IN_STEPS * stand_ins["step"]
        return derived

    @staticmethod
    def gradient_noise_ratio(spec, noise_multiplier):
        """``P s^2 / C^2``: one noisy gradient's expected squared noise norm over ``C^2``.

        ``s^2`` is the noise variance of one coordinate of the mean gradient
        (``(z C / m)^2``, twice that for Laplace noise), ``P`` the number of
        parameters, ``m`` the expected batch size and ``C = clip_norm`` the
        largest norm of the true mean gradient. Public.
        """
        factor = 2.0 if spec.delta == 0 else 1.0
        m = spec.sampling_rate * spec.n_samples
        return spec.n_params * factor * (noise_multiplier / m) ** 2

    def solve(self, queries, plan):
        """Run DP-BLSGD until the privacy filter admits no further iteration."""
        spec, o = plan.spec, plan.spec.options
        penalty = spec.penalty
        budgets = _Budgets(spec, plan.noise_multiplier, o["search_share"],
                           o["max_backtracks"], o["search_noise"] == "gaussian")
        clip, loss_clip = spec.clip_norm, float(o["loss_clip"])
        eta0 = plan.details["eta0"]
        cap = plan.details["max_iter"]
        beta, armijo = o["backtrack"], o["armijo"]
        n_cand = o["max_backtracks"]
        # variance of a Laplace coordinate is 2 b^2, of a Gaussian one sigma^2
        noise_factor = 2.0 if spec.delta == 0 else 1.0
        debiased = plan.details["debiased"]
        mean_angle = 90.0
        chosen = []
        previous = None
        W = queries.initial_coef()
        n_iter = 0
        # the tail is counted in planned iterations (public), not in the run's length
        tail_start = plan.n_iter - int(np.floor(o["average"] * plan.n_iter))
        tail_sum, n_tail = np.zeros_like(W), 0
        while cap is None or n_iter < cap:
            first = budgets.iteration()
            if not queries.affordable(first):
                break
            n_iter += 1
            batch = queries.batch(first)
            m = batch.expected_size
            var = budgets.gradient_variance(clip)
            g_data = batch.noisy_gradient(W, budgets.z, clip_norm=clip)
            g_sum, w_sum = g_data / var, 1.0 / var
            direction = g_data + penalty.gradient(W)
            sq = self._armijo_sq(direction, w_sum, m, noise_factor, debiased)
            k = batch.above_threshold(W, self._candidates(W, direction, sq, eta0, beta, n_cand,
                                                          armijo, m, penalty),
                                      budgets.search(), loss_clip, o["clip_loss"])
            retries = 0
            clipped_this_step = False
            while k is None and retries < o["max_retries"]:
                retry_cost = budgets.gradient()
                if not queries.affordable(retry_cost):
                    break
                retries += 1
                # CHEB: a second gradient on a fresh batch, at the current budget
                g2 = queries.batch(retry_cost).noisy_gradient(W, budgets.z, clip_norm=clip)
                var2 = budgets.gradient_variance(clip)
                theta = _angle(g_sum / w_sum, g2)
                grow_gradient = grow_search = False
                if o["budget_increase"] == "always":
                    grow_gradient = grow_search = True
                elif o["budget_increase"] == "angle":
                    if np.vdot(g_sum, g2) < 0 or theta > o["angle_max"] * mean_angle:
                        grow_gradient = True
                    elif theta < o["angle_min"] * mean_angle:
                        grow_search = True
                g_sum, w_sum = g_sum + g2 / var2, w_sum + 1.0 / var2
                if grow_gradient:
                    budgets.grow_gradient(1.0 + o["increase"])
                    if o["adaptive_clipping"] and not clipped_this_step:
                        clip *= 1.0 - o["clip_decay"]
                        loss_clip *= 1.0 - o["clip_decay"]
                        clipped_this_step = True
                if grow_search:
                    budgets.grow_search(1.0 + o["increase"])
                search = budgets.search()
                if not queries.affordable(search):
                    break
                direction = g_sum / w_sum + penalty.gradient(W)
                sq = self._armijo_sq(direction, w_sum, m, noise_factor, debiased)
                k = queries.batch(search).above_threshold(
                    W, self._candidates(W, direction, sq, eta0, beta, n_cand, armijo,
                                        m, penalty), search, loss_clip, o["clip_loss"])
            if k is None:
                continue
            eta = eta0 * beta ** k
            W = W - eta * direction
            chosen.append(eta)
            if previous is not None:
                mean_angle = (o["angle_decay"] * mean_angle
                              + (1.0 - o["angle_decay"]) * _angle(direction, previous))
            previous = direction
            if n_iter > tail_start:
                tail_sum += W
                n_tail += 1
            if n_iter % o["reset_every"] == 0 and chosen:
                eta0 = min(o["reset_factor"] * max(chosen), eta0)
                chosen = []
        return SolverResult(coef=tail_sum / n_tail if n_tail else W, n_iter=n_iter)

    @staticmethod
    def _armijo_sq(direction, w_sum, m, noise_factor, debiased):
        """The squared gradient norm in the Armijo offset (post-processing of ``direction``).

        ``'noisy'``: ``||d||^2``. ``'debiased'``: ``max(||d||^2 - P s^2, 0)``,
        ``s^2 = noise_factor / (w_sum m^2)`` the public noise variance of one
        coordinate of ``d`` and ``P`` its number of coordinates.
        """
        sq = float(np.vdot(direction, direction))
        if not debiased:
            return sq
        noise_sq = direction.size * noise_factor / (w_sum * m * m)
        return max(sq - noise_sq, 0.0)

    @staticmethod
    def _candidates(W, direction, sq, eta0, beta, n_cand, armijo, m, penalty):
        """The Armijo queries' candidates ``W - eta_k d`` and public offsets (lazy)."""
        reg = penalty.value(W)
        for k in range(n_cand):
            eta = eta0 * beta ** k
            W_k = W - eta * direction
            yield W_k, m * (reg - penalty.value(W_k)) - armijo * eta * m * sq


register_solver(LineSearch())

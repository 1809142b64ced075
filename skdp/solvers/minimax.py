r"""DP recursive gradient descent with SPIDER estimates and saddle escape (paper 000).

Paper 000 (Xu, Tao, Ding, Fan, Wang) runs DP-SPIDER jointly on a minimax
problem :math:`\min_x \max_y f(x, y)`. With no dual block (``d2 = 0``, the
value function :math:`\Phi = f` itself) it is DP-SPIDER with the paper's
perturb-and-monitor escape, which is what this solver runs on the smooth
losses of skdp's estimators (the y-free form).

The gradient estimate (Algorithm 3 of [1]_ with K = 1):

.. math::

    v_t = \frac{1}{S_1}\Big(\sum_{i \in B_t} \mathrm{clip}_{C_1}(\nabla\ell_i(x_t))
          + \omega_t\Big) \quad (t \bmod q = 0,\ \text{a refresh}),

    v_t = v_{t-1} + \frac{1}{S_2}\Big(\sum_{i \in B_t}
          \mathrm{clip}_{C_t}(\nabla\ell_i(x_t) - \nabla\ell_i(x_{t-1}))
          + \zeta_t\Big) \quad (\text{otherwise, an increment}),

with :math:`\omega_t \sim N(0, (z C_1)^2 I)`, :math:`\zeta_t \sim N(0, (\kappa z
C_t)^2 I)` and the increment clip :math:`C_t = \hat L \|x_t - x_{t-1}\|`, a
function of released iterates and the public smoothness :math:`\hat L`
(a correction of the paper: per-example clipping of the difference, so
the sensitivity holds whatever the data). ``B_t`` is the
whole data (``S_1 = n``) or a Poisson sample of expected size ``S``.

The iterate (Algorithm 2): while :math:`\|v_t + \nabla r(x_t)\| \ge \alpha`
a descent step, the gradient step :math:`v_t / \hat L` (gd's step when
every step refreshes, see ``learning_rate``) shortened to at most
:math:`\eta` (Lemma 8's normalised step has length exactly :math:`\eta`;
a shorter step near the threshold keeps the next increment's clip small,
and :math:`\eta` grows with :math:`\|x_t\|` so that a small threshold at
large epsilon does not make the descent crawl); then a perturbation uniform in
the ball of radius ``r`` and plain steps :math:`\eta_H v_t`, monitored: if
the mean squared movement exceeds :math:`\bar D` the iterate has escaped
a saddle and descent resumes; if not for ``t_thres`` steps, the anchor
(the point before the perturbation) is an approximate second-order
stationary point and is released. All of this reads only the released
estimates: it is post-processing, free.

Privacy: every query is counted in advance, ``ceil(T/q)`` refreshes and
``T - ceil(T/q)`` increments (the spurious increment of a refresh step is
skipped), refreshes with the noise multiplier
``z`` and increments with ``kappa z`` (``kappa`` public, by default the
ratio that gives both kinds of query the same share of the budget), ``z``
calibrated by skdp's accountant for the target (epsilon, delta);
increments on Poisson samples are accounted as sampled Gaussians. None of
the paper's noise formulas is used: the accountant calibrates ``z`` for
the whole counted run. (epsilon, delta)-DP for zero-out neighbours, n
public.

References
----------
.. [1] Xu, Tao, Ding, Fan, Wang, "Finding Differentially Private Second Order
   Stationary Points in Stochastic Minimax Optimization",
   arXiv 2602.01339, Algorithms 2 and 3.
.. [2] Arora, Bassily, Gonzalez, Guzman, Menart, Ullah, "Faster rates of
   convergence to stationary points in differentially private
   optimization", ICML 2023 (private SPIDER).
"""

import math
from numbers import Real

import numpy as np

from ..accounting import Composed, Repeated, calibrate, noise_mechanism
from ..accounting.discrete import calibration_cache
from ..validation import POSITIVE, POSITIVE_INT, Boolean, Interval, StrOptions
from ._base import Plan, Solver, SolverResult
from .budget_rules import GD_LEARNING_RATE_SCALE, default_learning_rate, work_capped_steps
from ._registry import register_solver

__all__ = ["RecursiveGradientDescentAscent", "calibrated_noise_multiplier"]

#: the threshold alpha is this multiple of the estimate's noise floor. A larger
#: multiple ends the descent while the gradient is still as large as the noise,
#: and at small epsilon releases the start (``docs/solvers/rgda.md``, option ``threshold``)
NOISE_FLOOR_MULTIPLE = 1.0

#: refresh_every='auto' chooses between this period and 1 (no increments)
MAX_REFRESH_EVERY = 10


@calibration_cache(maxsize=256)
def calibrated_noise_multiplier(n_refresh, refresh_rate, n_increment, increment_rate,
                                ratio, epsilon, delta):
    """Refresh multiplier ``z`` (increments ``ratio * z``) meeting the target (public, cached)."""
    return calibrate(lambda z: _queries(n_refresh, refresh_rate, n_increment,
                                        increment_rate, delta, z, ratio), epsilon, delta)


def _queries(n_refresh, refresh_rate, n_increment, increment_rate, delta, z, ratio):
    parts = [Repeated(noise_mechanism(delta, refresh_rate)(z), n_refresh)]
    if n_increment:
        parts.append(Repeated(noise_mechanism(delta, increment_rate)(ratio * z), n_increment))
    return Composed(parts)


def _noise_floor_multiple(d):
    """The noise floor's multiple in the threshold: 1 less 3 standard deviations of a noise norm."""
    return max(0.0, NOISE_FLOOR_MULTIPLE - 3.0 / math.sqrt(2.0 * d))


def _refresh_period(opts, T, rate1, S1, rate2, S2, L, L_clip, d, spec):
    """(q, kappa, z): of q = 10 and q = 1, the one whose estimate has the least noise (public)."""
    q_opt = opts["refresh_every"]
    best = None
    for q in ((MAX_REFRESH_EVERY, 1) if q_opt == "auto" else [int(q_opt)]):
        n_refresh, n_increment = _count(T, q)
        ratio = opts["increment_noise_ratio"]
        if ratio == "auto":
            # equal (small-rate RDP) costs: R / z^2 = I (2 rate2)^2 / z2^2 (rate1 = 1)
            ratio = (min(1.0, 2.0 * rate2 * math.sqrt(n_increment / n_refresh))
                     if n_increment else 1.0)
        ratio = float(ratio)
        z = calibrated_noise_multiplier(n_refresh, rate1, n_increment, rate2, ratio,
                                        float(spec.epsilon), float(spec.delta))
        # an increment after a gradient step v / L on an estimate at its noise
        # floor N adds noise of norm gamma N; the estimate's energy, averaged
        # over the period, is N^2 (1 + (q - 1) gamma^2 / 2)
        gamma = ratio * z * L_clip * math.sqrt(d) / (L * S2)
        energy = (z / S1) ** 2 * (1.0 + 0.5 * (q - 1) * gamma ** 2)
        if best is None or energy < best[0]:
            best = (energy, q, ratio, z)
    return best[1:]


def _count(T, q):
    """(refreshes, increments) of ``T`` steps refreshed every ``q``."""
    n_refresh = -(-T // q)
    return n_refresh, T - n_refresh


def _rate(batch, n):
    return 1.0 if batch is None or batch >= n else float(batch) / n


class RecursiveGradientDescentAscent(Solver):
    r"""DP-SPIDER with normalised descent and perturb-and-monitor saddle escape (paper 000).

    Options (``solver_params``)
    ---------------------------
    refresh_every : 'auto' or int, default='auto'
        ``q``: a fresh clipped gradient every ``q`` steps, increments between.
        'auto' is 10 or 1, whichever gives the estimate the smaller noise
        energy averaged over a period, :math:`(z_q / S_1)^2 (1 + (q - 1)
        \gamma_q^2 / 2)`, each ``q`` with its own calibrated ``z_q`` and
        ``kappa``: :math:`\gamma = \kappa z \hat L_{clip} \sqrt d / (\hat L S_2)`
        is the noise norm an increment adds after a gradient step
        :math:`v / \hat L` on an estimate at its noise floor, per unit of that
        floor (public). In high dimension :math:`\gamma \gg 1`: each
        increment multiplies the noise, and every step refreshes (plain noisy
        gradients, the SPIDER estimate with ``q = 1``): Reuters' thousands
        of parameters get q = 1, Adult and matrix sensing keep q = 10
        (validated with ``python benchmarks/rgda_rule.py`` on held-out parts
        of the training files; ``docs/solvers/rgda.md``).
    refresh_batch_size : 'full' or int, default='full'
        ``S_1``: the refresh's batch (the paper's ERM setting is the whole
        data); an int is the expected size of a Poisson sample.
    increment_batch_size : 'auto' or int, default='auto'
        ``S_2``, the expected size of each increment's Poisson sample;
        'auto' is ``min(n, max(64, n / sqrt(T)))``.
    smoothness : 'auto' or float, default='auto'
        :math:`\hat L`, the public smoothness the increment clip
        :math:`C_t = \hat L \|x_t - x_{t-1}\|` assumes; 'auto' is the
        objective's public smoothness (needs ``data_norm``); where the loss
        has none, ``1 / step`` for its stand-in step
        (``ProblemSpec.stand_ins['step']``: matrix sensing).
    clip_smoothness : 'auto' or float, default='auto'
        The smoothness used in the increment clip only (``C_t =
        clip_smoothness * ||x_t - x_{t-1}||``); 'auto' is ``smoothness``. A
        per-example smoothness can exceed the mean loss's by far (matrix
        sensing), and clipping differences at the mean's bound then biases
        the increments; the clip is public whatever its value. Where the
        loss has no smoothness bound and reports a per-example stand-in
        (``'example_smoothness'``: 6 / step for matrix sensing), 'auto' is
        that (``docs/solvers/rgda.md``).
    increment_noise_ratio : 'auto' or float, default='auto'
        ``kappa``: increments get noise multiplier ``kappa z``; 'auto' is
        ``min(1, 2 (S_2 / n) sqrt(I / R))`` for ``R`` refreshes and ``I``
        increments, which gives both kinds of query equal shares of the
        budget in the small-rate regime of the sampled Gaussian.
    threshold : 'auto' or float, default='auto'
        :math:`\alpha`; 'auto' is the noise floor of ``||v_t||`` (the norm
        of the noise alone, averaged over a refresh period), when every step
        refreshes (``q = 1``) less three
        standard deviations of a Gaussian noise vector's norm, a fraction
        :math:`3 / \sqrt{2d}` of it (so an estimate that is noise alone
        does not end the descent: in high dimension the noise norm
        concentrates and, at exactly the floor, the test is a coin toss
        that can end the descent after a step or two), and at least
        ``alpha_0 = max(C_1 eps_bar^(2/3),`` the floor of a refreshed
        estimate), with ``eps_bar =
        sqrt(d log(1/delta)) / (n epsilon)`` (Theorem 1's rate).
    max_step : 'auto' or float, default='auto'
        :math:`\eta`, the longest descent step: a descent step is the
        gradient step ``learning_rate * v_t`` shortened to at most
        ``max(max_step, relative_max_step * ||x_t||)``; 'auto' is
        ``step_scale * alpha_0 / L`` (the normalised step ``alpha / L``,
        scaled) when increments follow, whose clip its length bounds, and
        no bound when every step refreshes (``q = 1``).
    learning_rate : 'auto' or float, default='auto'
        The descent's gradient step. 'auto' is :math:`1 / \hat L` with
        increments (``q > 1``), and with ``q = 1`` and ``smoothness='auto'``
        gd's step from the same public worst-case bound,
        ``1 / (L_loss / 4 + alpha)`` (:func:`skdp.solvers.gd.default_learning_rate`),
        more accurate than :math:`1 / \hat L` on a validation split of
        Reuters' training file (``python benchmarks/rgda_rule.py``;
        ``docs/solvers/rgda.md``).
    step_scale : float, default=1.0
        Multiple of the normalised step ``alpha / L`` used by
        ``max_step='auto'``.
    relative_max_step : float, default=0.05
        A descent step may also be as long as this fraction of the
        iterate's norm (a released value), so that small thresholds at large
        epsilon do not make the descent crawl.
    escape : bool, default=True
        Run the perturb-and-monitor phase when ``||v|| < alpha``; False
        releases the first point with ``||v|| < alpha`` (or the last).
    escape_step : 'auto' or float, default='auto'
        :math:`\eta_H`, the plain step of the escape phase; 'auto' is ``1/L``.
    radius : 'auto' or float, default='auto'
        ``r``, the perturbation radius; 'auto' is :math:`\eta`.
    escape_patience : 'auto' or int, default='auto'
        ``t_thres``: steps without escape after which the anchor is released;
        'auto' is ``min(50, ceil(T / 4))``.
    dual : {'none', 'per_record'}, default='none'
        'none' is the y-free form above. 'per_record' is the paper's
        minimax form (section 5, for matrix sensing): one dual per record,
        :math:`F_i(x, y_i) = y_i \rho_i(x) - y_i^2 / 2`, for losses with
        the ``'minimax'`` capability (DPMatrixSensing). Each step first
        runs ``ascent_steps`` exact ascent steps on every dual at the
        released ``x_t`` (Algorithm 3's inner loop; the duals are private
        and never released, so they need no noise), then the estimate of
        :math:`\nabla_x f(x_t, y_t)` as above: refreshes of the clipped
        :math:`y_i J_i(x_t)`, increments of the clipped differences
        :math:`y_i J_i(x_t) - y_i' J_i(x_{t-1})` (same clip ``C_t``, same
        noise, same accounting). The ascent lags :math:`y^*(x_t) = \rho(x_t)`
        by :math:`(1 - \lambda)^K` of the last gap; the lag's share of
        an increment is clipped with the rest (a bias, never a leak).
    ascent_steps : int, default=5
        ``K``, exact dual ascent steps per outer step (the paper's 5).
    ascent_step : float, default=0.5
        ``lambda`` in (0, 1], the dual step: ``1 / (2 L_y)`` with the duals'
        smoothness ``L_y = 1``; 1 is exact maximisation.
    """

    name = "rgda"
    paper = "000"
    requires = frozenset({"gradient", "gradient_difference", "smooth", "penalty:smooth"})
    options = {
        "refresh_every": "auto",
        "refresh_batch_size": "full",
        "increment_batch_size": "auto",
        "smoothness": "auto",
        "clip_smoothness": "auto",
        "increment_noise_ratio": "auto",
        "threshold": "auto",
        "max_step": "auto",
        "step_scale": 1.0,
        "learning_rate": "auto",
        "relative_max_step": 0.05,
        "escape": True,
        "escape_step": "auto",
        "radius": "auto",
        "escape_patience": "auto",
        "dual": "none",
        "ascent_steps": 5,
        "ascent_step": 0.5,
    }
    option_constraints = {
        "refresh_every": [StrOptions({"auto"}), POSITIVE_INT],
        "refresh_batch_size": [StrOptions({"full"}), POSITIVE_INT],
        "increment_batch_size": [StrOptions({"auto"}), POSITIVE_INT],
        "smoothness": [StrOptions({"auto"}), POSITIVE],
        "clip_smoothness": [StrOptions({"auto"}), POSITIVE],
        "increment_noise_ratio": [StrOptions({"auto"}), POSITIVE],
        "threshold": [StrOptions({"auto"}), POSITIVE],
        "max_step": [StrOptions({"auto"}), POSITIVE],
        "step_scale": [POSITIVE],
        "learning_rate": [StrOptions({"auto"}), POSITIVE],
        "relative_max_step": [Interval(Real, 0, None, closed="left")],
        "escape": [Boolean],
        "escape_step": [StrOptions({"auto"}), POSITIVE],
        "radius": [StrOptions({"auto"}), POSITIVE],
        "escape_patience": [StrOptions({"auto"}), POSITIVE_INT],
        "dual": [StrOptions({"none", "per_record"})],
        "ascent_steps": [POSITIVE_INT],
        "ascent_step": [Interval(Real, 0, 1, closed="right")],
    }
    #: steps when max_iter is None (at most skdp.solvers.gd.MAX_DEFAULT_WORK rows read:
    #: skdp.solvers.gd.work_capped_steps, 50 steps on 1,000,000 rows)
    default_max_iter = 200

    def poor_on_few_rows(self, loss_capabilities):
        """True: on a few hundred rows it stops at its noise floor.

        That floor (its threshold) is then above most clipped gradients, so
        the release is close to its start (``docs/solvers/rgda.md``, "When
        to use it").

        Parameters
        ----------
        loss_capabilities : frozenset of str

        Returns
        -------
        bool
        """
        return True

    def plan(self, spec):
        """Count the queries, calibrate one multiplier, resolve every constant (public)."""
        stand_ins = spec.stand_ins
        if spec.objective_smoothness is None and "step" in stand_ins:
            # no smoothness bound: the loss's stable step stands in for 1 / L;
            # a per-example smoothness exceeds the mean's by far, hence its own
            derived = {"smoothness": 1.0 / stand_ins["step"]}
            if "example_smoothness" in stand_ins:
                derived["clip_smoothness"] = stand_ins["example_smoothness"]
            spec = self.with_options(spec, derived)
        opts = spec.options
        if opts["dual"] == "per_record" and "minimax" not in spec.loss_capabilities:
            raise ValueError(
                "rgda's solver_params={'dual': 'per_record'} needs a loss with one dual "
                "per record (the minimax form of matrix sensing, DPMatrixSensing); this "
                "model has none. Leave 'dual' at 'none' (the y-free form).")
        n = spec.n_samples
        T = (int(spec.max_iter) if spec.max_iter is not None
             else work_capped_steps(self.default_max_iter, spec.n_samples))
        S1 = n if opts["refresh_batch_size"] == "full" else min(n, opts["refresh_batch_size"])
        S2 = opts["increment_batch_size"]
        S2 = (min(n, max(64, math.ceil(n / math.sqrt(T)))) if S2 == "auto" else min(n, S2))
        rate1, rate2 = _rate(S1, n), _rate(S2, n)
        L = opts["smoothness"]
        if L == "auto":
            L = spec.objective_smoothness
            if L is None:
                raise ValueError(
                    "rgda needs a public smoothness bound for its increment clip and "
                    "steps; it comes from data_norm for smooth losses. Set data_norm, or "
                    "pass solver_params={'smoothness': <float>}.")
        L = float(L)
        L_clip = L if opts["clip_smoothness"] == "auto" else float(opts["clip_smoothness"])
        C1 = spec.clip_norm
        d = spec.n_params
        q, ratio, z = _refresh_period(opts, T, rate1, S1, rate2, S2, L, L_clip, d, spec)
        n_refresh, n_increment = _count(T, q)
        # per-coordinate noise of a refreshed estimate
        sigma_refresh = z * C1 / S1
        eps_bar = (math.sqrt(d * math.log(1.0 / spec.delta)) if spec.delta > 0
                   else float(d)) / (n * spec.epsilon)
        # below the noise floor only where every step refreshes (q = 1, high
        # dimension): with increments (q > 1, small data included) a noise-only
        # estimate must still end the descent, or it walks on noise
        k = (_noise_floor_multiple(d) if q == 1 else NOISE_FLOOR_MULTIPLE) ** 2 * d
        # the threshold from Theorem 1's rate and the refreshes' noise alone
        alpha0 = max(C1 * eps_bar ** (2.0 / 3.0), math.sqrt(k) * sigma_refresh)
        eta = opts["step_scale"] * alpha0 / L
        if opts["max_step"] != "auto":
            max_step = float(opts["max_step"])
        else:
            # the cap bounds the next increment's clip; with no increment (q = 1)
            # there is nothing to bound
            max_step = eta if q > 1 else math.inf
        lr = opts["learning_rate"]
        if lr == "auto":
            # with increments, the gradient step 1 / L (its length sets their
            # clip); refreshed at every step, gd's step from the public bound
            lr = (default_learning_rate(spec, "auto", GD_LEARNING_RATE_SCALE)
                  if q == 1 and opts["smoothness"] == "auto" else 1.0 / L)
        lr = float(lr)
        alpha = opts["threshold"]
        if alpha == "auto":
            # per-coordinate noise of an increment after a step of length eta near
            # the threshold: ratio z L_clip eta / S2, q/2 of them on average since
            # the last refresh
            sigma_increment = ratio * z * L_clip * eta / S2
            alpha = max(alpha0, math.sqrt(k * (sigma_refresh ** 2
                                               + (q / 2.0 if q > 1 else 0.0)
                                               * sigma_increment ** 2)))
        alpha = float(alpha)
        eta_H = 1.0 / L if opts["escape_step"] == "auto" else float(opts["escape_step"])
        radius = eta if opts["radius"] == "auto" else float(opts["radius"])
        patience = (min(50, math.ceil(T / 4)) if opts["escape_patience"] == "auto"
                    else int(opts["escape_patience"]))
        mechanism = _queries(n_refresh, rate1, n_increment, rate2, spec.delta, z, ratio)
        return Plan(spec=spec, mechanism=mechanism, n_iter=T, noise_multiplier=z,
                    stops_early=True,
                    details={"refresh_every": q, "refresh_rate": rate1,
                             "increment_rate": rate2, "increment_noise": ratio * z,
                             "smoothness": L, "clip_smoothness": L_clip, "threshold": alpha,
                             "max_step": max_step, "learning_rate": lr,
                             "relative_max_step": float(opts["relative_max_step"]),
                             "escape_step": eta_H, "radius": radius, "patience": patience,
                             "movement": (eta_H * alpha) ** 2,
                             "dual": opts["dual"], "ascent_steps": int(opts["ascent_steps"]),
                             "ascent_step": float(opts["ascent_step"])})

    def solve(self, queries, plan):
        """Algorithm 2 on Algorithm 3's estimates; the escape logic is post-processing."""
        spec, d = plan.spec, plan.details
        z, q, L = plan.noise_multiplier, d["refresh_every"], d["clip_smoothness"]
        penalty = spec.penalty
        rng = queries.rng
        x = queries.initial_coef()
        duals = (queries.duals(d["ascent_step"], d["ascent_steps"])
                 if d["dual"] == "per_record" else None)
        extra = {} if duals is None else {"duals": duals}
        x_prev = v = None
        escaping, anchor, n_escape, since = False, None, 0, 0
        sum_sq = 0.0
        n_iter = plan.n_iter

        def descend(x, g, norm):
            # the gradient step g / L, at most max(max_step, relative_max_step ||x||) long
            longest = max(d["max_step"], d["relative_max_step"] * float(np.linalg.norm(x)))
            return x - min(d["learning_rate"], longest / norm) * g

        for t in range(plan.n_iter):
            if duals is not None:
                duals.ascend(x)
            if t % q == 0:
                v = queries.batch(spec.noise(z, 1.0), d["refresh_rate"]).noisy_gradient(
                    x, z, **extra)
            else:
                C = L * float(np.linalg.norm(x - x_prev))
                if C > 0:  # no move, no query (and nothing released)
                    batch = queries.batch(spec.noise(d["increment_noise"], 1.0),
                                          d["increment_rate"])
                    v = v + batch.noisy_gradient_difference(x, x_prev, d["increment_noise"], C,
                                                            **extra)
            g = v + penalty.gradient(x)
            norm = float(np.linalg.norm(g))
            x_prev = x
            if not escaping:
                if norm >= d["threshold"]:
                    x = descend(x, g, norm)
                elif not spec.options["escape"]:  # release the first small estimate's point
                    n_iter = t + 1
                    break
                else:
                    escaping, anchor, since, sum_sq = True, x, 0, 0.0
                    x = x + public_uniform_ball(rng, x.shape, d["radius"])
            else:
                since += 1
                sum_sq += norm * norm
                if d["escape_step"] ** 2 * sum_sq > since * d["movement"]:
                    # the estimates grew: the iterate left the saddle, descend again
                    x = descend(x, g, norm)
                    escaping = False
                    n_escape += 1
                else:
                    # at most the perturbation radius per step: plain steps on an
                    # estimate that noise dominates would otherwise run off
                    x = x - min(d["escape_step"], d["radius"] / max(norm, 1e-300)) * g
                    if since == d["patience"]:  # the anchor is approximately second-order
                        n_iter = t + 1
                        break
        coef = anchor if escaping else x
        return SolverResult(coef=np.array(coef), n_iter=n_iter,
                            attributes={"n_escapes_": n_escape})


def public_uniform_ball(rng, shape, radius):
    """A point uniform in the ball of ``radius``.

    Public randomness: a perturbation direction, drawn independently of the
    data, is not a release (it is not noise on a value computed from the data).
    """
    u = rng.standard_normal(shape)
    size = int(np.prod(shape))
    return radius * rng.random() ** (1.0 / size) * u / np.linalg.norm(u)


register_solver(RecursiveGradientDescentAscent())

r"""Noisy gradient descent preconditioned by a private quadratic majorizer.

A GLM's loss has a public bound :math:`\kappa` on its second derivative in
the linear predictor (1/4 for the logistic loss, 1/2 in operator norm for
the multinomial one, 1/h for the smoothed hinge), so its Hessian at every
point is below :math:`\kappa \sum_i x_i x_i^\top` (Böhning and Lindsay's
bound [1]_ for the logistic loss). One release of the rows' second moment
(:meth:`~skdp.solvers.PrivateQueries.noisy_gram`, a Gaussian mechanism of
Frobenius sensitivity :math:`R^2`) therefore gives a preconditioner that
majorizes the objective:

.. math::

    M = \kappa \big[\tilde G\big]_+ + (\lambda + \alpha) I, \qquad
    W_{t+1} = W_t - M^{-1}\big(\tilde g_t + \nabla r(W_t)\big),

with :math:`\tilde G` the noisy second moment over n (its negative
eigenvalues set to 0), :math:`\tilde g_t` the noisy mean clipped gradient,
:math:`r` the penalty (smoothness :math:`\alpha`) and :math:`\lambda` the
spectral size of the Gram noise, :math:`\lambda = c\,\kappa\,\sigma
\sqrt{2p} / n` (``damping`` c, noise scale :math:`\sigma = z R^2`, p
parameters): a ridge that keeps the noise's directions from taking long
steps. Each step is a Newton step on the majorizer, so ill-conditioned
features (scales far apart) cost no extra steps, and a few tens of steps do
what gradient descent needs hundreds for.

Above 2000 parameters per output (``preconditioner='auto'``) only the
diagonal of the second moment is released (same sensitivity :math:`R^2`) and
the preconditioner is elementwise, :math:`M_j = \kappa [\tilde D_j]_+ +
\lambda + \alpha` with :math:`\lambda = c\,\kappa\,\sigma/n`: a Jacobi
preconditioner, not a majorizer, whose damping keeps the steps stable. There
the rows are ``[s x, 0.3]`` (option ``intercept_feature``; the loss's own
value, 1, in the full mode): a row bound of 1.044 instead of 1.414 at
``data_norm=1``, so fewer gradients are clipped and the diagonal's noise is
smaller (see :meth:`PreconditionedGD.intercept_feature`); and the diagonal,
mostly noise at that dimension, takes less of the budget than in the full
mode (its noise multiplier twice a gradient's, option ``gram_noise_ratio``).

At large n the first steps read a Poisson sample of the rows (options
``sampled_steps`` and ``sample_rows``): far from the minimiser a sample's
gradient points the way the full one does, and such a step costs the
sample's share of a pass. By default (full mode) the first 15 of the 30
steps read samples of expected size :math:`m = \max(10^5, 10^5/\epsilon)`
wherever :math:`m \le n/2`; the averaged tail stays on every row.

Privacy: ``Composed([Gaussian(ratio * z), Repeated(PoissonSampled(m / n,
Gaussian(z)), k), Repeated(Gaussian(z), T - k)])`` (k sampled steps, 0 at
small n) on the whole data (zero-out neighbours, n public; each sampled
step's mean is over the public expected size m), calibrated by the
accountant for (epsilon, delta); ``delta > 0`` and ``data_norm`` are
required (the Gram's sensitivity is :math:`R^2`, R the public row bound).

References
----------
.. [1] D. Böhning and B. G. Lindsay, "Monotonicity of quadratic-approximation
   algorithms", Ann. Inst. Statist. Math. 40, 1988.
.. [2] C. Dwork, K. Talwar, A. Thakurta and L. Zhang, "Analyze Gauss: optimal
   bounds for privacy-preserving principal component analysis", STOC 2014
   (the Gaussian mechanism on a second-moment matrix).
"""

import math
import warnings

import numpy as np

from ..accounting import Composed, Repeated, calibrate, noise_mechanism
from ..accounting.discrete import calibration_cache
from ..validation import (AT_LEAST_ONE, NONNEGATIVE_INT, POSITIVE, UNIT_INTERVAL_RIGHT_OPEN,
                          StrOptions)
from ._base import Plan, Solver, SolverResult
from ._registry import register_solver

__all__ = ["PreconditionedGD"]

#: steps when ``max_iter`` is None, the ridge's damping, the second moment's
#: noise multiplier relative to a gradient's and the averaged tail of the
#: iterates. Chosen on validation splits of training data, never on a test set
#: (``python benchmarks/defaults.py --tune``); the grid and the measurements are
#: in ``docs/solvers/preconditioned.md`` ("Options").
DEFAULT_STEPS = 30
#: largest number of parameters per output: the second moment is a dense p x p
#: matrix (p**2 floats) eigendecomposed once (p**3 operations); above it the
#: diagonal preconditioner (``docs/solvers/preconditioned.md``, "When to use it")
MAX_PARAMS = 2000
#: ``solver='auto'`` takes this solver from this many rows (below, on
#: scikit-learn's small sets, gd's budget rule did better; see
#: ``PreconditionedGD.auto_accepts``) and up to this many parameters per
#: output (its dense second moment), and again above MAX_PARAMS (the diagonal one)
AUTO_MIN_ROWS = 5000
AUTO_MAX_PARAMS = 1000
DEFAULT_DAMPING = 0.5
DEFAULT_GRAM_RATIO = 0.5
DEFAULT_AVERAGE = 0.5
#: the diagonal preconditioner (above ``MAX_PARAMS``): steps and damping chosen
#: on validation splits of Reuters' training file (``python
#: benchmarks/reuters_diagonal.py``, ``benchmarks/results/reuters_diagonal.md``;
#: ``docs/solvers/preconditioned.md``, "High dimension"). Most of the noisy
#: diagonal is noise there, so the damping sets the step length.
DIAGONAL_STEPS = 30
DIAGONAL_DAMPING = 8.0
#: the diagonal mode's noise ratio of the second moment (``gram_noise_ratio``),
#: chosen with the damping on the same validation splits: the noisy diagonal is
#: mostly noise at this dimension and the damping sets the step length (the
#: ridge is c times the diagonal's noise), so the budget goes to the gradients
DIAGONAL_GRAM_RATIO = 2.0
#: the value of the implicit intercept feature in the diagonal mode (the
#: loss's own, 1 for the logistic loss and the smoothed hinge, in the full
#: mode), chosen with the damping on the same validation splits: rows
#: ``[s x, 0.3]`` have a bound of 1.044 instead of 1.414 at ``data_norm=1``,
#: so fewer gradients are clipped and the second moment's noise is smaller
DIAGONAL_INTERCEPT = 0.3
#: the diagonal mode's averaged tail (``average``), chosen with the others on
#: the same validation splits (a third grid, of the tail): there the weights
#: are still growing over the last steps, so a long average lags behind them
DIAGONAL_AVERAGE = 0.4
#: the full mode's first steps on a Poisson sample of the rows (the rest, and
#: so the averaged tail, on all of them): the expected sample size is
#: ``max(SAMPLE_MIN_ROWS, SAMPLE_ROWS_EPSILON / epsilon)``, and no step is
#: sampled where that exceeds ``MAX_SAMPLING_RATE`` of the rows. Chosen on
#: validation splits of training data (``python benchmarks/sampled_steps.py``,
#: ``benchmarks/results/sampled_steps.md``; ``docs/solvers/preconditioned.md``,
#: "The first steps on a Poisson sample")
SAMPLED_STEPS = 15
SAMPLE_MIN_ROWS = 100_000
SAMPLE_ROWS_EPSILON = 100_000
MAX_SAMPLING_RATE = 0.5


def _sampled_steps(options, kind, n_steps, average, n_samples, epsilon):
    """The first steps that read a Poisson sample, and its rate (public).

    ``(k, q)``: ``k`` steps at sampling rate ``q`` (0 steps where the sample
    would hold more than ``MAX_SAMPLING_RATE`` of the rows); 'auto' is
    ``SAMPLED_STEPS`` steps in the full mode, none in the diagonal one, and
    a sample of ``max(SAMPLE_MIN_ROWS, SAMPLE_ROWS_EPSILON / epsilon)`` rows.
    The averaged tail (at least the last step) is never sampled.
    """
    k = options["sampled_steps"]
    if k == "auto":
        k = SAMPLED_STEPS if kind == "full" else 0
    rows = options["sample_rows"]
    if rows == "auto":
        rows = max(SAMPLE_MIN_ROWS, SAMPLE_ROWS_EPSILON / epsilon)
    q = float(rows) / n_samples
    if q > MAX_SAMPLING_RATE:
        return 0, 1.0
    return min(int(k), n_steps - max(1, int(round(average * n_steps)))), q


def _warn_fewer_sampled_steps(asked, k, q, n_steps, n_samples):
    """Warn when an explicit ``sampled_steps`` is cut (public: options, n, epsilon only)."""
    if asked == "auto" or int(asked) <= k:
        return
    if q >= 1.0:
        why = (f"a sample of the requested expected size would hold more than "
               f"{MAX_SAMPLING_RATE:g} of the {n_samples} rows, where sampling saves little; "
               f"set sample_rows to at most {MAX_SAMPLING_RATE * n_samples:g} to sample")
    else:
        why = (f"the averaged tail and the last step of the {n_steps} steps always read "
               f"every row; lower average or raise max_iter to sample more")
    warnings.warn(f"solver 'preconditioned_gd': sampled_steps={int(asked)} asked for, {k} "
                  f"taken: {why}.", UserWarning, stacklevel=2)


def _kind(options, n_params):
    """The preconditioner the options ask for, 'auto' resolved by the dimension."""
    kind = options["preconditioner"]
    if kind == "auto":
        kind = "full" if n_params <= MAX_PARAMS else "diagonal"
    return kind


@calibration_cache(maxsize=256)
def _calibrated(n_steps, ratio, epsilon, delta, sampled=0, rate=1.0):
    """The common multiplier z of the plan's mechanism (:func:`_mechanism`)."""
    return calibrate(lambda z: _mechanism(z, n_steps, ratio, delta, sampled, rate),
                     epsilon, delta)


def _mechanism(z, n_steps, ratio, delta, sampled, rate):
    """``Composed([Gaussian(ratio z), Repeated(PoissonSampled(rate, Gaussian(z)), sampled),
    Repeated(Gaussian(z), n_steps - sampled)])``: the second moment, the sampled steps, the
    full ones."""
    parts = [noise_mechanism(delta, 1.0)(z * ratio)]
    if sampled:
        parts.append(Repeated(noise_mechanism(delta, rate)(z), sampled))
    if n_steps > sampled:
        parts.append(Repeated(noise_mechanism(delta, 1.0)(z), n_steps - sampled))
    return Composed(parts)


class PreconditionedGD(Solver):
    """Noisy gradient descent preconditioned by a private quadratic majorizer.

    Options (``solver_params``)
    ---------------------------
    preconditioner : {'auto', 'full', 'diagonal'}, default='auto'
        'full': the majorizer above from the whole noisy second moment (p x p,
        eigendecomposed once; at most 2000 parameters per output).
        'diagonal': only the noisy diagonal of the second moment (one
        Gaussian mechanism on the p per-parameter sums of squares, same
        sensitivity :math:`R^2`), :math:`M = \\kappa [\\tilde D]_+ + (\\lambda +
        \\alpha)` elementwise with :math:`\\lambda = c\\,\\kappa\\,\\sigma/n`: a
        Jacobi preconditioner, which is not a majorizer (the damping keeps its
        steps stable), for any dimension in O(p) memory. 'auto': 'full' up to
        2000 parameters per output, 'diagonal' above.
    damping : 'auto' or float, default='auto'
        ``c`` of the ridge :math:`\\lambda = c\\,\\kappa\\,\\sigma\\sqrt{2p}/n`
        added to the noisy majorizer (the spectral size of its noise is
        about :math:`\\kappa\\sigma\\sqrt{2p}/n`), or of the diagonal's
        :math:`c\\,\\kappa\\,\\sigma/n`. 'auto': 0.5 (full), 8 (diagonal).
    gram_noise_ratio : 'auto' or float, default='auto'
        Noise multiplier of the second moment relative to each gradient's
        (a ratio of noise, as ``rgda``'s ``increment_noise_ratio``; formerly
        ``gram_noise_share``)
        (below 1: the one second moment gets more of the budget than a step).
        'auto': 0.5 (full), 2 (diagonal).
    average : 'auto' or float in [0, 1), default='auto'
        Fraction of the last iterates averaged into the release (0: the
        last iterate); post-processing, free. 'auto': 0.5 (full), 0.4
        (diagonal).
    intercept_feature : 'auto' or float, default='auto'
        The value ``c`` of the implicit intercept feature (rows ``[s x, c]``,
        bound :math:`\\sqrt{\\text{data\\_norm}^2 + c^2}`, released
        intercept ``c * W[-1]``). 'auto': 0.3 in the diagonal mode, the
        loss's own value (1 for the logistic loss and the smoothed hinge) in
        the full one.
    sampled_steps : 'auto' or int >= 0, default='auto'
        How many of the first steps read a Poisson sample of the rows (each
        charged as ``PoissonSampled(m / n, Gaussian(z))``, its mean taken
        over the public expected size ``m``); none where ``m > n / 2``, and
        never the averaged tail's steps (nor the last step). An explicit
        value cut by either rule warns (UserWarning).
        'auto': 15 in the full mode, 0 in the diagonal one.
    sample_rows : 'auto' or float >= 1, default='auto'
        The samples' expected size ``m``. 'auto': ``max(100000, 100000 /
        epsilon)``, so the sampled steps' noise on their mean gradient is
        at most that of a full-data fit with ``n * epsilon = 1e5``.
    """

    name = "preconditioned_gd"
    paper = ("skdp: quadratic majorizer (Böhning and Lindsay 1988) from a private "
             "second moment (Gaussian mechanism)")
    requires = frozenset({"gradient", "smooth", "convex", "penalty:smooth", "penalty:convex"})
    options = {"preconditioner": "auto", "damping": "auto",
               "gram_noise_ratio": "auto", "average": "auto",
               "intercept_feature": "auto", "sampled_steps": "auto", "sample_rows": "auto"}
    option_constraints = {"preconditioner": [StrOptions({"auto", "full", "diagonal"})],
                          "damping": [StrOptions({"auto"}), POSITIVE],
                          "gram_noise_ratio": [StrOptions({"auto"}), POSITIVE],
                          "average": [StrOptions({"auto"}), UNIT_INTERVAL_RIGHT_OPEN],
                          "intercept_feature": [StrOptions({"auto"}), POSITIVE],
                          "sampled_steps": [StrOptions({"auto"}), NONNEGATIVE_INT],
                          "sample_rows": [StrOptions({"auto"}), AT_LEAST_ONE]}
    renamed_options = {"gram_noise_share": "gram_noise_ratio"}

    auto_priority = 1

    def auto_accepts(self, facts):
        """Where the private majorizer pays (``solver='auto'``; public facts only).

        delta > 0 (its second moment is Gaussian), full batches, a row bound
        (``data_norm``), at least ``AUTO_MIN_ROWS`` rows, and either at most
        ``AUTO_MAX_PARAMS`` parameters per output (the full preconditioner:
        the second moment is dense, p**2 memory, one n p**2 pass, a p**3
        eigensolve) or more than ``MAX_PARAMS`` (the diagonal one, O(p));
        in between, gd. The registry checks the loss and penalty (a
        curvature bound, a smooth penalty). Chosen on validation splits of
        training data (``python benchmarks/defaults.py``): below the row
        threshold gd's budget rule did better on scikit-learn's small sets;
        above ``MAX_PARAMS`` the diagonal preconditioner beat gd on
        validation splits of Reuters' training file for both classifiers
        (``python benchmarks/reuters_diagonal.py``). The measurements are in
        ``docs/solvers/preconditioned.md`` ("When to use it", "High
        dimension"). Fewer steps at small n (3 or 10, each release with a
        larger share of the budget) were weighed too and lost to its 30
        steps in every validation cell of breast_cancer and digits
        (``benchmarks/small_data.py``; ``docs/solvers/small_data.md``), so
        the rule has no small-n branch.

        Parameters
        ----------
        facts : mapping
            See :func:`skdp.solvers.auto_solver`.

        Returns
        -------
        bool
        """
        n, p = facts.get("n_samples"), facts.get("n_params")
        return bool(n is not None and n >= AUTO_MIN_ROWS and p is not None
                    and (p <= AUTO_MAX_PARAMS or p > MAX_PARAMS)
                    and facts.get("delta_positive")
                    and facts.get("full_batch") and facts.get("row_bound"))

    def intercept_feature(self, loss_value, n_params, options):
        """The option ``intercept_feature``; 'auto': 0.3 in the diagonal mode, else the loss's value.

        Public (the options and the dimension). Chosen on validation splits
        of Reuters' training file with the diagonal mode's damping (``python
        benchmarks/reuters_diagonal.py``; ``docs/solvers/preconditioned.md``,
        "High dimension").

        Parameters
        ----------
        loss_value : float
            The loss's own value of the intercept feature.
        n_params : int
            Parameters per output.
        options : mapping
            The validated options (``preconditioner``).

        Returns
        -------
        float
        """
        if options["intercept_feature"] != "auto":
            return float(options["intercept_feature"])
        return DIAGONAL_INTERCEPT if _kind(options, n_params) == "diagonal" else loss_value

    def plan(self, spec):
        """Steps and the common noise multiplier of the Gram and the gradients (public)."""
        if spec.delta <= 0:
            raise ValueError(
                "solver 'preconditioned_gd' releases a noisy second moment with Gaussian "
                "noise and needs delta > 0; use solver='gd' for pure epsilon-DP (delta=0).")
        if spec.row_bound is None or spec.smoothness is None:
            raise ValueError(
                "solver 'preconditioned_gd' needs a public bound on the row norms (the "
                "second moment's sensitivity and the loss's curvature bound): set data_norm.")
        p = spec.coef_shape[0]
        kind = _kind(spec.options, p)
        if kind == "full" and p > MAX_PARAMS:
            raise ValueError(
                f"solver 'preconditioned_gd' with preconditioner='full' forms a dense second "
                f"moment of the {p} parameters per output and eigendecomposes it (p**2 "
                f"memory, p**3 time); its limit is {MAX_PARAMS}: use "
                f"solver_params={{'preconditioner': 'diagonal'}} (or 'auto') in this "
                f"dimension.")
        if spec.sampling_rate < 1.0:
            raise ValueError(
                "solver 'preconditioned_gd' runs on full batches; leave batch_size=None.")
        diagonal = kind == "diagonal"
        if spec.max_iter is not None:
            T = int(spec.max_iter)
        else:
            T = DIAGONAL_STEPS if diagonal else DEFAULT_STEPS
        damping = spec.options["damping"]
        if damping == "auto":
            damping = DIAGONAL_DAMPING if diagonal else DEFAULT_DAMPING
        ratio = spec.options["gram_noise_ratio"]
        if ratio == "auto":
            ratio = DIAGONAL_GRAM_RATIO if diagonal else DEFAULT_GRAM_RATIO
        ratio = float(ratio)
        average = spec.options["average"]
        if average == "auto":
            average = DIAGONAL_AVERAGE if diagonal else DEFAULT_AVERAGE
        k, q = _sampled_steps(spec.options, kind, T, float(average), spec.n_samples,
                              float(spec.epsilon))
        _warn_fewer_sampled_steps(spec.options["sampled_steps"], k, q, T, spec.n_samples)
        z = _calibrated(T, ratio, float(spec.epsilon), float(spec.delta), k, q)
        mechanism = _mechanism(z, T, ratio, float(spec.delta), k, q)
        return Plan(spec=spec, mechanism=mechanism, n_iter=T, noise_multiplier=z,
                    details={"gram_noise_multiplier": z * ratio, "preconditioner": kind,
                             "damping": float(damping), "average": float(average),
                             "sampled_steps": k, "sampling_rate": q})

    def solve(self, queries, plan):
        """One noisy second moment, then ``T`` preconditioned noisy gradient steps."""
        spec = plan.spec
        z = plan.noise_multiplier
        R2 = float(spec.row_bound) ** 2
        kappa = float(spec.smoothness) / R2           # the loss's curvature bound
        sigma = plan.details["gram_noise_multiplier"] * R2
        penalty_curvature = spec.penalty.smoothness or 0.0
        p = spec.coef_shape[0]
        if plan.details["preconditioner"] == "diagonal":
            D = queries.noisy_gram_diagonal(plan.details["gram_noise_multiplier"])
            ridge = plan.details["damping"] * kappa * sigma / spec.n_samples
            inverse = 1.0 / (kappa * np.maximum(D, 0.0) + ridge + penalty_curvature)

            def precondition(g):
                return g * (inverse if g.ndim == 1 else inverse[:, None])
        else:
            G = queries.noisy_gram(plan.details["gram_noise_multiplier"])
            ridge = plan.details["damping"] * kappa * sigma * math.sqrt(2.0 * p) / spec.n_samples
            with queries.one_blas_thread():  # LAPACK's rounding follows its thread count
                values, vectors = np.linalg.eigh(G)
            scale = kappa * np.maximum(values, 0.0) + ridge + penalty_curvature

            def precondition(g):
                step = vectors @ ((vectors.T @ g.reshape(p, -1)) / scale[:, None])
                return step.reshape(g.shape)
        start = queries.initial_coef()
        W = np.zeros(spec.coef_shape) if start is None else np.array(start, dtype=np.float64)
        T = plan.n_iter
        first = T - int(round(plan.details["average"] * T))  # the averaged tail
        total = np.zeros_like(W)
        for t in range(T):
            if t < plan.details["sampled_steps"]:
                g = queries.noisy_gradient(W, z, sampling_rate=plan.details["sampling_rate"])
            else:
                g = queries.noisy_gradient(W, z)
            g = g + spec.penalty.gradient(W)
            W = W - precondition(g)
            if t >= first:
                total += W
        coef = W if first >= T else total / (T - first)
        return SolverResult(coef=coef, n_iter=T)


register_solver(PreconditionedGD())

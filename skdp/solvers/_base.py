"""What every solver receives and returns: the problem, the plan, the result."""

from dataclasses import dataclass, field

import numpy as np

from .._param_validation import validate_params

__all__ = ["Problem", "Plan", "SolverResult", "Solver"]


@dataclass
class Problem:
    r"""A private empirical-risk-minimisation problem.

    .. math::

        \min_W \; \frac{1}{n} \sum_i \ell_i(W) + \frac{\alpha}{2} \|W_{pen}\|^2

    where ``W_pen`` omits the unpenalised rows (the intercept).

    Parameters
    ----------
    loss : loss object
        A data-fit bound to the training data (see :mod:`skdp.losses`).
    alpha : float
        L2 penalty strength (public).
    clip_norm : float
        Per-example gradient norm bound (public): the sensitivity of a
        gradient sum under zero-out neighbours.
    penalised : ndarray of bool or None
        Mask of the same shape as the coefficients, True where the penalty
        applies; None penalises everything.
    init : ndarray or None
        Public starting point; None starts at zero.
    """

    loss: object
    alpha: float
    clip_norm: float
    penalised: np.ndarray = None
    init: np.ndarray = None

    @property
    def n_samples(self):
        return self.loss.n_samples

    @property
    def coef_shape(self):
        return self.loss.coef_shape

    @property
    def capabilities(self):
        return self.loss.capabilities

    def initial_coef(self):
        if self.init is not None:
            return np.array(self.init, dtype=np.float64)
        return np.zeros(self.coef_shape)

    def penalty_grad(self, W):
        """Gradient of the (data-independent) penalty."""
        if self.penalised is None:
            return self.alpha * W
        return self.alpha * W * self.penalised

    def objective(self, W):
        """Non-private objective value (diagnostics and benchmarks only)."""
        Wp = W if self.penalised is None else W * self.penalised
        return self.loss.mean_loss(W) + 0.5 * self.alpha * float(np.sum(Wp * Wp))

    def smoothness(self):
        """Public smoothness of the objective, or None when it has no public bound."""
        L = self.loss.smoothness()
        return None if L is None else L + self.alpha

    def strong_convexity(self):
        """Public strong-convexity constant of the objective (the penalty's)."""
        return self.alpha


@dataclass(frozen=True)
class Plan:
    """A solver's privacy plan, computed from public quantities only.

    Attributes
    ----------
    mechanism : skdp.accounting.Mechanism
        The calibrated mechanism tree the fit will run (what is charged).
    noise_multiplier : float
        Noise standard deviation (Gaussian) or scale (Laplace) per unit of
        sensitivity of the base step; solvers with several noise levels keep
        them in ``details``.
    n_iter : int
        Number of iterations the plan provides for.
    details : dict
        Solver-specific calibrated quantities (per-step scales, rates, ...).
    """

    mechanism: object
    noise_multiplier: float
    n_iter: int
    details: dict = field(default_factory=dict)


@dataclass
class SolverResult:
    """Outcome of a solve: released coefficients and the cost actually charged.

    Attributes
    ----------
    coef : ndarray
        Final (private) parameters.
    n_iter : int
        Iterations run.
    cost : skdp.accounting.Mechanism
        The mechanism tree actually run.
    history : list
        Released (private) per-iteration quantities, e.g. iterates' norms.
    """

    coef: np.ndarray
    n_iter: int
    cost: object
    history: list = field(default_factory=list)


class Solver:
    """Base class of private solvers.

    A solver declares the loss ``capabilities`` it needs in ``requires``,
    its ``options`` (name -> default) accepted through ``solver_params``
    with their ``option_constraints`` (declared like estimator parameters,
    see :mod:`skdp._param_validation`), and implements ``plan`` (public
    quantities only, no data), ``check_problem`` (options against the
    problem's public constants, before the charge) and ``solve``.
    """

    name = None
    paper = None
    requires = frozenset({"gradient"})
    options = {}
    option_constraints = {}

    def check_options(self, options):
        """Fill defaults, reject unknown names and values outside their constraints."""
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise ValueError(
                f"Unknown solver_params {unknown} for solver {self.name!r}; "
                f"valid options are {sorted(self.options)}."
            )
        merged = dict(self.options)
        merged.update(options)
        validate_params(f"solver {self.name!r}", merged, self.option_constraints)
        return merged

    def check_problem(self, problem, options):
        """Raise ValueError if ``options`` cannot run on ``problem`` (public constants only)."""

    def plan(self, n_samples, epsilon, delta, *, max_iter=None, batch_size=None, **options):
        raise NotImplementedError  # pragma: no cover

    def solve(self, problem, epsilon, delta, rng, *, plan, **options):
        raise NotImplementedError  # pragma: no cover

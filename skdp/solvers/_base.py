"""The seam between solvers and data: a public spec, a plan, private queries, a result.

A fit builds a :class:`ProblemSpec` (everything public about it) before any
data value is read; the solver's ``plan(spec)`` runs once and its mechanism
is what the accountant checks and charges; ``solve(queries, plan)`` reaches
the data only through :class:`~skdp.solvers.PrivateQueries`, whose every
query draws its noise and is counted against the plan. See the developers
guide in the documentation for how to add a solver.
"""

from dataclasses import dataclass, field, replace
from typing import Mapping, Optional

import numpy as np

from ..validation import validate_params
from ..accounting import noise_mechanism
from ..penalties import L2Penalty

__all__ = ["L2Penalty", "ProblemSpec", "Plan", "SolverResult", "Solver"]


@dataclass(frozen=True, eq=False)
class ProblemSpec:
    """Everything public about one fit, built from parameters and metadata only.

    Holds no data: a solver that sees only the spec, its plan and the
    :class:`~skdp.solvers.PrivateQueries` cannot read a training value.

    Parameters
    ----------
    n_samples : int
        Number of records (public under zero-out neighbours).
    coef_shape : tuple of int
        Shape of the parameter array the solver returns.
    loss_capabilities : frozenset of str
        What the loss states it is: 'gradient', 'gradient_difference'
        (clipped sums of per-example gradient differences between two
        points: SPIDER's increments), 'grouped_gradient' (clipped
        gradient sums of several groups of rows, each at its own
        parameters: the per-node queries of decentralised solvers),
        'smooth', 'convex', 'hessian',
        'values' (per-example loss values, clippable to [0, C], for
        queries such as AboveThreshold on loss decreases), 'least_squares'
        (the loss fits real-valued responses: a regression).
    smoothness : float or None
        The loss's public smoothness bound (from ``data_norm``), None when it
        has none.
    initial_value : float or None
        A public bound on the objective at the start (``F(0)`` for losses
        whose value at margin 0 is known and fits that start at 0), None
        when unknown or when the estimator draws a random start.
    penalty : L2Penalty or NonConvexPenalty
        The penalty object (:mod:`skdp.penalties`).
    clip_norm : float
        Per-example gradient bound: the sensitivity of a clipped sum.
    data_norm : float or None
        The estimator's public bound on the L2 norm of each row (rows above
        it are scaled down to it before the loss sees them); None when rows
        are not bounded, and then no smoothness constant derives from it.
    epsilon : float
        The privacy budget of the whole fit, > 0: the plan's mechanism must
        compose to at most (``epsilon``, ``delta``).
    delta : float
        The fit's delta, in [0, 1); 0 asks for pure epsilon-DP (Laplace
        noise, L1 sensitivities).
    batch_size : int or None
        Expected Poisson batch size; None for full batches.
    max_iter : int or None
        Iteration budget; None lets the solver choose.
    options : mapping
        The solver's options, validated and with defaults filled in.
    hessian_bound : float or None
        Public bound on the Frobenius norm of one example's Hessian (from
        ``data_norm``), None when there is none.
    hessian_lipschitz : float or None
        Public Lipschitz constant of the loss's Hessian (operator norm), None
        when there is none.
    row_bound : float or None
        Public bound on the norm of an implicit row ``[s x, c]`` (from
        ``data_norm`` and the intercept feature ``c``), None when rows are
        not clipped.
    stand_ins : mapping, default={}
        Public constants the loss reports where it has no bound to derive a
        solver's default from (the loss's ``stand_ins``; never data). Keys,
        each optional: ``'step'`` (a stable step size where there is no
        smoothness bound), ``'iterations'`` (the run length its defaults
        were measured for), ``'loss_scale'`` (the scale of one example's
        loss change, relative to 1), ``'hessian_clip'`` (a clip of one
        example's Hessian, Frobenius norm), ``'hessian_lipschitz'`` (a
        stand-in for the Lipschitz constant of the Hessian) and
        ``'example_smoothness'`` (a stand-in for the smoothness of one
        example's loss). Each solver derives its defaults from them in
        ``plan`` (see :meth:`Solver.with_options`).
    intercept_scale : float or None, default=None
        The value ``c`` of the implicit intercept feature where the solver
        sets one other than the loss's (:meth:`Solver.intercept_feature`);
        None: the loss's own (and without an intercept). Public; the
        design's rows and ``row_bound`` use it, and the released intercept
        is ``c * W[-1]``.
    """

    n_samples: int
    coef_shape: tuple
    loss_capabilities: frozenset
    smoothness: Optional[float]
    initial_value: Optional[float]
    penalty: L2Penalty
    clip_norm: float
    data_norm: Optional[float]
    epsilon: float
    delta: float
    batch_size: Optional[int] = None
    max_iter: Optional[int] = None
    options: Mapping = field(default_factory=dict)
    hessian_bound: Optional[float] = None
    hessian_lipschitz: Optional[float] = None
    row_bound: Optional[float] = None
    stand_ins: Mapping = field(default_factory=dict)
    intercept_scale: Optional[float] = None

    @property
    def capabilities(self):
        """The loss's capabilities plus ``'penalty:<capability>'`` for the penalty's."""
        return self.loss_capabilities | {f"penalty:{c}" for c in self.penalty.capabilities}

    @property
    def n_params(self):
        return int(np.prod(self.coef_shape))

    @property
    def sampling_rate(self):
        """Poisson sampling rate ``batch_size / n`` (1.0 for full batches)."""
        if self.batch_size is None or self.batch_size >= self.n_samples:
            return 1.0
        return self.batch_size / self.n_samples

    def noise(self, noise_multiplier, sampling_rate=None):
        """One noisy-gradient mechanism of this fit (Laplace if delta is 0, else Gaussian).

        Parameters
        ----------
        noise_multiplier : float
            Noise scale per unit of sensitivity (standard deviation for the
            Gaussian, scale for the Laplace mechanism), > 0.
        sampling_rate : float or None, default=None
            Poisson sampling rate of the query; None uses the spec's
            :attr:`sampling_rate` (``batch_size / n``, 1.0 for full batches).

        Returns
        -------
        Mechanism
            :class:`~skdp.accounting.Gaussian` (``delta > 0``) or
            :class:`~skdp.accounting.Laplace` (``delta = 0``), wrapped in
            :class:`~skdp.accounting.PoissonSampled` when the rate is below 1.
        """
        rate = self.sampling_rate if sampling_rate is None else sampling_rate
        return noise_mechanism(self.delta, rate)(noise_multiplier)

    @property
    def objective_smoothness(self):
        """Public smoothness of loss plus penalty, or None."""
        if self.smoothness is None or self.penalty.smoothness is None:
            return None
        return self.smoothness + self.penalty.smoothness

    @property
    def convex_objective(self):
        """Whether loss and penalty are both convex (public)."""
        return "convex" in self.loss_capabilities and "convex" in self.penalty.capabilities

    @property
    def objective_hessian_lipschitz(self):
        """Public Lipschitz constant of the objective's Hessian, or None."""
        if self.hessian_lipschitz is None:
            return None
        return self.hessian_lipschitz + self.penalty.hessian_lipschitz

    @property
    def strong_convexity(self):
        """Public strong convexity of the objective (the penalty's; the loss is convex)."""
        if "convex" not in self.loss_capabilities:
            return 0.0
        return self.penalty.strong_convexity


@dataclass(frozen=True)
class Plan:
    """A solver's privacy plan, computed once from the spec.

    Built by a solver's ``plan(spec)`` from public quantities only, before
    the data is read; every parameter is stored as an attribute of the same
    name.

    Parameters
    ----------
    spec : ProblemSpec
        The spec the plan was computed from.
    mechanism : skdp.accounting.Mechanism
        The calibrated mechanism tree the fit may run: what is charged, and
        the most :class:`~skdp.solvers.PrivateQueries` will let the solver run.
    n_iter : int
        Number of iterations the plan provides for.
    noise_multiplier : float, default=nan
        The base noise multiplier (per unit of sensitivity); NaN when the
        solver has no single one.
    details : dict, default={}
        Solver-specific public quantities (per-step scales, steps, ...).
    adaptive : bool, default=False
        False: ``mechanism`` is the list of queries the solver will run.
        True: the solver chooses its queries as it runs, under a
        :class:`~skdp.accounting.PrivacyFilter` whose charge is ``mechanism``
        (``PrivacyFilter(...).mechanism``); ``n_iter`` is then the number of
        iterations the calibration planned for, not a promise.
    stops_early : bool, default=False
        True: the solver may stop before ``n_iter`` iterations on a
        decision about its released outputs (e.g. a stationarity test on
        noisy estimates); ``mechanism`` is charged whole all the same, and
        the queries not run are simply not used.
    """

    spec: ProblemSpec
    mechanism: object
    n_iter: int
    noise_multiplier: float = float("nan")
    details: dict = field(default_factory=dict)
    adaptive: bool = False
    stops_early: bool = False


@dataclass
class SolverResult:
    """Outcome of a solve.

    Returned by a solver's ``solve(queries, plan)``; every parameter is
    stored as an attribute of the same name. Everything in it is released
    by the estimator, so it must be computed from noisy query answers and
    public quantities only.

    Parameters
    ----------
    coef : ndarray
        Final (private) parameters, of shape ``spec.coef_shape``.
    n_iter : int
        Iterations run (a released quantity).
    attributes : dict, default={}
        Further released quantities the estimator stores as fitted
        attributes (names ending in ``_``), e.g. ``certified_``.
    """

    coef: np.ndarray
    n_iter: int
    attributes: dict = field(default_factory=dict)


def _pointer(new):
    """``'name'``, or ``'name' (note)`` for a ``(name, note)`` pair of ``renamed_options``."""
    if isinstance(new, tuple):
        return f"{new[0]!r} ({new[1]})"
    return repr(new)


class Solver:
    """Base class of private solvers: ``plan(spec)`` and ``solve(queries, plan)``.

    A solver declares the capabilities it needs in ``requires`` (loss
    capabilities, and ``'penalty:...'`` for the penalty's), its ``options``
    (name -> default, given through ``solver_params``) with their
    ``option_constraints`` (see :mod:`skdp.validation`), and the
    ``paper`` it implements. ``renamed_options`` maps an option's former
    name to its current one (or to ``(current, note)``; one name per concept across solvers: see the
    table in ``docs/solvers/index.md``); a former name is refused with a
    pointer to the current one.
    """

    name = None
    paper = None
    requires = frozenset({"gradient"})
    options = {}
    option_constraints = {}
    renamed_options = {}
    # rank among the solvers ``solver='auto'`` may pick (highest wins); None never
    auto_priority = None

    def auto_accepts(self, facts):
        """Whether ``solver='auto'`` may pick this solver for a fit with these public facts.

        Parameters
        ----------
        facts : mapping
            See :func:`skdp.solvers.auto_solver`.

        Returns
        -------
        bool
            True when the facts allow this solver (the base class accepts every fit).
        """
        return True

    def intercept_feature(self, loss_value, n_params, options):
        """The value ``c`` of the implicit intercept feature in this solver's fits.

        Public (from the loss, the shape and the options): it sets the rows
        ``[s x, c]`` the loss reads and their bound ``sqrt(data_norm**2 + c**2)``.

        Parameters
        ----------
        loss_value : float
            The loss's own value (its ``intercept_scale``).
        n_params : int
            Parameters per output (the features, plus one for the intercept).
        options : mapping
            The solver's options, validated, with their defaults.

        Returns
        -------
        float
            ``loss_value`` here: a solver whose measurements favour another
            value says so in its override.
        """
        return loss_value

    def poor_on_few_rows(self, loss_capabilities):
        """Whether fits on a few hundred rows score poorly (the estimators' ``poor_score`` tag).

        Parameters
        ----------
        loss_capabilities : frozenset of str
            What the loss states it is.

        Returns
        -------
        bool
            False here: the solver's own measurement says otherwise.
        """
        return False

    def check_options(self, options):
        """Fill defaults, reject unknown names and values outside their constraints.

        Reads parameters only (no data), so a bad option costs no privacy.

        Parameters
        ----------
        options : dict
            The options given through ``solver_params`` (name -> value).

        Returns
        -------
        dict
            The solver's ``options`` defaults updated with ``options``.

        Raises
        ------
        ValueError
            For a former option name (the message names the current one),
            an unknown option name, or a value that no declared form of
            ``option_constraints`` accepts.
        """
        renamed = sorted(set(options) & set(self.renamed_options))
        if renamed:
            pointers = "; ".join(f"{old!r} is now {_pointer(self.renamed_options[old])}"
                                 for old in renamed)
            raise ValueError(
                f"solver_params of solver {self.name!r} use former option names: "
                f"{pointers}. Rename them (skdp uses one option name per concept "
                "across solvers; see the table in docs/solvers/index.md)."
            )
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

    @staticmethod
    def with_options(spec, derived):
        """``spec`` with the ``'auto'`` options in ``derived`` resolved (public).

        A solver's ``plan`` derives its defaults from the spec's public
        constants (``smoothness``, ``stand_ins``, capabilities) and returns
        the plan of the resolved spec, so ``solve`` and the fitted
        ``solver_params_`` see the values the run used. Options the user
        gave are kept.

        Parameters
        ----------
        spec : ProblemSpec
            The public problem, with the options as the user gave them.
        derived : dict
            Option name -> value derived from public constants.

        Returns
        -------
        ProblemSpec
            ``spec`` with every ``'auto'`` option named in ``derived`` replaced.
        """
        resolved = {k: v for k, v in derived.items() if spec.options.get(k) == "auto"}
        if not resolved:
            return spec
        return replace(spec, options={**spec.options, **resolved})

    def check_backend(self, spec, backend):
        """Refuse, before the charge, options that cannot run where the data lives.

        Called once per fit, after :meth:`plan` and before the data is read;
        the default accepts every back end.

        Parameters
        ----------
        spec : ProblemSpec
            Everything public about the fit (no data).
        backend : {'memory', 'dask'}
            Where the data lives: in the driver's memory, or in the blocks
            of a dask collection (a public property of the input).

        Raises
        ------
        ValueError
            If the options ask for another back end than the data's.
        """

    def plan(self, spec):
        """Calibrate the run from public quantities; raise ValueError if it cannot run.

        Called once per fit, before the data is read; its mechanism is what
        the accountant checks and charges.

        Parameters
        ----------
        spec : ProblemSpec
            Everything public about the fit (no data).

        Returns
        -------
        Plan
            The calibrated mechanism tree and the public quantities of the
            run (iterations, noise multiplier, solver-specific details).

        Raises
        ------
        ValueError
            If the solver cannot run on this spec (e.g. no public constant it
            needs, or a budget too small for one iteration).
        """
        raise NotImplementedError  # pragma: no cover

    def solve(self, queries, plan):
        """Run the planned iterations through ``queries``; return a SolverResult.

        Parameters
        ----------
        queries : PrivateQueries
            The only access to the data: noisy clipped queries, each counted
            against ``plan.mechanism`` (one beyond the plan raises
            :class:`~skdp.solvers.QueryBudgetError` before it runs).
        plan : Plan
            What :meth:`plan` returned for this fit.

        Returns
        -------
        SolverResult
            The final parameters, the iterations run and any further
            released quantities.
        """
        raise NotImplementedError  # pragma: no cover

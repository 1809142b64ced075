"""Docstring paragraphs several estimators share, written once.

An estimator's docstring holds a placeholder line ``{{name}}`` (indented
like the text around it) where a shared parameter entry belongs;
:func:`fill_doc` replaces it with the entry of :data:`PARAMETERS`, indented
the same, so ``help()``, IDEs and the API pages show the complete text. An
entry that differs by one word (a class name) takes it as ``{{name:word}}``
(``$arg`` in the entry).
"""

import re
from string import Template

__all__ = ["PARAMETERS", "fill_doc"]

_PLACEHOLDER = re.compile(r"^( *)\{\{(\w+)(?::(\w+))?\}\}$", re.MULTILINE)

#: numpydoc entries of the parameters (and fitted attributes) the private
#: estimators share; lines indented under a placeholder in a docstring follow
#: the entry's text (an estimator's own addition)
PARAMETERS = {
    "epsilon": """\
epsilon : float, default=1.0
    Privacy budget of one fit; must be > 0.""",
    "solver": """\
solver : str, default='auto'
    Name of a registered solver (see
    :func:`skdp.solvers.available_solvers`); 'auto' picks
    ``'preconditioned_gd'`` (a private quadratic majorizer: 30 noisy
    Newton-like steps) from 5,000 rows and up to 1,000 parameters per
    output, or above 2,000 (its diagonal preconditioner), when
    ``delta > 0``, ``data_norm`` is set, ``batch_size`` is
    None and the loss and penalty are smooth, else ``'gd'``; the choice
    reads only public quantities and is recorded in ``solver_``.""",
    "fit_intercept": """\
fit_intercept : bool, default=True
    Whether to fit an intercept (a constant feature 1, clipped with the
    rest of the gradient).""",
    "clip_norm": """\
clip_norm : float, default=1.0
    Per-example gradient norm bound: the sensitivity of every gradient
    sum.""",
    "max_iter": """\
max_iter : int or None, default=None
    Number of private iterations; None lets the solver choose.""",
    "batch_size": """\
batch_size : int or None, default=None
    Expected batch size of Poisson-sampled minibatches (DP-SGD); None
    uses full batches.""",
    "solver_params": """\
solver_params : dict or None, default=None
    Solver-specific options (see each solver's documentation).""",
    "verbose": """\
verbose : int, default=0
    Progress messages; they only show released quantities.""",
    "feature_names_in_": """\
n_features_in_ : int
feature_names_in_ : ndarray of shape (n_features,)
    Defined only when X has feature names that are all strings.""",
    "fit_record_": """\
n_iter_ : int
    Private iterations run.
solver_ : str
    The solver used ('auto' resolved).
solver_params_ : dict
    The solver options the fit used (defaults filled in; public constants).
privacy_spent_ : tuple of (float, float)
    The (epsilon, delta) charged to the accountant by this fit.""",
    "delta": """\
delta : 'auto' or float, default='auto'
    Privacy failure probability, in [0, 1). 'auto' resolves at fit from
    the public number of rows n to ``min(1e-5, 1 / (10 n))``
    (:func:`skdp.validation.resolve_delta`): a delta at or above
    ``1 / n`` voids the guarantee (a mechanism that publishes each record
    with probability delta is (0, delta)-DP), and ``1 / (10 n)`` keeps
    it an order below that for any n. The resolved value is what is
    charged and what ``privacy_spent_`` shows. ``delta=0`` runs a pure
    epsilon-DP solver (Laplace noise); an explicit delta above ``1 / n``
    warns with :class:`~skdp.PrivacyWarning`.""",
    "accountant": """\
accountant : BudgetAccountant or None, default=None
    Budget accountant charged with every fit (clones and copies keep
    it). None charges the accountant of the innermost
    ``with accountant:`` block in force when the estimator is fitted
    (or, for clones and pickled copies: GridSearchCV workers, threads,
    processes, the one in force where they were cloned or pickled),
    else the process default accountant (see
    :func:`skdp.accounting.current_accountant`).""",
    "random_state": """\
random_state : int, RandomState, Generator or None, default=None
    Seed of the noise. None (default) draws fresh OS entropy: use it in
    production. With an int (or a RandomState / Generator, from which a
    seed is drawn), the noise of a fit is drawn from the seed and the
    fit's position among the fits charged to its accountant with the
    same seed: fits charged to one accountant never share noise (clones
    in GridSearchCV get distinct noise), and a fit replays exactly when
    run again with the same seed against a fresh accountant with the
    same history. The process default accountant (no ``accountant`` and
    no ``with accountant:`` block) keeps scikit-learn's "same seed, same
    model": its seeded fits replay the seed's noise, and it reports
    epsilon = inf once a seed is used twice. A known seed makes the
    noise predictable: seeds are for experiments.""",
    "secure_mode": """\
secure_mode : bool, default=False
    Resist floating-point attacks on the noise (Mironov 2012; Haney et
    al. 2022; Jin et al. 2022). With True every release rounds its exact
    value to a public grid of granularity :math:`2^k` and adds discrete
    Gaussian (``delta > 0``) or discrete Laplace (``delta = 0``) noise
    sampled exactly, in integer arithmetic, from the operating system's
    CSPRNG; the accountant charges these discrete mechanisms, rounding
    included, so the same budget buys slightly more noise (see
    :mod:`skdp.accounting.discrete`). ``random_state`` cannot seed secure
    noise: it is ignored, with a warning. Parts with no exact form are
    refused with a ValueError before any charge: the Gaussian sparse
    vector (``solver='line_search'`` / ``'second_order'`` searches with
    ``delta > 0``); the Hessian operator never formed (``second_order``
    on many features) fails when it is reached.""",
    "scaler_accountant": """\
accountant : BudgetAccountant or None, default=None
    Charged with every fit; None uses the one in force (see
    :class:`~skdp.DPLogisticRegression`).
random_state : int, RandomState, Generator or None, default=None
    Seed of the noise.""",
    "scaler_fit_record_": """\
privacy_spent_ : tuple of (float, float)
    The ``(epsilon, delta)`` charged to the accountant by the fit.
n_samples_seen_ : int
    The public number of records.
n_features_in_ : int
    Number of features seen during ``fit``.
feature_names_in_ : ndarray of shape (n_features,)
    Defined only when X has feature names that are all strings.""",
    "scaler_fit_returns": """\
y : None
    Ignored.

Returns
-------
self : $arg
    The fitted scaler. The accountant has been charged ``(epsilon,
    delta)`` (recorded in ``privacy_spent_``); a fit that raises
    before the charge costs nothing and leaves the scaler unchanged.""",
}

#: the run's controls, the private linear models' last parameters, in order
PARAMETERS["run_controls"] = "\n".join(
    PARAMETERS[name] for name in ("max_iter", "batch_size", "solver_params", "accountant",
                                  "random_state", "verbose", "secure_mode"))


def _entry(match):
    indent, name, arg = match.groups()
    text = PARAMETERS[name] if arg is None else Template(PARAMETERS[name]).substitute(arg=arg)
    return "\n".join(indent + line if line else line for line in text.splitlines())


def fill_doc(obj):
    """Replace each ``{{name}}`` placeholder line of ``obj.__doc__`` by its shared entry.

    Parameters
    ----------
    obj : class or function
        Its docstring may hold placeholder lines naming keys of
        :data:`PARAMETERS`.

    Returns
    -------
    obj
        The same object, its docstring filled in (for use as a decorator).

    Raises
    ------
    KeyError
        If a placeholder names no shared entry.
    """
    if obj.__doc__:
        obj.__doc__ = _PLACEHOLDER.sub(_entry, obj.__doc__)
    return obj

"""The solver registry: one table of every private solver skdp knows."""

import threading

__all__ = ["register_solver", "unregister_solver", "get_solver", "available_solvers",
           "unmet_requirements", "auto_solver"]

_REGISTRY = {}
_LOCK = threading.Lock()


def register_solver(solver, *, force=False):
    """Add a solver to the registry.

    Parameters
    ----------
    solver : Solver
        An instance with ``name``, ``paper``, ``requires``, ``options``,
        ``plan`` and ``solve`` (see :class:`skdp.solvers.Solver`).
    force : bool, default=False
        Replace an existing solver of the same name. Without it a duplicate
        name raises ValueError.

    Returns
    -------
    solver : Solver
        The registered solver (so this can decorate a factory).
    """
    name = getattr(solver, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError("A solver needs a non-empty string attribute 'name'.")
    for attr in ("plan", "solve", "requires"):
        if not hasattr(solver, attr):
            raise ValueError(f"Solver {name!r} has no attribute {attr!r}.")
    with _LOCK:
        if name in _REGISTRY and not force:
            raise ValueError(
                f"A solver named {name!r} is already registered; pass force=True "
                "to replace it."
            )
        _REGISTRY[name] = solver
    return solver


def unregister_solver(name):
    """Remove the solver called ``name`` from the registry and return it.

    Parameters
    ----------
    name : str
        The registered name (the solver's ``name`` attribute).

    Returns
    -------
    solver : Solver
        The solver removed; estimators can no longer select it by name.

    Raises
    ------
    ValueError
        If no solver has that name.
    """
    with _LOCK:
        if name not in _REGISTRY:
            raise ValueError(
                f"Unknown solver {name!r}; registered solvers are {sorted(_REGISTRY)}."
            )
        return _REGISTRY.pop(name)


def get_solver(name):
    """Return the registered solver called ``name``.

    Parameters
    ----------
    name : str
        A registered name, as given to an estimator's ``solver`` (see
        :func:`available_solvers`).

    Returns
    -------
    solver : Solver
        The registered instance itself (not a copy).

    Raises
    ------
    ValueError
        If no solver has that name; the message lists the registered ones.
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"Unknown solver {name!r}; registered solvers are {sorted(_REGISTRY)}."
        ) from None


def unmet_requirements(solver, capabilities):
    """The requirements of ``solver`` that ``capabilities`` do not meet.

    Parameters
    ----------
    solver : Solver
        Its ``requires`` holds capability names, and tuples of names of
        which any one suffices (e.g. ``('penalty:smooth', 'penalty:prox')``:
        a smooth penalty or one with a proximal operator).
    capabilities : iterable of str
        What the loss and the penalty offer (``ProblemSpec.capabilities``).

    Returns
    -------
    unmet : list of str
        Sorted; an unmet alternative is written ``'a or b'``.
    """
    caps = set(capabilities)
    unmet = []
    for requirement in solver.requires:
        options = (requirement,) if isinstance(requirement, str) else tuple(requirement)
        if not caps.intersection(options):
            unmet.append(" or ".join(sorted(options)))
    return sorted(unmet)


def _capabilities(estimator):
    if isinstance(estimator, type):
        estimator = estimator()
    return estimator._capabilities()


def available_solvers(estimator=None):
    """Names of the solvers usable with ``estimator``.

    Parameters
    ----------
    estimator : estimator class, estimator instance or None
        A class is judged with its default parameters, an instance with its
        current ones (e.g. ``DPLinearSVC(loss='hinge')`` is not smooth,
        ``alpha=0`` is not strongly convex). None lists every registered
        solver.

    Returns
    -------
    names : list of str
        Sorted solver names.
    """
    with _LOCK:
        solvers = dict(_REGISTRY)
    if estimator is None:
        return sorted(solvers)
    caps = _capabilities(estimator)
    return sorted(name for name, s in solvers.items() if not unmet_requirements(s, caps))


def auto_solver(capabilities, facts):
    """The solver ``solver='auto'`` picks, by capability and public facts.

    Among the registered solvers whose requirements ``capabilities`` meet
    and that rank themselves for 'auto' (an ``auto_priority`` that is not
    None) and accept the fit (``auto_accepts(facts)``), the one of highest
    priority. An estimator names no solver: the choice lives here and in
    the solvers.

    Parameters
    ----------
    capabilities : iterable of str
        What the loss and the penalty offer (``ProblemSpec.capabilities``).
    facts : mapping
        Public facts of the fit, before any data value is read:
        ``'n_samples'`` and ``'n_params'`` (per output; None when unknown),
        ``'delta_positive'``, ``'full_batch'`` and ``'row_bound'`` (whether
        rows have a public norm bound).

    Returns
    -------
    name : str

    Raises
    ------
    ValueError
        If no registered solver accepts (the estimator reports it).
    """
    with _LOCK:
        solvers = dict(_REGISTRY)
    ranked = sorted(
        (s.auto_priority, name) for name, s in solvers.items()
        if getattr(s, "auto_priority", None) is not None
        and not unmet_requirements(s, capabilities) and s.auto_accepts(facts))
    if not ranked:
        raise ValueError(
            f"no registered solver can run solver='auto' here; pass one of "
            f"{sorted(solvers)} as solver."
        )
    return ranked[-1][1]

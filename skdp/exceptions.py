"""Warnings about settings that weaken the privacy guarantee."""

import warnings

__all__ = [
    "PrivacyWarning",
    "warn_if_delta_voids_guarantee",
    "warn_labels_read_from_y",
    "warn_if_seed_replays",
]

#: whether this process has warned that seeded fits on the default accountant replay
_seed_replay_warned = False


class PrivacyWarning(UserWarning):
    """A setting under which the stated guarantee protects little or nothing.

    Raised, for example, when ``delta`` exceeds ``1 / n_samples``: a mechanism
    that publishes one randomly chosen record in full is
    (0, 1/n)-differentially private, so a ``delta`` at or above ``1 / n``
    allows releasing records outright.

    Examples
    --------
    >>> import warnings
    >>> from skdp.exceptions import PrivacyWarning
    >>> warnings.simplefilter("error", PrivacyWarning)  # turn the warning into an error
    """


def warn_if_delta_voids_guarantee(delta, n_samples, owner, stacklevel=3):
    """Warn with :class:`PrivacyWarning` when ``delta > 1 / n_samples``.

    Uses only public quantities (``n_samples`` is public under zero-out
    neighbours), so the warning releases nothing about the data.

    Parameters
    ----------
    delta : float
        The failure probability of the fit.
    n_samples : int
        The number of records.
    owner : str
        The name of the estimator, for the message.
    stacklevel : int, default=3
        Passed to :func:`warnings.warn`, so the warning points at the
        user's call to ``fit``.
    """
    if n_samples > 0 and float(delta) > 1.0 / n_samples:
        warnings.warn(
            f"{owner}: delta={delta} is larger than 1/n_samples = {1.0 / n_samples:.3g}. "
            "A mechanism that publishes one random record in full is (0, 1/n)-DP, so "
            "this delta allows releasing whole records: the guarantee is void. Use "
            "delta='auto' (the default: min(1e-5, 1/(10 n_samples)), from the public "
            "n_samples), another delta well below 1/n_samples, or delta=0 for pure "
            "epsilon-DP.",
            PrivacyWarning, stacklevel=stacklevel,
        )


def warn_labels_read_from_y(owner, stacklevel=3):
    """Warn with :class:`PrivacyWarning` that a fit reads its label set from ``y``.

    With ``classes=None`` the labels present in ``y`` are released as
    ``classes_`` outside the epsilon charged (they reveal, say, that a rare
    diagnosis occurs in the data). The message quotes no label.

    Parameters
    ----------
    owner : str
        The name of the estimator or search, for the message.
    stacklevel : int, default=3
        Passed to :func:`warnings.warn`, so the warning points at the
        user's call to ``fit``.
    """
    warnings.warn(
        f"{owner}: classes=None, so the label set is read from y and released as "
        "classes_ outside the epsilon charged (it reveals which labels occur in the "
        "data). Pass the public label set as classes=[...] to release nothing about it.",
        PrivacyWarning, stacklevel=stacklevel,
    )


def warn_if_seed_replays(random_state, accountant, owner, stacklevel=3):
    """Warn once per process when a seeded fit is charged to the default accountant.

    The process default accountant is in replay mode (same seed, same model):
    a seed used twice draws the same noise twice, and the accountant's spent
    epsilon becomes ``inf``. scikit-learn users set ``random_state`` by
    habit, so the first such fit warns, naming the fixes.

    Once per process, not once per estimator class: the state warned about
    belongs to the one default accountant that every estimator class shares,
    and one warning says all there is to say; repeating it for each class of a
    pipeline or search would bury it.

    Parameters
    ----------
    random_state : None, int, RandomState or Generator
        The fit's seed; None never warns.
    accountant : BudgetAccountant
        The accountant the fit is charged to.
    owner : str
        The name of the estimator, for the message.
    stacklevel : int, default=3
        Passed to :func:`warnings.warn`.
    """
    global _seed_replay_warned
    from .accounting import get_default_accountant

    if _seed_replay_warned or random_state is None or accountant is not get_default_accountant():
        return
    warnings.warn(
        f"{owner}: a seeded fit (random_state is not None) charged to the process default "
        "accountant, which replays seeds: a second fit with the same seed draws the same "
        "noise and the default accountant's spent epsilon becomes inf. Pass accountant="
        "BudgetAccountant(...) to charge fits that never share noise, or random_state=None "
        "for fresh noise. (Warned once per process.)",
        PrivacyWarning, stacklevel=stacklevel,
    )
    _seed_replay_warned = True

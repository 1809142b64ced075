"""Warnings about settings that weaken the privacy guarantee."""

import warnings

__all__ = ["PrivacyWarning", "warn_if_delta_voids_guarantee"]


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
            "delta well below 1/n_samples (e.g. 1/n_samples**1.1 or 1e-5 for n up to "
            "100,000), or delta=0 for pure epsilon-DP.",
            PrivacyWarning, stacklevel=stacklevel,
        )

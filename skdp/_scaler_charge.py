"""The charge of a private scaler's fit, shared by DPStandardScaler and DPBoundsScaler.

Both scalers release noisy sums or counts once per fit. Their fits follow
the estimators' order (DESIGN 2b): the public n and d, the resolved delta,
the noise calibrated by the accountant (for the discrete noise in secure
mode), the budget checked, then the data read and validated, and only then
the charge. :func:`charge_scaler_fit` is that order, once.
"""

from .accounting import calibrate, discretize, secure_accounting
from .exceptions import warn_if_delta_voids_guarantee, warn_if_seed_replays
from .validation import resolve_delta

__all__ = ["charge_scaler_fit"]

# frames between the warnings and the user's call: this function, the
# scaler's _charged_fit and its fit
_STACKLEVEL = 5


def charge_scaler_fit(scaler, n, mechanism_of, read_data, before_check=None):
    """Calibrate, check, read the data, charge; return what the release needs.

    Parameters
    ----------
    scaler : AccountedMixin
        The scaler being fitted (its ``epsilon``, ``delta``,
        ``random_state`` and ``secure_mode``, if any, are read).
    n : int
        The public number of records.
    mechanism_of : callable ``(z, delta) -> Mechanism``
        The fit's float mechanism for noise multiplier ``z``.
    read_data : callable ``() -> X``
        Validates and returns the data; called after the budget check and
        before the charge, so bad data costs nothing.
    before_check : callable ``(z, delta)`` or None
        Called with the calibrated multiplier before the budget check (for
        warnings from public quantities).

    Returns
    -------
    X : the validated data
    z : float
        The calibrated noise multiplier.
    delta : float
        The resolved delta (what is charged).
    mechanism : Mechanism
        The float mechanism of multiplier ``z`` (the door runs its discrete
        form when ``rng`` is secure).
    rng : numpy Generator or SecureGenerator
        The noise stream of this charged fit.
    """
    name = type(scaler).__name__
    epsilon = float(scaler.epsilon)
    delta = resolve_delta(scaler.delta, n)  # what is charged and shown
    warn_if_delta_voids_guarantee(delta, n, name, stacklevel=_STACKLEVEL)
    secure = scaler._secure()
    with secure_accounting(secure):  # secure mode: calibrated for the discrete noise
        z = calibrate(lambda z: mechanism_of(z, delta), epsilon, delta)
    mechanism = mechanism_of(z, delta)
    charged = discretize(mechanism) if secure else mechanism
    if before_check is not None:
        before_check(z, delta)
    accountant = scaler._accountant_in_force()
    # it warns one frame down, with stacklevel + 1
    key = scaler._secure_seed_key(name, stacklevel=_STACKLEVEL - 1)
    if key is not None:
        warn_if_seed_replays(scaler.random_state, accountant, name, stacklevel=_STACKLEVEL)
    accountant.check(epsilon, delta, mechanism=charged)
    X = read_data()
    record = accountant.charge(epsilon, delta, mechanism=charged, label=name, seed_key=key)
    return X, float(z), delta, mechanism, scaler._noise_rng(record.seed_index)

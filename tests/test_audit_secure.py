"""The empirical audit in secure mode (issue 42), with its negative control.

The gd pairing of ``tests/test_audit.py`` (the canary design; 20 steps, see
``STEPS``) with ``secure_mode=True``: noise rounded to a grid and
drawn exactly from the OS CSPRNG, charged as the discrete Gaussian (delta >
0) or discrete Laplace (delta = 0). The runs' ``random_state`` is ignored in
secure mode (a warning, silenced here), so these audits are not
reproducible run by run; their false-failure rate is the audit's confidence
level (5 %, 1 % for the pure-DP one), as for the float path's audits. The
control halves the discrete Laplace scale and must be caught.
"""

import contextlib
import importlib
from unittest import mock

import pytest

from skdp.testing.audit_designs import (CLAIMED_EPSILON, DESIGNS, PURE, PURE_CONFIDENCE,
                                        audit_pairing, cached_calibration)

door = importlib.import_module("skdp.accounting.release")
#: 20 steps (the machinery tests' count), not the 500 planned for Adult: the
#: exact sampler's per-release overhead makes 500-step audits take minutes
STEPS = 20

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*random_state is ignored with secure_mode=True")


def test_audit_gd_secure_mode():
    result = audit_pairing(DESIGNS["logistic"], "gd", secure_mode=True, max_iter=STEPS,
                           n_runs=200)
    assert result.epsilon_lower_bound <= CLAIMED_EPSILON, result.summary()


def test_audit_gd_secure_mode_pure_dp_single_step():
    result = audit_pairing(DESIGNS["logistic"], "gd", secure_mode=True,
                    confidence=PURE_CONFIDENCE, **PURE)
    assert result.epsilon_lower_bound <= CLAIMED_EPSILON, result.summary()


@contextlib.contextmanager
def secure_half_scale():
    """Negative control: the discrete noise at half the scale the grid calls for."""
    real = door.secure_grid

    def half(mechanism, sensitivity, size):
        exponent, scale = real(mechanism, sensitivity, size)
        return exponent, max(1, scale // 2)

    with mock.patch.object(door, "secure_grid", half), cached_calibration():
        yield


def test_audit_catches_secure_noise_at_half_scale():
    result = audit_pairing(DESIGNS["logistic"], "gd", secure_mode=True,
                    run_context=secure_half_scale, confidence=PURE_CONFIDENCE, **PURE)
    assert result.epsilon_lower_bound > CLAIMED_EPSILON, result.summary()

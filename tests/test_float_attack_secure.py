"""Mironov's floating-point attack fails against the door's secure path (issue 42).

The counterpart of ``tests/test_float_attack.py``: the same attack, the same
game (exact values 0 and 1, sensitivity 1, ``Laplace(1 / epsilon)``), but the
release is made on the secure noise stream (``SecureGenerator``, what a fit
with ``secure_mode=True`` draws from): the door rounds the exact value to a
public grid and adds exact discrete Laplace noise from the OS CSPRNG. The
attack's success rate stays within sampling error of the epsilon bound.

Needs the secure door of branch s2-secure (``SecureGenerator`` in
``skdp/accounting/release.py``).
"""

import math

import numpy as np
import pytest

from skdp.accounting import Laplace
from skdp.accounting.release import SecureGenerator, recording, release
from skdp.testing.float_attack import run_attack, success_bound


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_attack_fails_against_the_secure_path(epsilon):
    rng = SecureGenerator()
    mechanism = Laplace(1.0 / epsilon)
    grids = []

    def release_once(exact):
        with recording() as records:
            value = release(exact, mechanism, 1.0, rng, what="float attack target")
        grids.append(records[0].grid)
        return value

    result = run_attack(release_once, 0.0, 1.0, 1.0 / epsilon, epsilon, n_trials=400, seed=2)
    lower, _ = result["ci"]
    # within sampling error of the bound: the 95 % interval does not lie above it
    assert lower <= success_bound(epsilon), result
    # and far from the float path's success (about 0.9, tests/test_float_attack.py)
    assert result["success_rate"] < success_bound(epsilon) + 0.05, result
    # the releases the attack read were exact multiples of a public grid
    assert all(grid is not None and math.log2(grid).is_integer() for grid in grids)


def test_secure_releases_of_neighbours_share_one_support():
    # the support test has nothing to read: both neighbours' releases are
    # multiples of the same grid, and every multiple is reachable from both
    rng = SecureGenerator()
    with recording() as records:
        values = [release(x, Laplace(1.0), 1.0, rng, what="support") for x in (0.0, 1.0) * 50]
    grid = {r.grid for r in records}
    assert len(grid) == 1
    (gamma,) = grid
    units = np.asarray(values) / gamma
    assert np.array_equal(units, np.round(units))

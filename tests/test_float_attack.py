"""Mironov's floating-point attack (issue 42) breaks the door's float Laplace path.

The attack (:mod:`skdp.testing.float_attack`) replays numpy's Laplace sampler
bit for bit and decides, from one released double, which of two neighbouring
exact values (0 and 1, sensitivity 1) the door was given. Through
``release(..., Laplace(1 / epsilon), 1.0, rng)`` (the path of every
``secure_mode=False`` Laplace release) it is right far more often than any
test can be against an epsilon-DP release. Its counterpart against the
secure path is ``tests/test_float_attack_secure.py``.
"""

import math

import numpy as np
import pytest

from skdp.accounting import Laplace
from skdp.accounting.release import release
from skdp.testing.float_attack import (
    in_float_laplace_support,
    mironov_guess,
    noise_interval,
    numpy_laplace_from_raw,
    run_attack,
    success_bound,
)


def test_replay_is_numpys_laplace_sampler_bit_for_bit():
    raw = np.random.PCG64(3).random_raw(20_000)
    replay = numpy_laplace_from_raw(raw, 2.5)
    drawn = np.random.Generator(np.random.PCG64(3)).laplace(0.0, 2.5, size=20_000)
    assert np.array_equal(replay, drawn)


def test_noise_interval_is_exactly_the_preimage():
    x, y = 1.0, 1.0 + 3 * 2.0 ** -52
    low, high = noise_interval(y, x)
    assert low + x == y and high + x == y
    assert np.nextafter(low, -np.inf) + x != y
    assert np.nextafter(high, np.inf) + x != y
    assert noise_interval(0.1, 0.0) == (0.1, 0.1)
    # n + 1 is exact for n in [-1, -1/2]: a multiple of 2**-53, never 2**-60
    assert noise_interval(2.0 ** -60, 1.0) is None


def test_support_test_accepts_every_release_of_its_own_exact_value():
    scale = 10.0
    noise = numpy_laplace_from_raw(np.random.PCG64(5).random_raw(200), scale)
    for x in (0.0, 1.0, 0.3):
        assert all(in_float_laplace_support(n + x, x, scale) for n in noise)


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_attack_breaks_the_float_laplace_path(epsilon):
    rng = np.random.default_rng(0)
    mechanism, scale = Laplace(1.0 / epsilon), 1.0 / epsilon

    def release_once(exact):
        return release(exact, mechanism, 1.0, rng, what="float attack target")

    result = run_attack(release_once, 0.0, 1.0, scale, epsilon, n_trials=1000, seed=1)
    lower, _ = result["ci"]
    bound = success_bound(epsilon)
    # far beyond what epsilon allows: the interval's lower end clears the
    # bound by 0.1 or more (measured: about 0.9 against 0.525 and 0.731)
    assert lower > bound + 0.1, result
    # the epsilon the attack certifies (95 %) exceeds the claim by 0.5 or more
    assert result["epsilon_lower"] > epsilon + 0.5
    assert result["by_support"] > 0.7


def test_guess_uses_the_support_not_the_distance():
    scale = 10.0
    # a release of 1 that 0's float support cannot produce: the guess is 1
    # even when the value is nearer to 0
    noise = numpy_laplace_from_raw(np.random.PCG64(11).random_raw(400), scale)
    released = [n + 1.0 for n in noise if n < -1.0]
    decided = [(y, mironov_guess(y, 0.0, 1.0, scale)) for y in released]
    by_support = [guess for _, (guess, by) in decided if by]
    assert len(by_support) > len(released) // 2
    assert all(guess == 1 for guess in by_support)


def test_success_bound():
    assert success_bound(0.0) == 0.5
    assert math.isclose(success_bound(1.0), math.e / (1 + math.e))

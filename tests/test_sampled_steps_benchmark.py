"""``benchmarks/sampled_steps.py``: its rule, and the solver takes what its results file chose."""

import re
from pathlib import Path

import pytest

from conftest import load_benchmark_script
from skdp.solvers import preconditioned as pc


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("sampled_steps")


def _row(n, eps, reference, **candidates):
    """One cell: ``(n, eps, {candidate: (score, log-loss)})``."""
    results = {(0, 100_000): reference}
    results.update({(int(k[1:3]), int(k[4:]) * 1000): v for k, v in candidates.items()})
    return n, eps, results


def test_a_candidate_holds_only_within_both_tolerances_where_it_samples(bench):
    ref = (0.9000, 0.3000)
    cells = [_row(800_000, 1.0, ref, k10_100=(0.8996, 0.3014), k15_100=(0.8994, 0.3000)),
             # m = 1e5 / 0.1 = 1e6 > n / 2: no step sampled, the cell does not count
             _row(800_000, 0.1, ref, k10_100=(0.5, 0.9), k15_100=(0.5, 0.9))]
    assert bench.holds((10, 100_000), cells)          # -0.0004 and +0.47 %: within both
    assert not bench.holds((15, 100_000), cells)      # -0.0006: below the score tolerance
    cells[0][2][(10, 100_000)] = (0.9001, 0.3016)     # +0.53 % log-loss: above its tolerance
    assert not bench.holds((10, 100_000), cells)


def test_the_sample_rate_follows_epsilon_and_stops_at_half_the_rows(bench):
    assert bench.sample_rate(800_000, 1.0, 100_000) == pytest.approx(0.125)
    assert bench.sample_rate(800_000, 0.25, 100_000) == pytest.approx(0.5)
    assert bench.sample_rate(800_000, 0.2, 100_000) is None
    assert bench.sample_rate(800_000, 5.0, 50_000) == pytest.approx(1 / 16)
    assert bench.passes((15, 100_000)) == pytest.approx(30 - 15 * (1 - 0.125))


def test_the_solver_takes_the_choice_of_the_results_file(bench):
    text = (Path(__file__).resolve().parents[1] / "benchmarks" / "results"
            / "sampled_steps.md").read_text()
    chosen = re.search(r"^Chosen: k = (\d+) sampled steps, min rows ([\d,]+)$", text, re.M)
    assert chosen is not None
    assert int(chosen.group(1)) == pc.SAMPLED_STEPS
    assert int(chosen.group(2).replace(",", "")) == pc.SAMPLE_MIN_ROWS
    # the rule the script measured is the solver's
    assert bench.ROWS_EPSILON == pc.SAMPLE_ROWS_EPSILON
    assert bench.MAX_RATE == pc.MAX_SAMPLING_RATE
    # the sampled steps stay off the averaged tail (the last half of the 30 steps)
    assert pc.SAMPLED_STEPS <= pc.DEFAULT_STEPS - round(pc.DEFAULT_AVERAGE * pc.DEFAULT_STEPS)

"""``benchmarks/private_bounds_small_n.py``: the warning's threshold, chosen on validation splits."""

import re

import pytest
from conftest import load_benchmark_script

from skdp import _private_bounds


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("private_bounds_small_n")


def test_threshold_is_chosen_on_validation_splits_above_every_miss(bench, monkeypatch):
    calls = []

    def fake_compare(estimator, name, total, seeds, n=None, validation=False):
        calls.append(validation)
        ratio = {"wine": 4.2 * total, "breast_cancer": 7.0, "digits": 12.0}[name]
        missed = name == "wine" and total < 2 or (name == "digits" and n == 500)
        # (documented, private, warned, n, records / noise)
        return 0.9, 0.85 if missed else 0.89, 0.0, n or 100, ratio if n != 500 else 9.3

    monkeypatch.setattr(bench, "compare", fake_compare)
    threshold = bench.warning_threshold(range(2))
    assert calls and all(calls)  # never the test parts
    assert threshold == 10.0  # floor(9.3) + 1: above the digits case at 9.3


def test_the_library_threshold_is_the_results_files(bench):
    text = (bench.RESULTS / "private_bounds_small_n.md").read_text()
    chosen = float(re.search(r"threshold (\d+(?:\.\d+)?) \(", text).group(1))
    assert _private_bounds.LOW_SIGNAL == chosen

"""``benchmarks/reuters_diagonal.py`` chooses on Reuters' training file only."""

import bz2
import re
from pathlib import Path

import numpy as np
from conftest import load_benchmark_script


def test_the_validation_part_reads_only_the_training_file(tmp_path, monkeypatch):
    bench = load_benchmark_script("reuters_diagonal")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 5))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=120) > 0, 1, -1)
    cols = np.sort(rng.choice(8315, size=5, replace=False) + 1)
    with bz2.open(tmp_path / "reuters.trn.bz2", "wt") as fh:
        fh.write("\n".join(f"{label:+d} " + " ".join(f"{c}:{v:.4f}" for c, v in zip(cols, row))
                           for label, row in zip(y, X)) + "\n")
    with bz2.open(tmp_path / "reuters.tst.bz2", "wt") as fh:
        fh.write("this is the test file\n")           # reading it would fail the run
    monkeypatch.setenv("SKDP_SHARED_DATA", str(tmp_path))
    monkeypatch.setattr(bench, "GRID", [(5, 16.0, 0.5, 1.0), (5, 8.0, 0.5, 0.3)])
    monkeypatch.setattr(bench, "RATIOS", (0.5, 2.0))
    monkeypatch.setattr(bench, "RATIO_DAMPINGS", (4.0,))
    monkeypatch.setattr(bench, "TAILS", (0.0, 0.5))
    monkeypatch.setattr(bench, "SEEDS", range(1))
    monkeypatch.setattr(bench, "TIE_SEEDS", range(1, 2))
    monkeypatch.setattr(bench, "EPSILONS", (1.0,))
    monkeypatch.setattr(bench, "TIE_BREAK", 1)
    lines = []
    bench.validation(lines)
    text = "\n".join(lines)
    assert "| gd (auto before) |" in text
    assert text.count("| diagonal T=5 c=16 average=0.5 intercept=1 ratio=0.5 |") in (1, 2)
    assert "Second grid" in text and "Tie-break" in text and "Largest mean: " in text
    # the second grid scales the damping to the ratio (c * ratio = 4)
    assert "ratio=2 |" in text and " c=2 " in text
    # the third grid: the averaged tail at the best of the first two (0.5 is measured once)
    assert "Third grid" in text and " average=0 " in text
    assert len(re.findall(r"^\| diagonal T=5 c=\S+ average=0\.5 intercept=\S+ ratio=\S+ \| [\d.]",
                          text.split("Tie-break")[0], re.M)) == 4
    assert "Chosen: diagonal T=5 " in text


def test_the_diagonal_mode_defaults_are_the_ones_the_results_file_chose():
    from skdp.solvers import preconditioned as pc

    text = (Path(__file__).resolve().parents[1] / "benchmarks" / "results"
            / "reuters_diagonal.md").read_text()
    chosen = re.search(r"^Chosen: diagonal T=(\d+) c=([\d.]+) average=([\d.]+) "
                       r"intercept=([\d.]+) ratio=([\d.]+) ", text, re.M)
    assert chosen is not None
    T, c, average, intercept, ratio = chosen.groups()
    assert (int(T), float(c), float(average), float(intercept), float(ratio)) == (
        pc.DIAGONAL_STEPS, pc.DIAGONAL_DAMPING, pc.DIAGONAL_AVERAGE, pc.DIAGONAL_INTERCEPT,
        pc.DIAGONAL_GRAM_RATIO)

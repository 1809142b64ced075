"""``benchmarks/validation_defaults.py`` chooses defaults on the training files only."""

import bz2

import numpy as np
import pytest
from conftest import load_benchmark_script


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("validation_defaults")


def _write_svmlight(path, rng, n_rows, n_features):
    X = rng.normal(size=(n_rows, 5))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n_rows) > 0, 1, -1)
    cols = rng.choice(n_features, size=5, replace=False) + 1
    lines = [f"{label:+d} " + " ".join(f"{c}:{v:.4f}" for c, v in sorted(zip(cols, row)))
             for label, row in zip(y, X)]
    with bz2.open(path, "wt") as fh:
        fh.write("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data")
    rng = np.random.default_rng(0)
    for name, n_features in (("adult", 123), ("reuters", 8315)):
        _write_svmlight(folder / f"{name}.trn.bz2", rng, 120, n_features)
        # a test file that cannot be parsed: reading it would fail the run
        with bz2.open(folder / f"{name}.tst.bz2", "wt") as fh:
            fh.write("this is the test file\n")
    return folder


@pytest.fixture(scope="module")
def tiny_run(bench, folder):
    asked = []
    real = bench.load_svmlight_train

    def spy(name, **kw):
        asked.append(name)
        return real(name, **kw)

    mp = pytest.MonkeyPatch()
    mp.setattr(bench, "load_svmlight_train", spy)
    try:
        out = folder / "validation_defaults.md"
        result = bench.main(["--quick", "--data-dir", str(folder), "--out", str(out)])
    finally:
        mp.undo()
    return result, asked


def test_only_the_training_files_are_read(tiny_run):
    _, asked = tiny_run
    assert sorted(asked) == ["adult", "reuters"]


def test_the_table_has_every_parameter_and_the_columns(bench, tiny_run):
    result, _ = tiny_run
    text = result["table"].read_text(encoding="utf-8")
    for option, _, current, grid, _ in bench.PARAMETERS:
        assert f"| {option} | mean validation accuracy | sd over splits/seeds |" in text
        assert f"| {current:g} (current) |" in text
        assert result["chosen"][option] in grid
    assert text.count("Chosen: **") == len(bench.PARAMETERS)


def test_the_rule_keeps_the_default_within_the_spread(bench):
    cells = {1: [np.array([0.80, 0.82])], 2: [np.array([0.81, 0.83])],
             3: [np.array([0.90, 0.92])]}
    assert bench.choose(1, (1, 2), cells)[0] == 1  # 0.01 better: inside the spread
    assert bench.choose(1, (1, 2, 3), cells)[0] == 3  # 0.10 better: outside it


def test_every_value_gets_its_own_fits(bench, folder, monkeypatch, capsys):
    # a stand-in fit whose accuracy is the value / 1000: every cell must show its own value
    monkeypatch.setattr(bench, "accuracies",
                        lambda make, option, v, eps, data, seeds: np.full(2, v / 1000.0))
    chosen = bench.run(folder=folder, epsilons=(1.0,), n_splits=1, seeds=(0,), max_rows=60,
                       parameters=bench.PARAMETERS[:1])
    option, _, _, grid, _ = bench.PARAMETERS[0]
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| adult")]
    assert rows and all(f"{v / 1000.0:.4f} ± 0.0000" in row for row in rows for v in grid)
    assert chosen == {option: max(grid)}

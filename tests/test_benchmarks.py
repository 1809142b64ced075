"""Smoke test of ``benchmarks/run.py`` on a tiny synthetic configuration (seconds).

It runs every part of the benchmark (privacy-utility, time per iteration
against the floor, scaling) so that the script cannot rot as estimators and
solvers are added, and checks the Markdown table it writes. The plot is
skipped: the test must not need matplotlib.
"""

import pytest
from conftest import BENCHMARKS, load_benchmark_script

RUN_PY = BENCHMARKS / "run.py"


@pytest.fixture(scope="module")
def bench():
    return load_benchmark_script("run")


@pytest.fixture(scope="module")
def tiny_run(bench, tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    result = bench.main(["--tiny", "--out-dir", str(out), "--no-plot"])
    return result, out


def test_table_is_written(bench, tiny_run):
    result, out = tiny_run
    table = out / bench.TABLE_NAME
    assert table.exists()
    assert result["table"] == table
    text = table.read_text(encoding="utf-8")
    for heading in ("## Privacy-utility", "## Time per iteration against the floor",
                    "## Scaling in n", "| majority class |"):
        assert heading in text
    assert not (out / bench.PLOT_NAME).exists()


def test_one_row_per_estimator_and_available_solver(bench, tiny_run):
    from skdp.solvers import available_solvers

    result, out = tiny_run
    text = (out / bench.TABLE_NAME).read_text(encoding="utf-8")
    names = {cls.__name__ for cls in result["estimators"]}
    assert "DPLogisticRegression" in names
    for cls in result["estimators"]:
        dataset = "tiny" if bench.task_of(cls) == "classification" else "matrix_sensing"
        solvers = available_solvers(cls)
        assert "gd" in solvers
        for solver in solvers:
            # the wide utility table and the detailed table both list the pair
            assert f"| {cls.__name__} | {solver} |" in text
            assert f"| {dataset} | {cls.__name__} | {solver} | 1 |" in text
    # every fit that did not raise has a score in [0, 1] for accuracy
    for row in result["rows"]:
        if row["dataset"] == "tiny" and not row["error"]:
            assert len(row["accuracy"]) == 1 and 0.0 <= row["accuracy"][0] <= 1.0


def test_speed_and_scaling_rows(bench, tiny_run):
    result, _ = tiny_run
    gd_rows = [r for r in result["speed"]
               if r["solver"] == "gd" and r["estimator"] == "DPLogisticRegression"]
    assert gd_rows and gd_rows[0]["n_iter"] > 0
    assert gd_rows[0]["floor"] > 0 and gd_rows[0]["loop_per_iter"] > 0
    assert gd_rows[0]["peak"] is not None
    assert [r["n"] for r in result["scaling"]] == [300, 600]


def test_missing_data_is_skipped_with_a_note(bench, tmp_path):
    config = bench.make_config("tiny", datasets=("adult",), data_dir=tmp_path / "nowhere",
                               out_dir=tmp_path, plot=False, speed=False, scaling=False)
    result = bench.run(config)
    assert result["rows"] == []
    assert any("adult" in n and "skipped" in n for n in result["notes"])
    assert (tmp_path / bench.TABLE_NAME).exists()


def test_plot_without_matplotlib_writes_a_note(bench, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("no matplotlib")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    adult = bench.Dataset("adult", "classification", None, None, None, None)
    notes = []
    assert bench.plot_adult("unused.png", [adult], [], {}, bench.make_config("tiny"),
                            notes) is False
    assert any("matplotlib" in n for n in notes)


def test_data_dir_resolution(bench, monkeypatch, tmp_path):
    monkeypatch.setenv("SKDP_SHARED_DATA", str(tmp_path))
    assert bench.data_dir() == tmp_path
    monkeypatch.delenv("SKDP_SHARED_DATA")
    assert bench.data_dir() == RUN_PY.resolve().parents[2] / "shared" / "data"
    args = bench.parse_args(["--quick", "--data-dir", str(tmp_path)])
    assert bench.config_from_args(args).data_dir == tmp_path



@pytest.mark.parametrize("script", sorted(p.stem for p in BENCHMARKS.glob("*.py")))
def test_every_benchmark_script_imports_without_running(script, capsys):
    # a name lost in a merge (paper001_synthetic's Path) broke the script at
    # import; and importing must not run a benchmark: the work is under main
    load_benchmark_script(script)
    assert capsys.readouterr().out == ""


def test_tier_times_lists_the_slowest_tests_and_keeps_the_other_tier(tmp_path):
    tiers = load_benchmark_script("tier_times")
    output = ("...\n==== slowest 25 durations ====\n"
              "80.21s call     tests/test_audit.py::test_bound[svc-dual_averaging]\n"
              "43.04s setup    tests/test_minimax.py::test_recovery[1.0-0.2]\n"
              "==== short test summary info ====\n"
              "FAILED tests/test_example.py::test_one[2] - AssertionError: assert 1 == 2\n"
              "==== 1 failed, 2 passed in 1.00s ====\n")
    rows = tiers.slowest_tests(output)
    assert tiers.failed_tests(output) == ["tests/test_example.py::test_one[2]"]
    assert rows == [(80.21, "call", "tests/test_audit.py::test_bound[svc-dual_averaging]"),
                    (43.04, "setup", "tests/test_minimax.py::test_recovery[1.0-0.2]")]
    result = {"command": "python -m pytest", "seconds": 75.0, "cpu_seconds": 120.0,
              "summary": "2 passed in 1.00s", "cores": 2, "load": (0.1, 0.2), "when": "now",
              "exit": 1, "slowest": rows, "failed": tiers.failed_tests(output)}
    path = tmp_path / "tiers.md"
    tiers.write("fast", dict(result, slowest=[]), path)
    tiers.write("full", result, path)
    text = path.read_text()
    assert "## fast" in text and "## full" in text
    assert "- 80.2 s call: `tests/test_audit.py::test_bound[svc-dual_averaging]`" in text
    assert "- failed: `tests/test_example.py::test_one[2]`" in text
    assert text.index("## fast") < text.index("## full") < text.index("80.2 s call")

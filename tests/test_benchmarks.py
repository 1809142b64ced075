"""The benchmark scripts: ``run.py`` on a tiny synthetic configuration (seconds), and
``small_data.py``'s splits and prototype.

``run.py`` is run in every part (privacy-utility, time per iteration against
the floor, scaling) so that the script cannot rot as estimators and solvers
are added, and the Markdown table it writes is checked. The plot is skipped:
the test must not need matplotlib. ``small_data.py`` must choose on
validation splits of the demo's training part only.
"""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
RUN_PY = BENCHMARKS / "run.py"


def load_script(name):
    """``benchmarks/<name>.py`` as a module, importing its siblings as it does when run."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))  # what ``python benchmarks/<name>.py`` puts first
    spec = importlib.util.spec_from_file_location(f"skdp_benchmarks_{name}", BENCHMARKS /
                                                  f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return load_script("run")


@pytest.fixture(scope="module")
def small_data():
    return load_script("small_data")


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


# -- small_data.py ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["breast_cancer", "digits", "wine class 0/rest"])
def test_validation_rows_never_include_the_demo_test_rows(small_data, name, monkeypatch):
    loader, bounds, classes = small_data.DATA[name]
    _, y = loader()

    def row_ids():  # each row's feature is its index in the data set
        return np.arange(len(y), dtype=float)[:, None], y

    monkeypatch.setitem(small_data.DATA, name, (row_ids, bounds, classes))
    X_tr, X_te, _, _ = small_data.demo_split(name)
    train, test = set(X_tr[:, 0]), set(X_te[:, 0])
    for seed in small_data.SEEDS:
        X_in, X_val, _, _ = small_data.inner_split(name, seed)
        inner, val = set(X_in[:, 0]), set(X_val[:, 0])
        assert inner | val == train and not inner & val
        assert not (inner | val) & test


def test_the_demo_split_is_the_demos(small_data):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    expected = train_test_split(X, y, test_size=0.3, random_state=0)[1]
    np.testing.assert_array_equal(small_data.demo_split("breast_cancer")[1], expected)


def test_output_perturbation_prototype_noise_scale(small_data, monkeypatch):
    # a tiny lam makes the noise dominate: the released coefficients' spread
    # is the calibrated multiplier times sqrt(2) / (n lam)
    from skdp.accounting import Gaussian, calibrate

    captured = {}
    real_rng = np.random.default_rng

    class Recorder:
        def __init__(self, seed):
            self.rng = real_rng(seed)

        def normal(self, loc, scale, size):
            captured["scale"] = scale
            return self.rng.normal(loc, scale, size)

    monkeypatch.setattr(small_data.np.random, "default_rng", Recorder)
    X_in, X_val, y_in, y_val = small_data.inner_split("breast_cancer", 0)
    small_data.output_perturbation_accuracy("breast_cancer", 0.01, 1.0, 0, X_in, y_in, X_val, y_val)
    z = calibrate(lambda m: Gaussian(m), 1.0, small_data.DELTA)
    assert captured["scale"] == pytest.approx(z * np.sqrt(2.0) / (len(X_in) * 0.01))

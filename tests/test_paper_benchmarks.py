"""The paper benchmarks' own pieces: the DP-AGD baseline's budget and the extra-data loader."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.preprocessing import Normalizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import benchmark_data  # noqa: E402
from dp_agd import dp_agd  # noqa: E402
from skdp.solvers.gd import zcdp_rho  # noqa: E402


class CostRecorder:
    """A numpy Generator that adds up the zCDP cost of every draw from its scale."""

    def __init__(self, seed, grad_clip, obj_clip):
        self.rng = np.random.default_rng(seed)
        self.grad_clip, self.obj_clip = grad_clip, obj_clip
        self.rho = 0.0

    def normal(self, loc, scale, size):
        self.rho += self.grad_clip ** 2 / (2.0 * scale ** 2)  # Gaussian, L2 sensitivity C
        return self.rng.normal(loc, scale, size)

    def gumbel(self, loc, scale, size):
        epsilon = 2.0 * self.obj_clip / scale  # exponential mechanism, charged eps^2 / 2
        self.rho += epsilon ** 2 / 2.0
        return self.rng.gumbel(loc, scale, size)


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_dp_agd_draws_cost_at_most_the_budget(epsilon):
    X, y = make_classification(n_samples=1000, n_features=5, random_state=1)
    X = Normalizer().fit_transform(X)
    recorder = CostRecorder(0, grad_clip=np.sqrt(2.0), obj_clip=3.0)
    *_, spent = dp_agd(X, y, loss="logistic", epsilon=epsilon, delta=1e-6, alpha=1e-4,
                       rng=recorder)
    assert recorder.rho <= zcdp_rho(epsilon, 1e-6) * (1 + 1e-9)
    assert recorder.rho == pytest.approx(spent, rel=1e-9)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
@pytest.mark.parametrize("epsilon", [0.1, 1.0])
def test_dp_agd_spends_at_most_its_budget_and_learns(loss, epsilon):
    X, y = make_classification(n_samples=2000, n_features=5, random_state=0)
    X = Normalizer().fit_transform(X)
    y = np.where(y > 0, 1.0, -1.0)
    w, b, iterations, spent = dp_agd(X, y, loss=loss, epsilon=epsilon, delta=1e-6,
                                     alpha=1e-4, rng=np.random.default_rng(0))
    total = zcdp_rho(epsilon, 1e-6)
    assert 0 < spent <= total * (1 + 1e-12)
    assert iterations > 0
    # the budget is used up: what is left cannot pay for one more iteration
    assert total - spent < 0.5 * total
    if epsilon >= 1.0:  # at epsilon 0.1 on 2,000 rows the noise dominates
        accuracy = np.mean(np.where(X @ w + b > 0, 1.0, -1.0) == y)
        assert accuracy > 0.7


def test_bank_loader_without_data_returns_none(monkeypatch, tmp_path):
    monkeypatch.delenv(benchmark_data.EXTRA_ENV, raising=False)
    assert benchmark_data.load_bank() is None
    monkeypatch.setenv(benchmark_data.EXTRA_ENV, str(tmp_path))  # set, but no file there
    assert benchmark_data.load_bank() is None


def test_bank_preparer_checks_and_copies(monkeypatch, tmp_path):
    source = tmp_path / "bank.csv"
    source.write_text('"age";"job";"y"\n\n30;"admin.";"no"\n41;"services";"yes"\n')
    out = tmp_path / "extra"
    monkeypatch.setenv(benchmark_data.EXTRA_ENV, str(out))
    monkeypatch.setattr(benchmark_data, "BANK_COLUMNS", 3)
    with pytest.raises(SystemExit, match="expected 45211 records of 3 columns"):
        benchmark_data.main(["bank", str(source)])
    assert not out.exists()  # a refused source writes nothing
    monkeypatch.setattr(benchmark_data, "BANK_ROWS", 2)
    benchmark_data.main(["bank", str(source)])
    assert (out / "bank-full.csv").read_text() == (
        '"age";"job";"y"\n30;"admin.";"no"\n41;"services";"yes"\n')


def test_covtype_preparer_keeps_classes_1_and_2_with_unit_rows(monkeypatch, tmp_path):
    rng = np.random.default_rng(0)
    table = np.hstack([rng.uniform(0, 100, (6, 10)), rng.integers(0, 2, (6, 44)),
                       np.array([[1], [2], [3], [1], [2], [7]])])
    source = tmp_path / "covtype.csv"
    np.savetxt(source, table, delimiter=",", header="h", comments="")
    monkeypatch.setenv(benchmark_data.EXTRA_ENV, str(tmp_path / "extra"))
    monkeypatch.setattr(benchmark_data, "COVTYPE_ROWS", 6)
    monkeypatch.setattr(benchmark_data, "COVTYPE_BINARY", 4)
    benchmark_data.main(["covtype", str(source)])
    X, y = benchmark_data.load_covtype()
    assert X.shape == (4, 54) and y.tolist() == [1.0, -1.0, 1.0, -1.0]
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)


def test_preparer_needs_the_extra_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(benchmark_data.EXTRA_ENV, raising=False)
    with pytest.raises(SystemExit, match="set SKDP_EXTRA_DATA"):
        benchmark_data.main(["covtype", str(tmp_path)])


def test_results_writer_footer_and_head_formats(tmp_path, capsys):
    import results_file

    footer = tmp_path / "sub" / "footer.md"
    with results_file.write_results(footer, "python x.py", "quick"):
        print("| a |")
    text = footer.read_text()
    assert text.startswith("| a |\n\n---\nWritten by `python x.py` (quick mode) on commit ")
    # the footer says what the run had, read from the machine, not a fixed text
    machine = (f" cores, nice {os.nice(0)}, OMP_NUM_THREADS="
                        f"{os.environ.get('OMP_NUM_THREADS', 'unset')}, load average ")
    assert f" min; {os.cpu_count()}{machine}" in text
    assert text.endswith(" at the end.\n")
    with pytest.raises(RuntimeError):  # interrupted: the finished lines stay, no footer
        with results_file.write_results(footer, "python x.py", "quick"):
            print("| b |")
            raise RuntimeError
    assert footer.read_text() == "| b |\n"

    headed = tmp_path / "headed.md"
    with results_file.write_results(headed, "python y.py --seeds 3", "3 seeds", head=True):
        print("table")
    assert headed.read_text() == "Written by `python y.py --seeds 3` (3 seeds).\n\ntable\n"
    with results_file.write_results(headed, "python y.py", head=True):
        print("other")
    assert headed.read_text() == "Written by `python y.py`.\n\nother\n"
    with pytest.raises(RuntimeError):  # failed: the former file stays
        with results_file.write_results(headed, "python y.py", head=True):
            print("partial")
            raise RuntimeError
    assert headed.read_text() == "Written by `python y.py`.\n\nother\n"
    assert "table" in capsys.readouterr().out  # printed as usual too


@pytest.mark.parametrize("model", ["logistic", "svm"])
def test_paper002_every_method_fits_with_the_estimators_default_alpha(model):
    # the classifiers' alpha default is 'auto' (a rule of the public n):
    # DP-AGD and the training objective need the number it resolves to
    import paper002_adult

    X, y = make_classification(n_samples=400, n_features=5, random_state=0)
    X = Normalizer().fit_transform(X)
    y = np.where(y > 0, 1.0, -1.0)
    for label in paper002_adult.METHODS:
        accuracy, objective = paper002_adult._fit(model, label, 1.0, 0, (X, y, X, y))
        assert 0.0 <= accuracy <= 1.0 and np.isfinite(objective)


def test_rgda_rule_smoothness_reads_the_alpha_a_fit_uses():
    import rgda_rule
    from skdp import DPLinearSVC, DPLogisticRegression

    # alpha='auto' is min(1e-4, 1 / n): 1e-5 at n = 100,000
    assert rgda_rule.public_smoothness(DPLogisticRegression(), 100_000) == 0.5 + 1e-5
    assert rgda_rule.public_smoothness(DPLinearSVC(alpha=0.01), 10) == 2.0 / 1.5 + 0.01


def test_paper002_batch_rate_table(monkeypatch, tmp_path):
    import paper002_adult

    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    X = Normalizer().fit_transform(X)
    y = np.where(y > 0, 1.0, -1.0)
    monkeypatch.setattr(paper002_adult, "load_adult", lambda: (X, y, X, y))
    monkeypatch.setattr(paper002_adult, "BATCH_RATES", (0.5, 1.0))
    out = tmp_path / "rate.md"
    text = paper002_adult.batch_rates([0], epsilons=(1.0,), out=out)
    rows = [line for line in text.splitlines() if line.startswith("| logistic")
            or line.startswith("| svm")]
    assert len(rows) == 2 and all(row.count("updates") == len(paper002_adult.BATCH_RATES)
                                  for row in rows)
    assert out.read_text() == text


def test_paper001_adult_reports_the_optimum_accuracy_of_the_optimum(monkeypatch, capsys):
    # the optimum's coefficients were overwritten by the last private fit's
    # before its accuracy was printed as the non-private optimum's
    import paper001_synthetic
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(n_samples=300, n_features=4, n_informative=3,
                               n_redundant=0, flip_y=0.2, random_state=3)
    X = Normalizer().fit_transform(X)
    y = np.where(y > 0, 1, -1)
    Xt, yt = X[:150], y[:150]
    monkeypatch.setattr(paper001_synthetic, "load_adult", lambda: (X, y, Xt, yt))
    monkeypatch.setattr(paper001_synthetic, "ADULT_SOLVERS", ["gd"])
    paper001_synthetic.adult()
    printed = float(capsys.readouterr().out.split("test accuracy ")[1].split(")")[0])
    # the same objective: mean logistic loss + alpha / 2 ||w||^2, intercept unpenalised
    reference = LogisticRegression(C=1.0 / (1e-3 * len(y)), tol=1e-10, max_iter=10_000)
    assert printed == pytest.approx(reference.fit(X, y).score(Xt, yt), abs=1.5 / len(yt))


def test_accelerated_rule_counts_steps_at_the_fits_delta():
    # the fits run at delta='auto' (1 / (10 n) above 10,000 rows): the step
    # count the table calls "c" must use that delta's rho, not 1e-5's
    import accelerated_rule
    from skdp.validation import resolve_delta

    n = 24_420  # Adult's training file less a quarter
    rho = zcdp_rho(1.0, resolve_delta("auto", n))
    assert accelerated_rule.budget_steps(0.1, n, 1.0) == round(0.1 * n * np.sqrt(rho))
    assert accelerated_rule.budget_steps(0.1, 5827, 1.0) == round(
        0.1 * 5827 * np.sqrt(zcdp_rho(1.0, 1e-5)))

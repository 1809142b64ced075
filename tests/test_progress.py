"""verbose >= 1 prints progress while a fit runs (issue 41): counts and times only.

The clock is replaced by a fake one that advances a fixed step per reading, so
no test waits: a line is due whenever a second of fake time has passed.
"""

import itertools
import re

import numpy as np
import pytest

import skdp.solvers._progress as progress_module
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp import make_matrix_sensing

LINE = re.compile(
    r"^\[(DPLogisticRegression|DPLinearSVC|DPMatrixSensing)\] iteration (\d+)/(\d+) "
    r"\((\d+)% of the plan\), (\d+\.\d) s elapsed, (~\d+\.\d|\?) s left$")


@pytest.fixture
def fake_clock(monkeypatch):
    """Each reading of the clock advances it by 0.3 s."""
    ticks = itertools.count()
    monkeypatch.setattr(progress_module, "_clock", lambda: 0.3 * next(ticks))


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    return X, (X[:, 0] + 0.1 * rng.normal(size=n) > 0).astype(int)


def _progress_lines(out):
    return [line for line in out.splitlines() if " of the plan), " in line]


def _fit(make, X, y, capsys):
    est = make().fit(X, y)
    return est, capsys.readouterr().out


def test_a_long_fit_prints_throttled_progress_lines(fake_clock, capsys):
    X, y = _data()
    make = lambda: DPLogisticRegression(  # noqa: E731
        classes=[0, 1], solver="gd", max_iter=40, verbose=1,
        accountant=BudgetAccountant(), random_state=0)
    est, out = _fit(make, X, y, capsys)
    lines = _progress_lines(out)
    assert len(lines) >= 3
    elapsed, done = [], []
    for line in lines:
        match = LINE.match(line)
        assert match, line  # counts and times only: nothing else is printed
        assert int(match.group(3)) == 40
        done.append(int(match.group(2)))
        elapsed.append(float(match.group(5)))
    assert np.all(np.diff(elapsed) >= 1.0 - 1e-9)  # at most one line a second
    assert elapsed[0] >= 1.0                      # none in the first second
    assert np.all(np.diff(done) > 0) and done[-1] < 40
    # the end-of-fit line is kept
    assert out.splitlines()[-1].startswith("[DPLogisticRegression] solver=gd n_iter=40")
    assert est.n_iter_ == 40


def test_progress_holds_no_data_value(fake_clock, capsys, monkeypatch):
    """Neighbouring data sets (one record zeroed), same seed: the same progress lines."""
    X, y = _data()
    X2, y2 = X.copy(), y.copy()
    X2[7] = 0.0
    make = lambda: DPLinearSVC(  # noqa: E731
        classes=[0, 1], solver="gd", max_iter=30, verbose=1,
        accountant=BudgetAccountant(), random_state=0)
    _, out = _fit(make, X, y, capsys)
    ticks = itertools.count()
    monkeypatch.setattr(progress_module, "_clock", lambda: 0.3 * next(ticks))
    _, out2 = _fit(make, X2, y2, capsys)
    lines, lines2 = _progress_lines(out), _progress_lines(out2)
    assert len(lines) >= 3 and lines == lines2
    assert all(LINE.match(line) for line in lines)


def test_adaptive_plans_report_their_filter_share(fake_clock, capsys):
    X, y = _data(n=400)
    make = lambda: DPLogisticRegression(  # noqa: E731
        classes=[0, 1], solver="line_search", max_iter=30, verbose=1,
        accountant=BudgetAccountant(), random_state=0)
    _, out = _fit(make, X, y, capsys)
    lines = _progress_lines(out)
    assert lines and all(LINE.match(line) for line in lines)
    shares = [int(LINE.match(line).group(4)) for line in lines]
    assert shares == sorted(shares) and shares[-1] <= 100


def test_matrix_sensing_goes_through_the_same_door(fake_clock, capsys):
    X, y, _ = make_matrix_sensing(n_samples=200, shape=(3, 3), rank=1, random_state=0)
    est = DPMatrixSensing(rank=1, shape=(3, 3), max_iter=20, verbose=1,
                          accountant=BudgetAccountant(), random_state=0)
    est.fit(X, y)
    lines = _progress_lines(capsys.readouterr().out)
    assert len(lines) >= 3 and all(LINE.match(line) for line in lines)


def test_verbose_zero_and_short_fits_are_silent(capsys):
    X, y = _data()
    DPLogisticRegression(classes=[0, 1], max_iter=40, accountant=BudgetAccountant(),
                         random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
    # a real clock and a fit far shorter than a second: the end-of-fit line only
    DPLogisticRegression(classes=[0, 1], solver="gd", max_iter=5, verbose=1,
                         accountant=BudgetAccountant(), random_state=0).fit(X, y)
    out = capsys.readouterr().out
    assert _progress_lines(out) == [] and out.count("\n") == 1


def test_fit_progress_throttles_by_time(monkeypatch, capsys):
    now = [0.0]
    monkeypatch.setattr(progress_module, "_clock", lambda: now[0])
    progress = progress_module.FitProgress("Owner", 100)
    for step in range(100):
        now[0] = 0.05 * step   # 20 queries a second for 5 s
        progress.update(step / 100)
    lines = capsys.readouterr().out.splitlines()
    assert progress.n_lines == len(lines) == 4  # at 1, 2, 3 and 4 s
    assert lines[0] == "[Owner] iteration 20/100 (20% of the plan), 1.0 s elapsed, ~4.0 s left"


def test_a_default_fit_prints_progress_that_no_record_moves(fake_clock, capsys, monkeypatch):
    """The acceptance's setting in small: a default fit (solver='auto'), verbose=1.

    Measured for real (report of issue 41): 300,000 x 100 rows, 12.2 s, 9
    progress lines. Here the fake clock stands in for the seconds; a
    neighbour whose one record is zeroed or blown up prints the same lines.
    """
    X, y = _data(n=400)
    outs = []
    for change in (None, 0.0, 1e6):
        data = X.copy()
        if change is not None:
            data[11] = change
        ticks = itertools.count()
        monkeypatch.setattr(progress_module, "_clock", lambda: 0.3 * next(ticks))
        DPLogisticRegression(classes=[0, 1], verbose=1, accountant=BudgetAccountant(),
                             random_state=0).fit(data, y)
        outs.append(capsys.readouterr().out.splitlines())
    lines = _progress_lines("\n".join(outs[0]))
    assert len(lines) >= 3 and all(LINE.match(line) for line in lines)
    # every other line is the end-of-fit summary, and every output is the same
    assert len(outs[0]) == len(lines) + 1 and outs[0][-1].startswith(
        "[DPLogisticRegression] solver=")
    assert outs[1] == outs[0] and outs[2] == outs[0]

"""The plugin that runs the audits in worker processes (``tests/_background.py``)."""

import pytest

INNER = '''
import os
import warnings

import pytest


def _job(x):
    print("job printed", x)
    warnings.warn(f"job warned {x}", UserWarning)
    return x, os.getpid()


def _failing_job():
    raise ValueError("the job failed")


@pytest.mark.parametrize("x", [1, 2])
@pytest.mark.background(job=_job, cost=lambda x: x)
def test_marked(x, background):
    value, pid = background
    assert value == x
    in_worker = os.environ.get("SKDP_TEST_WORKERS") != "0"
    assert (pid != os.getpid()) == in_worker


@pytest.mark.background(job=_failing_job)
def test_failing_job(background):
    pass


def test_plain():
    pass
'''


@pytest.mark.parametrize("workers", [None, "0"])
def test_jobs_run_in_workers_and_their_tests_last(pytester, monkeypatch, workers):
    if workers is None:
        monkeypatch.delenv("SKDP_TEST_WORKERS", raising=False)
    else:
        monkeypatch.setenv("SKDP_TEST_WORKERS", workers)
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest("-p", "_background", "-v", "-rP", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)
    ran = [line.split(" ")[0] for line in result.outlines
           if line.startswith("test_inner.py::") and ("PASSED" in line or "ERROR" in line)]
    assert ran == ["test_inner.py::test_plain", "test_inner.py::test_marked[1]",
                   "test_inner.py::test_marked[2]", "test_inner.py::test_failing_job"]
    # in the report's order: errors, warnings summary, the passed tests' output
    result.stdout.fnmatch_lines(["*ValueError: the job failed*", "*job warned 1*",
                                 "*job printed 1*", "*job printed 2*"])


def test_a_test_without_the_marker_cannot_ask_for_a_job(pytester):
    pytester.makepyfile(test_inner="def test_x(background):\n    pass\n")
    result = pytester.runpytest("-p", "_background", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*without the background(job=...) marker*"])

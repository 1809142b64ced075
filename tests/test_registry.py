"""The solver registry."""

import pytest

from skdp import DPLogisticRegression
from skdp.solvers import Solver, available_solvers, get_solver, register_solver
from skdp.solvers import _registry


def test_gd_is_registered_and_available_to_logistic_regression():
    assert "gd" in available_solvers()
    assert "gd" in available_solvers(DPLogisticRegression)
    assert "gd" in available_solvers(DPLogisticRegression())
    assert get_solver("gd").name == "gd"


def test_unknown_solver_lists_the_registered_ones():
    with pytest.raises(ValueError, match="registered solvers are .*'gd'"):
        get_solver("no-such-solver")


class _Dummy(Solver):
    name = "dummy_for_tests"
    requires = frozenset({"gradient", "a_capability_no_loss_has"})

    def plan(self, *args, **kwargs):
        raise NotImplementedError

    def solve(self, *args, **kwargs):
        raise NotImplementedError


def test_duplicates_need_force_and_requirements_filter(monkeypatch):
    monkeypatch.setattr(_registry, "_REGISTRY", dict(_registry._REGISTRY))
    register_solver(_Dummy())
    with pytest.raises(ValueError, match="already registered"):
        register_solver(_Dummy())
    register_solver(_Dummy(), force=True)
    assert "dummy_for_tests" in available_solvers()
    assert "dummy_for_tests" not in available_solvers(DPLogisticRegression)
    with pytest.raises(ValueError, match="not available for DPLogisticRegression.*'gd'"):
        DPLogisticRegression(solver="dummy_for_tests").fit([[0.0], [1.0]], [0, 1])

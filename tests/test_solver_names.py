"""Estimators know no solver by name, and solver_params have one name per concept."""

import ast
import importlib
import inspect
import pathlib
import re

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import skdp
from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.solvers import available_solvers, get_solver

SKDP = pathlib.Path(skdp.__file__).parent
#: the estimator modules the issue names; any other module defining an
#: estimator class, or a class in an estimator's MRO, is found below
NAMED = ["linear_model.py", "svm.py", "matrix_sensing.py", "_linear.py", "_base.py",
         "preprocessing.py"]


def _estimator_modules():
    paths = {SKDP / name for name in NAMED}
    for path in sorted(SKDP.glob("*.py")):
        if path.stem.startswith("__"):
            continue  # the package and its command line define no estimator
        module = importlib.import_module(f"skdp.{path.stem}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseEstimator) and cls.__module__.startswith("skdp"):
                for base in cls.__mro__:
                    if base.__module__.startswith("skdp."):
                        file = inspect.getsourcefile(base)
                        if pathlib.Path(file).parent == SKDP:
                            paths.add(pathlib.Path(file))
    return sorted(paths)


def _code_strings(source):
    """String constants of the code (docstrings left out: they document)."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings):
            yield node.lineno, node.value


def _solver_names_in(source, names):
    found = []
    for lineno, text in _code_strings(source):
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        found += [(lineno, name) for name in sorted(words & names)]
    return found


def test_the_scan_finds_every_estimator_module():
    modules = {p.name for p in _estimator_modules()}
    assert set(NAMED) <= modules
    assert len(available_solvers()) >= 9


@pytest.mark.parametrize("path", _estimator_modules(), ids=lambda p: p.name)
def test_no_estimator_module_names_a_solver(path):
    # a registered solver's name in an estimator module's code means the
    # estimator branches on (or picks) a solver: defaults belong in the
    # solver's plan, derived from the loss's public constants
    names = set(available_solvers())
    found = _solver_names_in(path.read_text(encoding="utf-8"), names)
    assert not found, f"{path.name} names solvers in its code: {found}"


def test_the_scan_sees_a_solver_name_in_code():
    source = 'def f(solver):\n    """Uses \'gd\' (a docstring)."""\n    return solver == "gd"\n'
    assert _solver_names_in(source, {"gd"}) == [(3, "gd")]
    assert _solver_names_in('"""gd in a docstring"""\n', {"gd"}) == []


#: (solver, former option name, a valid value, the current name)
RENAMED = [
    ("line_search", "eta0", 0.5, "learning_rate"),
    ("line_search", "eta0_scale", 32.0, "step_scale"),
    ("line_search", "planned_iter", 50, "max_iter_cap"),
    ("second_order", "step", "short", "learning_rate"),
    ("second_order", "iteration_cap", 20, "max_iter_cap"),
    ("second_order", "value_clip", 1.0, "loss_clip"),
    ("second_order", "search_clip", 0.5, "relative_loss_clip"),
    ("dual_averaging", "gamma", 20.0, "learning_rate"),
    ("preconditioned_gd", "gram_noise_share", 0.5, "gram_noise_ratio"),
]


@pytest.mark.parametrize("solver, old, value, new", RENAMED)
def test_a_former_option_name_is_refused_with_a_pointer_before_any_charge(solver, old, value,
                                                                          new):
    X, y = np.random.default_rng(0).normal(size=(200, 3)), np.arange(200) % 2
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    est = DPLogisticRegression(solver=solver, penalty="l1" if solver == "dual_averaging"
                               else "l2", data_norm=1.0, accountant=accountant,
                               solver_params={old: value}, classes=[0, 1], random_state=0)
    with pytest.raises(ValueError, match=rf"'{old}' is now '{new}'"):
        est.fit(X, y)
    assert len(accountant) == 0  # nothing charged
    assert new in get_solver(solver).options


def test_the_renamed_options_exist_under_their_new_names():
    for solver, old, _, new in RENAMED:
        s = get_solver(solver)
        assert old not in s.options and new in s.options


#: one name per concept: an option of one of these concepts has this name in
#: every solver that has one (the table of docs/solvers/index.md)
FORMER = {"eta0", "eta0_scale", "planned_iter", "iteration_cap", "value_clip", "search_clip",
          "step", "gamma", "gram_noise_share"}


def test_no_solver_offers_a_former_name():
    for name in available_solvers():
        assert not FORMER & set(get_solver(name).options), name


def test_the_solvers_page_tables_every_option():
    text = (SKDP.parent / "docs" / "solvers" / "index.md").read_text(encoding="utf-8")
    table = text[text.index("## Option names"):]
    for name in available_solvers():
        for option in get_solver(name).options:
            assert f"`{option}`" in table, (name, option)


@pytest.mark.parametrize("est, derived", [
    # the hinge's stand-in step (16 / (B**2 + 1)) and the subgradient average
    (DPLinearSVC(loss="hinge", solver="gd", data_norm=1.0),
     {"learning_rate": 8.0, "average": 0.5}),
    (DPLinearSVC(loss="hinge", solver="line_search", data_norm=1.0),
     {"learning_rate": 32.0, "armijo": 0.3, "loss_clip": 1.0, "max_iter_cap": 300}),
    (DPLinearSVC(loss="sigmoid", solver="second_order", data_norm=1.0),
     {"learning_rate": "short", "max_iter_cap": 300, "tol_gradient": 0.005}),
    (DPLogisticRegression(solver="second_order", data_norm=1.0, penalty="nonconvex"),
     {"learning_rate": "line_search", "max_iter_cap": 100}),
    (DPMatrixSensing(shape=(4, 4), rank=1, solver="second_order"),
     {"learning_rate": "short", "max_iter_cap": 100, "tol_gradient": 5e-4,
      "smoothness": 1.0 / 12.0, "hessian_clip": 1.0}),
    (DPMatrixSensing(shape=(4, 4), rank=1, solver="line_search"),
     {"learning_rate": 48.0, "loss_clip": 0.1, "max_iter_cap": 100}),
    (DPMatrixSensing(shape=(4, 4), rank=1, solver="rgda"),
     {"smoothness": 1.0 / 12.0, "clip_smoothness": 6.0 * (1.0 / 12.0)}),
], ids=lambda v: getattr(v, "solver", ""))
def test_solver_defaults_come_from_the_loss_through_the_plan(est, derived):
    rng = np.random.default_rng(0)
    if isinstance(est, DPMatrixSensing):
        X, y = rng.normal(size=(300, 16)) / 4.0, rng.normal(size=300) * 0.1
    else:
        X, y = rng.normal(size=(300, 3)) / 3.0, np.arange(300) % 2
    est.set_params(epsilon=2.0, max_iter=3, random_state=0, accountant=BudgetAccountant())
    if not isinstance(est, DPMatrixSensing):
        est.set_params(classes=[0, 1])
    est.fit(X, y)
    for option, value in derived.items():
        assert est.solver_params_[option] == pytest.approx(value), option


def test_a_given_option_wins_over_the_derived_default():
    X, y = np.random.default_rng(0).normal(size=(300, 3)) / 3.0, np.arange(300) % 2
    est = DPLinearSVC(loss="hinge", solver="gd", data_norm=1.0, max_iter=3, random_state=0,
                      classes=[0, 1],
                      solver_params={"learning_rate": 0.25}, accountant=BudgetAccountant())
    est.fit(X, y)
    assert est.solver_params_["learning_rate"] == 0.25
    assert est.solver_params_["average"] == 0.5

"""The seam between solvers and data (issue 11): one module and a registry entry
make a solver; plan once; the data only through PrivateQueries, counted."""

import ast
import hashlib
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.accounting import Repeated, calibrate
from skdp.matrix_sensing import make_matrix_sensing
from skdp.solvers import (
    Plan, QueryBudgetError, Solver, SolverResult, register_solver, unregister_solver,
)

SKDP = Path(__file__).resolve().parents[1] / "skdp"


# -- a new solver, written outside the package, in under 40 lines ----------------
class ToyGD(Solver):
    """Noisy gradient descent with a fixed step."""

    name = "toy_gd"
    requires = frozenset({"gradient"})
    options = {"learning_rate": 0.5, "steps": 20}

    def plan(self, spec):
        T = spec.options["steps"]
        z = calibrate(lambda z: Repeated(spec.noise(z), T), spec.epsilon, spec.delta)
        return Plan(spec=spec, mechanism=Repeated(spec.noise(z), T), n_iter=T,
                    noise_multiplier=z)

    def solve(self, queries, plan):
        W, lr = queries.initial_coef(), plan.spec.options["learning_rate"]
        for _ in range(plan.n_iter):
            g = queries.noisy_gradient(W, plan.noise_multiplier)
            W = W - lr * (g + plan.spec.penalty.gradient(W))
        return SolverResult(coef=W, n_iter=plan.n_iter)
# --------------------------------------------------------------------------------


class OneQueryTooMany(ToyGD):
    name = "one_query_too_many"

    def solve(self, queries, plan):
        W = queries.initial_coef()
        for _ in range(plan.n_iter + 1):
            W = W - 0.1 * queries.noisy_gradient(W, plan.noise_multiplier)
        return SolverResult(coef=W, n_iter=plan.n_iter + 1)


class CountingPlans(ToyGD):
    name = "counting_plans"
    calls = []

    def plan(self, spec):
        self.calls.append(spec)
        return super().plan(spec)


@pytest.fixture
def solvers():
    made = [ToyGD(), OneQueryTooMany(), CountingPlans()]
    for solver in made:
        register_solver(solver)
    yield
    for solver in made:
        unregister_solver(solver.name)


def _data(cls):
    if cls is DPMatrixSensing:
        X, y, _ = make_matrix_sensing(400, shape=(3, 2), rank=1, random_state=0)
        return X, y, {"shape": (3, 2), "rank": 1}
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y, {}


ESTIMATORS = [DPLogisticRegression, DPLinearSVC, DPMatrixSensing]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_toy_solver_from_outside_fits_every_estimator(cls, solvers):
    X, y, params = _data(cls)
    acc = BudgetAccountant()
    est = cls(solver="toy_gd", accountant=acc, random_state=0, **params).fit(X, y)
    assert est.solver_ == "toy_gd" and est.n_iter_ == 20
    assert np.all(np.isfinite(est.coef_)) and len(acc.spends) == 1
    baseline = est.score(X, y)
    assert baseline > (0.8 if cls is not DPMatrixSensing else 0.0)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_query_beyond_the_plan_fails_before_it_runs(cls, solvers):
    X, y, params = _data(cls)
    acc = BudgetAccountant()
    est = cls(solver="one_query_too_many", accountant=acc, **params)
    with pytest.raises(QueryBudgetError, match="plan does not provide"):
        est.fit(X, y)
    assert len(acc.spends) == 1          # charged, as every fit that touched data
    assert not hasattr(est, "coef_")     # and nothing released


def test_plan_is_called_once_per_fit(solvers):
    X, y, _ = _data(DPLogisticRegression)
    CountingPlans.calls.clear()
    DPLogisticRegression(solver="counting_plans").fit(X, y)
    assert len(CountingPlans.calls) == 1
    spec = CountingPlans.calls[0]
    # the spec holds no data: no array with a row per record
    arrays = [v for v in vars(spec).values() if isinstance(v, np.ndarray)]
    arrays += [v for v in vars(spec.penalty).values() if isinstance(v, np.ndarray)]
    assert all(a.shape[0] != X.shape[0] or a.size == len(spec.coef_shape) for a in arrays)
    assert spec.n_samples == X.shape[0] and spec.coef_shape == (X.shape[1] + 1,)


class _RandomStartLogisticRegression(DPLogisticRegression):
    def _initial_coef(self, loss, rng):  # the estimator hook for a public random start
        return rng.normal(size=loss.coef_shape)


def test_the_spec_states_f0_only_for_a_start_at_zero(solvers):
    # F(0) = log 2 bounds the objective at a start at 0, not at a random start:
    # a solver choosing its step count from it would be misled
    X, y, _ = _data(DPLogisticRegression)
    CountingPlans.calls.clear()
    DPLogisticRegression(solver="counting_plans").fit(X, y)
    _RandomStartLogisticRegression(solver="counting_plans").fit(X, y)
    at_zero, at_random = CountingPlans.calls
    assert at_zero.initial_value == pytest.approx(np.log(2))
    assert at_random.initial_value is None


# -- structure of the package ------------------------------------------------------
def _sources(*parts):
    for folder in parts:
        yield from sorted((SKDP / folder).rglob("*.py"))


def test_solvers_know_no_loss_class():
    from skdp import losses
    names = set(losses.__all__)
    for path in _sources("solvers"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                used = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                assert not used & names, f"{path.name}: isinstance on {used & names}"
            if isinstance(node, ast.ImportFrom) and node.module and "losses" in node.module:
                pytest.fail(f"{path.name} imports from the losses package")


ROOMS = ("accounting", "losses", "solvers", "testing")


def _room(module):
    """The room of a dotted module name (a tuple from 'skdp'): a subpackage, or '' for the top."""
    return module[1] if len(module) > 1 and module[1] in ROOMS else ""


def _imported(path, root):
    """(target module, imported names) of every import in ``path``, lazy ones included."""
    here = ("skdp",) + path.relative_to(root).with_suffix("").parts
    package = here[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = base + tuple(node.module.split(".")) if node.module else base
            else:
                target = tuple((node.module or "").split("."))
            yield here, target, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield here, tuple(alias.name.split(".")), []


def _private_crossings(root):
    """Every import of a private name (leading underscore) from another room below ``root``.

    The rooms are the subpackages (skdp.accounting, skdp.losses, skdp.solvers,
    skdp.testing) and the top level (the modules directly in skdp/). A private
    module on the path counts as a private name.
    """
    found = []
    for path in sorted(root.rglob("*.py")):
        for here, target, names in _imported(path, root):
            if target[0] != "skdp" or _room(target) == _room(here):
                continue
            private = [p for p in target[1:] if p.startswith("_")]
            private += [n for n in names if n.startswith("_") and not n.endswith("__")]
            if private:
                found.append((str(path.relative_to(root)), ".".join(target), private))
    return found


def test_no_private_name_crosses_a_room_boundary():
    assert _private_crossings(SKDP) == []


def test_the_boundary_check_sees_a_planted_violation(tmp_path):
    root = tmp_path / "skdp"
    for folder in ("", "accounting", "solvers"):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / "__init__.py").write_text("")
    (root / "accounting" / "_secret.py").write_text("_KEY = 1\nPUBLIC = 2\n")
    (root / "accounting" / "rdp.py").write_text("from ._secret import _KEY\n")  # same room
    (root / "solvers" / "gd.py").write_text(
        "def plan():\n    from ..accounting._secret import PUBLIC\n")      # lazy, relative
    (root / "_dask.py").write_text("from skdp.accounting import _KEY\n")  # absolute
    (root / "model.py").write_text("import skdp.accounting._secret\n")
    assert sorted(_private_crossings(root)) == [
        ("_dask.py", "skdp.accounting", ["_KEY"]),
        ("model.py", "skdp.accounting._secret", ["_secret"]),
        ("solvers/gd.py", "skdp.accounting._secret", ["_secret"]),
    ]


def _solver_modules(folder):
    """The modules of ``folder`` that register a solver, by stem."""
    return {p.stem: p for p in sorted(folder.glob("*.py"))
            if "register_solver(" in p.read_text(encoding="utf-8")
            and not p.stem.startswith("_")}


def _solver_to_solver_imports(folder):
    """(importer, imported) for every solver module that imports another solver module."""
    solvers, found = _solver_modules(folder), []
    for stem, path in solvers.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names = [node.module] if node.module else [a.name for a in node.names]
                found += [(stem, n) for n in names if n in solvers and n != stem]
    return found


def test_solvers_share_helpers_through_budget_rules_not_through_another_solver():
    assert _solver_to_solver_imports(SKDP / "solvers") == []


def test_the_solver_import_check_sees_a_planted_one(tmp_path):
    (tmp_path / "gd.py").write_text("register_solver(GD())\n")
    (tmp_path / "budget_rules.py").write_text("STEP = 1\n")
    (tmp_path / "minimax.py").write_text(
        "from .budget_rules import STEP\nfrom .gd import GD\nregister_solver(M())\n")
    assert _solver_to_solver_imports(tmp_path) == [("minimax", "gd")]


MAX_MODULE_LINES = 800


def _long_modules(root):
    """Modules below ``root`` over MAX_MODULE_LINES lines, with their lengths."""
    lengths = {str(p.relative_to(root)): len(p.read_text(encoding="utf-8").splitlines())
               for p in sorted(root.rglob("*.py"))}
    return {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES}


def test_no_module_is_over_800_lines():
    assert _long_modules(SKDP) == {}


def test_the_length_check_sees_a_long_module(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert _long_modules(tmp_path) == {"long.py": MAX_MODULE_LINES + 1}


def test_no_block_of_ten_lines_is_written_twice():
    window, seen = 10, defaultdict(set)
    for path in _sources("solvers", "accounting", "losses"):
        lines = [ln.strip() for ln in path.read_text().splitlines()]
        code = [ln for ln in lines if ln and not ln.startswith("#")]
        for i in range(len(code) - window + 1):
            block = "\n".join(code[i:i + window])
            seen[hashlib.sha1(block.encode()).hexdigest()].add((path.name, i))
    repeated = [sorted(places) for places in seen.values()
                if len({p for p, _ in places}) > 1 or len(places) > 1]
    assert not repeated, repeated[:3]

"""The fast tier (``pytest -m "not heavy"``) leaves out exactly the heavy tests.

``conftest.py`` marks a test ``heavy`` when it runs scikit-learn's estimator
checks, a privacy audit or a Dask cluster, reads a real data set, or is listed
as measured slow; the full run (plain ``pytest``) still runs every test.
"""

from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import HEAVY_MODULES, HEAVY_TESTS, pytest_collection_modifyitems


def _item(module, name, fixtures=()):
    item = SimpleNamespace(path=Path("tests") / module, originalname=name,
                           nodeid=f"tests/{module}::{name}", fixturenames=list(fixtures),
                           markers=[])
    item.add_marker = item.markers.append
    return item


def _heavy(item):
    pytest_collection_modifyitems(config=None, items=[item])
    return [m.name for m in item.markers] == ["heavy"]


@pytest.mark.parametrize("module", sorted(HEAVY_MODULES))
def test_estimator_checks_audits_and_dask_are_heavy(module):
    assert _heavy(_item(module, "test_anything"))


@pytest.mark.parametrize("fixture", ["adult", "reuters"])
def test_a_test_on_real_data_is_heavy(fixture):
    assert _heavy(_item("test_logistic.py", "test_accuracy", fixtures=["rng", fixture]))


LISTED = sorted((module, name) for module, names in HEAVY_TESTS.items() for name in names)


@pytest.mark.parametrize("module, name", LISTED, ids=[f"{m}::{n}" for m, n in LISTED])
def test_a_test_measured_slow_is_heavy(module, name):
    assert _heavy(_item(module, name))
    path = Path(__file__).parent / module
    assert f"def {name}(" in path.read_text(), f"{module} has no test {name}: update HEAVY_TESTS"


def test_a_quick_test_stays_in_the_fast_tier():
    assert not _heavy(_item("test_docs_pages.py", "test_the_guide_has_pages", ["rng"]))


def test_the_marker_is_registered():
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert '"heavy: ' in text

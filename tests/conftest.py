"""Shared fixtures: the real data sets in ../shared/data (never copied into the repo)."""

import os

# scikit-learn's array-API estimator checks run only when SciPy is imported with
# array-API support; set it before anything imports SciPy so they run, not skip.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import functools  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.preprocessing import Normalizer  # noqa: E402

SHARED_DATA = Path(
    os.environ.get("SKDP_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def _require(name):
    path = SHARED_DATA / name
    if not path.exists():
        pytest.fail(f"{path} is missing: the tests need ../shared/data beside the repository "
                    "(or SKDP_SHARED_DATA pointing at it).")
    return path


@functools.lru_cache(maxsize=None)
def _load_pair(stem, n_features):
    X_tr, y_tr = load_svmlight_file(str(_require(f"{stem}.trn.bz2")), n_features=n_features)
    X_te, y_te = load_svmlight_file(str(_require(f"{stem}.tst.bz2")), n_features=n_features)
    norm = Normalizer()
    return norm.transform(X_tr), y_tr, norm.transform(X_te), y_te


def load_adult():
    """Adult (a9a): CSR rows scaled to unit L2 norm, labels +/-1."""
    return _load_pair("adult", 123)


def load_reuters():
    """Reuters: CSR rows scaled to unit L2 norm."""
    return _load_pair("reuters", 8315)


@pytest.fixture(scope="session")
def adult():
    return load_adult()


@pytest.fixture(scope="session")
def reuters():
    return load_reuters()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


#: markers of the tiers that run only when selected by name with ``-m``
_ON_REQUEST = {
    "audit_long": "long audit: run with -m audit_long",
    "slow": "slow tier: run with -m slow",
}


@pytest.fixture(autouse=True)
def _tiers_on_request(request):
    """Tests marked ``audit_long`` or ``slow`` run only when ``-m`` names the marker."""
    selected = request.config.getoption("-m") or ""
    for marker, reason in _ON_REQUEST.items():
        if request.node.get_closest_marker(marker) is not None and marker not in selected:
            pytest.skip(reason)

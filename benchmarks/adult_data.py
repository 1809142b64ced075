"""Adult (a9a) for the benchmark scripts: read from ../shared/data, rows scaled to unit L2 norm."""

from pathlib import Path

from sklearn.datasets import load_svmlight_file
from sklearn.preprocessing import Normalizer

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load_adult():
    """``(X_train, y_train, X_test, y_test)``: CSR rows of unit L2 norm, labels +/-1."""
    X, y = load_svmlight_file(str(DATA / "adult.trn.bz2"), n_features=123)
    Xt, yt = load_svmlight_file(str(DATA / "adult.tst.bz2"), n_features=123)
    norm = Normalizer()
    return norm.transform(X), y, norm.transform(Xt), yt

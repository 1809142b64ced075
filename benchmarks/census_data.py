"""Census-type data sets brought from public repositories (kept outside the git tree).

``SKDP_EXTRA_DATA`` names the folder that ``benchmarks/prepare_census_data.py``
filled. ``load_bank()`` returns UCI Bank Marketing (Moro et al. 2014; paper
002's "Bank", 45,211 records) as paper 002 preprocesses its census sets:
categorical columns one-hot, numeric columns scaled to [0, 1], then rows scaled
to unit L2 norm (as ``adult_data.load_adult``), label 'yes' -> +1. The split is
a fixed stratified 80/20 train/test split (seed 0; the paper uses 10-fold
cross-validation). ``None`` when the data are absent.
"""

import os
from pathlib import Path

import numpy as np

ENV = "SKDP_EXTRA_DATA"
BANK = "bank-full.csv"


def extra_data_dir():
    """The folder of the extra data sets, or None when ``SKDP_EXTRA_DATA`` is unset."""
    path = os.environ.get(ENV)
    return Path(path) if path else None


def load_bank():
    """``(X_train, y_train, X_test, y_test)`` of Bank Marketing, or None when it is absent."""
    folder = extra_data_dir()
    if folder is None or not (folder / BANK).exists():
        return None
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import MinMaxScaler, Normalizer, OneHotEncoder

    frame = pd.read_csv(folder / BANK, sep=None, engine="python")
    frame.columns = [c.strip().strip('"') for c in frame.columns]
    y = np.where(frame.pop("y").astype(str).str.strip('"') == "yes", 1.0, -1.0)
    categorical = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    numeric = [c for c in frame.columns if c not in categorical]
    X_train, X_test, y_train, y_test = train_test_split(
        frame, y, test_size=0.2, stratify=y, random_state=0)
    # scaling ranges and categories from the training part only
    encode = ColumnTransformer([
        ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
        ("num", MinMaxScaler(clip=True), numeric),
    ])
    norm = Normalizer()
    X_train = norm.transform(encode.fit_transform(X_train))
    X_test = norm.transform(encode.transform(X_test))
    return X_train, y_train, X_test, y_test

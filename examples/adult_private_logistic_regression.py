"""Private logistic regression on Adult (a9a) across epsilons.

Reads the data from ../shared/data (the repository's sibling folder) or the
folder named by SKDP_SHARED_DATA.

Run: python examples/adult_private_logistic_regression.py
"""

import os
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import Normalizer

from skdp import DPLogisticRegression

data = Path(os.environ.get("SKDP_SHARED_DATA",
                           Path(__file__).resolve().parents[2] / "shared" / "data"))
X, y = load_svmlight_file(str(data / "adult.trn.bz2"), n_features=123)
X_test, y_test = load_svmlight_file(str(data / "adult.tst.bz2"), n_features=123)
X, X_test = Normalizer().transform(X), Normalizer().transform(X_test)

print(f"non-private LogisticRegression: {LogisticRegression().fit(X, y).score(X_test, y_test):.4f}")
for eps in [0.1, 0.3, 1.0, 3.0]:
    scores = [DPLogisticRegression(epsilon=eps, random_state=s).fit(X, y).score(X_test, y_test)
              for s in range(5)]
    print(f"epsilon={eps:<4} delta=1e-5: accuracy {np.mean(scores):.4f} +/- {np.std(scores):.4f}")

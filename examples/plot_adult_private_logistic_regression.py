"""
Private logistic regression on Adult
====================================

:class:`~skdp.DPLogisticRegression` at its defaults (solver ``'gd'``) on
Adult (a9a: 32,561 training rows, 16,281 test rows, 123 one-hot features)
across epsilons, five seeds each, next to scikit-learn's non-private
``LogisticRegression`` with the same penalty.

Rows are scaled to unit L2 norm by :class:`~sklearn.preprocessing.Normalizer`,
which reads each row alone and learns nothing from the data set, so it costs
no privacy and matches the estimator's default ``data_norm=1``. The data
are read from ``../shared/data`` beside the repository, or from the folder
named by the ``SKDP_SHARED_DATA`` environment variable.

**What the privacy covers.** Each fit is (epsilon, delta = 1e-5)-
differentially private: the released model (``coef_``, ``intercept_``,
``n_iter_``) with respect to replacing one training record by a null
record. The five seeds of one epsilon are five separate fits, shown to
display the spread of the noise; releasing all of them would cost five
times epsilon. Test accuracy is measured on the public test set.

Run: python examples/plot_adult_private_logistic_regression.py
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import Normalizer

from skdp import BudgetAccountant, DPLogisticRegression


def examples_dir():
    """This folder: from ``__file__``, or the working directory (sphinx-gallery
    runs each example in its folder, without ``__file__``)."""
    return Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()


data = Path(os.environ.get("SKDP_SHARED_DATA", examples_dir().parents[1] / "shared" / "data"))
X, y = load_svmlight_file(str(data / "adult.trn.bz2"), n_features=123)
X_test, y_test = load_svmlight_file(str(data / "adult.tst.bz2"), n_features=123)
X, X_test = Normalizer().transform(X), Normalizer().transform(X_test)

# %%
# NON-PRIVATE baseline and private fits
# -------------------------------------
# The estimator's default ``alpha = 1e-4`` penalises the *mean* loss; in
# scikit-learn's terms that is ``C = 1 / (alpha n)``. ``classes=[-1, 1]``
# makes the label set public. Each fit has its own accountant, so its noise
# depends on its seed alone.

alpha = 1e-4
non_private = LogisticRegression(C=1 / (alpha * X.shape[0]), max_iter=1000).fit(X, y)
non_private_score = non_private.score(X_test, y_test)
print(f"non-private LogisticRegression: {non_private_score:.4f}")

EPSILONS = [0.1, 0.3, 1.0, 3.0]
SEEDS = range(5)
scores = np.array([[DPLogisticRegression(epsilon=eps, delta=1e-5, classes=[-1, 1],
                                         accountant=BudgetAccountant(), random_state=seed)
                    .fit(X, y).score(X_test, y_test) for seed in SEEDS]
                   for eps in EPSILONS])
for eps, row in zip(EPSILONS, scores):
    print(f"epsilon={eps:<4} delta=1e-5 (per fit): accuracy {row.mean():.4f} +/- {row.std():.4f}"
          f" over {len(SEEDS)} fits")

# %%
# The figure
# ----------
# Mean test accuracy of the five fits, with their standard deviation.

fig, ax = plt.subplots(figsize=(6.5, 4))
ax.errorbar(EPSILONS, scores.mean(axis=1), yerr=scores.std(axis=1), marker="o", capsize=3,
            label="DPLogisticRegression (mean +/- std of 5 fits)")
ax.axhline(non_private_score, color="k", ls="--", label="non-private LogisticRegression")
ax.set_xscale("log")
ax.set_xticks(EPSILONS, [f"{eps:g}" for eps in EPSILONS])
ax.set_xlabel("epsilon of each fit (delta = 1e-5)")
ax.set_ylabel("test accuracy on Adult")
ax.grid(alpha=0.3)
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
# sphinx_gallery_start_ignore
# Run as a script without a display (matplotlib's Agg backend): save the figure, say where.
import sys
from pathlib import Path

if "sphinx_gallery" not in sys.modules and plt.get_backend().lower() == "agg":
    saved = Path(Path(__file__).stem + ".png").resolve()
    fig.savefig(saved)
    plt.close(fig)
    print(f"No display: the figure is saved in {saved}")
# sphinx_gallery_end_ignore
plt.show()

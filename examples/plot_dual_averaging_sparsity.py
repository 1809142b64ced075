"""
Sparse private models by distributed dual averaging
===================================================

``solver='dual_averaging'`` (paper 003, Liu, Johansson and Shi, DP-DDA)
simulates a network: the training records are split evenly over 20 nodes
by a public seed, and at each round the two end points of a random edge of
the network take a noisy clipped gradient on a Poisson sample of their own
records, average their dual vectors (gossip) and take a proximal step. With
``penalty='l1'`` that step is soft thresholding, and the released model is
the primal point of the nodes' mean dual vector (regularised dual
averaging's output), so coefficients come out *exactly* zero: a sparse
model.

This example fits :class:`~skdp.DPLinearSVC` with ``penalty='l1'`` and
``alpha=1e-3`` on Adult (a9a, 123 one-hot features, rows scaled to unit norm
by :class:`~sklearn.preprocessing.Normalizer`, which reads each row alone:
free) and plots test accuracy and the number of non-zero coefficients
against epsilon, next to the same solver with the (dense) ridge penalty
and to ``gd`` with the L1 penalty (proximal gradient descent).

**What the privacy covers.** Each fit (``random_state=0``) is
(epsilon, delta = 1e-5)-differentially private with respect to replacing one
training record by a null record. For ``dual_averaging`` this covers the
whole transcript of messages between the simulated nodes, hence the model:
a round costs a record something only when its own node is active, which
is a public coin, and skdp's accountant charges exactly that (it does not
use the paper's Theorem 1, which treats the coin as secret). Because every
node adds its own noise, the distributed fit is about as noisy as a central
fit at a fifth of the epsilon. The number of zero coefficients is part of
the released model, so it is covered too. The 15 fits together use the data
15 times.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_svmlight_file
from sklearn.preprocessing import Normalizer
from sklearn.svm import LinearSVC

from skdp import BudgetAccountant, DPLinearSVC


def examples_dir():
    """This folder: from ``__file__``, or the working directory (sphinx-gallery
    runs each example in its folder, without ``__file__``)."""
    return Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()


# Adult lives in ../shared/data beside the repository, or in $SKDP_SHARED_DATA.
data = Path(os.environ.get("SKDP_SHARED_DATA", examples_dir().parents[1] / "shared" / "data"))
X, y = load_svmlight_file(str(data / "adult.trn.bz2"), n_features=123)
X_test, y_test = load_svmlight_file(str(data / "adult.tst.bz2"), n_features=123)
X, X_test = Normalizer().transform(X), Normalizer().transform(X_test)
n, n_features = X.shape

# %%
# Private fits
# ------------

ALPHA = 1e-3
EPSILONS = [0.1, 0.3, 1.0, 3.0, 10.0]
VARIANTS = {"dual_averaging, l1": ("dual_averaging", "l1"),
            "dual_averaging, l2": ("dual_averaging", "l2"),
            "gd, l1": ("gd", "l1")}
rows = []
for label, (solver, penalty) in VARIANTS.items():
    for eps in EPSILONS:
        model = DPLinearSVC(epsilon=eps, delta=1e-5, solver=solver, penalty=penalty,
                            alpha=ALPHA, classes=[-1, 1], accountant=BudgetAccountant(),
                            random_state=0).fit(X, y)
        rows.append({"model": label, "epsilon": eps, "accuracy": model.score(X_test, y_test),
                     "non-zero coefficients": np.count_nonzero(model.coef_)})
results = pd.DataFrame(rows)

# %%
# NON-PRIVATE reference
# ---------------------
# scikit-learn's L1 ``LinearSVC`` at the same strength (``alpha`` of the mean
# loss is ``C = 1 / (alpha n)``). Its loss is the squared hinge, the closest
# scikit-learn offers with an L1 penalty; ``DPLinearSVC`` minimises the
# smoothed hinge.

reference = LinearSVC(penalty="l1", dual=False, C=1 / (ALPHA * n), max_iter=5000,
                      random_state=0).fit(X, y)
reference_accuracy = reference.score(X_test, y_test)
reference_nonzero = np.count_nonzero(reference.coef_)

for column in ("accuracy", "non-zero coefficients"):
    table = results.pivot_table(index="model", columns="epsilon", values=column, sort=False)
    table.columns = [f"eps={eps:g}" for eps in table.columns]
    of = f" (of {n_features})" if column != "accuracy" else ""
    print(f"{column}{of}; each cell is one (epsilon, delta=1e-5)-DP fit, seed 0")
    print(table.to_string(float_format=("{:.4f}" if column == "accuracy" else "{:.0f}").format))
    print()
print(f"non-private L1 LinearSVC (squared hinge): accuracy {reference_accuracy:.4f}, "
      f"{reference_nonzero} non-zero coefficients")

# %%
# The figure
# ----------
# With the L1 penalty, dual averaging keeps a quarter to a third of the
# features from epsilon 1 on (the non-private L1 model keeps about as many),
# at a cost of about one point of accuracy against its dense ridge fit.
# Proximal ``gd``, whose released model is its last iterate, reaches that
# sparsity only at epsilon 10, where the noise of its last step is small
# enough for soft thresholding to leave coordinates at zero. At small
# epsilon the distributed fits lose most accuracy: every node adds its own
# noise.

fig, (ax_acc, ax_nnz) = plt.subplots(1, 2, figsize=(12, 4.5))
for marker, (label, curve) in zip("osD", results.groupby("model", sort=False)):
    ax_acc.plot(curve.epsilon, curve.accuracy, marker=marker, label=label)
    ax_nnz.plot(curve.epsilon, curve["non-zero coefficients"], marker=marker, label=label)
ax_acc.axhline(reference_accuracy, color="k", ls="--", label="non-private L1 LinearSVC")
ax_nnz.axhline(reference_nonzero, color="k", ls="--", label="non-private L1 LinearSVC")
ax_acc.set_ylabel("test accuracy")
ax_nnz.set_ylabel(f"non-zero coefficients (of {n_features})")
ax_nnz.set_ylim(0, n_features + 5)
for ax in (ax_acc, ax_nnz):
    ax.set_xscale("log")
    ax.set_xticks(EPSILONS, [f"{eps:g}" for eps in EPSILONS])
    ax.set_xticks([], minor=True)
    ax.set_xlabel("epsilon of each fit (delta = 1e-5)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle(f"DPLinearSVC on Adult, alpha = {ALPHA:g} (seed 0)")
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

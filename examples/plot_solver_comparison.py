"""
Every solver at epsilon = 1: accuracy and fit time
==================================================

All solvers registered in :mod:`skdp.solvers` that apply to
:class:`~skdp.DPLogisticRegression` and :class:`~skdp.DPLinearSVC` at
their defaults, each fitted once on Adult (a9a, 32,561 training rows, rows
scaled to unit norm by :class:`~sklearn.preprocessing.Normalizer`, which
reads each row alone and costs no privacy) at the same budget, epsilon = 1
and delta = 1e-5, with ``random_state=0``.

**What the privacy covers.** Every row of the table is a separate fit whose
released model (``coef_``, ``intercept_``, ``n_iter_`` and any solver
attribute) is (1, 1e-5)-differentially private with respect to replacing one
training record by a null record. The 16 fits together are not: they use
the same training data 16 times (basic composition: epsilon 16). Test
accuracy is measured on the public test set. Fit times are wall-clock
seconds on the machine that built this page and vary from run to run; the
accuracies do not (fixed seeds).
"""

import os
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_svmlight_file
from sklearn.preprocessing import Normalizer

from skdp import BudgetAccountant, DPLinearSVC, DPLogisticRegression
from skdp.solvers import available_solvers


def examples_dir():
    """This folder: from ``__file__``, or the working directory (sphinx-gallery
    runs each example in its folder, without ``__file__``)."""
    return Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()


# Adult lives in ../shared/data beside the repository, or in $SKDP_SHARED_DATA.
data = Path(os.environ.get("SKDP_SHARED_DATA", examples_dir().parents[1] / "shared" / "data"))
X, y = load_svmlight_file(str(data / "adult.trn.bz2"), n_features=123)
X_test, y_test = load_svmlight_file(str(data / "adult.tst.bz2"), n_features=123)
X, X_test = Normalizer().transform(X), Normalizer().transform(X_test)

# %%
# One fit per (estimator, solver)
# -------------------------------
# The paper each solver implements (see the Solvers page of the user guide):
# ``gd`` is the noisy gradient descent baseline; ``heavy_ball``, ``nesterov``
# and ``multistage_nesterov`` are paper 001's accelerated methods;
# ``line_search`` picks step sizes by a private Armijo search (002);
# ``second_order`` looks for second-order stationary points (004);
# ``dual_averaging`` is a distributed algorithm over 20 simulated nodes, each
# adding its own noise (003); ``rgda`` is DP-SPIDER with saddle escape (000).
# Each fit has its own accountant, so its noise depends on its seed alone.

EPSILON, DELTA = 1.0, 1e-5
rows = []
for Estimator in (DPLogisticRegression, DPLinearSVC):
    for solver in available_solvers(Estimator):
        model = Estimator(epsilon=EPSILON, delta=DELTA, solver=solver, classes=[-1, 1],
                          accountant=BudgetAccountant(), random_state=0)
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        rows.append({"estimator": Estimator.__name__, "solver": solver,
                     "test accuracy": model.score(X_test, y_test),
                     "n_iter_": model.n_iter_, "fit time (s)": seconds})
results = pd.DataFrame(rows)

# %%
# The table
# ---------
# ``n_iter_`` counts private iterations; what one iteration costs differs by
# solver (a full-batch gradient for ``gd``, a gradient and a search for
# ``line_search``, one gossip round of two nodes for ``dual_averaging``).

print(f"Adult, one fit per row at (epsilon={EPSILON:g}, delta={DELTA:g}), seed 0")
print(results.to_string(index=False, formatters={"test accuracy": "{:.4f}".format,
                                                 "fit time (s)": "{:.2f}".format}))
print(f"the {len(results)} fits together: epsilon={EPSILON * len(results):g} "
      "(basic composition)")

# %%
# The bar plot
# ------------
# The accuracy axis starts at the majority-class rate (0.764), the accuracy of
# a model that learned nothing.

majority = max(np.mean(y_test == 1), np.mean(y_test == -1))
solvers = list(dict.fromkeys(results.solver))
positions = np.arange(len(solvers))
width = 0.4
fig, (ax_acc, ax_time) = plt.subplots(1, 2, figsize=(12, 4.5))
for k, name in enumerate(["DPLogisticRegression", "DPLinearSVC"]):
    part = results[results.estimator == name].set_index("solver").reindex(solvers)
    offset = (k - 0.5) * width
    ax_acc.bar(positions + offset, part["test accuracy"] - majority, width,
               bottom=majority, label=name)
    ax_time.bar(positions + offset, part["fit time (s)"], width, label=name)
for ax in (ax_acc, ax_time):
    ax.set_xticks(positions, solvers, rotation=35, ha="right")
    ax.grid(axis="y", alpha=0.3)
ax_acc.set_ylim(majority, 0.86)
ax_acc.set_ylabel("test accuracy")
ax_acc.set_title(f"accuracy at epsilon = {EPSILON:g}, delta = {DELTA:g} (one fit each)")
ax_acc.legend(loc="lower right", fontsize=8)
ax_time.set_ylabel("fit time (s, this machine)")
ax_time.set_title("wall-clock time of the fit")
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

"""
Privacy-utility trade-off on Adult, for every solver
====================================================

Test accuracy on Adult (a9a: 32,561 training rows, 16,281 test rows, 123
one-hot features) of :class:`~skdp.DPLogisticRegression` and
:class:`~skdp.DPLinearSVC` against the privacy budget epsilon, for each
solver that :func:`skdp.solvers.available_solvers` lists for the estimator
at its defaults (every solver runs on the whole training set with its
default settings: no subsampling and no shortened runs were needed to keep
this example under a minute). The dashed line is the non-private
scikit-learn model with the same penalty, fitted on the same rows
(``LogisticRegression``; ``LinearSVC`` with the hinge, the closest loss to
``DPLinearSVC``'s smoothed hinge); the dotted line is the share of the
majority class (0.764).

**What the privacy covers.** Each point is one fit, with one seed
(``random_state=0``), that is (epsilon, delta = 1e-5)-differentially
private: its released model (``coef_``, ``intercept_``, ``n_iter_``) with
respect to replacing one training record by a null record (zero-out
neighbours; the number of records is public). The test accuracy is
evaluated on the public test set and costs no privacy. The figure as a
whole is *not* one private release: it fits the same training data 64
times, and the total it would cost (basic composition) is printed at the
end. Choosing a solver or epsilon by looking at this figure uses the
training data without privacy; it is a benchmark, not a procedure.

Rows are scaled to unit L2 norm with :class:`~sklearn.preprocessing.Normalizer`,
which reads each row alone (no statistic of the data set), so it costs no
privacy and matches the estimators' default ``data_norm=1``.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import Normalizer
from sklearn.svm import LinearSVC

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
n = X.shape[0]

# %%
# Fit every (estimator, solver, epsilon)
# --------------------------------------
# ``classes=[-1, 1]`` makes the label set public (otherwise ``classes_`` would
# reveal which labels occur in the data). Each fit gets its own accountant
# (unlimited budget), so that its noise depends on its seed alone: the same
# fit gives the same model in every example of this gallery.

EPSILONS = [0.1, 0.3, 1.0, 3.0]
ESTIMATORS = {"DPLogisticRegression": DPLogisticRegression, "DPLinearSVC": DPLinearSVC}
rows = []
for name, Estimator in ESTIMATORS.items():
    for solver in available_solvers(Estimator):
        for eps in EPSILONS:
            model = Estimator(epsilon=eps, delta=1e-5, solver=solver, classes=[-1, 1],
                              accountant=BudgetAccountant(), random_state=0).fit(X, y)
            rows.append({"estimator": name, "solver": solver, "epsilon": eps,
                         "accuracy": model.score(X_test, y_test)})
results = pd.DataFrame(rows)

# %%
# NON-PRIVATE baselines
# ---------------------
# The same penalty (``alpha = 1e-4`` of the mean loss is ``C = 1 / (alpha n)``
# in scikit-learn), fitted without any privacy. ``DPLinearSVC`` minimises the
# smoothed hinge by default; scikit-learn's closest model is the hinge.

alpha = 1e-4
baseline = {
    "DPLogisticRegression": LogisticRegression(C=1 / (alpha * n), max_iter=1000)
    .fit(X, y).score(X_test, y_test),
    "DPLinearSVC": LinearSVC(loss="hinge", C=1 / (alpha * n), max_iter=10_000, random_state=0)
    .fit(X, y).score(X_test, y_test),
}
majority = max(np.mean(y_test == 1), np.mean(y_test == -1))

# %%
# The table and the figure
# ------------------------
# What to read in it: from epsilon 1 on, most solvers are within half a point
# of the non-private model. ``heavy_ball`` and the Nesterov methods choose
# their number of steps from the budget by paper 001's bound, about 20 steps
# at epsilon 0.1, hence their dip there. ``dual_averaging`` simulates 20
# nodes that each add their own noise: it is about as noisy as a central fit
# at a fifth of the epsilon. ``rgda`` (DP-SPIDER) stays one to two points
# below ``gd`` (six for ``DPLinearSVC`` at epsilon 0.1), as the Solvers page
# reports for epsilon 1. (The ``LinearSVC`` line is the hinge loss; the
# private model's smoothed hinge can score slightly above it.)

table = results.pivot_table(index=["estimator", "solver"], columns="epsilon",
                            values="accuracy", sort=False)
table.columns = [f"eps={eps:g}" for eps in table.columns]
print("Test accuracy on Adult; each cell is one (epsilon, delta=1e-5)-DP fit, seed 0")
print(table.to_string(float_format="{:.4f}".format))
for name, score in baseline.items():
    print(f"non-private scikit-learn model for {name}: {score:.4f}")
print(f"all {len(results)} fits together, by basic composition: "
      f"epsilon={results.epsilon.sum():g}, delta={1e-5 * len(results):g}")

fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
markers = "osD^v<>ph*"
for ax, name in zip(axes, ESTIMATORS):
    part = results[results.estimator == name]
    for marker, (solver, curve) in zip(markers, part.groupby("solver", sort=False)):
        ax.plot(curve.epsilon, curve.accuracy, marker=marker, label=solver)
    ax.axhline(baseline[name], color="k", ls="--", label="non-private scikit-learn")
    ax.axhline(majority, color="grey", ls=":", label="majority class")
    ax.set_xscale("log")
    ax.set_xticks(EPSILONS, [f"{eps:g}" for eps in EPSILONS])
    ax.set_xlabel("epsilon of each fit (delta = 1e-5)")
    ax.set_title(name)
    ax.grid(alpha=0.3)
axes[0].set_ylabel("test accuracy")
axes[0].set_ylim(0.74, 0.86)
axes[1].legend(loc="lower right", fontsize=8)
fig.suptitle("Adult: accuracy of one private fit per point (seed 0)")
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

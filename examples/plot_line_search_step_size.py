"""
Private line search: no step size to tune
=========================================

Noisy gradient descent (``solver='gd'``) needs a step size, and tuning it on
the private data is itself a use of the data: every trial is a fit, and
picking the best by its score leaks. ``solver='line_search'`` (paper 002,
Chen and Lee, DP-BLSGD) chooses each step privately: at every iteration it
tests candidate steps ``learning_rate * 0.8**k`` for sufficient decrease of the loss
(the Armijo condition) with the sparse-vector technique
(AboveThreshold), whose noisy answer costs part of the same budget. Only the
index of the first accepted candidate is released.

This example gives both solvers a step that is too small or too large by a
factor of up to 64 (``learning_rate`` for ``gd``, the first candidate
``learning_rate`` for ``line_search``, each relative to the solver's own default) and
measures test accuracy on Adult (a9a, rows scaled to unit norm by
:class:`~sklearn.preprocessing.Normalizer`, which reads each row alone and
costs no privacy), for :class:`~skdp.DPLogisticRegression` at epsilon 1.

**What the privacy covers.** Each point is one fit (``random_state=0``):
its released model (``coef_``, ``intercept_``, ``n_iter_``) is
(epsilon = 1, delta = 1e-5)-differentially private with respect to replacing
one training record by a null record. For ``line_search`` that budget
includes the searches: the fit runs under a privacy filter charged up front,
so the number of iterations it runs (``n_iter_``) is covered too. The 14
fits together use the data 14 times; the figure is a benchmark, not a way
to choose a step.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.preprocessing import Normalizer

from skdp import BudgetAccountant, DPLogisticRegression


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
# The defaults, from public constants only
# ----------------------------------------
# Both defaults come from the loss's public smoothness ``L`` (0.5 here: the
# logistic loss's curvature 1/4 times the squared norm of a row with its
# intercept feature, at most 2): ``gd`` steps ``1 / (L/4 + alpha)``, about 8;
# ``line_search`` starts its search at ``64 / L``, about 128, and may go 40
# candidates down from there (to about 0.02). Nothing here reads the data.

EPSILON, DELTA = 1.0, 1e-5


def fit(solver, **solver_params):
    return DPLogisticRegression(epsilon=EPSILON, delta=DELTA, solver=solver, classes=[-1, 1],
                                solver_params=solver_params or None,
                                accountant=BudgetAccountant(), random_state=0).fit(X, y)


# %%
# Wrong steps, on purpose
# -----------------------
# Factor 1 is the solver's default (``'auto'``); the others pass the step
# explicitly.

FACTORS = [1 / 64, 1 / 16, 1 / 4, 1, 4, 16, 64]
LABELS = ["1/64", "1/16", "1/4", "1", "4", "16", "64"]
BASE = {"gd": ("learning_rate", 8.0), "line_search": ("learning_rate", 128.0)}
accuracy = {solver: [] for solver in BASE}
iterations = {solver: [] for solver in BASE}
for solver, (option, base) in BASE.items():
    for factor in FACTORS:
        model = fit(solver) if factor == 1 else fit(solver, **{option: base * factor})
        accuracy[solver].append(model.score(X_test, y_test))
        iterations[solver].append(model.n_iter_)

print(f"Test accuracy on Adult, one ({EPSILON:g}, {DELTA:g})-DP fit per cell, seed 0")
print(f"{'step x default':>15}" + "".join(f"{label:>9}" for label in LABELS))
for solver in BASE:
    print(f"{solver:>15}" + "".join(f"{a:>9.4f}" for a in accuracy[solver]))
print("\nPrivate iterations run (n_iter_)")
for solver in BASE:
    print(f"{solver:>15}" + "".join(f"{k:>9d}" for k in iterations[solver]))

# %%
# The figure
# ----------
# ``gd`` is accurate only near its default step: a smaller step does not get
# far in the iterations the budget affords (``gd`` sizes its run from the
# step, up to 500 iterations), a larger one overshoots and its budget-sized
# run gets shorter. ``line_search`` stays within half a point of its best
# from a quarter of its default up: it can only shorten a step that is too
# long, so a first candidate far too short is the one way to hurt it.

majority = max(np.mean(y_test == 1), np.mean(y_test == -1))
fig, ax = plt.subplots(figsize=(7, 4.5))
for marker, solver in zip("os", BASE):
    ax.plot(FACTORS, accuracy[solver], marker=marker, label=solver)
ax.axhline(majority, color="grey", ls=":", label="majority class")
ax.axvline(1, color="k", lw=0.8)
ax.set_xscale("log", base=2)
ax.set_xticks(FACTORS, [label if f != 1 else "1\n(default)"
                        for f, label in zip(FACTORS, LABELS)])
ax.set_xlabel("step given to the solver, relative to its default "
              "(both: learning_rate)")
ax.set_ylabel("test accuracy")
ax.set_title(f"DPLogisticRegression on Adult, epsilon = {EPSILON:g} per fit, "
             f"delta = {DELTA:g}")
ax.grid(alpha=0.3)
ax.legend(loc="lower left", bbox_to_anchor=(0.2, 0.02), fontsize=8)
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

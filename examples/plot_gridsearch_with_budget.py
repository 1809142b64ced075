"""
A grid search under one privacy budget
======================================

Size a budget with :func:`skdp.model_selection.planned_privacy`, tune with
:class:`~sklearn.model_selection.GridSearchCV` while one
:class:`~skdp.BudgetAccountant` keeps the whole bill, then compare with
:class:`skdp.model_selection.PrivateGridSearchCV` at the **same total
epsilon**.

Every fit GridSearchCV makes (each fold of each candidate, plus the refit)
is charged to the same accountant, because cloning an skdp estimator keeps
its accountant. With ``composition='gaussian'`` the accountant composes the
Gaussian fits as one Gaussian-DP release (the sum of their mu^2), quoted at
the budget's delta; the default ``composition='basic'`` adds up the
epsilons and deltas. Both refuse, before touching the data, a fit that
would overrun the budget. ``planned_privacy`` computes, before anything
runs and from public quantities only (the grid, ``cv``, the estimators'
parameters, the data's shape), the total the accountant will record.

**What the accountant does NOT cover.** GridSearchCV picks ``best_params_``
from validation scores computed on the private data without noise, so the
choice (and ``best_score_``, ``cv_results_``) leaks beyond the charged fits.
That is acceptable when the validation data are public; otherwise use
``PrivateGridSearchCV`` (the second half of this example), whose whole
output, the chosen model included, has a stated (epsilon, delta).
GridSearchCV also turns a refused fit (``BudgetError``) into a NaN score
with a ``FitFailedWarning`` and goes on; PrivateGridSearchCV raises the
``BudgetError`` before any trial runs.

The data are scikit-learn's breast cancer set (569 rows, 30 features); the
pipeline maps the features to [-1, 1] with
:class:`~skdp.preprocessing.BoundedScaler` from the ranges the data set's
documentation states (:func:`skdp.datasets.documented_bounds`), so the
scaling reads no value of the data and costs no privacy (both searches
accept the pipeline). All privacy statements below are with respect to
replacing one training record by a null record; the test split is used
only for scoring.

Run: python examples/plot_gridsearch_with_budget.py
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, BudgetError, DPLogisticRegression
from skdp.accounting import Gaussian, Repeated
from skdp.datasets import documented_bounds
from skdp.model_selection import PrivateGridSearchCV, planned_privacy
from skdp.preprocessing import BoundedScaler

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
TOTAL_EPSILON, DELTA = 2.0, 1e-5


def pipeline(epsilon, **params):
    """Public-bounds scaling (free) and the private classifier."""
    return make_pipeline(BoundedScaler(documented_bounds("breast_cancer")),
                         DPLogisticRegression(epsilon=epsilon, delta=DELTA, classes=[0, 1],
                                              **params))


grid = {"dplogisticregression__alpha": [1e-4, 1e-2],
        "dplogisticregression__clip_norm": [0.5, 1.0]}


def largest_epsilon_within(total_of, total, low=1e-3, high=TOTAL_EPSILON):
    """The largest per-fit epsilon whose planned total stays within ``total``
    (bisection on the planner's figure, which grows with the per-fit epsilon)."""
    for _ in range(16):
        mid = (low + high) / 2
        low, high = (mid, high) if total_of(mid) <= total else (low, mid)
    return low


# %%
# Size the budget first: the planner
# ----------------------------------
# GridSearchCV fits 4 candidates x 3 folds + 1 refit = 13 times. The
# planner gives the per-fit epsilon whose 13 fits compose, under
# ``composition='gaussian'`` at delta 1e-5, to the total we can afford.

accountant = BudgetAccountant(epsilon=TOTAL_EPSILON, delta=DELTA, composition="gaussian")


def grid_total(epsilon):
    return planned_privacy(GridSearchCV(pipeline(epsilon), grid, cv=3), X_train, y_train,
                           accountant=accountant)[0]


grid_epsilon = largest_epsilon_within(grid_total, TOTAL_EPSILON)
print(f"GridSearchCV: epsilon {grid_epsilon:.3f} per fit, planned total "
      f"{grid_total(grid_epsilon):.3f}")

search = GridSearchCV(pipeline(grid_epsilon, accountant=accountant, random_state=0), grid,
                      cv=3)
search.fit(X_train, y_train)
print(f"recorded by the accountant: epsilon {accountant.spent()[0]:.3f} in "
      f"{len(accountant.spends)} fits")
print(f"chosen {search.best_params_} (without noise: not covered by the budget); "
      f"test accuracy of the refitted model: {search.score(X_test, y_test):.3f}")

# %%
# The accountant's ledger
# -----------------------
# ``accountant.spends`` lists every charge, oldest first (GridSearchCV fits
# the folds of one candidate after another, then refits the best). The two
# last columns are the running totals: ``spent()`` of an accountant that
# adds up epsilons and deltas (``'basic'``), and of one that composes the
# fits as Gaussian-DP (``'gaussian'``, quoted at delta 1e-5). The same spends
# are replayed into fresh accountants to get each running total.


def describe(mechanism):
    """A short form of the mechanism a fit was charged for."""
    if isinstance(mechanism, Repeated) and isinstance(mechanism.mechanism, Gaussian):
        return f"{mechanism.count} x Gaussian(z={mechanism.mechanism.noise_multiplier:.3g})"
    return type(mechanism).__name__


n_folds, n_candidates = 3, 4
basic = BudgetAccountant(composition="basic")
gaussian = BudgetAccountant(delta=DELTA, composition="gaussian")
rows = []
for i, spend in enumerate(accountant.spends):
    fit = ("refit of the best" if i == n_candidates * n_folds
           else f"candidate {i // n_folds + 1}, fold {i % n_folds + 1}")
    for ledger in (basic, gaussian):
        ledger.spend(spend.epsilon, spend.delta, mechanism=spend.mechanism, label=spend.label)
    rows.append({"#": i + 1, "fit": fit, "epsilon": spend.epsilon,
                 "mechanism": describe(spend.mechanism),
                 "total eps (basic)": basic.spent()[0],
                 "total delta (basic)": basic.spent()[1],
                 "total eps (gaussian)": gaussian.spent()[0]})
ledger = pd.DataFrame(rows)
print(ledger.to_string(index=False, float_format="{:.3g}".format))

# %%
# A fit that would overrun the budget is refused before it reads the data

try:
    pipeline(1.0, accountant=accountant).fit(X_train, y_train)
except BudgetError as exc:
    print(f"refused, nothing charged: {str(exc).split(';')[0]}")
print(f"still {len(accountant.spends)} spends on the ledger")

# %%
# A private selection at the same total epsilon
# ---------------------------------------------
# :class:`~skdp.model_selection.PrivateGridSearchCV` is one mechanism
# (Papernot and Steinke 2022), charged once before any trial runs; its
# choice and noisy score are covered too. The planner gives the per-fit
# epsilon at which the whole search, refit included, costs the same total
# epsilon 2 at delta 1e-5 as the GridSearchCV above. (It is charged with
# ``composition='basic'``: one charge, whose epsilon is its own tight
# figure.)


def private_total(epsilon):
    return planned_privacy(PrivateGridSearchCV(pipeline(epsilon), grid, refit=True),
                           X_train, y_train, accountant=BudgetAccountant())[0]


private_epsilon = largest_epsilon_within(private_total, TOTAL_EPSILON)
print(f"PrivateGridSearchCV: epsilon {private_epsilon:.3f} per trial fit, planned total "
      f"{private_total(private_epsilon):.3f}")

# %%
# Both searches on five seeds of the noise, each charged epsilon 2 in total
# (delta 1e-5); test accuracy on the held-out split.

results = []
for seed in range(5):
    plain = BudgetAccountant(epsilon=TOTAL_EPSILON, delta=DELTA, composition="gaussian")
    fitted = GridSearchCV(pipeline(grid_epsilon, accountant=plain, random_state=seed), grid,
                          cv=3).fit(X_train, y_train)
    private = BudgetAccountant(epsilon=TOTAL_EPSILON, delta=DELTA)
    chosen = PrivateGridSearchCV(pipeline(private_epsilon), grid, refit=True,
                                 accountant=private, random_state=seed).fit(X_train, y_train)
    results.append({"seed": seed,
                    "GridSearchCV": fitted.score(X_test, y_test),
                    "eps (GridSearchCV)": plain.spent()[0],
                    "PrivateGridSearchCV": chosen.score(X_test, y_test),
                    "eps (private)": private.spent()[0]})
results = pd.DataFrame(results)
print(results.to_string(index=False, float_format="{:.3f}".format))
print(f"mean test accuracy: GridSearchCV {results['GridSearchCV'].mean():.3f} (its choice "
      f"not covered), PrivateGridSearchCV {results['PrivateGridSearchCV'].mean():.3f} "
      "(everything covered)")

# %%
# The running totals
# ------------------
# Basic composition adds the epsilons of the 13 fits up linearly; Gaussian-DP
# composition of the same fits stays at the budget, epsilon 2 (the
# planner chose the per-fit epsilon for it).

fig, ax = plt.subplots(figsize=(7, 4))
steps = np.arange(1, len(ledger) + 1)
ax.step(steps, ledger["total eps (basic)"], where="post", marker="o",
        label="composition='basic' (sum of epsilons)")
ax.step(steps, ledger["total eps (gaussian)"], where="post", marker="s",
        label="composition='gaussian' (at delta 1e-5)")
ax.axhline(TOTAL_EPSILON, color="k", ls="--", label=f"budget: epsilon {TOTAL_EPSILON:g}")
ax.set_xticks(steps, [*(f"c{i // 3 + 1}f{i % 3 + 1}" for i in range(12)), "refit"])
ax.set_xlabel("fits of GridSearchCV, in order (candidate c, fold f)")
ax.set_ylabel("total epsilon spent on the training split")
ax.set_title("One accountant across a grid search (4 candidates x 3 folds + refit)")
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
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

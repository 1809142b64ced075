"""
A grid search under one privacy budget
======================================

Tune epsilon with :class:`~sklearn.model_selection.GridSearchCV` while one
:class:`~skdp.BudgetAccountant` keeps the whole bill, then do the same
search privately with :class:`skdp.model_selection.PrivateGridSearchCV`.

Every fit GridSearchCV makes (each fold of each candidate, plus the refit)
is charged to the same accountant, because cloning an skdp estimator keeps
its accountant. With ``composition='gaussian'`` the accountant composes the
Gaussian fits as one Gaussian-DP release (the sum of their mu^2), quoted at
the budget's delta; the default ``composition='basic'`` adds up the
epsilons and deltas. Both refuse, before touching the data, a fit that
would overrun the budget.

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
features are mapped to [-1, 1] by
:class:`~skdp.preprocessing.BoundedScaler` from the ranges the data set's
documentation states (:func:`skdp.datasets.documented_bounds`), so the
scaling reads no value of the data and costs no privacy. All privacy
statements below are with respect to replacing one training record by a
null record; the test split is used only for scoring.

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
from skdp.model_selection import PrivateGridSearchCV
from skdp.preprocessing import BoundedScaler

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

# %%
# GridSearchCV, every fit charged to one accountant
# -------------------------------------------------
# The budget is epsilon 8 at delta 1e-5 for everything the search fits on
# the training split: 3 candidates x 3 folds + 1 refit = 10 fits.

accountant = BudgetAccountant(epsilon=8.0, delta=1e-5, composition="gaussian")
pipe = make_pipeline(BoundedScaler(documented_bounds("breast_cancer")),
                     DPLogisticRegression(classes=[0, 1], accountant=accountant,
                                          random_state=0))
grid = [0.5, 1.0, 2.0]
search = GridSearchCV(pipe, {"dplogisticregression__epsilon": grid}, cv=3)
search.fit(X_train, y_train)
print(f"best epsilon per fit: {search.best_params_['dplogisticregression__epsilon']} "
      "(chosen without noise: not covered by the budget)")
print(f"test accuracy of the refitted model: {search.score(X_test, y_test):.3f}")

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


n_folds = 3
basic = BudgetAccountant(composition="basic")
gaussian = BudgetAccountant(epsilon=8.0, delta=1e-5, composition="gaussian")
rows = []
for i, spend in enumerate(accountant.spends):
    fit = ("refit of the best" if i == len(grid) * n_folds
           else f"candidate {i // n_folds + 1}, fold {i % n_folds + 1}")
    for ledger in (basic, gaussian):
        ledger.spend(spend.epsilon, spend.delta, mechanism=spend.mechanism, label=spend.label)
    rows.append({"#": i + 1, "fit": fit, "label": spend.label, "epsilon": spend.epsilon,
                 "delta": spend.delta, "mechanism": describe(spend.mechanism),
                 "total eps (basic)": basic.spent()[0],
                 "total delta (basic)": basic.spent()[1],
                 "total eps (gaussian)": gaussian.spent()[0]})
ledger = pd.DataFrame(rows)
print(ledger.to_string(index=False, float_format="{:.3g}".format))

eps, delta = basic.spent()
print(f"\ncomposition='basic':    total (epsilon={eps:.2f}, delta={delta:.1e})")
eps, delta = accountant.spent()
print(f"composition='gaussian': total (epsilon={eps:.2f}, delta={delta:.1e})")
eps, delta = accountant.remaining()
print(f"left: one more Gaussian fit of up to (epsilon={eps:.2f}, delta={delta:.1e})")

# %%
# A fit that would overrun the budget is refused before it reads the data

try:
    DPLogisticRegression(epsilon=50.0, classes=[0, 1], accountant=accountant).fit(
        BoundedScaler(documented_bounds("breast_cancer")).fit_transform(X_train), y_train)
except BudgetError as exc:
    print(f"refused, nothing charged: {str(exc).split(';')[0]}")
print(f"still {len(accountant.spends)} spends on the ledger")

# %%
# A private selection: PrivateGridSearchCV
# ----------------------------------------
# One mechanism (Papernot and Steinke 2022), charged once, before any trial
# runs; ``best_params_`` and ``best_score_`` (noisy) are covered too.
# ``BoundedScaler`` learns nothing from the data, so it can run outside the
# search.

scaler = BoundedScaler(documented_bounds("breast_cancer")).fit(X_train)
private = BudgetAccountant(epsilon=4.0, delta=1e-5)
private_search = PrivateGridSearchCV(DPLogisticRegression(classes=[0, 1], epsilon=0.5),
                                     {"alpha": [1e-4, 1e-2], "clip_norm": [0.5, 1.0]},
                                     accountant=private, random_state=0)
private_search.fit(scaler.transform(X_train), y_train)
eps, delta = private_search.privacy_spent_
print(f"PrivateGridSearchCV chose {private_search.best_params_} (noisy validation accuracy "
      f"{private_search.best_score_:.3f}); test accuracy "
      f"{private_search.score(scaler.transform(X_test), y_test):.3f}")
print(f"the whole search, chosen model included: (epsilon={eps:.2f}, delta={delta:.0e}), "
      f"in {len(private.spends)} charge:")
print(pd.DataFrame([{"label": s.label, "epsilon": s.epsilon, "delta": s.delta}
                    for s in private.spends]).to_string(index=False,
                                                        float_format="{:.3g}".format))

# %%
# The running totals
# ------------------
# Basic composition adds the epsilons of the ten fits up to 12.5: an
# accountant with the same budget and ``composition='basic'`` would have
# refused the eighth fit (and GridSearchCV would have scored it NaN).
# Gaussian-DP composition of the same fits stays at 5.06, below 8.

fig, ax = plt.subplots(figsize=(7, 4))
steps = np.arange(1, len(ledger) + 1)
ax.step(steps, ledger["total eps (basic)"], where="post", marker="o",
        label="composition='basic' (sum of epsilons)")
ax.step(steps, ledger["total eps (gaussian)"], where="post", marker="s",
        label="composition='gaussian' (at delta 1e-5)")
ax.axhline(8.0, color="k", ls="--", label="budget: epsilon 8")
ax.set_xticks(steps, [*(f"c{i // 3 + 1}f{i % 3 + 1}" for i in range(9)), "refit"])
ax.set_xlabel("fits of GridSearchCV, in order (candidate c, fold f)")
ax.set_ylabel("total epsilon spent on the training split")
ax.set_title("One accountant across a grid search (3 candidates x 3 folds + refit)")
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

"""
A private pipeline on raw mixed-type records
============================================

Raw records rarely come scaled. Each preprocessing step of a private
pipeline must either read nothing from the private values or be charged to
the accountant like a fit:

* numeric columns with a public range (age 17-90, hours 1-99, from the
  data's schema): :class:`~skdp.preprocessing.BoundedScaler` clips and maps
  them to [-1, 1] and reads no value, so it costs nothing;
* categorical columns with a public list of categories:
  ``OneHotEncoder(categories=<public list>, handle_unknown='ignore')`` learns
  nothing from the data either (a category outside the list encodes as all
  zeros instead of revealing itself);
* a numeric column whose centre and spread are worth estimating:
  :class:`~skdp.preprocessing.DPStandardScaler` releases a noisy mean and
  variance and is charged;
* a table with no documented ranges at all:
  :class:`~skdp.preprocessing.DPBoundsScaler` finds each feature's range
  privately (a noisy histogram over a public log-scale grid, charged) and
  then clips and maps like ``BoundedScaler``: a private baseline in one line.

:func:`~skdp.preprocessing.pipeline_privacy_spent` sums what the fitted
steps charged, and the accountant composes them. The second half of the
example sweeps epsilon for this pipeline and for three of scikit-learn's
bundled data sets behind ``BoundedScaler`` with their documented ranges.

**What the privacy covers.** Every (epsilon, delta) below is that of one
fitted pipeline: everything it learned (the noisy statistics of
``DPStandardScaler`` and the classifier's ``coef_``, ``intercept_``,
``n_iter_``) with respect to replacing one training record by a null
record. Test accuracy is measured on held-out rows and costs no privacy.

Run: python examples/plot_private_pipeline_raw_data.py
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

from skdp import BudgetAccountant, DPLogisticRegression
from skdp.datasets import documented_bounds
from skdp.preprocessing import (
    BoundedScaler,
    DPBoundsScaler,
    DPStandardScaler,
    pipeline_privacy_spent,
    split_budget,
)

# %%
# A synthetic stand-in for a private table
# ----------------------------------------
# Age, hours per week, income (numeric), work class and education
# (categorical); the label is "earns > 50k".

WORKCLASS = ["private", "self-employed", "government", "without-pay"]
EDUCATION = ["school", "high-school", "bachelors", "masters", "doctorate"]
rng = np.random.default_rng(0)
n = 20_000
age = rng.integers(17, 91, n)
hours = np.clip(rng.normal(40, 12, n), 1, 99).round()
income = rng.lognormal(10, 0.6, n)
workclass = rng.choice(WORKCLASS, n, p=[0.7, 0.12, 0.15, 0.03])
education = rng.choice(EDUCATION, n, p=[0.2, 0.35, 0.3, 0.12, 0.03])
score = (0.04 * (age - 40) + 0.05 * (hours - 40) + 0.8 * np.log(income / 22_000)
         + 1.2 * np.isin(education, ["masters", "doctorate"]) - 0.8 * (workclass == "without-pay"))
y = (score + rng.logistic(size=n) > 0.5).astype(int)
X = np.empty((n, 5), dtype=object)
X[:, 0], X[:, 1], X[:, 2], X[:, 3], X[:, 4] = age, hours, income, workclass, education
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)


def log_income(column):
    """log(1 + income) of the object column, as floats: a fixed map, free."""
    return np.log1p(np.asarray(column, dtype=float))


def raw_pipeline(eps_scaler, eps_model, accountant):
    """Free steps for public ranges and categories, a charged step for income."""
    features = ColumnTransformer([
        # public ranges from the schema: free
        ("bounded", BoundedScaler(bounds=([17, 1], [90, 99])), [0, 1]),
        # income (>= 0 by the schema): log1p is a fixed map (free); the noisy
        # standardisation of log-income clipped to [5, 15] is charged
        ("income", make_pipeline(
            FunctionTransformer(log_income, feature_names_out="one-to-one"),
            DPStandardScaler(bounds=(5, 15), epsilon=eps_scaler, accountant=accountant,
                             random_state=0)), [2]),
        # public category lists: free
        ("categories", OneHotEncoder(categories=[WORKCLASS, EDUCATION],
                                     handle_unknown="ignore"), [3, 4]),
    ])
    return make_pipeline(features, DPLogisticRegression(
        epsilon=eps_model, classes=[0, 1], accountant=accountant, random_state=0))


# %%
# One pipeline, one budget
# ------------------------

accountant = BudgetAccountant(epsilon=2.0, delta=2e-5)
model = raw_pipeline(0.5, 1.0, accountant).fit(X_train, y_train)

print(f"test accuracy: {model.score(X_test, y_test):.3f} "
      f"(majority class {max(np.mean(y_test), 1 - np.mean(y_test)):.3f})")
eps, delta = pipeline_privacy_spent(model)
print(f"charged by the fitted steps: (epsilon={eps:g}, delta={delta:g}) "
      "= DPStandardScaler 0.5 + DPLogisticRegression 1.0")
eps, delta = accountant.spent()
print(f"the accountant's total: (epsilon={eps:g}, delta={delta:g}) of its budget (2, 2e-05)")

# %%
# No documented ranges: private bounds in one line
# ------------------------------------------------
# Raw ``load_breast_cancer`` has features from 0.001 to 4254. Without a
# scaler the estimator's default ``data_norm=1`` squashes every row and it
# predicts the majority class. ``DPBoundsScaler`` finds each feature's range
# (its bounds are powers of two read from noisy counts) and the classifier
# uses the rest of the budget. Both steps add Gaussian noise, so an
# accountant with ``composition='gaussian'`` composes them as Gaussian DP
# (``mu^2`` adds up): :func:`~skdp.preprocessing.split_budget` gives the
# bounds 30% of ``mu^2`` and the classifier 70%, which is epsilon 0.52 and
# 0.82 for a total of 1 (a sum of epsilons would allow only 0.3 + 0.7).
# ``pipeline_privacy_spent`` adds the steps' epsilons (basic composition, an
# upper bound); the accountant's total is the pipeline's.

X_bc, y_bc = load_breast_cancer(return_X_y=True)
Xb_train, Xb_test, yb_train, yb_test = train_test_split(X_bc, y_bc, stratify=y_bc,
                                                        random_state=0)
bounds_eps, model_eps = split_budget(1.0, 1e-5, (0.3, 0.7))
accountant = BudgetAccountant(epsilon=1.0, delta=1e-5, composition="gaussian")
one_line = make_pipeline(
    DPBoundsScaler(epsilon=bounds_eps, delta=1e-5, accountant=accountant, random_state=0),
    DPLogisticRegression(epsilon=model_eps, delta=1e-5, classes=[0, 1], accountant=accountant,
                         random_state=0),
).fit(Xb_train, yb_train)
print(f"raw breast_cancer, private bounds + model: test accuracy "
      f"{one_line.score(Xb_test, yb_test):.3f}")
print(f"bounds of the first three features: lower {one_line[0].lower_[:3]}, "
      f"upper {one_line[0].upper_[:3]}")
print(f"epsilons of the two steps: {bounds_eps:.3f} + {model_eps:.3f}; "
      f"pipeline_privacy_spent (their sum): {pipeline_privacy_spent(one_line)}; "
      f"the accountant's total (Gaussian DP): {accountant.spent()}")


def private_bounds_pipeline(eps):
    """The one-line pipeline at total ``eps`` (Gaussian composition, 30% of mu^2 to the bounds)."""
    acc = BudgetAccountant(epsilon=eps, delta=1e-5, composition="gaussian")
    bounds, model = split_budget(eps, 1e-5, (0.3, 0.7))
    return make_pipeline(
        DPBoundsScaler(epsilon=bounds, delta=1e-5, accountant=acc, random_state=0),
        DPLogisticRegression(epsilon=model, delta=1e-5, classes=[0, 1], accountant=acc,
                             random_state=0))


# %%
# Accuracy against epsilon, per data set
# --------------------------------------
# The raw-data pipeline gives a third of its epsilon to ``DPStandardScaler``
# and two thirds to the classifier; the x axis is the pipeline's total. For
# breast_cancer, wine and digits (scikit-learn's bundled sets, 75/25
# stratified splits) ``BoundedScaler`` maps each feature from the range the
# data set's documentation states (:func:`skdp.datasets.documented_bounds`),
# which costs nothing, so the whole epsilon goes to the classifier. The raw
# pipeline has two charged steps, each at delta 1e-5: its delta is 2e-5. Each
# point is one pipeline fit (seed 0) on its own accountant. The test sets of
# the bundled data are small (45 to 450 rows), so single points move by a
# few percent with the seed.
#
# The curve "breast_cancer, private bounds" is the one-line pipeline above
# (30% of each total's mu^2 to ``DPBoundsScaler``, Gaussian composition,
# delta 1e-5 in all), no documented range used.
#
# The dashed lines are NON-PRIVATE baselines: scikit-learn's
# ``LogisticRegression`` behind a ``StandardScaler`` fitted on the training
# rows, neither of which is private (both read the data without noise).

EPSILONS = [0.3, 1.0, 3.0, 10.0]
BUNDLED = {"breast_cancer": load_breast_cancer, "wine": load_wine, "digits": load_digits}

curves, baselines = {}, {}
curves["raw records (synthetic)"] = [
    raw_pipeline(eps / 3, 2 * eps / 3, BudgetAccountant()).fit(X_train, y_train)
    .score(X_test, y_test) for eps in EPSILONS]
# NON-PRIVATE baseline: StandardScaler learns exact means and variances
non_private = ColumnTransformer([
    ("numeric", StandardScaler(), [0, 1]),
    ("income", make_pipeline(FunctionTransformer(log_income), StandardScaler()), [2]),
    ("categories", OneHotEncoder(categories=[WORKCLASS, EDUCATION]), [3, 4])])
baselines["raw records (synthetic)"] = make_pipeline(
    non_private, LogisticRegression(max_iter=1000)).fit(X_train, y_train).score(X_test, y_test)

for name, load in BUNDLED.items():
    bunch = load()
    Xd_train, Xd_test, yd_train, yd_test = train_test_split(
        bunch.data, bunch.target, stratify=bunch.target, random_state=0)
    classes = np.arange(len(bunch.target_names))  # public: the documented label set
    curves[name] = [make_pipeline(
        BoundedScaler(documented_bounds(name)),
        DPLogisticRegression(epsilon=eps, classes=classes, accountant=BudgetAccountant(),
                             random_state=0)).fit(Xd_train, yd_train).score(Xd_test, yd_test)
        for eps in EPSILONS]
    baselines[name] = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)).fit(
        Xd_train, yd_train).score(Xd_test, yd_test)

curves["breast_cancer, private bounds"] = [
    private_bounds_pipeline(eps).fit(Xb_train, yb_train).score(Xb_test, yb_test)
    for eps in EPSILONS]
baselines["breast_cancer, private bounds"] = baselines["breast_cancer"]

print("\nTest accuracy; each cell is one pipeline fit (seed 0), (epsilon, delta)-DP with the"
      "\ncolumn's epsilon and delta = 1e-5 per charged step (2e-5 with two charged steps)")
print(f"{'data set':<31}" + "".join(f"{f'eps={eps:g}':>9}" for eps in EPSILONS)
      + f"{'NON-PRIVATE':>13}")
for name, scores in curves.items():
    print(f"{name:<31}" + "".join(f"{s:>9.3f}" for s in scores) + f"{baselines[name]:>13.3f}")

fig, ax = plt.subplots(figsize=(7, 4.5))
for color, (name, scores) in zip(plt.rcParams["axes.prop_cycle"].by_key()["color"],
                                 curves.items()):
    ax.plot(EPSILONS, scores, marker="o", color=color, label=name)
    ax.axhline(baselines[name], color=color, ls="--", lw=1)
ax.set_xscale("log")
ax.set_xticks(EPSILONS, [f"{eps:g}" for eps in EPSILONS])
ax.set_xlabel("epsilon of the whole pipeline fit (delta: 1e-5 per charged step)")
ax.set_ylabel("test accuracy")
ax.set_title("Private pipelines (solid) and NON-PRIVATE baselines (dashed)")
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

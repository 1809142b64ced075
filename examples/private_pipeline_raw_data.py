"""A private pipeline on raw mixed-type records: every step is free or charged.

Raw records rarely come scaled. Each preprocessing step of a private
pipeline must either read nothing from the private values or be charged to
the accountant like a fit:

* numeric columns with a public range (age 17-90, hours 1-99, from the
  data's schema): ``BoundedScaler`` clips and maps them to [-1, 1] and reads
  no value, so it costs nothing;
* categorical columns with a public list of categories:
  ``OneHotEncoder(categories=<public list>, handle_unknown='ignore')`` learns
  nothing from the data either (a category outside the list encodes as all
  zeros instead of revealing itself);
* a numeric column whose centre and spread are worth estimating:
  ``DPStandardScaler`` releases a noisy mean and variance and is charged.

``pipeline_privacy_spent`` sums what the fitted steps charged, and the
accountant composes them.

Run: python examples/private_pipeline_raw_data.py
"""

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from skdp import BudgetAccountant, DPLogisticRegression
from skdp.preprocessing import BoundedScaler, DPStandardScaler, pipeline_privacy_spent

# A synthetic stand-in for a private table: age, hours per week, income
# (numeric), work class and education (categorical), label: earns > 50k.
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


accountant = BudgetAccountant(epsilon=2.0, delta=2e-5)
features = ColumnTransformer([
    # public ranges from the schema: free
    ("bounded", BoundedScaler(bounds=([17, 1], [90, 99])), [0, 1]),
    # income (>= 0 by the schema): log1p is a fixed map (free); the noisy
    # standardisation of log-income clipped to [5, 15] is charged
    ("income", make_pipeline(
        FunctionTransformer(log_income, feature_names_out="one-to-one"),
        DPStandardScaler(bounds=(5, 15), epsilon=0.5, accountant=accountant,
                         random_state=0)), [2]),
    # public category lists: free
    ("categories", OneHotEncoder(categories=[WORKCLASS, EDUCATION],
                                 handle_unknown="ignore"), [3, 4]),
])
model = make_pipeline(features, DPLogisticRegression(
    epsilon=1.0, classes=[0, 1], accountant=accountant, random_state=0))
model.fit(X_train, y_train)

print(f"test accuracy: {model.score(X_test, y_test):.3f} "
      f"(majority class {max(np.mean(y_test), 1 - np.mean(y_test)):.3f})")
eps, delta = pipeline_privacy_spent(model)
print(f"charged by the fitted steps: (epsilon={eps:g}, delta={delta:g}) "
      "= DPStandardScaler 0.5 + DPLogisticRegression 1.0")
eps, delta = accountant.spent()
print(f"the accountant's total: (epsilon={eps:g}, delta={delta:g}) of its budget (2, 2e-05)")

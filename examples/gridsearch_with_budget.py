"""Tune epsilon with GridSearchCV while one accountant keeps the whole bill.

Every fit GridSearchCV makes (each fold of each candidate, plus the refit)
is charged to the same accountant, because cloning an skdp estimator keeps
its accountant. With ``composition='gaussian'`` the accountant composes the
Gaussian fits as one Gaussian-DP release (the sum of their mu^2), quoted at
the budget's delta; the default ``composition='basic'`` adds up the
epsilons and deltas. Both refuse, before touching the data, a fit that
would overrun the budget.

What the accountant does NOT cover: GridSearchCV picks ``best_params_`` from
validation scores computed on the private data without noise, so the choice
(and ``best_score_``, ``cv_results_``) leaks beyond the charged fits. That is
acceptable when the validation data are public; otherwise use
``skdp.model_selection.PrivateGridSearchCV`` (the second half of this
example), whose whole output, the chosen model included, has a stated
(epsilon, delta). GridSearchCV also turns a refused fit (``BudgetError``)
into a NaN score with a ``FitFailedWarning`` and goes on;
PrivateGridSearchCV raises the ``BudgetError`` before any trial runs.

Run: python examples/gridsearch_with_budget.py
"""

from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline

from skdp import BudgetAccountant, BudgetError, DPLogisticRegression
from skdp.datasets import documented_bounds
from skdp.model_selection import PrivateGridSearchCV
from skdp.preprocessing import BoundedScaler

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

accountant = BudgetAccountant(epsilon=8.0, delta=1e-5, composition="gaussian")
# BoundedScaler maps each feature from its documented range (DESCR) to [-1, 1]:
# it reads no value of the data, so each fit's privacy is the estimator's.
pipe = make_pipeline(BoundedScaler(documented_bounds("breast_cancer")),
                     DPLogisticRegression(classes=[0, 1], accountant=accountant,
                                          random_state=0))
search = GridSearchCV(pipe, {"dplogisticregression__epsilon": [0.5, 1.0, 2.0]}, cv=3)
search.fit(X_train, y_train)

# The same spends under basic composition, for comparison.
basic = BudgetAccountant(composition="basic")
for s in accountant.spends:
    basic.spend(s.epsilon, s.delta, mechanism=s.mechanism, label=s.label)

print(f"best epsilon per fit: {search.best_params_['dplogisticregression__epsilon']}")
print(f"test accuracy: {search.score(X_test, y_test):.3f}")
print(f"fits charged: {len(accountant.spends)}")
eps, delta = basic.spent()
print(f"composition='basic':    total (epsilon={eps:.2f}, delta={delta:.1e})")
eps, delta = accountant.spent()
print(f"composition='gaussian': total (epsilon={eps:.2f}, delta={delta:.1e})")
eps, delta = accountant.remaining()
print(f"left: one more Gaussian fit of up to (epsilon={eps:.2f}, delta={delta:.1e})")

try:
    DPLogisticRegression(epsilon=50.0, accountant=accountant).fit(X_train, y_train)
except BudgetError as exc:
    print(f"refused, nothing charged: {exc}")

# A private selection: one mechanism (Papernot and Steinke 2022), charged once,
# before any trial runs; best_params_ and best_score_ (noisy) are covered too.
# BoundedScaler learns nothing from the data, so it can run outside the search.
scaler = BoundedScaler(documented_bounds("breast_cancer")).fit(X_train)
private = BudgetAccountant(epsilon=4.0, delta=1e-5)
search = PrivateGridSearchCV(DPLogisticRegression(classes=[0, 1], epsilon=0.5),
                             {"alpha": [1e-4, 1e-2], "clip_norm": [0.5, 1.0]},
                             accountant=private, random_state=0)
search.fit(scaler.transform(X_train), y_train)
eps, delta = search.privacy_spent_
print(f"PrivateGridSearchCV chose {search.best_params_} (noisy validation accuracy "
      f"{search.best_score_:.3f}); test accuracy "
      f"{search.score(scaler.transform(X_test), y_test):.3f}; the whole search: "
      f"(epsilon={eps:.2f}, delta={delta:.0e}), one charge: {len(private.spends)}")

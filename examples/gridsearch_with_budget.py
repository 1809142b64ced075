"""Tune epsilon with GridSearchCV while one accountant keeps the whole bill.

Every fit GridSearchCV makes (each fold of each candidate, plus the refit)
is charged to the same accountant, because cloning an skdp estimator keeps
its accountant. The accountant composes the fits tightly, and a search that
would overrun the budget stops with BudgetError before touching the data.

Run: python examples/gridsearch_with_budget.py
"""

from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from skdp import BudgetAccountant, BudgetError, DPLogisticRegression

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

accountant = BudgetAccountant(epsilon=20.0, delta=1e-3)
pipe = make_pipeline(StandardScaler(), Normalizer(),  # the scaler is not private
                     DPLogisticRegression(accountant=accountant, random_state=0))
search = GridSearchCV(pipe, {"dplogisticregression__epsilon": [0.5, 1.0, 2.0]}, cv=3)
search.fit(X_train, y_train)

eps_sum = sum(s.epsilon for s in accountant.spends)
print(f"best epsilon per fit: {search.best_params_['dplogisticregression__epsilon']}")
print(f"test accuracy: {search.score(X_test, y_test):.3f}")
print(f"fits charged: {len(accountant.spends)}; plain sum of epsilons {eps_sum:.1f}; "
      f"composed total {accountant.spent()[0]:.2f} (delta {accountant.spent()[1]:.1e})")
print(f"remaining: {accountant.remaining()}")

try:
    DPLogisticRegression(epsilon=50.0, accountant=accountant).fit(X_train, y_train)
except BudgetError as exc:
    print(f"refused, nothing charged: {exc}")

"""The attacks of issue 10, replayed and printed (run by hand: python benchmarks/privacy_checks.py).

Reads Adult from ../shared/data (or $SKDP_SHARED_DATA)."""

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.preprocessing import Normalizer

from skdp import BudgetAccountant, DPLogisticRegression
from benchmark_data import load_adult


def main():
    X, y = make_classification(400, 5, random_state=0)
    X = Normalizer().fit_transform(X)
    with BudgetAccountant() as acc:
        a = DPLogisticRegression(epsilon=1e-3, random_state=0).fit(X, y).coef_.ravel()
        b = DPLogisticRegression(epsilon=1e-3, random_state=0).fit(X[:-1], y[:-1]).coef_.ravel()
    print("item1 corr(neighbouring fits, seed 0, one accountant) = %.3f" % np.corrcoef(a, b)[0, 1])
    with BudgetAccountant() as acc:
        GridSearchCV(DPLogisticRegression(random_state=0), {"epsilon": [0.5, 1.0, 2.0]}, cv=2, n_jobs=2).fit(X, y)
    print("item2 GridSearchCV(n_jobs=2, loky) spends recorded:", len(acc.spends))
    acc = BudgetAccountant(epsilon=3.0, delta=1e-3)
    with acc:
        try:
            cross_validate(DPLogisticRegression(epsilon=0.5, random_state=0), X, y, cv=10, n_jobs=2, error_score=np.nan)
        except Exception as e:
            print("  refused:", type(e).__name__)
    print("item2 cv=10 eps .5 each under budget (3, 1e-3): spends", len(acc.spends), "spent", acc.spent())
    Xa, ya, Xt, yt = load_adult()
    print("majority", max(np.mean(yt == 1), np.mean(yt == -1)))
    for alpha in (1.0, 10.0):
        m = DPLogisticRegression(alpha=alpha, epsilon=1.0, random_state=0).fit(Xa, ya)
        print("item7 alpha=%g: max|coef|=%.3g acc=%.4f" % (alpha, np.abs(m.coef_).max(), m.score(Xt, yt)))
    acc = BudgetAccountant()
    for e, d in [(5, 0), (0.5, 1e-5), (1, 0), (1, 1e-4)]:
        acc.spend(e, d); print("item8 spent after (%g, %g):" % (e, d), acc.spent())
    Xh = X.copy(); Xh[0] *= 1e200
    m = DPLogisticRegression(random_state=0).fit(Xh, y)
    print("item4 1e200 record: finite coef", np.isfinite(m.coef_).all())


if __name__ == "__main__":
    main()

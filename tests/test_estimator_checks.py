"""scikit-learn's own estimator checks, in full, with no expected failures."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import skdp


def _estimators():
    names = ["DPLogisticRegression", "DPLinearSVC", "DPMatrixSensing"]
    return [getattr(skdp, n)() for n in names if hasattr(skdp, n)]


@parametrize_with_checks(_estimators())
def test_sklearn_compatible(estimator, check):
    check(estimator)

"""scikit-learn's own estimator checks, in full, with no expected failures."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import skdp


@parametrize_with_checks([skdp.DPLogisticRegression(), skdp.DPLinearSVC(),
                          skdp.DPMatrixSensing()])
def test_sklearn_compatible(estimator, check):
    check(estimator)

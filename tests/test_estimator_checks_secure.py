"""scikit-learn's own estimator checks, in full, in secure mode (issue 42).

The checks set ``random_state``, which secure mode ignores with a warning
(silenced here). Five checks fit twice with one ``random_state`` and demand
equal outputs (``_expected_failures``); secure noise comes from the OS
CSPRNG and no seed can steer it (the issue's requirement, and the
estimators' ``non_deterministic`` tag says so), so these are expected
failures in secure mode, and only there: ``tests/test_estimator_checks.py``
runs them in full on the float path."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import skdp
from skdp.model_selection import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdp.preprocessing import DPBoundsScaler, DPStandardScaler

_UNSEEDABLE = ("secure noise cannot be seeded: two fits with one random_state differ "
               "(issue 42)")


def _expected_failures(estimator):
    failures = {name: _UNSEEDABLE for name in (
        "check_fit_idempotent", "check_classifier_data_not_an_array",
        "check_supervised_y_2d", "check_regressors_int",
        "check_regressor_data_not_an_array")}
    if isinstance(estimator, skdp.DPMatrixSensing):
        # measured: 6 of 10 secure fits pass check_regressors_train's R^2 bar on
        # its 200 rows at epsilon=1 (the float path passes with the check's
        # seed); the discrete Gaussian's RDP charge buys ~8 % more noise
        failures["check_regressors_train"] = (
            "random: R^2 on the check's 200 rows at epsilon=1 passes for 6 of 10 "
            "unseedable secure fits")
    if isinstance(estimator, skdp.DPLinearRegression):
        # measured: 19 of 20 secure fits pass the R^2 bar of 0.5 (0.36-0.72)
        failures["check_regressors_train"] = (
            "random: R^2 on the check's 200 rows at epsilon=1 passes for 19 of 20 "
            "unseedable secure fits")
    return failures


@pytest.mark.filterwarnings("ignore:.*random_state is ignored with secure_mode=True")
@parametrize_with_checks([skdp.DPLogisticRegression(secure_mode=True),
                          skdp.DPLinearSVC(secure_mode=True),
                          skdp.DPMatrixSensing(secure_mode=True),
                          skdp.DPLinearRegression(secure_mode=True),
                          DPStandardScaler(bounds=(-5.0, 5.0), secure_mode=True),
                          DPBoundsScaler(epsilon=5.0, secure_mode=True),
                          # the private searches: their scores, trials and fits secure
                          PrivateGridSearchCV(skdp.DPLogisticRegression(),
                                              {"alpha": [1e-3, 1e-2]}, secure_mode=True),
                          PrivateRandomizedSearchCV(skdp.DPLinearSVC(), {"alpha": [1e-3, 1e-2]},
                                                    n_iter=2, refit=True, secure_mode=True)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible_in_secure_mode(estimator, check):
    check(estimator)

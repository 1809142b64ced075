"""scikit-learn's own estimator checks, in full, with no expected failures."""

from sklearn.utils.estimator_checks import parametrize_with_checks

import skdp
from skdp.model_selection import PrivateGridSearchCV, PrivateRandomizedSearchCV
from skdp.preprocessing import BoundedScaler, DPBoundsScaler, DPStandardScaler


@parametrize_with_checks([skdp.DPLogisticRegression(), skdp.DPLinearSVC(),
                          skdp.DPMatrixSensing(),
                          # the adaptive solver (privacy filter, data-dependent n_iter_)
                          skdp.DPLogisticRegression(solver="line_search"),
                          skdp.DPLinearSVC(solver="line_search", loss="hinge"),
                          skdp.DPMatrixSensing(solver="line_search"),
                          # paper 004: the non-convex models and second_order
                          skdp.DPLogisticRegression(penalty="nonconvex"),
                          skdp.DPLinearSVC(loss="sigmoid"),
                          skdp.DPLogisticRegression(solver="second_order"),
                          skdp.DPLogisticRegression(penalty="nonconvex", solver="second_order"),
                          skdp.DPLinearSVC(loss="sigmoid", solver="second_order"),
                          skdp.DPMatrixSensing(solver="second_order"),
                          # sparse penalties (proximal gd) and paper 003's dual averaging
                          skdp.DPLogisticRegression(penalty="l1"),
                          skdp.DPLinearSVC(penalty="elasticnet", loss="hinge"),
                          skdp.DPLinearSVC(penalty="nonconvex"),
                          skdp.DPLinearSVC(penalty=None),
                          skdp.DPLogisticRegression(solver="dual_averaging"),
                          skdp.DPLogisticRegression(solver="dual_averaging",
                                                    penalty="elasticnet"),
                          skdp.DPLinearSVC(solver="dual_averaging", loss="hinge"),
                          skdp.DPLinearSVC(solver="dual_averaging", penalty="l1"),
                          # the private quadratic majorizer (issue 20)
                          skdp.DPLogisticRegression(solver="preconditioned_gd"),
                          skdp.DPLinearSVC(solver="preconditioned_gd"),
                          # paper 000: DP-SPIDER with saddle escape
                          skdp.DPLogisticRegression(solver="rgda"),
                          skdp.DPLinearSVC(solver="rgda"),
                          skdp.DPMatrixSensing(solver="rgda"),
                          # paper 000's minimax form (one private dual per record)
                          skdp.DPMatrixSensing(solver="rgda",
                                               solver_params={"dual": "per_record"}),
                          # the regressor on the shared linear core (issue 40)
                          skdp.DPLinearRegression(),
                          skdp.DPLinearRegression(solver="line_search", fit_intercept=False,
                                                  y_bound=2.0),
                          # preprocessing from public bounds
                          BoundedScaler(bounds=(-5.0, 5.0)),
                          BoundedScaler(bounds=(-3.0, 10.0), feature_range=(0, 1)),
                          DPStandardScaler(bounds=(-5.0, 5.0)),
                          # private bounds (issue 41)
                          DPBoundsScaler(epsilon=5.0),
                          # private hyperparameter search (a meta-estimator, a classifier)
                          PrivateGridSearchCV(skdp.DPLogisticRegression(),
                                              {"alpha": [1e-3, 1e-2]}, random_state=0),
                          PrivateRandomizedSearchCV(skdp.DPLinearSVC(), {"alpha": [1e-3, 1e-2]},
                                                    n_iter=2, refit=True, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)

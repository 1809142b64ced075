"""LinearDesign: row norms and the implicit intercept / row clipping."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdp.losses import LinearDesign


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_row_norms_dense_and_csr_agree_with_empty_rows(dtype, fit_intercept):
    rng = np.random.default_rng(0)
    D = rng.standard_normal((40, 6))
    D[rng.random(D.shape) < 0.6] = 0.0
    D[[0, 7, 38, 39]] = 0.0  # empty rows, including trailing ones
    D = D.astype(dtype)
    extra = float(fit_intercept)
    expected_l2 = np.sqrt(np.sum(D.astype(np.float64) ** 2, axis=1) + extra)
    expected_l1 = np.abs(D.astype(np.float64)).sum(axis=1) + extra
    for X in (D, sp.csr_matrix(D)):
        design = LinearDesign(X, fit_intercept, data_norm=None)
        np.testing.assert_allclose(design.row_norms(2), expected_l2, rtol=1e-6)
        np.testing.assert_allclose(design.row_norms(1), expected_l1, rtol=1e-6)


def test_row_clipping_scales_only_rows_above_data_norm():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    design = LinearDesign(sp.csr_matrix(X), fit_intercept=True, data_norm=1.0)
    np.testing.assert_allclose(design.decision(np.array([1.0, 1.0, 0.5])),
                               [0.6 + 0.8 + 0.5, 0.7 + 0.5, 0.5])
    np.testing.assert_allclose(design.row_norms(2), np.sqrt([2.0, 1.25, 1.0]))

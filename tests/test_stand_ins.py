"""The losses' public stand-ins: one base implementation, per-loss values unchanged."""

import pytest

from skdp.losses import (BinaryLogisticLoss, HingeLoss, MultinomialLogisticLoss, SigmoidLoss,
                         SmoothHingeLoss, SquaredHingeLoss, SquaredLoss)
from skdp.losses.hinge import HINGE_STEP, MARGIN_ITERATIONS

SMOOTH = [BinaryLogisticLoss, MultinomialLogisticLoss, SquaredLoss]
MARGIN = [SquaredHingeLoss, SmoothHingeLoss, SigmoidLoss]


@pytest.mark.parametrize("loss", SMOOTH + MARGIN + [HingeLoss])
@pytest.mark.parametrize("row_bound, data_norm", [(None, 2.0), (3.0, None), (None, None)])
def test_no_stand_ins_without_both_bounds(loss, row_bound, data_norm):
    assert loss.stand_ins(row_bound, None, data_norm=data_norm, fit_intercept=True) == {}


@pytest.mark.parametrize("loss", SMOOTH)
def test_smooth_losses_report_none(loss):
    assert loss.stand_ins(3.0, 4, data_norm=2.0, fit_intercept=True) == {}


@pytest.mark.parametrize("loss", MARGIN)
@pytest.mark.parametrize("n_outputs", [None, 3])
def test_margin_losses_report_iterations(loss, n_outputs):
    got = loss.stand_ins(3.0, n_outputs, data_norm=2.0, fit_intercept=False)
    assert got == {"iterations": MARGIN_ITERATIONS}


@pytest.mark.parametrize("data_norm, fit_intercept, B2", [
    (2.0, False, 4.0), (2.0, True, 5.0), (0.3, True, 0.3 ** 2 + 1.0), (7, 1, 50.0)])
def test_hinge_step_is_exact(data_norm, fit_intercept, B2):
    got = HingeLoss.stand_ins(1.0, None, data_norm=data_norm, fit_intercept=fit_intercept)
    assert got == {"iterations": MARGIN_ITERATIONS, "step": HINGE_STEP / B2}
    assert type(got["step"]) is float

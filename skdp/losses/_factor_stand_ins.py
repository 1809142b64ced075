"""Public stand-ins of the factored matrix-sensing loss, which has no global bounds.

The gradient and the Hessian of ``(<A, U V^T> + c - y)^2`` grow with the
factors, so no smoothness or Hessian constant exists; solvers size their
defaults from these stand-ins instead (``ProblemSpec.stand_ins``). Each is
a public constant of the shape ``(p, q)`` and of ``data_norm`` ``B``, chosen
on held-out training measurements (``python
benchmarks/matrix_sensing_defaults.py``; see DPMatrixSensing's notes).
"""

import numpy as np

__all__ = ["factor_step", "factor_stand_ins"]

#: the stand-in step, in units of ``sqrt(p * q) / B**2``
STEP_SCALE = 3.0
#: the run length the stand-ins were measured for; with the default
#: ``clip_norm=0.05`` chosen on held-out training measurements (``python
#: benchmarks/matrix_sensing_defaults.py``): the smallest T whose mean log10
#: validation MSE is within 0.005 of the grid's best (docs/solvers/gd.md,
#: benchmarks/results/matrix_sensing_defaults.md)
ITERATIONS = 100
#: scale of one example's loss change, relative to 1 (the scale of
#: make_matrix_sensing's per-example losses)
LOSS_SCALE = 0.1
#: stand-in for the Lipschitz constant of the Hessian, times ``1 / step``: on
#: make_matrix_sensing's scale the saddle at U = V = 0 has curvature about
#: -1e-2 (20 x 20, rank 3), so a curvature step 2 |lambda| / M moves the
#: factors by about 1 and eps_H = sqrt(M eps_g) = 0.002 sees the saddle
HESSIAN_LIPSCHITZ = 0.6
#: per-example Hessian clip, times ``B**2`` (on make_matrix_sensing's scale the
#: per-example Hessians have Frobenius norm of order ``B**2``)
HESSIAN_CLIP = 1.0
#: per-example smoothness stand-in, times ``1 / step``: a per-example
#: smoothness exceeds the mean's by far, and clipping rgda's gradient
#: differences at the mean's bound biases its increments (docs/solvers/rgda.md)
EXAMPLE_SMOOTHNESS = 6.0


def factor_step(shape, data_norm):
    """The stand-in step ``STEP_SCALE * sqrt(p q) / B**2`` (public; B = 1 when None)."""
    B = 1.0 if data_norm is None else float(data_norm)
    return STEP_SCALE * np.sqrt(shape[0] * shape[1]) / B**2


def factor_stand_ins(cls, row_bound, n_outputs=None, *, data_norm=None, fit_intercept=False,
                     shape=None, **params):
    """The matrix-sensing loss's public stand-ins (see ``ProblemSpec.stand_ins``).

    Parameters
    ----------
    row_bound : float or None
        Unused: a bound on the measurement rows bounds neither the gradient
        nor the curvature of the factored loss.
    n_outputs : None
        Unused (one flat parameter vector).
    data_norm : float or None, default=None
        The public bound ``B`` on the measurement rows' norms (1 when None).
    fit_intercept : bool, default=False
        Unused (the intercept's scale is chosen to suit the step).
    shape : tuple of int (p, q)
        Shape of each measurement matrix.
    **params
        Unused.

    Returns
    -------
    dict
        ``'step'``, ``'iterations'``, ``'loss_scale'``, ``'hessian_lipschitz'``,
        ``'hessian_clip'`` and ``'example_smoothness'``.
    """
    step = factor_step(shape, data_norm)
    B2 = 1.0 if data_norm is None else float(data_norm) ** 2
    return {
        "step": step,
        "iterations": ITERATIONS,
        "loss_scale": LOSS_SCALE,
        "hessian_lipschitz": HESSIAN_LIPSCHITZ / step,
        "hessian_clip": HESSIAN_CLIP * B2,
        "example_smoothness": EXAMPLE_SMOOTHNESS * (1.0 / step),
    }

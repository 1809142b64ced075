"""Squared loss of linear regression: ``(z - y)**2 / 2`` on responses clipped to a public bound."""

import numpy as np

from ._glm import GLMLoss

__all__ = ["SquaredLoss", "bounded_responses"]


def bounded_responses(y, y_bound=None):
    """Responses as float64, clipped to ``[-y_bound, y_bound]`` when a bound is given.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The responses (validated: finite).
    y_bound : float or None
        Public bound on ``|y|``; None leaves the responses as they are.

    Returns
    -------
    ndarray of shape (n_samples,), float64
        A new array (the caller's is never written to).
    """
    y = np.array(y, dtype=np.float64)
    if y_bound is not None:
        np.clip(y, -y_bound, y_bound, out=y)
    return y


class SquaredLoss(GLMLoss):
    r"""Squared loss :math:`\frac{1}{2}(z - y)^2` of a linear predictor ``z``.

    Its derivative in the predictor is the residual ``z - y``, which has no
    bound of its own: the per-example gradient ``(z_i - y_i) [s_i x_i, c]``
    is clipped to ``clip_norm`` like every GLM gradient
    (:meth:`GLMLoss.clipped_grad_sum`), which is what bounds the sensitivity
    of a gradient sum, whatever the response (a huge, or even overflowing,
    residual is clipped to a finite value of norm ``clip_norm``). Clipped
    this way the gradient is that of a Huber loss of the residual with
    threshold ``clip_norm / ||x_i||``, so responses on a scale that keeps
    most residuals under it lose little. The second derivative is 1 and the
    third is 0.

    Parameters
    ----------
    design : LinearDesign
        The implicit rows ``[s_i x_i, c]``; with ``data_norm`` set, the
        public bound ``B`` on their L2 norm gives the smoothness constant
        ``B**2``.
    y : array-like of shape (n_samples,)
        The responses.
    y_bound : float or None, default=None
        Public bound on ``|y|``: responses are clipped to ``[-y_bound,
        y_bound]`` (public, like ``data_norm`` for rows), and ``y_bound**2 /
        2`` bounds the mean loss at ``W = 0``. None leaves them unclipped;
        the gradient clipping alone keeps the guarantee.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "convex", "hessian", "least_squares"})
    curvature_bound = 1.0
    third_derivative_bound = 0.0

    def __init__(self, design, y, y_bound=None):
        super().__init__(design, bounded_responses(y, y_bound))
        self.y_bound = y_bound

    @classmethod
    def value_at_zero(cls, n_outputs=None, y_bound=None, **params):
        """A public bound on the loss at ``W = 0``: ``y_bound**2 / 2``, or None.

        Parameters
        ----------
        n_outputs : int or None
            Number of coefficient columns; unused (one vector).
        y_bound : float or None
            The public bound on ``|y|`` the responses are clipped to.
        **params
            The loss's other public parameters; unused.

        Returns
        -------
        float or None
            ``y_bound**2 / 2`` bounds every example's loss ``y_i**2 / 2`` at
            ``W = 0`` (it is a bound, not the data's value, which is private);
            None without ``y_bound``.
        """
        return None if y_bound is None else 0.5 * float(y_bound) ** 2

    def _residuals(self, Z, y):
        return Z - y

    def _values(self, Z, y):
        R = Z - y
        return 0.5 * R * R

    def _second_derivatives(self, Z, y):
        return np.ones_like(Z)

r"""The noisy iteration shared by the first-order solvers (gd, paper 001).

At step t the solver queries a noisy clipped gradient at a point and moves:

.. math::

    v_t = x_t + \beta_t (x_t - x_{t-1}) \ \text{(Nesterov) or } x_t, \qquad
    \tilde g_t = \text{noisy\_gradient}(v_t) + \nabla r(v_t),

    x_{t+1} = v_t - a_t \tilde g_t \ \text{(Nesterov)}, \qquad
    x_{t+1} = x_t - a_t \tilde g_t + \beta_t (x_t - x_{t-1}) \ \text{(heavy ball)},

with ``r`` the penalty; plain gradient descent is heavy ball with
:math:`\beta_t = 0`. Momentum restarts set :math:`x_{t-1} := x_t`. A penalty
that is not smooth (L1, elastic net) is not differentiated but applied by
its proximal operator after the step, :math:`x_{t+1} :=
\mathrm{prox}_{a_t r}(x_{t+1})` (proximal gradient descent; with momentum,
FISTA-like). Moving is post-processing of the noisy gradients: it costs no
privacy.
"""

import numpy as np

__all__ = ["noisy_first_order"]


def noisy_first_order(queries, plan, *, steps, noise_multipliers, momenta=None,
                      restarts=None, nesterov=False, average=0.0):
    """Run ``len(steps)`` noisy steps; return the last iterate or a tail average.

    Parameters
    ----------
    queries : PrivateQueries
    plan : Plan
    steps, noise_multipliers : array-like of shape (T,)
        Step size and noise multiplier of every step (public).
    momenta : array-like of shape (T,) or None
        Momentum of every step; None for none.
    restarts : array-like of bool of shape (T,) or None
        Steps at which the momentum restarts.
    nesterov : bool, default=False
        Query at the extrapolated point (NAG) instead of the iterate
        (heavy ball / gradient descent).
    average : float in [0, 1), default=0.0
        Release the mean of the last ``average`` fraction of the iterates
        (post-processing); 0 releases the last iterate.

    Returns
    -------
    coef : ndarray
    """
    penalty = plan.spec.penalty
    proximal = "smooth" not in penalty.capabilities
    T = len(steps)
    x = queries.initial_coef()
    x_prev = x
    tail_start = T - int(np.floor(average * T)) if average > 0 else T
    tail_sum, n_tail = np.zeros_like(x), 0
    for t in range(T):
        if restarts is not None and restarts[t]:
            x_prev = x
        beta = 0.0 if momenta is None else momenta[t]
        point = x + beta * (x - x_prev) if nesterov else x
        g = queries.noisy_gradient(point, noise_multipliers[t])
        if not proximal:
            g = g + penalty.gradient(point)
        if nesterov:
            x_new = point - steps[t] * g
        else:
            x_new = x - steps[t] * g + beta * (x - x_prev) if beta else x - steps[t] * g
        if proximal:
            x_new = penalty.prox(x_new, steps[t])
        x_prev, x = x, x_new
        if t + 1 > tail_start:
            tail_sum += x
            n_tail += 1
    return tail_sum / n_tail if n_tail else x

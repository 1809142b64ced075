"""DP-AGD (Lee & Kifer 2018), the baseline of paper 002: a benchmark, not a registered solver.

J. Lee, D. Kifer, "Concentrated Differentially Private Gradient Descent with
Adaptive per-Iteration Privacy Budget", KDD 2018. Full-batch gradient descent
under zCDP: each iteration releases a Gaussian noisy gradient (budget
``rho_ng``), normalises it, and picks the step from ``{0, s_max / K, ..., s_max}``
by a private noisy min over the clipped objective at each candidate (budget
``rho_nmax``). When the noisy min picks 0 (no descent), ``rho_ng`` grows by
``1 + gamma``, a second noisy gradient at the extra budget is drawn and the two
are averaged with inverse-variance weights, and the selection is repeated.
Every 10 iterations ``s_max`` becomes ``min(1.1 * largest chosen step, 2)``.
The run stops when the remaining budget cannot pay for a gradient and a
selection. Initial budgets as in the authors' code: ``eps_nmax = 0.5 epsilon /
60``, ``rho_nmax = eps_nmax^2 / 2``, ``rho_ng`` the zCDP of the Gaussian
mechanism calibrated to (eps_nmax, delta).

Privacy (add/remove or zero-out neighbours): the clipped gradient sum has L2
sensitivity ``grad_clip`` (Gaussian: ``grad_clip^2 / (2 sigma^2)``-zCDP); the
selection is the exponential mechanism on sums of losses clipped to
``[0, obj_clip]`` (sensitivity ``obj_clip``), epsilon_nmax-DP, charged
``eps_nmax^2 / 2`` zCDP as in the paper (its bounded-range cost is a quarter of
that). zCDP adds up; the total is ``zcdp_rho(epsilon, delta)``. This is a
benchmark of a published method, drawn with numpy's generator (not through
skdp's release door, which serves skdp's own estimators).
"""

import math

import numpy as np

from skdp.solvers.gd import zcdp_rho


def _margins(X, w, b):
    return np.asarray(X @ w).ravel() + b


def _losses(loss, z):
    """Per-example loss of the margins ``z = y * decision`` (rows of ``z``)."""
    if loss == "hinge":
        return np.maximum(0.0, 1.0 - z)
    return np.logaddexp(0.0, -z)


def _coefficients(loss, z):
    """d loss / d decision divided by y (|value| <= 1)."""
    if loss == "hinge":
        return -(z < 1.0).astype(float)
    return -0.5 * (1.0 - np.tanh(0.5 * z))  # -sigmoid(-z), stable


def dp_agd(X, y, *, loss, epsilon, delta, alpha, rng, grad_clip=math.sqrt(2.0),
           obj_clip=3.0, splits=60, gamma=0.1, n_candidates=20, max_step=2.0):
    """Run DP-AGD on rows X (norm <= 1), labels y in {-1, +1}.

    Returns ``(coef, intercept, iterations, rho_spent)``; ``rho_spent`` never
    exceeds ``zcdp_rho(epsilon, delta)``.

    The intercept is a coefficient on a constant feature 1, so a row with its
    constant has norm <= sqrt 2 and the per-example gradient norm is at most
    ``sqrt 2`` (no clipping happens at the default ``grad_clip``).
    ``alpha`` is the L2 penalty ``alpha / 2 ||coef||^2`` (not on the intercept).
    """
    n, d = X.shape
    y = np.where(np.asarray(y) > 0, 1.0, -1.0)
    rho_total = rho = zcdp_rho(epsilon, delta)
    eps_nmax = 0.5 * epsilon / splits
    rho_nmax = eps_nmax ** 2 / 2.0
    rho_ng = eps_nmax ** 2 / (4.0 * math.log(1.25 / delta))
    w, b = np.zeros(d), 0.0
    chosen, t = [], 0

    squares = X.multiply(X).sum(axis=1) if hasattr(X, "multiply") else (X * X).sum(axis=1)
    rows = np.sqrt(np.asarray(squares).ravel() + 1.0)  # with the constant feature

    def clipped_gradient(w, b):
        coeff = y * _coefficients(loss, y * _margins(X, w, b))
        coeff = coeff * np.minimum(1.0, grad_clip / np.maximum(rows * np.abs(coeff), 1e-300))
        return np.concatenate([np.asarray(X.T @ coeff).ravel(), [coeff.sum()]])

    def noisy(g, r):
        return g + rng.normal(0.0, grad_clip / math.sqrt(2.0 * r), g.shape)

    def direction(g, w):
        unit = g / max(np.linalg.norm(g), 1e-300)
        return unit + alpha * np.concatenate([w, [0.0]])

    while rho >= rho_ng + rho_nmax:
        g = clipped_gradient(w, b)
        g_noisy = noisy(g, rho_ng)
        rho -= rho_ng
        step_dir = direction(g_noisy, w)
        stepped = False
        while rho >= rho_nmax:
            steps = np.linspace(0.0, max_step, n_candidates + 1)
            base = _margins(X, w, b)
            slope = _margins(X, step_dir[:-1], step_dir[-1])
            # float32 for speed; the sums (and the sensitivity) are unaffected
            z = (y * base).astype(np.float32)[None, :] - \
                np.outer(steps, y * slope).astype(np.float32)
            scores = np.minimum(_losses(loss, z), obj_clip).sum(axis=1, dtype=np.float64)
            coefs = w[None, :] - steps[:, None] * step_dir[None, :-1]
            scores = scores + n * 0.5 * alpha * (coefs ** 2).sum(axis=1)
            # exponential mechanism for the min: Gumbel(2 obj_clip / eps) noise
            noisy_scores = -scores + rng.gumbel(0.0, 2.0 * obj_clip / eps_nmax, scores.shape)
            idx = int(np.argmax(noisy_scores))
            rho -= rho_nmax
            if idx > 0:
                w = coefs[idx]
                b = b - steps[idx] * step_dir[-1]
                chosen.append(steps[idx])
                stepped = True
                break
            extra = gamma * rho_ng
            if rho < extra + rho_nmax:
                break
            g_more = noisy(g, extra)
            rho -= extra
            g_noisy = (rho_ng * g_noisy + extra * g_more) / (rho_ng + extra)
            rho_ng += extra
            step_dir = direction(g_noisy, w)
        if not stepped:
            break
        t += 1
        if t % 10 == 0 and chosen:
            max_step = min(1.1 * max(chosen), 2.0)
            chosen = []
    return w, b, t, rho_total - rho

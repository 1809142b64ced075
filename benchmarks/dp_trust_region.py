"""DP-TR (Wang & Xu 2021), paper 004's baseline, as the paper runs it: stop at a 2NS point.

Benchmark code only (not in the solver registry). Each iteration releases a
noisy full gradient and a noisy full Hessian (Gaussian; zero-out neighbours,
so a sum of per-example gradients has sensitivity ``B_g`` and a sum of
per-example Hessians ``B_H`` in Frobenius norm), tests the paper's
second-order condition ``||g|| <= eps_g`` and ``lambda_min(H) >= -eps_H``
on the noisy values and stops there (paper 004's modification: "check 2NS
and stop"), else takes the exact trust-region step
``argmin_{||s|| <= r} g.s + s.H s / 2`` (More-Sorensen by eigendecomposition;
d = 54). The radius ``r = sqrt(eps_g / M)`` with ``M = 1`` (Wang & Xu's
``O(sqrt(eps / M))``). The noise multiplier is calibrated by skdp's
accountant for ``T`` planned iterations (gradient and Hessian each one
Gaussian with the same multiplier); stopping early spends less. The noise
is drawn with numpy here (outside skdp/).

Losses (rows of unit L2 norm; an intercept as a constant column 1, so each
row has norm <= sqrt(2)):

- ``nonconvex``: logistic loss, B_g = sqrt(2), B_H = 2 / 4, plus
  ``alpha * sum_j w_j^2 / (1 + w_j^2)`` (intercept not penalised);
- ``sigmoid``: ``1 / (1 + exp(y x.w))``, B_g = sqrt(2) / 4, B_H = 2 * 0.0963,
  plus ``alpha / 2 ||w||^2``.
"""

import numpy as np
from scipy.special import expit

from skdp.accounting import Composed, Gaussian, Repeated, calibrate

SIGMOID_CURVATURE = 1.0 / (6.0 * np.sqrt(3.0))  # max |s''| of the logistic sigmoid


def _loss_parts(kind, Z, s, w, alpha):
    """Value, gradient and Hessian of the data term (means) and of the penalty."""
    m = s * (Z @ w)
    n = len(s)
    if kind == "nonconvex":
        value = np.mean(np.logaddexp(0.0, -m))
        p = expit(-m)                       # -dloss/dm
        grad = -(Z.T @ (s * p)) / n
        curv = p * (1.0 - p)                # d2loss/dm2
    else:
        p = expit(-m)                       # the loss itself
        value = np.mean(p)
        d1 = p * (1.0 - p)                  # -dloss/dm
        grad = -(Z.T @ (s * d1)) / n
        curv = d1 * (1.0 - 2.0 * p)         # d2loss/dm2
    hess = (Z.T * curv) @ Z / n
    v = w[:-1]
    if kind == "nonconvex":
        pen = alpha * np.sum(v * v / (1.0 + v * v))
        pg = alpha * 2.0 * v / (1.0 + v * v) ** 2
        ph = alpha * (2.0 - 6.0 * v * v) / (1.0 + v * v) ** 3
    else:
        pen = 0.5 * alpha * v @ v
        pg = alpha * v
        ph = np.full_like(v, alpha)
    pen_grad = np.append(pg, 0.0)
    pen_hess = np.append(ph, 0.0)
    return value + pen, grad + pen_grad, hess + np.diag(pen_hess)


def _bounds(kind):
    if kind == "nonconvex":
        return np.sqrt(2.0), 2.0 / 4.0
    return np.sqrt(2.0) / 4.0, 2.0 * SIGMOID_CURVATURE


def trust_region_step(g, H, radius):
    """Exact solution of min g.s + s.H s / 2 subject to ||s|| <= radius."""
    lam, Q = np.linalg.eigh(H)
    gq = Q.T @ g
    if lam[0] > 0:
        s = -gq / lam
        if np.linalg.norm(s) <= radius:
            return Q @ s
    low = max(0.0, -lam[0]) + 1e-12
    high = low + np.linalg.norm(g) / radius + abs(lam).max() + 1.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        if np.linalg.norm(gq / (lam + mid)) > radius:
            low = mid
        else:
            high = mid
    s = -gq / (lam + high)
    if np.linalg.norm(s) < 0.999 * radius:      # hard case: add the bottom eigenvector
        tail = np.sqrt(max(radius ** 2 - s @ s, 0.0))
        s = s + tail * np.eye(len(g))[0]
    return Q @ s


def dp_tr(kind, X, y, *, epsilon, delta, eps_g, eps_H, alpha=1e-3, T=50, rng=None):
    """Run DP-TR; returns (w with the intercept last, iterations, Hessians, certified)."""
    rng = np.random.default_rng(rng)
    n, d = X.shape
    Z = np.hstack([np.asarray(X, dtype=float), np.ones((n, 1))])
    s = np.where(y > 0, 1.0, -1.0)
    B_g, B_H = _bounds(kind)
    z = calibrate(lambda z: Repeated(Composed([Gaussian(z), Gaussian(z)]), T), epsilon, delta)
    radius = np.sqrt(eps_g)
    w = np.zeros(d + 1)
    for t in range(T):
        _, grad, hess = _loss_parts(kind, Z, s, w, alpha)
        g = grad + rng.normal(0.0, z * B_g / n, d + 1)
        E = rng.normal(0.0, z * B_H / n, (d + 1, d + 1))
        H = hess + np.triu(E) + np.triu(E, 1).T
        if np.linalg.norm(g) <= eps_g and np.linalg.eigvalsh(H)[0] >= -eps_H:
            return w, t + 1, t + 1, True
        w = w + trust_region_step(g, H, radius)
    return w, T, T, False

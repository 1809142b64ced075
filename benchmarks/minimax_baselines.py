"""Paper 000's baselines on matrix sensing: Sto-SPIDER, Ada-DP-SPIDER and PrivateDiff.

Benchmark code only (not in the solver registry). All three run on the
closed form ``Phi(U, V) = (1 / 2n) sum_i (<A_i, U V^T> - b_i)^2`` (the dual
``y_i* = <A_i, U V^T> - b_i`` substituted, as the paper runs its first two
baselines), with per-example clipping on Poisson batches and Gaussian noise
calibrated by skdp's accountant (:func:`skdp.accounting.calibrate`, the
same accountant rgda is charged by) for the whole planned run, so every
method spends exactly the same (epsilon, delta):

- ``sto_spider`` (Liu et al. 2023, DP-SPIDER): a fresh clipped gradient on a
  batch of ``b1`` every ``q`` steps, between them increments of clipped
  per-example gradient differences on batches of ``b2`` (fixed clip ``C``),
  plain steps ``x -= lr * v``; the paper's ``lr = 0.005``.
- ``ada_dp_spider`` (Tao et al. 2025): the same estimator, but increments
  clipped at ``L_hat * ||x_t - x_{t-1}||`` (noise shrinks with the step) and
  a refresh whenever the squared drift since the last refresh exceeds
  ``drift``, at most ``max_refreshes`` times (the plan the noise is
  calibrated for); the paper's ``lr = 0.02``.  Simplified: the paper's
  adaptive rule is on the accumulated noise variance; ours is on the drift,
  a function of released iterates only, so it is post-processing.
- ``private_diff`` (Zhang et al. 2025): gradient differences with the same
  adaptive clip, refreshes every ``q`` steps, step ``lr`` (not given in
  paper 000; we use DP-RGDA's ``eta_x = 0.2``).

The noise is drawn with numpy in this benchmark (outside skdp/, whose
release door is for the library), after the calibration above.
"""

import numpy as np

from skdp.accounting import Composed, Gaussian, PoissonSampled, Repeated, calibrate


def per_example_grads(A, b, U, V):
    """Per-example gradients of F_i = 0.5 (<A_i, U V^T> - b_i)^2, rows of shape (p + q) r."""
    r = np.einsum("bpq,pq->b", A, U @ V.T) - b
    gU = r[:, None, None] * np.einsum("bpq,qk->bpk", A, V)
    gV = r[:, None, None] * np.einsum("bpq,pk->bqk", A, U)
    return np.concatenate([gU.reshape(len(b), -1), gV.reshape(len(b), -1)], axis=1)


def _clip_rows(G, c):
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    return G * np.minimum(1.0, c / np.maximum(norms, 1e-300))


def noise_multiplier(n, T, q_refresh, b1, b2, epsilon, delta, n_refresh=None):
    """One z for every query of the plan: refreshes on rate b1/n, increments on b2/n."""
    R = int(np.ceil(T / q_refresh)) if n_refresh is None else int(n_refresh)
    inc = T - 1

    def plan(z):
        return Composed([Repeated(PoissonSampled(min(1.0, b1 / n), Gaussian(z)), R),
                         Repeated(PoissonSampled(min(1.0, b2 / n), Gaussian(z)), inc)])

    return calibrate(plan, epsilon, delta), R


def dp_spider(A, b, U0, V0, *, epsilon, delta, T=400, q=10, b1=200, b2=50, clip=1.0, lr=0.005,
              adaptive_clip=None, drift=None, max_refreshes=None, rng=None):
    """Private SPIDER on Phi; returns (U, V, number of refreshes used)."""
    rng = np.random.default_rng(rng)
    n, p, qq = A.shape
    k = U0.shape[1]
    z, R = noise_multiplier(n, T, q, b1, b2, epsilon, delta, n_refresh=max_refreshes)
    x = np.concatenate([U0.ravel(), V0.ravel()])

    def unpack(w):
        return w[:p * k].reshape(p, k), w[p * k:].reshape(qq, k)

    def batch(size):
        return np.flatnonzero(rng.random(n) < min(1.0, size / n))

    v = None
    x_prev = x.copy()
    refreshes, since = 0, 0.0
    for t in range(T):
        step = np.linalg.norm(x - x_prev)
        since += step ** 2
        if drift is None:
            refresh = t % q == 0
        else:
            refresh = t == 0 or (since > drift and refreshes < R)
        if refresh and refreshes < R:
            idx = batch(b1)
            G = _clip_rows(per_example_grads(A[idx], b[idx], *unpack(x)), clip).sum(axis=0)
            v = (G + rng.normal(0.0, z * clip, x.size)) / b1
            refreshes += 1
            since = 0.0
        else:
            idx = batch(b2)
            c = clip if adaptive_clip is None else adaptive_clip * step
            if c > 0:
                D = (per_example_grads(A[idx], b[idx], *unpack(x))
                     - per_example_grads(A[idx], b[idx], *unpack(x_prev)))
                v = v + (_clip_rows(D, c).sum(axis=0) + rng.normal(0.0, z * c, x.size)) / b2
        x_prev = x.copy()
        x = x - lr * v
    U, V = unpack(x)
    return U, V, refreshes


BASELINES = {
    "Sto-SPIDER": {"lr": 0.005},
    "Ada-DP-SPIDER": {"lr": 0.02, "adaptive_clip": 2.0, "drift": 0.25, "max_refreshes": 80},
    "PrivateDiff": {"lr": 0.2, "adaptive_clip": 2.0},
}

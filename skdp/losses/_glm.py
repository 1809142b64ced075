"""Shared machinery of generalised-linear-model losses.

For a GLM the per-example gradient is ``r_i (x) x_i`` where ``r_i`` is the
derivative of the loss with respect to the linear predictor (a scalar for
binary models, a vector for multinomial ones). Its norm factorises,
``||r_i (x) x_i||_p = ||r_i||_p * ||x_i||_p`` for p in {1, 2}, so the sum of
per-example gradients clipped to norm C is

    X.T @ (r * min(1, C / (||r|| * rownorm)))

which is one pass over ``X`` and never forms the ``n x d`` matrix of
per-example gradients (DESIGN.md section 4).
"""

import numpy as np

__all__ = ["GLMLoss"]


class GLMLoss:
    """Base class: a GLM data-fit bound to a :class:`LinearDesign` and targets.

    Subclasses implement ``_residuals(Z, idx)`` (derivative of each
    example's loss with respect to its linear predictor), ``_values(Z, idx)``
    (each example's loss) and set ``curvature_bound`` (a bound on the second
    derivative of the loss in the linear predictor, in operator norm) and
    ``n_outputs`` (None for a single coefficient vector).

    Parameters
    ----------
    design : LinearDesign
    y : ndarray
        Encoded targets (see the subclass).
    """

    #: properties a solver may require (see ``skdp.solvers.register_solver``)
    capabilities = frozenset({"gradient", "smooth", "convex"})
    curvature_bound = None
    n_outputs = None

    def __init__(self, design, y):
        self.design = design
        self.y = y
        self.n_samples = design.n_samples

    @property
    def coef_shape(self):
        """Shape of the parameter array ``W`` (intercept in the last row)."""
        p = self.design.n_params
        return (p,) if self.n_outputs is None else (p, self.n_outputs)

    def _y(self, idx):
        return self.y if idx is None else self.y[idx]

    def _residuals(self, Z, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _values(self, Z, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def clipped_grad_sum(self, W, clip_norm, idx=None, norm=2):
        """Sum over examples of per-example gradients clipped to ``clip_norm``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
        clip_norm : float
            Per-example gradient norm bound C: the L2 (or L1) sensitivity of
            the returned sum under add/remove-one neighbours.
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.
        norm : {1, 2}
            The norm the gradients are clipped in.

        Returns
        -------
        G : ndarray of shape ``coef_shape``, float64
        """
        Z = self.design.decision(W, idx)
        R = self._residuals(Z, self._y(idx))
        r_norm = np.abs(R) if R.ndim == 1 else np.linalg.norm(R, ord=norm, axis=1)
        x_norm = self.design.row_norms(norm, idx)
        # min(1, C / (|r| ||x||)) as (C / ||x||) / |r|: no product that overflows
        with np.errstate(divide="ignore", over="ignore", under="ignore"):
            factor = np.minimum(1.0, (clip_norm / x_norm) / r_norm)
        factor[(r_norm == 0) | (x_norm == 0)] = 1.0
        R = R * (factor if R.ndim == 1 else factor[:, None])
        return self.design.weighted_sum(R, idx)

    def grad_sum(self, W, idx=None):
        """Unclipped gradient sum (non-private; for diagnostics and tests)."""
        Z = self.design.decision(W, idx)
        return self.design.weighted_sum(self._residuals(Z, self._y(idx)), idx)

    def loss_values(self, W, idx=None, loss_clip=None):
        """Per-example losses, optionally clipped to ``[0, loss_clip]``."""
        values = self._values(self.design.decision(W, idx), self._y(idx))
        if loss_clip is not None:
            values = np.clip(values, 0.0, loss_clip)
        return values

    def mean_loss(self, W):
        """Mean loss over all examples (non-private; for diagnostics)."""
        return float(np.mean(self.loss_values(W)))

    @classmethod
    def curvature(cls, **params):
        """Bound on the loss's second derivative in the linear predictor, or None."""
        return cls.curvature_bound

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        """The loss at linear predictor 0 (every margin 0): a public ``F(0)``, or None."""
        return None

    @classmethod
    def public_constants(cls, row_bound, n_outputs=None, **params):
        """What the loss states about itself, from public quantities only.

        Parameters
        ----------
        row_bound : float or None
            Public bound on the norm of an implicit row ``[s x, 1]`` (from
            ``data_norm`` and the intercept); None when rows are not clipped.
        n_outputs : int or None
            Number of coefficient columns (None for one vector).
        **params
            The loss's public parameters (e.g. ``smoothing``).

        Returns
        -------
        capabilities : frozenset of str
        smoothness : float or None
            ``curvature * row_bound**2``: None without a row bound.
        initial_value : float or None
            The loss at linear predictor 0.
        """
        curvature = cls.curvature(**params)
        smoothness = None if row_bound is None or curvature is None else curvature * row_bound**2
        return cls.capabilities, smoothness, cls.value_at_zero(n_outputs, **params)

    def smoothness(self):
        """Public smoothness constant of one example's loss, or None.

        ``curvature_bound * B**2`` with ``B`` the public bound on the norm of
        an implicit row ``[x, 1]``; None when rows are not clipped
        (``data_norm=None``), since then no public bound exists.
        """
        B = self.design.feature_norm_bound()
        if B is None or self.curvature_bound is None:
            return None
        return self.curvature_bound * B**2

"""Shared machinery of generalised-linear-model losses.

For a GLM the per-example gradient is ``r_i (x) x_i`` where ``r_i`` is the
derivative of the loss with respect to the linear predictor (a scalar for
binary models, a vector for multinomial ones). Its norm factorises,
``||r_i (x) x_i||_p = ||r_i||_p * ||x_i||_p`` for p in {1, 2}, so the sum of
per-example gradients clipped to norm C is

    X.T @ (r * min(1, C / (||r|| * rownorm)))

which is one pass over ``X`` and never forms the ``n x d`` matrix of
per-example gradients.

The clipped residual is computed as ``r * min(1, (C / rownorm) / ||r||)``
(for a scalar ``r``: ``sign(r) min(|r|, C / rownorm)``), never through the
product ``||r|| * rownorm``, which overflows for huge rows, nor as
``inf * 0``: it is finite for every finite row and never NaN, and a
residual vector's norm is computed without overflow or underflow.
"""

import math
import sys

import numpy as np

from ._batch_sums import BatchSums
from ._design_rows import nbytes_of
from ._float64_sums import float64_total

__all__ = ["GLMLoss", "clip_rows"]

_F64_MAX = float(np.finfo(np.float64).max)
#: residual norms in this range were computed without overflow or harmful
#: underflow by the plain formula (squares of entries far below it underflow)
_NORM_LO, _NORM_HI = 2.0 ** -400, 2.0 ** 400


def clip_rows(R, limit, ord=2):
    """Residuals clipped to norm ``limit``: ``R_i * min(1, limit_i / ||R_i||)``.

    Parameters
    ----------
    R : ndarray of shape (n,) or (n, k)
        Residuals (a scalar or a vector per example); may hold infinities.
    limit : ndarray of shape (n,)
        Largest norm each row may keep (``clip_norm / rownorm``), >= 0.
    ord : {1, 2}
        Norm of a residual vector.

    Returns
    -------
    ndarray like R, float64
        Rows with ``||R_i|| <= limit_i`` unchanged, the others scaled to norm
        ``limit_i``; finite wherever ``limit`` is finite, never NaN for
        non-NaN input. No overflow or underflow in the norms.
    """
    if R.ndim == 1:
        return np.maximum(np.minimum(R, limit), -limit)
    with np.errstate(over="ignore", invalid="ignore"):
        if ord == 2:
            norms = np.sqrt(np.einsum("ij,ij->i", R, R))
        else:
            norms = np.abs(R).sum(axis=1)
    # the ``not`` form also catches NaN, infinities and zeros
    bad = np.flatnonzero(~((norms >= _NORM_LO) & (norms <= _NORM_HI)))
    # zero rows (bad) get factor 1 here, never limit / 0 (0 / 0 = NaN at limit 0)
    safe = np.where(norms > 0, norms, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):  # inf / inf on bad rows only
        factor = np.minimum(1.0, limit / safe)
    if bad.size == 0:
        return R * factor[:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        out = R * factor[:, None]    # the bad rows are replaced below
    Rb = np.clip(R[bad], -_F64_MAX, _F64_MAX)  # infinities -> the largest float
    a = np.abs(Rb).max(axis=1)
    Ub = Rb / np.where(a > 0, a, 1.0)[:, None]          # entries in [-1, 1]
    nu = np.linalg.norm(Ub, ord=ord, axis=1)             # in [1, k], or 0
    # a zero row (nu = 0, a = 0) stays zero whatever its limit (0, or inf)
    with np.errstate(over="ignore"):
        keep = np.where(nu > 0, np.minimum(a, limit[bad] / np.where(nu > 0, nu, 1.0)), 0.0)
    out[bad] = Ub * keep[:, None]
    return out


class GLMLoss(BatchSums):
    """Base class: a GLM data-fit bound to a :class:`LinearDesign` and targets.

    Subclasses implement ``_residuals(Z, idx)`` (derivative of each
    example's loss with respect to its linear predictor), ``_values(Z, idx)``
    (each example's loss) and set ``curvature_bound`` (a bound on the second
    derivative of the loss in the linear predictor, in operator norm) and
    ``n_outputs`` (None for a single coefficient vector).

    Parameters
    ----------
    design : LinearDesign
        The implicit rows ``[s_i x_i, c]`` (features after row clipping, then
        the intercept feature ``c``), shared with the estimator; its
        ``data_norm``, when set, is the public bound on ``||s_i x_i||_2`` from
        which :meth:`smoothness` and :meth:`hessian_constants` are derived.
    y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        Encoded targets, one row per row of ``design`` (see the subclass).

    Attributes
    ----------
    curvature_bound : float or None
        Bound on the second derivative of one example's loss in its linear
        predictor (operator norm for several outputs), a constant of the
        loss that does not depend on the data; None when the loss is not
        smooth.
    third_derivative_bound : float or None
        Bound on the third derivative of one example's loss along a unit
        direction of the linear predictor (it bounds the Lipschitz constant
        of the Hessian, see :meth:`hessian_constants`); None when the loss
        is not three times differentiable.
    n_outputs : int or None
        Number of coefficient columns; None for a single coefficient vector.
    n_samples : int
        Number of examples (rows of ``design``).
    """

    #: Properties a solver may require (see ``skdp.solvers.register_solver``).
    capabilities = frozenset({"gradient", "gradient_difference", "grouped_gradient", "values",
                              "smooth", "convex"})
    curvature_bound = None
    # bound on the loss's third derivative along a unit direction of the
    # linear predictor (None: not three times differentiable); documented in
    # the class docstring's Attributes (numpydoc rejects a ``#:`` doc on None)
    third_derivative_bound = None
    #: Value ``c`` of the implicit intercept feature (see :class:`LinearDesign`).
    intercept_scale = 1.0
    n_outputs = None

    def __init__(self, design, y):
        self.design = design
        self.y = y
        self.n_samples = design.n_samples

    @property
    def intercept_feature(self):
        """The value of the implicit intercept feature in the design's rows (public)."""
        return self.design.intercept_scale

    def __sizeof__(self):
        # the rows and targets it holds (see LinearDesign.__sizeof__)
        return object.__sizeof__(self) + sys.getsizeof(self.design) + nbytes_of(self.y)

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
            Coefficients at which the gradients are taken (one column per
            output, the intercept coefficient in the last row).
        clip_norm : float
            Per-example gradient norm bound C: the L2 (or L1) sensitivity of
            the returned sum under zero-out neighbours.
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.
        norm : {1, 2}
            The norm the gradients are clipped in.

        Returns
        -------
        G : ndarray of shape ``coef_shape``, float64
            Sum over the rows used of ``clip_C(r_i (x) [s_i x_i, c])``: each
            example contributes a term of norm at most ``clip_norm``, so one
            example changes the sum by at most ``clip_norm`` whatever its data.
        """
        rows = self.design.fused_rows(idx)
        if rows is not None:
            self.design.clip_limits(clip_norm, norm)  # cached here, read by every block's thread
            return self.design.fused_weighted_sum(
                W, lambda Z, block: self._clipped_residuals(Z, block, clip_norm, norm), rows,
                idx)
        R = self._clipped_residuals(self.design.decision(W, idx), idx, clip_norm, norm)
        return self.design.weighted_sum(R, idx)

    def _clipped_residuals(self, Z, idx, clip_norm, norm):
        with np.errstate(over="ignore", invalid="ignore"):
            R = self._residuals(Z, self._y(idx))
        # rows of norm 0 (no intercept) have gradient 0: limit 0
        upper, lower = self.design.clip_limits(clip_norm, norm, idx)
        if R.ndim == 1:  # clip_rows's scalar case, in place (R is this call's own array)
            np.minimum(R, upper, out=R)
            return np.maximum(R, lower, out=R)
        return clip_rows(R, upper, norm)

    def clipped_grad_diff_sum(self, W, W_prev, clip_norm, idx=None, norm=2):
        r"""Sum of per-example gradient differences, each clipped to ``clip_norm``.

        .. math::

            \sum_i \mathrm{clip}_C\big(\nabla\ell_i(W) - \nabla\ell_i(W')\big),

        the increments of SPIDER-type estimators. A GLM's difference is
        ``(r_i(W) - r_i(W')) [s_i x_i, 1]``: the residual differences are
        clipped like residuals, so one pass over the rows per point.

        Parameters
        ----------
        W, W_prev : ndarray of shape ``coef_shape``
            The current and the previous coefficients (``W`` and ``W'`` above).
        clip_norm : float
            Per-example bound on the difference: the sensitivity of the sum.
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.
        norm : {1, 2}
            The norm the differences are clipped in.

        Returns
        -------
        G : ndarray of shape ``coef_shape``, float64
            Sum over the rows used of the clipped differences: one example
            changes it by at most ``clip_norm`` in the chosen norm.
        """
        y = self._y(idx)
        with np.errstate(over="ignore", invalid="ignore"):
            D = (self._residuals(self.design.decision(W, idx), y)
                 - self._residuals(self.design.decision(W_prev, idx), y))
        if not np.isfinite(D).all():  # residuals are bounded: NaN only from inf - inf
            D = np.nan_to_num(D, nan=0.0)
        limit = clip_norm * self.design.inverse_row_norms(norm, idx)
        return self.design.weighted_sum(clip_rows(D, limit, norm), idx)

    def clipped_grad_sums(self, Ws, idx, groups, clip_norm, norm=2):
        """Per-group sums of clipped per-example gradients, each group at its own parameters.

        Row ``idx[j]`` belongs to group ``groups[j]`` and its gradient is taken
        at ``Ws[groups[j]]``: one pass over the gathered rows for all groups
        (``X[idx] @ [W_1 ... W_k]``, then one weighted sum), no loop over
        groups or examples.

        Parameters
        ----------
        Ws : ndarray of shape ``(k,) + coef_shape``
            Coefficients of the ``k`` groups: ``Ws[g]`` is where group ``g``'s
            gradients are taken.
        idx : ndarray of int of shape (m,)
            Rows to use (may be empty).
        groups : ndarray of int of shape (m,)
            Group of each row, in ``[0, k)``.
        clip_norm : float
            Per-example gradient norm bound (the sensitivity of each group's sum).
        norm : {1, 2}
            The norm the gradients are clipped in.

        Returns
        -------
        G : ndarray of shape ``(k,) + coef_shape``, float64
            ``G[g]`` is the sum of the clipped gradients of group ``g``'s rows
            at ``Ws[g]``; an example moves only its own group's sum, by at most
            ``clip_norm``.
        """
        Ws = np.asarray(Ws, dtype=np.float64)
        k, P = Ws.shape[0], Ws.shape[1]
        K = 1 if self.n_outputs is None else self.n_outputs
        m = len(idx)
        stacked = Ws.reshape(k, P, K).transpose(1, 0, 2).reshape(P, k * K)
        rows = np.arange(m)
        Z = self.design.decision(stacked, idx).reshape(m, k, K)[rows, groups]
        R = self._clipped_residuals(Z if K > 1 else Z[:, 0], idx, clip_norm, norm)
        placed = np.zeros((m, k, K))
        placed[rows, groups] = R.reshape(m, K)
        G = self.design.weighted_sum(placed.reshape(m, k * K), idx)
        return G.reshape(P, k, K).transpose(1, 0, 2).reshape(Ws.shape)

    def grad_sum(self, W, idx=None):
        """Unclipped gradient sum (non-private; for diagnostics and tests).

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Coefficients at which the gradients are taken.
        idx : ndarray of int or None
            Rows to use; None for all.

        Returns
        -------
        ndarray of shape ``coef_shape``, float64
            ``sum_i r_i (x) [s_i x_i, c]`` without clipping: one example's
            term has no public norm bound, so the sum must not be released.
        """
        Z = self.design.decision(W, idx)
        with np.errstate(over="ignore", invalid="ignore"):
            R = self._residuals(Z, self._y(idx))
        return self.design.weighted_sum(R, idx)

    def loss_values(self, W, idx=None, loss_clip=None):
        """Per-example losses, optionally clipped to ``[0, loss_clip]``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Coefficients at which the losses are evaluated.
        idx : ndarray of int or None
            Rows to use; None for all.
        loss_clip : float or None
            Upper bound each value is clipped to: a sum of the clipped values
            then has sensitivity ``loss_clip``. None leaves the values
            unclipped (non-private).

        Returns
        -------
        ndarray of shape (n_rows,), float64
            The loss of each row used (for one-vs-rest, the sum over the
            outputs), in ``[0, loss_clip]`` when ``loss_clip`` is given.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            values = self._values(self.design.decision(W, idx), self._y(idx))
        if loss_clip is not None:
            values = np.clip(values, 0.0, loss_clip)
        return values

    def clipped_decrease(self, W, loss_clip, idx=None):
        """:meth:`BatchSums.clipped_decrease`, with one pass for all candidates on a line.

        The predictor is linear in the coefficients, so candidates ``V = W +
        t s`` on the line of the first one asked for (``s = V_1 - W``) reuse
        its pass, ``Z_V = Z_W + t Z_s``; other candidates take a pass of their
        own. Each example's decrease is clipped to ``[-C, C]`` as there.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Reference coefficients (public); their losses are computed here.
        loss_clip : float
            ``C``, the sensitivity of each sum.
        idx : ndarray of int or None
            A sample's rows, or None for every row.

        Returns
        -------
        decrease : callable
            ``V -> sum_i clip(l_i(W) - l_i(V), -C, C)``, a float;
            ``decrease(V, c)`` clips to ``[-c, c]`` instead.
        """
        C0 = float(loss_clip)
        W = np.asarray(W, dtype=np.float64)
        y = self._y(idx)
        with np.errstate(over="ignore", invalid="ignore"):
            Z_W = self.design.decision(W, idx)
            reference = self._values(Z_W, y)
        line = []   # (s, s.s, Z_s) of the first candidate's step

        def decrease(V, loss_clip=None):
            C = C0 if loss_clip is None else float(loss_clip)
            step = np.asarray(V, dtype=np.float64) - W
            flat = step.ravel()
            with np.errstate(over="ignore", invalid="ignore"):
                Z_V = None
                if line:
                    s, ss, Z_s = line[0]
                    t = float(np.vdot(step, s)) / ss
                    # on the line (up to the rounding of forming V = W + t s);
                    # sqrt(r.r) is numpy.linalg.norm(r) of a float64 vector
                    off = (step - t * s).ravel()
                    if math.sqrt(off.dot(off)) <= 1e-9 * max(math.sqrt(flat.dot(flat)), 1e-300):
                        Z_s = Z_s * t
                        Z_V = np.add(Z_W, Z_s, out=Z_s)
                if Z_V is None:
                    Z_step = self.design.decision(step, idx)
                    Z_V = Z_W + Z_step
                    ss = float(np.vdot(step, step))
                    if not line and ss > 0 and np.all(np.isfinite(Z_step)):
                        line.append((step, ss, Z_step))
                d = self._values(Z_V, y)
                d = np.subtract(reference, d, out=d)
            # infinities to +-C, an inf - inf (NaN) change to 0
            total = float64_total(np.clip(d, -C, C, out=d))
            if total != total:  # NaN: only from inf - inf, rare
                total = float64_total(d[~np.isnan(d)])
            return total

        return decrease

    def mean_loss(self, W):
        """Mean loss over all examples (non-private; for diagnostics).

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Coefficients at which the loss is evaluated.

        Returns
        -------
        float
            The unclipped mean of :meth:`loss_values` over all examples.
        """
        return float(np.mean(self.loss_values(W)))

    @classmethod
    def curvature(cls, **params):
        """Bound on the loss's second derivative in the linear predictor, or None.

        Parameters
        ----------
        **params
            The loss's public parameters (e.g. ``smoothing``); ignored when
            the bound is a constant of the loss.

        Returns
        -------
        float or None
            ``curvature_bound``: a bound on one example's second derivative
            in its linear predictor (operator norm for several outputs),
            independent of the data; None when the loss is not smooth.
        """
        return cls.curvature_bound

    @classmethod
    def value_at_zero(cls, n_outputs=None, **params):
        """The loss at linear predictor 0 (every margin 0): a public ``F(0)``, or None.

        Parameters
        ----------
        n_outputs : int or None
            Number of coefficient columns (None for one vector).
        **params
            The loss's public parameters (e.g. ``smoothing``).

        Returns
        -------
        float or None
            One example's loss at ``W = 0``, hence the mean loss there: it
            does not depend on the data, so it is public. None (as here, in
            the base class) when the loss states no such value.
        """
        return None

    @classmethod
    def public_constants(cls, row_bound, n_outputs=None, **params):
        """What the loss states about itself, from public quantities only.

        Parameters
        ----------
        row_bound : float or None
            Public bound on the norm of an implicit row ``[s x, c]`` (from
            ``data_norm`` and the intercept feature ``c``); None when rows are
            not clipped.
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

    @classmethod
    def stand_ins(cls, row_bound, n_outputs=None, *, data_norm=None, fit_intercept=False,
                  **params):
        """Public stand-ins for solver defaults where the loss has no bound.

        See ``ProblemSpec.stand_ins`` for the keys a solver reads. Stand-ins
        are reported only when both ``row_bound`` and ``data_norm`` are
        given; each loss says which (:meth:`_bounded_stand_ins`).

        Parameters
        ----------
        row_bound : float or None
            Public bound on the norm of an implicit row (see
            :meth:`public_constants`).
        n_outputs : int or None
            Number of coefficient columns (None for one vector).
        data_norm : float or None, default=None
            The estimator's public bound on the feature rows' norms.
        fit_intercept : bool, default=False
            Whether the rows carry the intercept feature.
        **params
            The loss's public parameters (e.g. ``smoothing``).

        Returns
        -------
        dict
            Empty for a smooth GLM (its defaults derive from its smoothness
            bound); the margin losses report ``'iterations'``, the hinge also
            a ``'step'``.
        """
        if row_bound is None or data_norm is None:
            return {}
        return cls._bounded_stand_ins(float(data_norm), bool(fit_intercept), **params)

    @classmethod
    def _bounded_stand_ins(cls, data_norm, fit_intercept, **params):
        # the per-loss hook of stand_ins, called with a row bound and data_norm
        return {}

    @classmethod
    def hessian_frobenius(cls, n_outputs=None, **params):
        """Bound on the Frobenius norm of one example's second derivative in the predictor.

        A scalar for one output; a diagonal ``K x K`` matrix for one-vs-rest
        (``sqrt(K)`` times the scalar bound). Subclasses with a full ``K x K``
        second derivative override it.

        Parameters
        ----------
        n_outputs : int or None
            Number of coefficient columns ``K`` (None for one vector).
        **params
            The loss's public parameters (e.g. ``smoothing``).

        Returns
        -------
        float or None
            ``curvature * sqrt(K)`` (``K = 1`` for one vector), from public
            quantities only; None when the loss is not smooth.
        """
        curvature = cls.curvature(**params)
        return None if curvature is None else curvature * float(np.sqrt(n_outputs or 1))

    @classmethod
    def hessian_constants(cls, row_bound, n_outputs=None, **params):
        """``(hessian_bound, hessian_lipschitz)`` from public quantities, None where unknown.

        One example's Hessian in ``W`` is ``D_i (x) x_i x_i^T`` with ``D_i``
        its second derivative in the linear predictor, so its Frobenius norm
        is ``||D_i||_F ||x_i||^2 <= hessian_frobenius * row_bound**2``; along
        a unit direction ``V`` the third derivative is at most
        ``third_derivative_bound * ||V^T x_i||^3 <= ... * row_bound**3``,
        which bounds the Lipschitz constant of the Hessian in operator norm
        (the norm of a symmetric trilinear form is attained on the diagonal).

        Parameters
        ----------
        row_bound : float or None
            Public bound on the L2 norm of an implicit row ``[s x, c]`` (from
            ``data_norm`` and the intercept); None when rows are not clipped.
        n_outputs : int or None
            Number of coefficient columns (None for one vector).
        **params
            The loss's public parameters (e.g. ``smoothing``).

        Returns
        -------
        hessian_bound : float or None
            Bound on the Frobenius norm of one example's Hessian in ``W``,
            ``hessian_frobenius * row_bound**2``.
        hessian_lipschitz : float or None
            Bound on the Lipschitz constant of one example's Hessian in
            operator norm, ``third_derivative_bound * row_bound**3``. Both
            are None without the ``"hessian"`` capability or a row bound.
        """
        if "hessian" not in cls.capabilities or row_bound is None:
            return None, None
        frob = cls.hessian_frobenius(n_outputs, **params)
        third = cls.third_derivative_bound
        return (None if frob is None else frob * row_bound**2,
                None if third is None else third * row_bound**3)

    # -- second order (losses with the 'hessian' capability) -------------------
    def _second_derivatives(self, Z, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _curvatures(self, W, hessian_clip, idx):
        """Per-example second derivatives, scaled so each Hessian has norm <= the clip."""
        with np.errstate(over="ignore", invalid="ignore"):
            h = self._second_derivatives(self.design.decision(W, idx), self._y(idx))
        if hessian_clip is None:
            return h
        inv = self.design.inverse_row_norms(2, idx)
        with np.errstate(under="ignore", over="ignore"):  # inf for tiny rows: no clip
            limit = hessian_clip * inv * inv  # ||D_i||_F ||x_i||^2 <= clip
        return clip_rows(h, limit, 2)

    def hessian_matvec(self, W, V, hessian_clip=None, idx=None):
        """``sum_i H_i V`` with each example's Hessian ``H_i`` clipped to Frobenius norm.

        Parameters
        ----------
        W, V : ndarray of shape ``coef_shape``
            The coefficients at which the Hessians are taken, and the
            direction they are applied to.
        hessian_clip : float or None
            Frobenius-norm bound of each example's Hessian: the sensitivity
            of the sum. None does not clip (non-private; for tests).
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.

        Returns
        -------
        ndarray of shape ``coef_shape``, float64
            ``sum_i H_i V``: with ``hessian_clip`` each term has norm at most
            ``hessian_clip * ||V||_F``, the sensitivity of the product.
        """
        h = self._curvatures(W, hessian_clip, idx)
        return self.design.weighted_sum(h * self.design.decision(V, idx), idx)

    def gram_sum(self, idx=None):
        """``sum_i x_i x_i^T`` of the implicit rows ``[s_i x_i, c]`` (after row clipping).

        With ``data_norm`` set every row has norm at most ``row_bound``, so
        one example moves the sum by a matrix of Frobenius norm at most
        ``row_bound ** 2``: the sensitivity of the private second moment.

        Parameters
        ----------
        idx : ndarray of int or None
            Rows to use; None for all.

        Returns
        -------
        G : ndarray of shape (n_params, n_params), float64, symmetric
            The Gram matrix (intercept last), one pass over the rows.
        """
        if idx is None:
            return self.design.gram()
        return self.design.weighted_gram(None, idx)

    def gram_diagonal_sum(self, idx=None):
        """Diagonal of :meth:`gram_sum` (``n_params`` values, one pass).

        One example moves it by a vector of L2 norm at most ``row_bound ** 2``
        (the diagonal of a matrix of that Frobenius norm).

        Parameters
        ----------
        idx : ndarray of int or None
            Rows to use; None for all.

        Returns
        -------
        ndarray of shape (n_params,), float64
            ``sum_i [s_i x_i, c]_j ** 2`` for each parameter ``j`` (intercept last).
        """
        return self.design.gram_diagonal(idx)

    def hessian(self, W, hessian_clip=None, idx=None):
        """``sum_i H_i`` as a dense ``(P, P)`` array, ``P = prod(coef_shape)`` (C order).

        One weighted Gram pass per output (never a loop over examples).

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Coefficients at which the Hessians are taken.
        hessian_clip : float or None
            Frobenius-norm bound of each example's Hessian: the sensitivity
            of the sum. None does not clip (non-private; for tests).
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.

        Returns
        -------
        H : ndarray of shape (P, P), float64
            Symmetric sum of the (clipped) per-example Hessians; entry
            ``j * K + k`` is coefficient ``W[j, k]`` (block diagonal in the
            outputs for one-vs-rest losses).
        """
        h = self._curvatures(W, hessian_clip, idx)
        if h.ndim == 1:
            return self.design.weighted_gram(h, idx)
        P, K = self.coef_shape
        H = np.zeros((P * K, P * K))
        for k in range(K):  # one-vs-rest: block diagonal in the outputs
            H[k::K, k::K] = self.design.weighted_gram(h[:, k], idx)
        return H

    def smoothness(self):
        """Public smoothness constant of one example's loss, or None.

        ``curvature_bound * B**2`` with ``B`` the public bound on the norm of
        an implicit row ``[s x, c]``; None when rows are not clipped
        (``data_norm=None``), since then no public bound exists.

        Returns
        -------
        float or None
            The Lipschitz constant of one example's gradient in ``W``, from
            public quantities only; None without a row bound or for a loss
            that is not smooth.
        """
        B = self.design.feature_norm_bound()
        if B is None or self.curvature_bound is None:
            return None
        return self.curvature_bound * B**2

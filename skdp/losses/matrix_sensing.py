r"""Squared loss of low-rank matrix sensing in factored form.

Each record is a measurement matrix :math:`A_i \in \mathbb{R}^{p \times q}`
(a row of ``X``, vectorised in C order) and a measurement :math:`b_i`. The
parameters are the factors :math:`U \in \mathbb{R}^{p \times r}`,
:math:`V \in \mathbb{R}^{q \times r}` and, optionally, an intercept
:math:`c = s\, w_c` with a public scale ``s``, stored flat as
``W = [vec(U), vec(V), w_c]``. The loss of one record is

.. math::

    \ell_i(U, V, c) = \tfrac12 \rho_i^2, \qquad
    \rho_i = \langle A_i, U V^\top \rangle + c - b_i,

whose gradient in ``W`` is :math:`\rho_i\,(A_i V,\; A_i^\top U,\; s)`. The
loss is smooth but not convex, and its gradient is not globally Lipschitz
(it grows with the factors), so :meth:`MatrixSensingLoss.smoothness`
returns None.

Clipped gradient sums
---------------------
The norm of a per-example gradient is
:math:`|\rho_i| \sqrt{\|A_i V\|_F^2 + \|A_i^\top U\|_F^2 + s^2}`, computed
for all examples at once, without a Python loop over examples:

* dense ``X``: :math:`\|A_i V\|_F^2 = \langle A_i^\top A_i, V V^\top\rangle`
  from the per-example Gram matrices (upper triangles, computed once per
  fit, ``n q (q+1)/2`` numbers, no more than ``X`` itself when
  ``q < 2p``), so an iteration costs one matrix-vector product; when the
  Gram matrix would be larger than ``A_i`` (``q = 1``, say), one
  tall-skinny product ``X`` times ``V`` instead (likewise for ``U``);
* sparse ``X``: products with the sparse Kronecker factors
  :math:`I_p \otimes V` and :math:`U \otimes I_q`.

The clipped sum is then :math:`(M V, M^\top U, s \sum_i w_i)` with
:math:`M = \sum_i w_i A_i` and :math:`w_i = \rho_i \min(1, C / \|g_i\|)`:
one more pass over ``X``, no per-example gradient array. ``M``, the
intercept's sum and the Hessian's ``J^T diag(c) J`` are accumulated in
float64 by row blocks whatever ``X``'s dtype (see
:class:`~skdp.losses.LinearDesign`); the rows are read in canonical form.

The clipping norm is never underestimated
-----------------------------------------
The Gram form is a difference of large numbers when ``A_i V`` is small but
``A_i`` and ``V`` are not: rounded, it can come out as 0 (or negative) for a
non-zero gradient, and a norm of 0 would leave the example unclipped.
Every route therefore adds its worst-case rounding error, a public
multiple of ``||A_i||_F^2 ||F||_F^2`` (for the Gram form; of
``||A_i||_F ||F||_F`` for the direct products), so the norm used is an
upper bound on the norm of the gradient the assembled sum contains: an
example is clipped at least as much as needed, never less. The bound is
far below the norm of ordinary gradients (a relative ``1e-13`` or so).
Extreme rows (see :class:`~skdp.losses.LinearDesign`) are handled from
their unit rows, so a huge record is clipped like the row clipped to
``data_norm`` and nothing overflows; the weights are
``sign(rho_i) min(|rho_i|, C / ||(A_i V, A_i^T U, s)||)``, finite for every
finite record.
"""

import numpy as np
import scipy.sparse as sp

from ._batch_sums import BatchSums
from ._factor_norms import FactorGradientNorms
from ._factor_stand_ins import factor_stand_ins
from ._float64_sums import CompensatedSum, float64_total, row_blocks

__all__ = ["MatrixSensingLoss"]

_F64_MAX = float(np.finfo(np.float64).max)
#: ratios and limits below this have lost precision (near the denormal range)
_TINY = 2.0 ** -1000
#: bound on the minimax form's duals, so that their differences stay finite
_DUAL_MAX = _F64_MAX / 4


def _normal(weights):
    """Weights below the normal range (imprecise) set to 0: dropping a term is safe."""
    return np.where(np.abs(weights) >= _TINY, weights, 0.0)


def _require_l2(norm):
    if norm != 2:
        raise ValueError(
            "MatrixSensingLoss clips gradients in the L2 norm only; use delta > 0 "
            f"(Gaussian noise), got norm={norm!r}."
        )


class MatrixSensingLoss(FactorGradientNorms, BatchSums):
    """Factored matrix-sensing squared loss bound to data.

    Parameters
    ----------
    design : LinearDesign
        The measurement matrices as rows of length ``p * q`` (row clipping
        is handled by the design), without an intercept column.
    y : ndarray of shape (n_samples,)
        The measurements.
    shape : tuple of int (p, q)
        Shape of each measurement matrix ``A_i`` (and of ``U V^T``); the
        design must have ``p * q`` features.
    rank : int
        Rank ``r`` of the factorisation: ``U`` is ``p x r``, ``V`` is ``q x r``.
    fit_intercept : bool, default=False
        Whether ``W`` ends with an intercept parameter.
    intercept_scale : float, default=1.0
        Public scale ``s`` of the intercept: ``c = s * W[-1]``, so the
        intercept's gradient is ``s * rho_i`` and its curvature ``s**2``.
        Choosing ``s`` lets one step size suit both the factors and ``c``.
    """

    capabilities = frozenset({"gradient", "gradient_difference", "values", "smooth", "hessian",
                              "minimax"})
    stand_ins = classmethod(factor_stand_ins)

    @classmethod
    def public_constants(cls, row_bound, n_outputs=None, **params):
        """Capabilities, smoothness, value at 0: smooth but not convex, no global bound.

        The gradient grows with the factors, so there is no public
        smoothness constant, and the loss at the start depends on the data.

        Parameters
        ----------
        row_bound : float or None
            Public bound on the norm of a measurement row; unused, since a
            bound on ``A_i`` alone bounds neither the gradient nor the
            curvature of the factored loss.
        n_outputs : int or None
            Number of coefficient columns; unused (one flat vector).
        **params
            The loss's public parameters; unused.

        Returns
        -------
        capabilities : frozenset of str
            The class's ``capabilities``.
        smoothness : None
            No global smoothness constant exists.
        initial_value : None
            The loss at the start depends on the data: not public.
        """
        return cls.capabilities, None, None

    @classmethod
    def hessian_constants(cls, row_bound, n_outputs=None, **params):
        """``(None, None)``: no global bound on the Hessian or its Lipschitz constant.

        Parameters
        ----------
        row_bound : float or None
            Public bound on the norm of a measurement row; unused, since the
            Hessian also grows with the factors and the residuals.
        n_outputs : int or None
            Number of coefficient columns; unused (one flat vector).
        **params
            The loss's public parameters; unused.

        Returns
        -------
        hessian_bound : None
            No public bound on the Frobenius norm of one example's Hessian.
        hessian_lipschitz : None
            No public bound on the Lipschitz constant of that Hessian.
        """
        return None, None

    def __init__(self, design, y, shape, rank, fit_intercept=False, intercept_scale=1.0):
        p, q = shape
        if design.fit_intercept:
            raise ValueError("the design must not add an intercept column; pass "
                             "fit_intercept to MatrixSensingLoss instead.")
        if design.n_features != p * q:
            raise ValueError(
                f"design has {design.n_features} features, expected p * q = {p * q}."
            )
        self.design = design
        self.y = np.asarray(y, dtype=np.float64)
        self.n_samples = design.n_samples
        self.shape = (int(p), int(q))
        self.rank = int(rank)
        self.fit_intercept = bool(fit_intercept)
        self.intercept_scale = float(intercept_scale)
        self._cache = {}

    # -- parameter layout ---------------------------------------------------
    @property
    def n_factor_params(self):
        """Number of entries of U and V together, ``(p + q) * rank``."""
        p, q = self.shape
        return (p + q) * self.rank

    @property
    def coef_shape(self):
        """Shape of the flat parameter vector ``[vec(U), vec(V), intercept]``."""
        return (self.n_factor_params + int(self.fit_intercept),)

    def unpack(self, W):
        """Split ``W`` into ``(U, V, intercept)`` (views; intercept 0.0 if absent).

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters ``[vec(U), vec(V), w_c]`` (C order).

        Returns
        -------
        U : ndarray of shape (p, rank)
            Left factor, a view of ``W``.
        V : ndarray of shape (q, rank)
            Right factor, a view of ``W``.
        intercept : float
            The intercept ``c = s * w_c``; 0.0 without ``fit_intercept``.
        """
        p, q = self.shape
        r = self.rank
        U = W[: p * r].reshape(p, r)
        V = W[p * r: (p + q) * r].reshape(q, r)
        c = self.intercept_scale * float(W[-1]) if self.fit_intercept else 0.0
        return U, V, c

    def pack(self, U, V, intercept=0.0):
        """Inverse of :meth:`unpack`.

        Parameters
        ----------
        U : array-like of shape (p, rank)
            Left factor.
        V : array-like of shape (q, rank)
            Right factor.
        intercept : float, default=0.0
            The intercept ``c``, stored as ``w_c = c / s``; ignored without
            ``fit_intercept``.

        Returns
        -------
        W : ndarray of shape ``coef_shape``, float64
            Flat parameters ``[vec(U), vec(V), w_c]`` (a new array).
        """
        parts = [np.ravel(U), np.ravel(V)]
        if self.fit_intercept:
            parts.append([float(intercept) / self.intercept_scale])
        return np.concatenate(parts).astype(np.float64)

    def linear_coef(self, W):
        """``(vec(U V^T), intercept)``: the coefficients of the linear predictor.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters ``[vec(U), vec(V), w_c]``.

        Returns
        -------
        coef : ndarray of shape (p * q,), float64
            ``U V^T`` flattened in C order, aligned with a row of ``X``.
        intercept : float
            The intercept ``c = s * w_c``; 0.0 without ``fit_intercept``.
        """
        U, V, c = self.unpack(W)
        return (U @ V.T).ravel(), c

    # -- data passes --------------------------------------------------------
    def _y(self, idx):
        return self.y if idx is None else self.y[idx]

    def residuals(self, W, idx=None):
        """``rho_i = <A_i, U V^T> + c - b_i`` (non-private; building block).

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters ``[vec(U), vec(V), w_c]``.
        idx : ndarray of int or None
            Rows to use; None for all.

        Returns
        -------
        ndarray of shape (n_rows,), float64
            The residual of each row used, with the (row-clipped) measurement
            matrix; unbounded and data-dependent, never released as is.
        """
        coef, c = self.linear_coef(W)
        Z = self.design.decision(coef, idx)
        Z += c - self._y(idx)
        return Z

    def _dense_plan(self):
        """For each factor, how ``||A_i V||_F^2`` / ``||A_i^T U||_F^2`` are computed.

        ``'gram'``: from the upper triangles of the per-example Gram matrices
        ``A_i^T A_i`` (q x q) or ``A_i A_i^T`` (p x p), computed once per fit
        and no larger than ``X``; each iteration is then one matrix-vector
        product with them. ``'direct'``: one tall-skinny matrix product with
        ``X`` per iteration (used when the Gram matrix would be larger than
        ``A_i``, e.g. for ``q = 1``).
        """
        p, q = self.shape
        return ("gram" if q + 1 <= 2 * p else "direct",
                "gram" if p + 1 <= 2 * q else "direct")

    def _cached(self, key, make, idx):
        """Per-example array derived from the full ``X`` once; rows ``idx`` of it."""
        if key not in self._cache:
            self._cache[key] = make(np.asarray(self.design.X))
        value = self._cache[key]
        return value if idx is None else value[idx]


    def _assemble(self, weights, U, V, idx, intercept=True):
        """``(M V, M^T U, sum w)`` with ``M = sum_i w_i A_i``, flat like ``W``."""
        p, q = self.shape
        M = self.design.weighted_sum(weights, idx).reshape(p, q)
        grads = [(M @ V).ravel(), (M.T @ U).ravel()]
        if self.fit_intercept:
            grads.append([self.intercept_scale * float64_total(weights) if intercept else 0.0])
        return np.concatenate(grads)

    def clipped_grad_sum(self, W, clip_norm, idx=None, norm=2, duals=None):
        """Sum over examples of per-example gradients clipped to ``clip_norm``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters ``[vec(U), vec(V), w_c]`` at which the gradients
            are taken.
        clip_norm : float
            Per-example gradient norm bound C: the L2 sensitivity of the sum.
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.
        norm : {2}
            Only the L2 norm is supported (the per-example gradient norm has
            no cheap closed form in L1).
        duals : ndarray of shape (n_samples,) or None
            The minimax form's per-record duals ``y`` (all records; rows
            ``idx`` are used): the sum is then of the primal gradients
            ``y_i J_i(W)`` of ``F_i`` (see :meth:`dual_ascent`) instead of
            ``rho_i J_i(W)``. None is the loss itself.

        Returns
        -------
        G : ndarray of shape ``coef_shape``, float64
            Sum over the rows used of the clipped per-example gradients: each
            example's term has L2 norm at most ``clip_norm`` (its norm is
            bounded from above, see :meth:`gradient_norm_bounds`), so one
            example changes the sum by at most ``clip_norm``.
        """
        _require_l2(norm)
        U, V, _ = self.unpack(W)
        rho = self.residuals(W, idx) if duals is None else self._duals(duals, idx)
        bound = self.gradient_norm_bounds(W, idx)
        # sign(rho) min(|rho|, C / bound): never the overflowing |rho| * bound,
        # never inf * 0; a bound of 0 means a zero gradient (A_i = 0, no intercept)
        with np.errstate(divide="ignore", under="ignore"):
            limit = np.where(bound > 0, clip_norm / bound, 0.0)
        # a weight below the normal range (e.g. a limit that lost its
        # precision: a gradient direction beyond 2**1000 C) is dropped
        weights = _normal(np.copysign(np.minimum(np.abs(rho), limit), rho))
        return self._assemble(weights, U, V, idx)

    def clipped_grad_diff_sum(self, W, W_prev, clip_norm, idx=None, norm=2, duals=None,
                              duals_prev=None):
        r"""Sum of per-example gradient differences, each clipped to ``clip_norm``.

        With :math:`J_i(W) = (A_i V, A_i^\top U, s)` and :math:`\Delta = W - W'`,

        .. math::

            \nabla\ell_i(W) - \nabla\ell_i(W') = (\rho_i - \rho_i')\, J_i(W)
            + \rho_i'\, (A_i \Delta_V, A_i^\top \Delta_U, 0),

        so ``|rho_i - rho_i'| ||J_i(W)|| + |rho_i'| ||(A_i D_V, A_i^T D_U)||``
        (each norm an upper bound, see :meth:`gradient_norm_bounds`) bounds
        the difference, and the example is scaled by ``min(1, C / bound)``:
        never clipped less than needed. Both terms shrink with ``Delta``,
        as SPIDER's increments need. The sum is assembled term by term,
        ``(M_1 V, M_1^T U, s sum w_1) + (M_2 D_V, M_2^T D_U, 0)``: two passes
        over ``X``, no per-example gradient array. In the minimax form the
        duals take the residuals' place: the difference of ``y_i J_i(W)``
        and ``y_i' J_i(W')`` has the same two terms with ``rho = y``.

        Parameters
        ----------
        W, W_prev : ndarray of shape ``coef_shape``
            The current and the previous parameters (``W`` and ``W'`` above).
        clip_norm : float
            Per-example bound C on the norm of each difference: the L2
            sensitivity of the sum.
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.
        norm : {2}
            Only the L2 norm is supported.
        duals, duals_prev : ndarray of shape (n_samples,) or None
            The per-record duals at ``W`` and at ``W_prev`` (both or neither),
            see :meth:`clipped_grad_sum`.

        Returns
        -------
        G : ndarray of shape ``coef_shape``, float64
            Sum over the rows used of the clipped differences: one example
            changes it by at most ``clip_norm`` in L2 norm.
        """
        _require_l2(norm)
        if (duals is None) != (duals_prev is None):
            raise ValueError("pass both duals and duals_prev, or neither.")
        W = np.asarray(W, dtype=np.float64)
        step = W - np.asarray(W_prev, dtype=np.float64)
        if duals is None:
            rho_prev = self.residuals(W_prev, idx)
            rho = self.residuals(W, idx)
        else:
            rho_prev, rho = self._duals(duals_prev, idx), self._duals(duals, idx)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            change = rho - rho_prev
            bound = (np.abs(change) * self.gradient_norm_bounds(W, idx)
                     + np.abs(rho_prev) * self.gradient_norm_bounds(step, idx,
                                                                    intercept=False))
            # a bound that is NaN or inf (overflowing rows) keeps nothing, and
            # so does a bound of 0: either the difference is 0, or its norm
            # underflowed, and the weights may still be large
            keep = np.isfinite(bound) & (bound > 0)
            safe = np.where(keep, bound, 1.0)
            clip = keep & (bound > clip_norm)
            # clipped weights C (w / bound): the ratios are at most 1 / ||J||,
            # never the denormal C / bound times a huge w; a ratio below the
            # normal range drops its term (the other term alone is within C)
            r_change = np.where(keep, change, 0.0) / safe
            r_prev = np.where(keep, rho_prev, 0.0) / safe
            w_change = np.where(clip, clip_norm * r_change, np.where(keep, change, 0.0))
            w_prev = np.where(clip, clip_norm * r_prev, np.where(keep, rho_prev, 0.0))
        w_change, w_prev = _normal(w_change), _normal(w_prev)
        U, V, _ = self.unpack(W)
        dU, dV, _ = self.unpack(step)
        return (self._assemble(w_change, U, V, idx)
                + self._assemble(w_prev, dU, dV, idx, intercept=False))

    # -- the minimax form (paper 000, section 5) ------------------------------
    def _duals(self, duals, idx):
        duals = np.asarray(duals, dtype=np.float64)
        if duals.shape != (self.n_samples,):
            raise ValueError(f"duals must have shape ({self.n_samples},), got {duals.shape}.")
        return duals if idx is None else duals[idx]

    def dual_ascent(self, W, duals, step, steps):
        r"""``steps`` gradient-ascent steps of size ``step`` on every record's dual.

        The minimax form of paper 000 (section 5) gives each record a dual
        :math:`y_i \in \mathbb{R}` and

        .. math::

            F_i(W, y_i) = y_i \rho_i(W) - \tfrac12 y_i^2, \qquad
            \max_{y_i} F_i = \ell_i \ \text{at}\ y_i^* = \rho_i,

        :math:`\partial_{y_i} F_i = \rho_i - y_i`: 1-strongly concave and
        1-smooth in ``y_i`` (``Y = R^n``, no projection). With ``W`` fixed,
        ``K`` steps :math:`y_i \leftarrow y_i + \lambda(\rho_i - y_i)` are
        :math:`y_i \leftarrow \rho_i + (1 - \lambda)^K (y_i - \rho_i)`:
        one data pass whatever ``K``. The duals are a function of each
        record's own data and the iterates: private, never released.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Parameters, fixed during the steps (they give the residuals
            ``rho_i``).
        duals : ndarray of shape (n_samples,)
            The current duals ``y_i`` of all records (private).
        step : float
            ``lambda`` in (0, 1].
        steps : int
            ``K >= 1``.

        Returns
        -------
        ndarray of shape (n_samples,)
            The updated duals ``rho_i + (1 - lambda)^K (y_i - rho_i)``, with
            the residuals bounded in absolute value by a quarter of the
            largest float so that they stay finite; private, never released.
        """
        # residuals of huge targets can overflow: bounded duals stay finite
        # (a NaN dual would put a NaN into the released sums)
        with np.errstate(over="ignore", invalid="ignore"):
            rho = np.clip(np.nan_to_num(self.residuals(W), nan=0.0), -_DUAL_MAX, _DUAL_MAX)
        keep = (1.0 - step) ** steps
        return (1.0 - keep) * rho + keep * self._duals(duals, None)

    def grad_sum(self, W, idx=None):
        """Unclipped gradient sum (non-private; for diagnostics and tests).

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters at which the gradients are taken.
        idx : ndarray of int or None
            Rows to use; None for all.

        Returns
        -------
        ndarray of shape ``coef_shape``, float64
            ``sum_i rho_i (A_i V, A_i^T U, s)`` without clipping: one
            example's term has no public norm bound, so it must not be released.
        """
        U, V, _ = self.unpack(W)
        return self._assemble(self.residuals(W, idx), U, V, idx)

    # -- second order ---------------------------------------------------------
    def _hessian_weights(self, W, hessian_clip, idx):
        """``(c_i, rho_i)``: residuals and the factor clipping each example's Hessian.

        One example's Hessian is ``J_i J_i^T + rho_i K_i`` with ``J_i`` its
        gradient direction ``(A_i V, A_i^T U, s)`` and ``K_i = [[0, A_i (x)
        I_r], [A_i^T (x) I_r, 0]]``, whose Frobenius norm is
        ``sqrt(2 r) ||A_i||_F``; so ``||J_i||^2 + |rho_i| sqrt(2 r) ||A_i||_F``
        bounds it, and ``c_i = min(1, C / bound)`` clips it to ``C``.
        """
        rho = self.residuals(W, idx)
        if hessian_clip is None:
            return np.ones_like(rho), rho
        j = self.gradient_norm_bounds(W, idx)
        a = self.design.row_norms(2, idx)
        with np.errstate(over="ignore", invalid="ignore"):
            bound = j * j + np.abs(rho) * np.sqrt(2.0 * self.rank) * a
            # the ``<=`` form sends a NaN bound (inf * 0: an overflowing
            # residual on a zero A_i) to hessian_clip / NaN, then to 0 below
            c = np.where(bound <= hessian_clip, 1.0, hessian_clip / bound)
        c = np.where(np.isfinite(c), c, 0.0)
        return c, rho

    def _curvature_term(self, c, rho, idx):
        """``sum_i c_i rho_i A_i`` (p x q); examples clipped to nothing contribute 0."""
        p, q = self.shape
        w = np.where(c > 0, c * rho, 0.0)
        return self.design.weighted_sum(w, idx).reshape(p, q)

    def hessian_matvec(self, W, Vec, hessian_clip=None, idx=None):
        """``sum_i H_i v`` with each example's Hessian clipped to Frobenius norm ``C``.

        Two passes over ``X``: ``J_i . v = <A_i, v_U V^T + U v_V^T> + s v_c``
        for every example at once, then ``sum_i c_i (J_i . v) J_i`` and the
        curvature term ``(M v_V, M^T v_U)`` with ``M = sum_i c_i rho_i A_i``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters at which the Hessians are taken.
        Vec : ndarray of shape ``coef_shape``
            The direction ``v = [vec(v_U), vec(v_V), v_c]``, laid out like ``W``.
        hessian_clip : float or None
            Frobenius-norm bound ``C`` of each example's Hessian (decided by
            the upper bound ``||J_i||^2 + |rho_i| sqrt(2 r) ||A_i||_F``): the
            sensitivity of the sum. None does not clip (non-private; for tests).
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.

        Returns
        -------
        ndarray of shape ``coef_shape``, float64
            ``sum_i H_i v``: with ``hessian_clip`` each term has norm at most
            ``hessian_clip * ||v||``, the sensitivity of the product.
        """
        U, V, _ = self.unpack(W)
        dU, dV, dc = self.unpack(Vec)
        c, rho = self._hessian_weights(W, hessian_clip, idx)
        jv = self.design.decision((dU @ V.T + U @ dV.T).ravel(), idx)
        if self.fit_intercept:
            jv = jv + dc  # unpack gives s * v_c: J_i's last entry is s
        with np.errstate(invalid="ignore", over="ignore"):
            w = np.where(c > 0, c * jv, 0.0)
        out = self._assemble(w, U, V, idx)
        M = self._curvature_term(c, rho, idx)
        p, q = self.shape
        r = self.rank
        out[: p * r] += (M @ dV).ravel()
        out[p * r: (p + q) * r] += (M.T @ dU).ravel()
        return out

    def _rows(self, idx):
        """The (row-clipped) measurement rows as a dense float64 array."""
        design = self.design
        X = design.X if idx is None else design.X[idx]
        rows = X.toarray() if sp.issparse(X) else np.array(X, dtype=np.float64)
        rows = rows.astype(np.float64, copy=False)
        scale = design.row_scale
        if scale is not None:
            rows *= (scale if idx is None else scale[idx])[:, None]
        extreme = design.extreme_rows(idx)
        if extreme is not None:
            pos, unit, mult = extreme
            unit = unit.toarray() if sp.issparse(unit) else np.asarray(unit)
            rows[pos] = unit * mult[:, None]
        return rows

    def hessian(self, W, hessian_clip=None, idx=None):
        """``sum_i H_i`` as a dense ``(P, P)`` array: ``J^T diag(c) J`` plus the curvature term.

        ``J`` (one row ``J_i`` per example) comes from one batched product of
        the measurement matrices with ``V`` and ``U``: no loop over examples.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters at which the Hessians are taken.
        hessian_clip : float or None
            Frobenius-norm bound ``C`` of each example's Hessian, as in
            :meth:`hessian_matvec`: the sensitivity of the sum. None does not
            clip (non-private; for tests).
        idx : ndarray of int or None
            Rows to use (a sampled batch); None for all.

        Returns
        -------
        H : ndarray of shape (P, P), float64
            Symmetric sum of the (clipped) per-example Hessians,
            ``P = coef_shape[0]``, in the layout of ``W``.
        """
        U, V, _ = self.unpack(W)
        p, q = self.shape
        r = self.rank
        c, rho = self._hessian_weights(W, hessian_clip, idx)
        A = self._rows(idx).reshape(-1, p, q)
        cols = [(A @ V).reshape(len(A), p * r), (A.transpose(0, 2, 1) @ U).reshape(len(A), q * r)]
        if self.fit_intercept:
            cols.append(np.full((len(A), 1), self.intercept_scale))
        J = np.concatenate(cols, axis=1)
        # a row clipped to nothing (c_i = 0, e.g. an overflowing J_i) contributes 0, not 0 * inf
        J[~(c > 0)] = 0.0
        acc = CompensatedSum((J.shape[1], J.shape[1]))
        with np.errstate(over="ignore", invalid="ignore"):
            for block in row_blocks(len(J)):  # float64 partial sums, compensated
                acc.add((J[block] * c[block, None]).T @ J[block])
        H = acc.value()
        K = np.kron(self._curvature_term(c, rho, idx), np.eye(r))
        H[: p * r, p * r: (p + q) * r] += K
        H[p * r: (p + q) * r, : p * r] += K.T
        return H

    def loss_values(self, W, idx=None, loss_clip=None):
        """Per-example losses ``rho_i^2 / 2``, optionally clipped to ``[0, loss_clip]``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters at which the losses are evaluated.
        idx : ndarray of int or None
            Rows to use; None for all.
        loss_clip : float or None
            Upper bound each value is clipped to: a sum of the clipped values
            then has sensitivity ``loss_clip``. None leaves the values
            unclipped (non-private).

        Returns
        -------
        ndarray of shape (n_rows,), float64
            The loss of each row used, in ``[0, loss_clip]`` when
            ``loss_clip`` is given; unclipped, inf (never NaN) for a residual
            whose square overflows.
        """
        values = self.residuals(W, idx)
        with np.errstate(over="ignore"):
            np.square(values, out=values)   # inf, never NaN, for huge rows
        values *= 0.5
        if loss_clip is not None:
            np.minimum(values, loss_clip, out=values)
        return values

    def mean_loss(self, W):
        """Mean loss over all examples (non-private; for diagnostics).

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            Flat parameters at which the loss is evaluated.

        Returns
        -------
        float
            The unclipped mean of :meth:`loss_values` over all examples.
        """
        return float(np.mean(self.loss_values(W)))

    def smoothness(self):
        """None: the factored loss has no global smoothness constant."""
        return None

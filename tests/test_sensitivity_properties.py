"""Every private query holds its declared sensitivity, by property (hypothesis).

For each query :class:`skdp.solvers.PrivateQueries` offers and each loss an
estimator binds, hypothesis generates adversarial data sets and a record, and
the EXACT part of the release (the loss-level value the query adds its noise
to) is computed on the data set and on its neighbour:

* zero-out: the record's slot is kept and it contributes nothing, i.e. the
  same bound loss queried with ``idx`` without the record (``n`` unchanged);
* removal: the row is deleted from the input and a new loss is bound.

The change must be at most the declared sensitivity, in the norm of the
query's mechanism, up to a relative ``RTOL = 1e-9``:

=======================  ===============================  ========================
query (PrivateQueries)   exact value (loss method)        change at most
=======================  ===============================  ========================
noisy_gradient           ``clipped_grad_sum``             ``C`` (L2, or L1: Laplace)
noisy_gradient_diff.     ``clipped_grad_diff_sum``        ``C`` (L2 / L1)
shards().round           ``clipped_grad_sums``            ``C`` over all groups
noisy_hessian_eigenpair  ``hessian``                      ``C_H`` (Frobenius)
  (Lanczos route)        ``hessian_matvec``               ``C_H ||v||`` (L2)
noisy_gram               ``gram_sum``                     ``R**2`` (Frobenius)
noisy_gram_diagonal      ``gram_diagonal_sum``            ``R**2`` (L2)
noisy_mean_loss,         ``clipped_loss_sum`` and         ``C`` (absolute)
above_threshold values   ``ref - clipped_loss_sum(V)``
above_threshold decr.    ``clipped_decrease(W, C)(V[, c])``  ``C`` (or ``c``)
=======================  ===============================  ========================

(``R = hypot(data_norm, c)`` is ``spec.row_bound``; the Frobenius norm of the
Hessian bounds the L2 norm of its upper triangle, on which the noise is drawn.)

The data enter the way a fit reads them: through the estimator's private
``_bind_loss(X, y, spec)`` (scikit-learn's ``validate_data``, the label
encoding and the :class:`~skdp.losses.LinearDesign`), the narrowest path that
runs the same validation and canonicalisation as ``fit`` without a charge or a
solver. The thresholds of the extreme rows come from the private
``skdp.losses._design._EXTREME`` so that the generated magnitudes follow them
(and the broken control of the minimax gradient uses the loss's private
``_assemble``).

Each property can fail: ``test_checker_finds_a_broken_query`` runs the same
generator and checker on each query with its clipping removed (or its
declared sensitivity too small) and requires a violation. Cases the search
found once run every time as ``KNOWN`` examples.

Generation: dense (C and Fortran order), CSR, CSC, COO and non-canonical
sparse input (duplicated column indices, unsorted, explicit zeros) as CSR,
CSC and COO; float32 and float64; row norms from subnormal to the dtype's
largest value (huge and tiny rows, rows just around the extreme thresholds and
around ``data_norm`` times them, rows at the largest float), zero rows, nearly
collinear rows; intercept on and off; ``data_norm`` None or set; public ``W``
up to the magnitude below which the design's passes are stated not to
overflow; Poisson batches (``idx``), including batches that end up empty.

Tiers: the default tier runs ``DEFAULT_EXAMPLES`` examples per query and loss;
``pytest -m slow`` runs ``SLOW_EXAMPLES`` per query and loss and the
accumulation cases (float32, nearly collinear rows, ``n`` up to 2e6). Examples
are derandomised (seeded): the same examples run on every machine.
"""

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, given, reject, settings
from hypothesis import strategies as st

from skdp import DPLinearRegression, DPLinearSVC, DPLogisticRegression, DPMatrixSensing
from skdp.losses._design import _EXTREME

RTOL = 1e-9
DEFAULT_EXAMPLES = 100
SLOW_EXAMPLES = 2000


# --------------------------------------------------------------------------
# Losses, bound the way a fit binds them
# --------------------------------------------------------------------------
#: name -> (estimator class, its parameters); every loss the estimators bind
LOSSES = {
    "logistic": (DPLogisticRegression, {"classes": [0, 1]}),
    "multinomial": (DPLogisticRegression, {"classes": [0, 1, 2]}),
    "hinge": (DPLinearSVC, {"classes": [0, 1], "loss": "hinge"}),
    "squared_hinge": (DPLinearSVC, {"classes": [0, 1], "loss": "squared_hinge"}),
    "smooth_hinge": (DPLinearSVC, {"classes": [0, 1], "loss": "smooth_hinge"}),
    "sigmoid": (DPLinearSVC, {"classes": [0, 1], "loss": "sigmoid"}),
    "hinge_ovr": (DPLinearSVC, {"classes": [0, 1, 2], "loss": "hinge"}),
    "smooth_hinge_ovr": (DPLinearSVC, {"classes": [0, 1, 2], "loss": "smooth_hinge"}),
    "matrix_sensing": (DPMatrixSensing, {}),
    # responses of any magnitude up to the largest float: the clip alone bounds them
    "squared": (DPLinearRegression, {}),
}
SENSING = "matrix_sensing"
SQUARED = "squared"


def n_classes(loss_name):
    return len(LOSSES[loss_name][1].get("classes", ()))


def bind(loss_name, X, y, fit_intercept, data_norm, shape=None, rank=None, smoothing=None):
    """The loss a fit would bind to ``(X, y)`` (private path: ``_bind_loss``)."""
    cls, params = LOSSES[loss_name]
    params = dict(params, fit_intercept=fit_intercept, data_norm=data_norm, epsilon=1.0)
    if loss_name == SENSING:
        params.update(shape=shape, rank=rank)
    elif smoothing is not None and params.get("loss") == "smooth_hinge":
        params["smoothing"] = smoothing
    return cls(**params)._bind_loss(X, y, None)


def capabilities(loss_name):
    """The bound loss class's capabilities (from a tiny fit-free binding)."""
    return _capabilities(loss_name)


@functools.lru_cache(maxsize=None)
def _capabilities(loss_name):
    k = max(2, n_classes(loss_name))
    X = np.eye(k)
    y = np.arange(k) if loss_name != SENSING else np.zeros(k)
    loss = bind(loss_name, X, y, True, None, shape=(k, 1), rank=1)
    return type(loss).capabilities, hasattr(loss, "gram_sum")


# --------------------------------------------------------------------------
# The data: adversarial designs in every input form
# --------------------------------------------------------------------------
FORMATS = ("dense", "dense_f", "csr", "csc", "coo", "csr_dup", "csc_dup", "coo_dup")

_DT = {
    np.dtype(np.float64): {"max_exp": 1023, "min_exp": -1074},
    np.dtype(np.float32): {"max_exp": 127, "min_exp": -149},
}
for _dtype, _info in _DT.items():
    _info["limit_exp"] = int(np.log2(_EXTREME[_dtype]))

#: kinds of rows, by frequency
_ROW_KINDS = ("collinear",) * 4 + ("own",) * 3 + ("zero", "max")
#: relative offsets of a row's norm from a power of two (around thresholds)
_NUDGES = (0.0, 2.0 ** -23, -(2.0 ** -24), 2.0 ** -52, -(2.0 ** -53), 0.25, -0.25)


@st.composite
def _row_norm_exponent(draw, dtype, data_norm_exp):
    info = _DT[np.dtype(dtype)]
    lim = info["limit_exp"]
    ordinary = st.integers(-3, 3)   # three times as likely: where clipping bites
    options = [
        ordinary, ordinary, ordinary,
        st.integers(info["min_exp"], info["max_exp"] - 1),    # anything
        st.sampled_from([lim, -lim]).flatmap(lambda e: st.integers(e - 1, e + 1)),
    ]
    if data_norm_exp is not None:  # where the clipping factor reaches 1 / limit
        top = info["max_exp"] - 1
        for e in (data_norm_exp + lim, data_norm_exp):
            if e - 1 <= top:
                options.append(st.integers(e - 1, min(e + 1, top)))
    return draw(st.one_of(options))


@st.composite
def _design_rows(draw, rng, n, d, dtype, data_norm_exp):
    """``n x d`` rows of one dtype: mixed norms, zero rows, collinear rows, max rows.

    The structure (each row's kind, norm and nudge) is drawn by hypothesis, so
    that it shrinks; the mantissas come from ``rng`` (seeded by a draw).
    """
    info = _DT[np.dtype(dtype)]
    top = float(np.finfo(dtype).max)
    base = rng.uniform(-1.0, 1.0, size=d)
    rows = np.zeros((n, d))
    for r in range(n):
        kind = draw(st.sampled_from(_ROW_KINDS))
        if kind == "zero":
            continue
        if kind == "max":
            rows[r] = np.where(rng.random(d) < 0.5, -top, top) * (rng.random(d) < 0.8)
            continue
        if kind == "collinear":
            direction = base + np.ldexp(rng.uniform(-1.0, 1.0, size=d),
                                        -draw(st.integers(8, 40)))
        else:
            direction = rng.uniform(-1.0, 1.0, size=d) * (rng.random(d) < 0.8)
        length = np.linalg.norm(direction)
        if length == 0:
            continue
        nudge = draw(st.sampled_from(_NUDGES))
        e = min(draw(_row_norm_exponent(dtype, data_norm_exp)), info["max_exp"] - 1)
        rows[r] = np.ldexp(direction / length * (1.0 + nudge), e)
    with np.errstate(over="ignore"):
        return np.clip(rows, -top, top).astype(dtype)


def _triplets(A, dup, rng):
    """(rows, cols, values) of A's non-zeros; with ``dup`` each entry split into copies.

    An entry ``v`` becomes ``k`` entries ``v / k`` in one row (the matrix they
    sum to is A up to rounding), the entries of a row are shuffled, and a few
    explicit zeros are stored: a legal scipy matrix that is not canonical.
    """
    rows, cols = np.nonzero(A)
    vals = A[rows, cols]
    if dup:
        k = rng.integers(1, dup + 1, size=len(vals))
        rows, cols = np.repeat(rows, k), np.repeat(cols, k)
        vals = np.repeat(vals / k.astype(A.dtype), k).astype(A.dtype)
        zeros = rng.integers(0, A.shape[0], size=A.shape[0] // 2 + 1)
        rows = np.concatenate([rows, zeros])
        cols = np.concatenate([cols, rng.integers(0, A.shape[1], size=len(zeros))])
        vals = np.concatenate([vals, np.zeros(len(zeros), dtype=A.dtype)])
        order = np.lexsort((rng.random(len(rows)), rows))  # by row, shuffled within
        rows, cols, vals = rows[order], cols[order], vals[order]
    return rows, cols, vals


def _from_triplets(fmt, rows, cols, vals, shape):
    if fmt.startswith("csr"):
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=shape[0]))])
        return sp.csr_matrix((vals, cols.astype(np.int32), indptr.astype(np.int32)), shape=shape)
    if fmt.startswith("csc"):
        order = np.argsort(cols, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=shape[1]))])
        return sp.csc_matrix((vals[order], rows[order].astype(np.int32),
                              indptr.astype(np.int32)), shape=shape)
    return sp.coo_matrix((vals, (rows, cols)), shape=shape)


class Data:
    """A data set in one input form, and the same form with one record removed."""

    def __init__(self, A, y, fmt, dup, seed):
        self.A, self.y, self.fmt, self.dup, self.seed = A, y, fmt, dup, seed
        self.n = A.shape[0]
        if fmt.startswith("dense"):
            self._trip = None
        else:
            self._trip = _triplets(A, dup if fmt.endswith("_dup") else 0,
                                   np.random.default_rng(seed))

    def X(self, drop=None):
        """The input matrix; with ``drop`` the same input without row ``drop``."""
        A = self.A if drop is None else np.delete(self.A, drop, axis=0)
        if self.fmt == "dense":
            return np.ascontiguousarray(A)
        if self.fmt == "dense_f":
            return np.asfortranarray(A)
        rows, cols, vals = self._trip
        if drop is not None:
            keep = rows != drop
            rows, cols, vals = rows[keep], cols[keep], vals[keep]
            rows = rows - (rows > drop)
        return _from_triplets(self.fmt, rows, cols, vals, A.shape)

    def Y(self, drop=None):
        return self.y if drop is None else np.delete(self.y, drop)

    def __repr__(self):
        return (f"Data(fmt={self.fmt!r}, dup={self.dup}, dtype={self.A.dtype}, "
                f"A={self.A.tolist()!r}, y={self.y.tolist()!r})")


def _powers(low, high):
    return st.integers(low, high).map(lambda e: float(2.0 ** e))


def _coef(rng, shape, max_exp, large):
    """A public coefficient array: moderate entries, with ``large`` some up to 2**max_exp."""
    mant = rng.uniform(-1.0, 1.0, size=shape) * (rng.random(shape) < 0.9)
    exps = rng.integers(-4, 5, size=shape)
    if large:
        big = rng.random(shape) < 0.5
        exps = np.where(big, rng.integers(-30, max_exp + 1, size=shape), exps)
    return np.ldexp(mant, exps)


def _spread(rng, size, high):
    """Values of any sign from 2**-8 to 2**high (targets, duals)."""
    return np.ldexp(rng.uniform(-1.0, 1.0, size=size), rng.integers(-8, high + 1, size=size))


class Case:
    """One generated example: public parameters, the data, the record and the batch."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        items = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if k != "data")
        return f"Case({items}, data={self.data!r})"


@st.composite
def cases(draw, loss_names, query):
    """One example of ``query`` on a loss among ``loss_names``."""
    loss_name = draw(st.sampled_from(loss_names))
    sensing = loss_name == SENSING
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    info = _DT[np.dtype(dtype)]
    fmt = draw(st.sampled_from(FORMATS))
    n = draw(st.integers(2, 9))
    if sensing:
        p, q = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        d, rank = p * q, draw(st.integers(1, min(p, q)))
        shape = (p, q)
    else:
        d, rank, shape = draw(st.integers(1, 4)), None, None
    if query in ("gram", "gram_diagonal"):   # a public row bound is required
        data_norm_exp = draw(st.integers(-8, 8))
    else:
        data_norm_exp = draw(st.one_of(st.none(), st.integers(-8, 8),
                                       st.sampled_from([-100, 100])))
    data_norm = None if data_norm_exp is None else float(2.0 ** data_norm_exp)
    A = draw(_design_rows(rng, n, d, dtype, data_norm_exp))
    if sensing:
        y = _spread(rng, n, 200)
    elif loss_name == SQUARED:  # responses from 2**-8 to the largest float, any sign
        y = _spread(rng, n, 1023)
    else:
        y = rng.integers(0, n_classes(loss_name), size=n)
    dup = draw(st.integers(2, 12)) if fmt.endswith("_dup") else 0
    data = Data(A, y, fmt, dup, int(rng.integers(2 ** 32)))
    record = draw(st.integers(0, n - 1))
    batch = None
    if draw(st.booleans()):   # a Poisson batch holding the record (maybe only it)
        batch = np.flatnonzero((rng.random(n) < draw(st.sampled_from([0.5, 0.0])))
                               | (np.arange(n) == record))
    fit_intercept = draw(st.booleans())
    # W below the magnitude at which the design's passes are stated not to
    # overflow (|x @ w| <= limit ||w|| < the dtype's largest float); the
    # factored loss squares its parameters
    w_exp = info["max_exp"] - info["limit_exp"] - 8
    if sensing:
        w_exp //= 2
        coef_shape = ((shape[0] + shape[1]) * rank + int(fit_intercept),)
    else:
        K = n_classes(loss_name)   # 0 for the regressor: one vector, like 2 classes
        coef_shape = (d + int(fit_intercept),) + (() if K <= 2 else (K,))
    large = draw(st.sampled_from([False, False, True]))
    n_groups = draw(st.integers(1, 3))
    duals = duals_prev = None
    if sensing and draw(st.booleans()):  # the minimax form: per-record duals
        duals, duals_prev = _spread(rng, n, 200), _spread(rng, n, 200)
    return Case(
        loss=loss_name, query=query, dtype=np.dtype(dtype).name, n=n, d=d, shape=shape,
        rank=rank, fit_intercept=fit_intercept, data_norm=data_norm, record=record,
        batch=batch, clip=draw(st.one_of(_powers(-6, 0), _powers(-6, 0), _powers(-16, 16))),
        norm=2 if sensing else draw(st.sampled_from([2, 1])),
        hessian_clip=draw(st.one_of(_powers(-6, 0), _powers(-6, 0), _powers(-16, 16))),
        small_clip=draw(_powers(-8, 0)),
        t=draw(st.sampled_from([0.5, 2.0, -1.0, 1e-3])),
        smoothing=draw(st.sampled_from([None, 1e-3, 10.0])),
        W=_coef(rng, coef_shape, w_exp, large), W_prev=_coef(rng, coef_shape, w_exp, large),
        step=_coef(rng, coef_shape, w_exp, large), direction=_coef(rng, coef_shape, 8, False),
        Ws=_coef(rng, (n_groups,) + coef_shape, w_exp, large),
        groups=rng.integers(0, n_groups, size=n), duals=duals, duals_prev=duals_prev,
        data=data,
    )


# --------------------------------------------------------------------------
# The queries: exact values, their declared sensitivity and its norm
# --------------------------------------------------------------------------
def _flat_norm(delta, ord):
    delta = np.ravel(np.asarray(delta, dtype=np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        if ord == 1:
            return float(np.sum(np.abs(delta)))
        scale = float(np.max(np.abs(delta))) if delta.size else 0.0
        if not scale > 0 or not np.isfinite(scale):
            return scale if delta.size else 0.0
        return scale * float(np.linalg.norm(delta / scale))


def _row_bound(loss, case):
    c = loss.design.intercept_scale if case.fit_intercept else 0.0
    return float(np.hypot(case.data_norm, c))


def q_grad(loss, idx, rec, case):
    extra = {} if rec["duals"] is None else {"duals": rec["duals"]}
    return [(loss.clipped_grad_sum(case.W, case.clip, idx=idx, norm=case.norm, **extra),
             case.clip, case.norm)]


def q_grad_diff(loss, idx, rec, case):
    extra = {}
    if rec["duals"] is not None:
        extra = {"duals": rec["duals"], "duals_prev": rec["duals_prev"]}
    return [(loss.clipped_grad_diff_sum(case.W, case.W_prev, case.clip, idx=idx,
                                        norm=case.norm, **extra), case.clip, case.norm)]


def q_shard_sums(loss, idx, rec, case):
    idx = np.arange(loss.n_samples) if idx is None else idx
    return [(loss.clipped_grad_sums(case.Ws, idx, rec["groups"][idx], case.clip,
                                    norm=case.norm), case.clip, case.norm)]


def q_hessian(loss, idx, rec, case):
    return [(loss.hessian(case.W, case.hessian_clip, idx), case.hessian_clip, 2)]


def q_hessian_matvec(loss, idx, rec, case):
    v = case.direction
    bound = case.hessian_clip * _flat_norm(v, 2)
    return [(loss.hessian_matvec(case.W, v, case.hessian_clip, idx), bound, 2)]


def q_gram(loss, idx, rec, case):
    return [(loss.gram_sum(idx), _row_bound(loss, case) ** 2, 2)]


def q_gram_diagonal(loss, idx, rec, case):
    return [(loss.gram_diagonal_sum(idx), _row_bound(loss, case) ** 2, 2)]


def q_loss_sum(loss, idx, rec, case):
    C = case.clip
    ref = loss.clipped_loss_sum(case.W, C, idx)
    other = loss.clipped_loss_sum(case.W + case.step, C, idx)
    # noisy_mean_loss; above_threshold(clip='values'): ref - sum at the candidate
    return [(ref, C, 1), (ref - other, C, 1)]


def q_decrease(loss, idx, rec, case):
    C, c = case.clip, case.clip * case.small_clip
    decrease = loss.clipped_decrease(case.W, C, idx)
    first = case.W + case.step
    on_line = case.W + case.t * case.step   # reuses the first candidate's pass
    off_line = case.W_prev
    return [(decrease(first), C, 1), (decrease(on_line), C, 1),
            (decrease(on_line, c), c, 1), (decrease(off_line), C, 1)]


#: query -> (exact values, which losses offer it)
QUERIES = {
    "grad": q_grad,
    "grad_diff": q_grad_diff,
    "shard_sums": q_shard_sums,
    "hessian": q_hessian,
    "hessian_matvec": q_hessian_matvec,
    "gram": q_gram,
    "gram_diagonal": q_gram_diagonal,
    "loss_sum": q_loss_sum,
    "decrease": q_decrease,
}


def applies(query, loss_name):
    caps, has_gram = _capabilities(loss_name)
    if query == "shard_sums":
        return "grouped_gradient" in caps
    if query in ("hessian", "hessian_matvec"):
        return "hessian" in caps
    if query in ("gram", "gram_diagonal"):
        return has_gram
    return True


def losses_for(query):
    """The losses that offer ``query``, in the order of ``LOSSES``."""
    return tuple(name for name in LOSSES if applies(query, name))




# --------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------
def neighbour_ratios(case, query_fn=None):
    """Worst ``||change|| / sensitivity`` of the case's query, by relation.

    Returns
    -------
    dict
        ``{"zero-out": ratio, "removal": ratio}``, each the largest over the
        query's outputs (NaN when an output is not finite).
    """
    query_fn = QUERIES[case.query] if query_fn is None else query_fn
    data, i, n = case.data, case.record, case.n

    def make(drop=None):
        return bind(case.loss, data.X(drop), data.Y(drop), case.fit_intercept, case.data_norm,
                    case.shape, case.rank, case.smoothing)

    try:
        full = make()
    except ValueError as exc:
        # input refused before any release (a fit fails validation and costs
        # nothing): duplicates that sum past the largest float
        assert "infinity" in str(exc) or "overflows" in str(exc), exc
        reject()
    rec = {"duals": case.duals, "duals_prev": case.duals_prev, "groups": case.groups}
    base = np.arange(n) if case.batch is None else case.batch
    without = base[base != i]
    with np.errstate(all="ignore"):
        ref = query_fn(full, case.batch, rec, case)
        zero = query_fn(full, without, rec, case)
        removed_loss = make(drop=i)
        removed_idx = None if case.batch is None else without - (without > i)
        removed = query_fn(removed_loss, removed_idx, _removal_rec(rec, i), case)
    out = {}
    for relation, other in (("zero-out", zero), ("removal", removed)):
        worst = 0.0
        for (a, bound, ord), (b, _, _) in zip(ref, other):
            a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
            if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
                worst = float("nan")
                break
            change = _flat_norm(a - b, ord)
            # a sensitivity of 0 (e.g. a product with v = 0) allows no change
            worst = max(worst, change / bound if bound > 0 else (0.0 if change == 0 else np.inf))
        out[relation] = worst
    return out


def _removal_rec(rec, i):
    """Per-record arrays of the data set without record ``i`` (its own entries dropped)."""
    return {key: None if value is None else np.delete(value, i) for key, value in rec.items()}


def assert_within(case, query_fn=None):
    ratios = neighbour_ratios(case, query_fn)
    for relation, ratio in ratios.items():
        assert ratio <= 1.0 + RTOL, (
            f"{case.query} on {case.loss}: under {relation} one record moved the exact "
            f"value by {ratio!r} x its declared sensitivity")


def run_property(query, examples, losses=None, query_fn=None, shrink=True):
    """Check ``query`` on ``examples`` generated cases (losses drawn from ``losses``)."""
    losses = losses_for(query) if losses is None else tuple(losses)
    phases = list(Phase) if shrink else [Phase.explicit, Phase.reuse, Phase.generate]

    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              phases=phases,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=cases(losses, query))
    def prop(case):
        assert_within(case, query_fn)

    prop()


# --------------------------------------------------------------------------
# The default tier and the slow tier
# --------------------------------------------------------------------------
@pytest.mark.parametrize("query", list(QUERIES))
def test_sensitivity(query):
    run_property(query, DEFAULT_EXAMPLES)


def test_sensitivity_of_the_fused_passes_over_all_rows_and_over_a_batch(monkeypatch):
    # blocks of 2 rows: the generated sets (2 to 9 rows) take the fused pass of a
    # dense C-ordered X, over all rows (blocks of X) and over a Poisson batch
    # (blocks of the batch's rows: preconditioned_gd's sampled steps)
    import skdp.losses._design as design_module
    monkeypatch.setattr(design_module, "_block_rows", lambda n_features: 2)
    passes = {"all rows": 0, "batch": 0}
    fused = design_module.LinearDesign.fused_weighted_sum

    def counted_fused(self, W, weights, rows, idx=None):
        passes["all rows" if idx is None else "batch"] += 1
        return fused(self, W, weights, rows, idx)

    monkeypatch.setattr(design_module.LinearDesign, "fused_weighted_sum", counted_fused)
    run_property("grad", DEFAULT_EXAMPLES)
    assert passes["all rows"] > 0 and passes["batch"] > 0, passes


@pytest.mark.slow
@pytest.mark.parametrize("query", list(QUERIES))
def test_sensitivity_slow(query):
    run_property(query, SLOW_EXAMPLES)


# --------------------------------------------------------------------------
# The checker can fail: broken queries are caught
# --------------------------------------------------------------------------
def _unclipped_grad(loss, idx, rec, case):
    extra = {} if rec["duals"] is None else {"duals": rec["duals"]}
    if extra:  # the minimax form's unclipped sum: every record's weight is its dual
        U, V, _ = loss.unpack(case.W)
        duals = rec["duals"] if idx is None else rec["duals"][idx]
        return [(loss._assemble(duals, U, V, idx), case.clip, case.norm)]
    return [(loss.grad_sum(case.W, idx), case.clip, case.norm)]


def _unclipped_grad_diff(loss, idx, rec, case):
    return [(loss.grad_sum(case.W, idx) - loss.grad_sum(case.W_prev, idx), case.clip,
             case.norm)]


def _loose_shard_sums(loss, idx, rec, case):
    (value, bound, ord), = q_shard_sums(loss, idx, rec, case)
    return [(value, bound / 4.0, ord)]   # a declared sensitivity 4 x too small


def _unclipped_hessian(loss, idx, rec, case):
    return [(loss.hessian(case.W, None, idx), case.hessian_clip, 2)]


def _unclipped_hessian_matvec(loss, idx, rec, case):
    v = case.direction
    return [(loss.hessian_matvec(case.W, v, None, idx), case.hessian_clip * _flat_norm(v, 2),
             2)]


def _loose_gram(loss, idx, rec, case):
    (value, bound, ord), = q_gram(loss, idx, rec, case)
    return [(value, bound / 2.0, ord)]   # a declared sensitivity 2 x too small


def _loose_gram_diagonal(loss, idx, rec, case):
    (value, bound, ord), = q_gram_diagonal(loss, idx, rec, case)
    return [(value, bound / 2.0, ord)]


def _unclipped_loss_sum(loss, idx, rec, case):
    return [(float(np.sum(loss.loss_values(case.W, idx))), case.clip, 1)]


def _unclipped_decrease(loss, idx, rec, case):
    V = case.W + case.step
    return [(float(np.sum(loss.loss_values(case.W, idx) - loss.loss_values(V, idx))),
             case.clip, 1)]


#: query -> a broken version (no clipping, or a declared sensitivity too small)
BROKEN = {
    "grad": _unclipped_grad,
    "grad_diff": _unclipped_grad_diff,
    "shard_sums": _loose_shard_sums,
    "hessian": _unclipped_hessian,
    "hessian_matvec": _unclipped_hessian_matvec,
    "gram": _loose_gram,
    "gram_diagonal": _loose_gram_diagonal,
    "loss_sum": _unclipped_loss_sum,
    "decrease": _unclipped_decrease,
}


@pytest.mark.parametrize("query", list(QUERIES))
def test_checker_finds_a_broken_query(query):
    """The same generator and checker find the violation of a broken query.

    Without clipping (or with a declared sensitivity below what one record
    can reach) some generated pair must break the bound: the property is not
    vacuous, and the generator reaches the declared sensitivity.
    """
    assert set(BROKEN) == set(QUERIES)
    with pytest.raises(AssertionError, match="x its declared sensitivity"):
        run_property(query, DEFAULT_EXAMPLES, query_fn=BROKEN[query], shrink=False)


#: examples per query on the squared loss alone (its responses are unbounded)
SQUARED_EXAMPLES = 40


@pytest.mark.parametrize("query", [q for q in QUERIES if SQUARED in losses_for(q)])
def test_squared_loss_sensitivity(query):
    """DPLinearRegression's loss on responses up to the largest float: every record's
    clipped gradient (and Hessian, clipped value) holds the bound, whatever its y."""
    run_property(query, SQUARED_EXAMPLES, losses=(SQUARED,))


@pytest.mark.parametrize("query", ["grad", "loss_sum"])
def test_squared_loss_checker_finds_a_broken_query(query):
    """Unclipped, one response moves the squared loss's sums past the bound."""
    with pytest.raises(AssertionError, match="x its declared sensitivity"):
        run_property(query, SQUARED_EXAMPLES, losses=(SQUARED,), query_fn=BROKEN[query],
                     shrink=False)


# --------------------------------------------------------------------------
# Known adversarial cases, run every time (regressions of what the search found)
# --------------------------------------------------------------------------
class RawCSR:
    """A CSR input given by its arrays (duplicates allowed); removal drops a row's entries."""

    fmt = "csr_raw"

    def __init__(self, data, indices, indptr, n_features, y):
        self.data, self.indices = np.asarray(data), np.asarray(indices, dtype=np.int32)
        self.indptr, self.n_features = np.asarray(indptr, dtype=np.int32), n_features
        self.y = np.asarray(y)

    def X(self, drop=None):
        data, indices, indptr = self.data, self.indices, self.indptr
        if drop is not None:
            lo, hi = indptr[drop], indptr[drop + 1]
            data = np.concatenate([data[:lo], data[hi:]])
            indices = np.concatenate([indices[:lo], indices[hi:]])
            indptr = np.concatenate([indptr[:drop + 1], indptr[drop + 2:] - (hi - lo)])
        return sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, self.n_features))

    def Y(self, drop=None):
        return self.y if drop is None else np.delete(self.y, drop)

    def __repr__(self):
        return (f"RawCSR(data={self.data.tolist()}, indices={self.indices.tolist()}, "
                f"indptr={self.indptr.tolist()})")


def known_case(loss, query, data, n, d, **kw):
    """A hand-written case: the defaults of :func:`cases`' simplest example."""
    K = n_classes(loss)
    p = d + int(kw.get("fit_intercept", False))
    coef_shape = kw.pop("coef_shape", (p,) if K <= 2 else (p, K))
    base = dict(
        loss=loss, query=query, dtype=str(getattr(data, "A", np.zeros(0)).dtype), n=n, d=d,
        shape=None, rank=None, fit_intercept=False, data_norm=None, record=0, batch=None,
        clip=1.0, norm=2, hessian_clip=1.0, small_clip=1.0, t=0.5, smoothing=None,
        W=np.zeros(coef_shape), W_prev=np.zeros(coef_shape), step=np.ones(coef_shape),
        direction=np.ones(coef_shape), Ws=np.zeros((1,) + coef_shape),
        groups=np.zeros(n, dtype=np.int64), duals=None, duals_prev=None, data=data)
    base.update(kw)
    return Case(**base)


#: one column index repeated 50 times in row 0 (scipy sums them: the entry is
#: 5.0), the norm must be that of the summed row (hole (a) of issue 38)
_DUPLICATED = RawCSR([0.1] * 50 + [1.0], [0] * 50 + [0], [0, 50, 51], 1, [0, 0])
_MAX = float(np.finfo(np.float64).max)

KNOWN = {
    "duplicate_column_grad": lambda: known_case("logistic", "grad", _DUPLICATED, 2, 1),
    "duplicate_column_gram": lambda: known_case("logistic", "gram", _DUPLICATED, 2, 1,
                                                data_norm=1.0),
    # a zero record without intercept in a multi-output loss: its residual
    # difference is the zero vector and its clip limit 0 (0 / 0 in clip_rows)
    "zero_rows_multinomial_grad_diff": lambda: known_case(
        "multinomial", "grad_diff", Data(np.zeros((2, 1)), np.array([1, 0]), "dense", 0, 0),
        2, 1, W=np.array([[-0.06, 1.25, 13.2]]), W_prev=np.array([[0.04, -7.96, 0.05]])),
    # a record at the largest float: its Hessian clip limit underflows to 0
    # while its curvature vector is 0 (one-vs-rest)
    "max_row_ovr_hessian": lambda: known_case(
        "smooth_hinge_ovr", "hessian",
        Data(np.array([[0.5, -0.86], [_MAX, _MAX]]), np.array([1, 1]), "dense", 0, 0), 2, 2,
        W=np.array([[10.1, -0.06, 2.86], [1.0, 2.0, -3.0]])),
    # a Poisson batch that holds only the record: without it the batch is empty
    "empty_batch_sensing": lambda: known_case(
        SENSING, "grad",
        Data(np.random.default_rng(0).normal(size=(5, 3)), np.ones(5), "dense", 0, 0), 5, 3,
        shape=(3, 1), rank=1, batch=np.array([0]), coef_shape=(4,), W=np.ones(4)),
    # float32 X @ W rounds a row differently when the rows are gathered (C
    # order) than in the Fortran-ordered input: other records' losses move
    "float32_fortran_decision_loss_sum": lambda: known_case(
        "logistic", "loss_sum",
        Data(np.array([[0.0, -0.349310964345932, 0.13691693544387817, -0.9269496202468872],
                       [0.0, 0.0, 0.0, 0.0],
                       [0.5937718749046326, -0.7019121646881104, 0.0, -0.3933882713317871],
                       [-323293478912.0, -298379051008.0, -513375240192.0, 472141856768.0],
                       [-0.0, 1011790839808.0, 398755790848.0, -161861697536.0]],
                      dtype=np.float32), np.array([0, 0, 0, 0, 1]), "dense_f", 0, 0),
        5, 4, record=4, W=np.array([0.04406535, 1.71490461, 1.26017121, 7.40608833]),
        step=np.array([0.01774386, -0.28073137, -3.34838677, 6.18221967])),
}


@pytest.mark.parametrize("name", list(KNOWN))
def test_known_adversarial_case(name):
    assert_within(KNOWN[name]())


# --------------------------------------------------------------------------
# Accumulation: many nearly collinear float32 rows
# --------------------------------------------------------------------------
def collinear_case(n, fmt, query, batch_rate=None, seed=0):
    """Issue 38's rounding case: ``n`` float32 rows near (1, 1), intercept on, first step.

    Every record's gradient at ``W = 0`` points the same way and is clipped,
    so the sums grow to ``n * clip_norm`` and a float32 accumulation rounds
    by far more than one record's share.
    """
    rng = np.random.default_rng(seed)
    A = (1.0 + 1e-3 * rng.standard_normal((n, 2))).astype(np.float32)
    y = np.ones(n, dtype=np.int64)
    record = n // 2
    batch = None
    if batch_rate is not None:
        batch = np.flatnonzero((rng.random(n) < batch_rate) | (np.arange(n) == record))
    W = np.zeros(3)
    return Case(
        loss="logistic", query=query, dtype="float32", n=n, d=2, shape=None, rank=None,
        fit_intercept=True, data_norm=2.0, record=record, batch=batch, clip=0.5, norm=2,
        hessian_clip=0.05, small_clip=1.0, t=0.5, smoothing=None, W=W,
        W_prev=np.full(3, -0.25), step=np.full(3, 0.5), direction=np.ones(3),
        Ws=np.zeros((2, 3)), groups=np.arange(n) % 2, duals=None, duals_prev=None,
        data=Data(A, y, fmt, 0, seed),
    )


ACCUMULATED = ("grad", "grad_diff", "shard_sums", "hessian_matvec", "gram_diagonal",
               "loss_sum", "decrease")


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("batch_rate", [None, 0.25])
def test_accumulation_grad(fmt, batch_rate):
    """Default tier: 20,000 collinear float32 rows, the clipped gradient sum."""
    assert_within(collinear_case(20_000, fmt, "grad", batch_rate))


@pytest.mark.slow
@pytest.mark.parametrize("n", [200_000, 2_000_000])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("batch_rate", [None, 0.25])
@pytest.mark.parametrize("query", ACCUMULATED)
def test_accumulation_slow(query, batch_rate, fmt, n):
    assert_within(collinear_case(n, fmt, query, batch_rate))


@pytest.mark.parametrize("n, d", [(3001, 13), (40_000, 13), (3002, 20)])
def test_a_record_moves_no_other_rows_predictor_wherever_the_rows_sit(n, d):
    # the squared loss far from 0: an ulp of the predictor (16 at 1e17) is wider
    # than a row's clip window, so a predictor that rounds by the row's position
    # (a BLAS product: removing a record moves the rows behind it) moved the
    # clipped sum by up to 2 C per other row (found at 1.87 C and 1.98 C)
    from skdp import DPLinearRegression
    rng = np.random.default_rng(0)
    C = 1.0
    X = rng.standard_normal((n, d))
    W = np.full(d, 1e17 / np.sqrt(d))          # a public point far out
    y = X @ W                                   # residuals of an ulp of the predictor

    def bound(rows, targets):
        return DPLinearRegression(fit_intercept=False, data_norm=None)._bind_loss(
            rows, targets, None)

    loss = bound(X, y)
    idx = np.flatnonzero(rng.random(n) < 0.5)
    for batch in (idx, None):                   # a Poisson batch, and all rows (removal)
        ref = loss.clipped_grad_sum(W, C, idx=batch)
        rows = np.arange(n) if batch is None else batch
        for i in rows[-12:]:                    # records near the end: the rows behind move
            if batch is None:
                keep = np.arange(n) != i
                other = bound(X[keep], y[keep]).clipped_grad_sum(W, C)
            else:
                other = loss.clipped_grad_sum(W, C, idx=batch[batch != i])
            assert np.linalg.norm(ref - other) <= C * (1 + RTOL), (batch is None, i)

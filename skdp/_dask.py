"""The Dask back end: private fits on data held in a Dask cluster.

A private fit reads its data only through sums over records (clipped
gradient sums, clipped loss sums, Hessian sums), so it can run where the
blocks of a :class:`dask.array.Array` live: each block is validated and bound
to the in-memory loss on its worker once per fit (persisted there), and every
query sends the public point ``W`` to the blocks and brings back one
``coef``-sized partial sum per block (float64, its rows read in canonical
form by the block's :class:`~skdp.losses.LinearDesign`), added accurately on
the driver (:class:`~skdp.losses.CompensatedSum`).
The noise is drawn on the driver from the fit's generator, as in memory, so
a seed gives the same model as the in-memory fit up to the summation order.

Poisson samples are drawn per block, each block from its own seed drawn
from the fit's generator (secret, like every draw of that generator: which
rows a sample holds is never released), so a seed still fixes the run
and no n-sized mask crosses the network.

``dual_averaging``'s nodes are real here: each node's records are joined
into one shard on a worker (:meth:`DaskLoss.node_shards`), and an active
node samples its records and adds its own noise there, from a seed the
driver draws for it; only the noisy messages reach the driver.

Dask is an optional dependency (``pip install ".[dask]"`` from a checkout); nothing here
imports it until a dask collection is passed to ``fit`` or ``predict``.
"""

import numpy as np
import scipy.sparse as sp

from .accounting.release import poisson_positions, release
from .losses import CompensatedSum, LinearDesign, float64_total, one_blas_thread
from .validation import check_array, check_classification_targets  # errors quote no value

__all__ = ["is_dask_collection", "as_dask_arrays", "feature_names", "DaskLoss", "DaskNodes",
           "dask_decision_function"]


def is_dask_collection(X):
    """Whether ``X`` is a dask array, dataframe or series (no import of dask).

    Parameters
    ----------
    X : object
        The input of ``fit`` or ``predict``.

    Returns
    -------
    bool
        True for a dask collection.
    """
    return type(X).__module__.split(".")[0] in ("dask", "dask_expr")


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError as error:  # pragma: no cover - dask is in the test extra
        raise ImportError(
            "Fitting on dask input needs dask: pip install \".[dask]\" from the "
            "skdp checkout (or pip install \"dask[distributed,dataframe]\")."
        ) from error
    return dask, da


def _as_array(X, what):
    _, da = _dask()
    if hasattr(X, "to_dask_array"):  # a dask dataframe or series
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        raise TypeError(f"{what} is a dask collection that is neither an array nor a "
                        f"dataframe: {type(X).__name__}.")
    if any(np.isnan(size) for size in X.chunks[0]):
        X = X.compute_chunk_sizes()  # the number of rows of each block (public)
    return X


def feature_names(X):
    """The column names of a dask dataframe, as scikit-learn records them.

    Parameters
    ----------
    X : dask collection
        The features.

    Returns
    -------
    names : ndarray of object or None
        The columns (public metadata, no value is read) when ``X`` is a
        dataframe whose column names are all strings; None otherwise, as
        scikit-learn's ``feature_names_in_``.

    Raises
    ------
    TypeError
        If the column names mix strings and other types (scikit-learn's rule).
    """
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = np.asarray(columns, dtype=object)
    is_str = np.array([isinstance(name, str) for name in names], dtype=bool)
    if names.size == 0 or not is_str.any():
        return None
    if not is_str.all():
        raise TypeError(
            "Feature names are only supported if all input features have string names; X "
            "has column names of several types. Convert them all to str, e.g. "
            "X.columns = X.columns.astype(str).")
    return names


def as_dask_arrays(X, y=None):
    """Dask arrays with known block sizes, ``y``'s blocks aligned with ``X``'s rows.

    Parameters
    ----------
    X : dask array or dask dataframe of shape (n_samples, n_features)
        The features; the columns are gathered into one block per row block.
    y : dask array or dask series of shape (n_samples,), array-like or None
        The labels; an in-memory ``y`` is split like ``X``.

    Returns
    -------
    X : dask.array.Array
        Two-dimensional, one block per row block.
    y : dask.array.Array or None
        One-dimensional, blocks aligned with ``X``'s.
    """
    _, da = _dask()
    X = _as_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D dask array for X, got {X.ndim} dimensions.")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    if y is None:
        return X, None
    y = _as_array(y, "y") if is_dask_collection(y) else da.from_array(
        np.asarray(y), chunks=(X.chunks[0],))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has shape {y.shape}; pass one "
                         "label per row.")
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk((X.chunks[0],))
    return X, y


def public_labels(y):
    """The set of labels present in ``y`` (small; released as ``classes_``).

    Parameters
    ----------
    y : dask.array.Array of shape (n_samples,)
        The labels.

    Returns
    -------
    ndarray
        The sorted distinct labels.
    """
    _, da = _dask()
    labels = np.asarray(da.unique(y).compute())
    check_classification_targets(labels)
    return labels


def _bind_block(X_block, y_block, recipe):
    """Validate one block and bind the in-memory loss to it (runs on a worker)."""
    X_block = check_array(X_block, accept_sparse="csr", dtype=[np.float64, np.float32],
                          ensure_min_samples=0, estimator=recipe["owner"], input_name="X")
    if X_block.shape[1] != recipe["n_features"]:  # pragma: no cover - rechunked above
        raise ValueError("A block of X has the wrong number of features.")
    # the estimator's target encoding (labels, or bounded responses): target-neutral here
    return _bound_loss(X_block, recipe["targets"](np.asarray(y_block)), recipe)


def _bound_loss(X, targets, recipe):
    """The in-memory loss of the recipe on validated rows and encoded targets."""
    design = LinearDesign(X, recipe["fit_intercept"], recipe["data_norm"],
                          recipe["intercept_scale"])
    return recipe["loss_class"](design, targets, **recipe["loss_params"])


def _rows_of(loss, rows):
    """Some validated rows of a block and their encoded targets (on a worker)."""
    return loss.design.X[rows], loss.y[rows]


def _bind_node(pieces, positions, recipe):
    """A node's shard from its rows' pieces, in the node's order (on a worker)."""
    X = [X for X, _ in pieces]
    X = sp.vstack(X, format="csr") if sp.issparse(X[0]) else np.concatenate(X)
    targets = np.concatenate([t for _, t in pieces])
    order = np.argsort(np.concatenate(positions))  # piece order -> node order
    return _bound_loss(X[order], targets[order], recipe)


def _node_message(loss, W, seed, rate, clip_norm, base):
    """One active node's noisy message: its Poisson sample and noise from its seed (on a worker).

    The same draws as :class:`~skdp.solvers.PrivateShards` makes for a node
    simulated in memory: the sample from the node's stream, then the noise.
    """
    rng = np.random.default_rng(seed)
    idx = poisson_positions(rng, loss.n_samples, rate)
    G = loss.clipped_grad_sum(W, clip_norm, idx=idx, norm=base.sensitivity_norm)
    return release(G, base, clip_norm, rng, what="node message")


def _call(loss, method, args, kwargs, rows):
    """``loss.method(*args, idx=<the block's sampled rows>, **kwargs)`` (on a worker)."""
    return getattr(loss, method)(*args, idx=rows.indices(loss.n_samples), **kwargs)


def _block_reference(loss, W, rows):
    return loss.loss_values(W, rows.indices(loss.n_samples))


def _block_decrease(loss, reference, V, C, rows):
    with np.errstate(invalid="ignore"):
        d = reference - loss.loss_values(V, rows.indices(loss.n_samples))
    d = np.nan_to_num(d, nan=0.0, posinf=C, neginf=-C)
    return float64_total(np.clip(d, -C, C))


def _block_total(parts):
    """The float64 sum of the blocks' partial sums, compensated (see ``losses._float64_sums``)."""
    total = CompensatedSum(np.shape(parts[0]))
    for part in parts:  # a loop over blocks
        total.add(part)
    return total.value()


class _AllRows:
    """Every row of a block."""

    def indices(self, n_rows):
        return None


class _PoissonRows:
    """A block's Poisson sample, drawn from its own (secret) seed wherever it is needed."""

    def __init__(self, seed, rate):
        self.seed, self.rate = int(seed), float(rate)

    def indices(self, n_rows):
        return np.flatnonzero(np.random.default_rng(self.seed).random(n_rows) < self.rate)


class _BlockSample:
    """A Poisson sample of the whole data: one secret seed per block."""

    def __init__(self, seeds, rate):
        self.rows = [_PoissonRows(seed, rate) for seed in seeds]


class _Placement:
    """Objects persisted one per block (or node), and tasks run next to them.

    On a distributed cluster every task on object ``i`` is submitted to the
    worker that holds it: a bound block is never moved to another worker
    (a move costs a transfer of its rows, and the scheduler cannot weigh it:
    work stealing would move blocks between the workers as they idle). With
    a local scheduler the tasks are delayed calls.
    """

    def __init__(self, objects):
        self.objects = list(objects)
        self.client = None
        try:
            from distributed import futures_of, wait
        except ImportError:  # pragma: no cover - dask without distributed
            return
        futures = [futures_of(o) for o in self.objects]
        if self.objects and all(len(f) == 1 for f in futures):
            self.futures = [f[0] for f in futures]
            self.client = self.futures[0].client
            wait(self.futures)  # placed (or failed: the error is raised by gather)
            holders = self.client.who_has(self.futures)
            self.workers = [list(holders.get(f.key, ())) or None for f in self.futures]

    def submit(self, fn, i, *args):
        """``fn(object i, *args)``, where object ``i`` lives: a future or a delayed value."""
        if self.client is None:
            dask, _ = _dask()
            return dask.delayed(fn, pure=False)(self.objects[i], *args)
        if self.workers[i] is None:
            # no holder: the block failed (its error is raised by gather) or was lost
            return self.client.submit(fn, self.futures[i], *args, pure=False)
        # loose restriction: a lost worker's blocks, recomputed elsewhere, still answer
        return self.client.submit(fn, self.futures[i], *args, workers=self.workers[i],
                                  allow_other_workers=True, pure=False)

    def gather(self, tasks):
        """The results of ``tasks`` (from :meth:`submit`), in order."""
        if self.client is None:
            dask, _ = _dask()
            return dask.compute(*tasks)
        return self.client.gather(list(tasks))

    def anywhere(self, fn, *args):
        """``fn(*args)`` on a worker the scheduler chooses; ``args`` may hold tasks of this
        placement (moved to that worker)."""
        if self.client is None:
            dask, _ = _dask()
            return dask.delayed(fn, pure=False)(*args)
        return self.client.submit(fn, *args, pure=False)

    def keep(self, tasks):
        """Keep the results of ``tasks`` where they are computed, as arguments of later tasks."""
        if self.client is None:
            dask, _ = _dask()
            return dask.persist(*tasks)
        return list(tasks)


class DaskLoss:
    """A loss whose rows live in the blocks of a dask array, answered by per-block sums.

    Offers what :class:`~skdp.solvers.PrivateQueries` asks of a loss: the
    clipped gradient (difference) sums, the Hessian and its products, the
    clipped loss sums and decreases, and Poisson row samples. Each answer is
    the sum, in block order, of the in-memory loss's answer on every block.
    Decentralised solvers get their nodes from :meth:`node_shards`.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        The features, one block of columns (see :func:`as_dask_arrays`).
    y : dask.array.Array of shape (n_samples,)
        The targets (labels or responses), blocks aligned with ``X``'s.
    recipe : dict
        How to validate a block and bind the loss to it: the loss class and
        its public parameters, ``fit_intercept``, ``data_norm``, ``targets``
        (a picklable function from a block of y to the targets the loss
        takes: encoded labels, or bounded responses), the number of features
        and the estimator's name (for messages).
    coef_shape : tuple of int
        The shape of the coefficients (public).
    """

    # linear algebra on released values on one BLAS thread (see PrivateQueries)
    one_blas_thread = staticmethod(one_blas_thread)

    def __init__(self, X, y, recipe, coef_shape):
        dask, _ = _dask()
        blocks = [dask.delayed(_bind_block, pure=False)(xb, yb, recipe)
                  for xb, yb in zip(X.to_delayed().ravel(), y.to_delayed().ravel())]
        # validation runs here, on the workers (a bad block raises before the charge)
        self._blocks = _Placement(dask.persist(*blocks))
        self._recipe = recipe
        # wait for the blocks (persist may return at once): a bad block raises here
        sizes = self._blocks.gather([self._blocks.submit(getattr, k, "n_samples")
                                     for k in range(len(blocks))])
        if sum(sizes) != X.shape[0]:  # pragma: no cover - block sizes are metadata
            raise ValueError("The blocks of X hold a different number of rows than X.shape.")
        self.n_samples = int(X.shape[0])
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.coef_shape = tuple(coef_shape)
        self.n_blocks = len(blocks)
        #: the value of the implicit intercept feature in every block's rows (public)
        self.intercept_feature = float(recipe["intercept_scale"])

    def _rows(self, idx):
        if idx is None:
            return [_AllRows()] * self.n_blocks
        if isinstance(idx, _BlockSample):
            return idx.rows
        raise TypeError(  # pragma: no cover - PrivateQueries passes what sample_rows drew
            "The Dask back end takes samples drawn by its own sample_rows.")

    def _sum(self, method, args, idx, **kwargs):
        """The sum, in block order, of ``method`` on every block (with its rows of ``idx``)."""
        parts = self._blocks.gather([self._blocks.submit(_call, k, method, args, kwargs, rows)
                                     for k, rows in enumerate(self._rows(idx))])
        return _block_total(parts)

    def sample_rows(self, rng, rate):
        """A Poisson sample of rate ``rate``: one seed per block, drawn from ``rng``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The fit's generator.
        rate : float
            Sampling probability of each row.

        Returns
        -------
        sample
            An opaque sample, passed back as ``idx``; the rows are drawn on
            the workers from the seeds, never gathered.
        """
        return _BlockSample(rng.integers(0, 2 ** 63, size=self.n_blocks), rate)

    def clipped_grad_sum(self, W, clip_norm, idx=None, norm=2, duals=None):
        """Sum of per-example gradients clipped to ``clip_norm`` (see the in-memory loss).

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            The public point.
        clip_norm : float
            Per-example bound: the sensitivity of the sum.
        idx : sample or None
            A sample from :meth:`sample_rows`; None for all rows.
        norm : {1, 2}
            The clipping norm.
        duals : None
            The minimax form is not available on the Dask back end.

        Returns
        -------
        ndarray of shape ``coef_shape``
            The sum over the blocks of their clipped gradient sums.
        """
        if duals is not None:  # pragma: no cover - refused before the charge
            raise ValueError("Per-record duals are not available on the Dask back end.")
        return self._sum("clipped_grad_sum", (np.asarray(W), float(clip_norm)), idx, norm=norm)

    def clipped_grad_diff_sum(self, W, W_prev, clip_norm, idx=None, norm=2, duals=None):
        """Sum of per-example gradient differences between ``W`` and ``W_prev``, clipped.

        The arguments are those of :meth:`clipped_grad_sum`, plus the previous
        public point ``W_prev``; the result is the sum over the blocks of
        their clipped difference sums (sensitivity ``clip_norm``).
        """
        if duals is not None:  # pragma: no cover - refused before the charge
            raise ValueError("Per-record duals are not available on the Dask back end.")
        return self._sum("clipped_grad_diff_sum",
                         (np.asarray(W), np.asarray(W_prev), float(clip_norm)), idx, norm=norm)

    def node_shards(self, order, offsets):
        """Place each node's records on a worker, as one shard (``dual_averaging``'s nodes).

        Node ``i`` holds the records ``order[offsets[i]:offsets[i + 1]]``, in
        that order. Its rows are taken from the blocks that hold them and
        joined on a worker (the rows move between workers, never through the
        driver); the shard is persisted there for the fit's rounds.

        Parameters
        ----------
        order : ndarray of int of shape (n_samples,)
            The public permutation of the records.
        offsets : ndarray of int of shape (n_nodes + 1,)
            Where each node's records start in ``order``.

        Returns
        -------
        DaskNodes
            The nodes, which run their rounds where their shards live.
        """
        block_of = np.searchsorted(self._offsets, order, side="right") - 1
        shards = []
        for i in range(len(offsets) - 1):  # a loop over nodes (public, few)
            records, blocks = order[offsets[i]:offsets[i + 1]], block_of[offsets[i]:offsets[i + 1]]
            by_block = np.argsort(blocks, kind="stable")
            cuts = np.searchsorted(blocks[by_block], np.arange(self.n_blocks + 1))
            pieces, positions = [], []
            for k in range(self.n_blocks):
                at = by_block[cuts[k]:cuts[k + 1]]
                if at.size:
                    pieces.append(self._blocks.submit(_rows_of, k, records[at] - self._offsets[k]))
                    positions.append(at)
            shards.append(self._blocks.anywhere(_bind_node, pieces, positions, self._recipe))
        return DaskNodes(_Placement(self._blocks.keep(shards)))

    def gram_sum(self):
        """``sum_i x_i x_i^T`` of the implicit rows: the sum over the blocks.

        Returns
        -------
        ndarray of shape (n_params, n_params)
            The Gram matrix (see the in-memory loss).
        """
        return self._sum("gram_sum", (), None)

    def gram_diagonal_sum(self):
        """Diagonal of :meth:`gram_sum`: the sum over the blocks.

        Returns
        -------
        ndarray of shape (n_params,)
            The per-parameter second moments (see the in-memory loss).
        """
        return self._sum("gram_diagonal_sum", (), None)

    def hessian(self, W, hessian_clip=None, idx=None):
        """Sum of the per-example Hessians, each clipped to ``hessian_clip``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            The public point.
        hessian_clip : float or None
            Per-example Frobenius bound.
        idx : sample or None
            A sample from :meth:`sample_rows`; None for all rows.

        Returns
        -------
        ndarray of shape (P, P)
            The sum over the blocks.
        """
        return self._sum("hessian", (np.asarray(W), hessian_clip), idx)

    def hessian_matvec(self, W, V, hessian_clip=None, idx=None):
        """Product of the summed clipped Hessians with the direction ``V``.

        The arguments are those of :meth:`hessian` plus ``V`` (shape
        ``coef_shape``); the result, of shape ``coef_shape``, is the sum over
        the blocks of their Hessian-vector products.
        """
        return self._sum("hessian_matvec", (np.asarray(W), np.asarray(V), hessian_clip), idx)

    def clipped_loss_sum(self, W, loss_clip, idx=None):
        """Sum of the per-example losses clipped to ``[0, loss_clip]``.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            The public point.
        loss_clip : float
            The clip of each value (the sensitivity of the sum).
        idx : sample or None
            A sample from :meth:`sample_rows`; None for all rows.

        Returns
        -------
        float
            The sum over the blocks.
        """
        return float(self._sum("clipped_loss_sum", (np.asarray(W), float(loss_clip)), idx))

    def clipped_decrease(self, W, loss_clip, idx=None):
        """The clipped decrease from ``W``; the reference losses stay on the workers.

        Parameters
        ----------
        W : ndarray of shape ``coef_shape``
            The public reference point.
        loss_clip : float
            ``C``, the bound on each example's decrease.
        idx : sample or None
            A sample from :meth:`sample_rows`; None for all rows.

        Returns
        -------
        decrease : callable
            ``decrease(V)``: the sum over the blocks of
            ``sum_i clip(l_i(W) - l_i(V), -C, C)``; ``decrease(V, c)`` clips
            to ``[-c, c]`` instead.
        """
        rows, blocks = self._rows(idx), self._blocks
        references = blocks.keep([blocks.submit(_block_reference, k, np.asarray(W), r)
                                  for k, r in enumerate(rows)])
        C0 = float(loss_clip)

        def decrease(V, loss_clip=None):
            C = C0 if loss_clip is None else float(loss_clip)
            parts = blocks.gather([
                blocks.submit(_block_decrease, k, ref, np.asarray(V), C, r)
                for k, (ref, r) in enumerate(zip(references, rows))])
            return float(_block_total(parts))

        return decrease


class DaskNodes:
    """``dual_averaging``'s nodes on a Dask cluster: each shard on a worker.

    Built by :meth:`DaskLoss.node_shards`.

    Parameters
    ----------
    shards : _Placement
        The persisted in-memory loss of each node's records, where they live.
    """

    def __init__(self, shards):
        self._shards = shards

    def messages(self, active, coefs, seeds, rates, clip_norm, base):
        """Run one round's active nodes where their shards live; gather their noisy messages.

        Parameters
        ----------
        active : ndarray of int
            The active nodes (public).
        coefs : ndarray of shape ``(len(active),) + coef_shape``
            Their public parameters.
        seeds : ndarray of int
            Each active node's secret stream seed, drawn by the driver from
            the fit's generator.
        rates : ndarray of float
            Each active node's Poisson sampling rate (public).
        clip_norm : float
            Per-example gradient bound (the sensitivity of a node's sum).
        base : Mechanism
            The noise of one message (Gaussian, or Laplace for delta = 0).

        Returns
        -------
        ndarray of shape ``(len(active),) + coef_shape``
            The sum of each node's sampled clipped gradients plus its noise:
            nothing un-noised leaves a worker.
        """
        nodes = self._shards
        messages = nodes.gather([
            nodes.submit(_node_message, int(i), W, int(seed), float(rate), float(clip_norm), base)
            for i, W, seed, rate in zip(active, coefs, seeds, rates)])
        return np.stack(messages)


def _block_scores(X_block, W, fit_intercept, data_norm, binary):
    X_block = check_array(X_block, accept_sparse="csr", dtype=[np.float64, np.float32],
                          ensure_min_samples=0)
    scores = LinearDesign(X_block, fit_intercept, data_norm).decision(W)
    return scores.ravel() if binary else scores


def dask_decision_function(X, W, fit_intercept, data_norm, n_features):
    """Lazy decision scores of a fitted linear model on a dask array.

    Parameters
    ----------
    X : dask array or dask dataframe of shape (n_samples, n_features)
        The samples.
    W : ndarray of shape (n_params, K)
        The released coefficients (intercept last when fitted).
    fit_intercept : bool
        Whether ``W`` has an intercept row.
    data_norm : float or None
        The row-norm bound applied in ``fit``.
    n_features : int
        The number of features seen in ``fit``.

    Returns
    -------
    dask.array.Array
        Shape (n_samples,) for one output, else (n_samples, K); nothing is
        computed until the caller asks.
    """
    X, _ = as_dask_arrays(X)
    if X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but the model was fitted with "
                         f"{n_features} features.")
    binary = W.shape[1] == 1
    if binary:
        return X.map_blocks(_block_scores, W, fit_intercept, data_norm, True,
                            dtype=np.float64, drop_axis=1)
    return X.map_blocks(_block_scores, W, fit_intercept, data_norm, False,
                        dtype=np.float64, chunks=(X.chunks[0], (W.shape[1],)))

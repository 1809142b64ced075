"""The privacy / accuracy table printed by ``python -m skdp``."""

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .accounting import BudgetAccountant
from .datasets import documented_bounds
from .preprocessing import BoundedScaler

__all__ = ["demo_tasks", "run_demo"]

# Public label sets (from the data sets' documentation): with ``classes=``
# the labels present in the training data are not revealed either.
_CLASSES = {"breast_cancer": [0, 1], "digits": list(range(10))}
_LOADERS = {"breast_cancer": load_breast_cancer, "digits": load_digits}
#: The classifiers' public row bound behind the BoundedScaler: its rows lie in
#: [-1, 1]^d (norms up to sqrt(d)), and 2 beat the estimators' default 1 on
#: validation splits of the training parts of six small sets (chosen by
#: ``python benchmarks/small_data.py``; ``benchmarks/results/small_data.md``,
#: "Generalisation check"; ``docs/solvers/small_data.md``).
DEMO_DATA_NORM = 2.0


def _private_pipeline(data, make_estimator):
    """BoundedScaler from the documented feature ranges, then the private estimator.

    The scaler reads no value of the data (its bounds are the documentation's),
    so the pipeline's privacy is the estimator's charged fit.
    """
    bounds = documented_bounds(data)

    def build(eps, seed, accountant):
        est = make_estimator(eps, seed).set_params(accountant=accountant,
                                                   classes=_CLASSES[data])
        return make_pipeline(BoundedScaler(bounds), est)
    return build


def demo_tasks():
    """List the tasks of the demo table, one per (data set, private estimator).

    DPLogisticRegression and DPLinearSVC on breast_cancer and digits (each
    behind a :class:`~skdp.preprocessing.BoundedScaler` built from the
    documented feature ranges, with the public label set passed as
    ``classes`` and the row bound ``data_norm=2``, ``DEMO_DATA_NORM``, chosen
    on validation splits of training data), and DPMatrixSensing on a
    synthetic 10 x 10 rank-2 problem.

    Returns
    -------
    tasks : list of tuple
        One tuple ``(data, name, loader, private, public, metric)`` per row of
        the table: the data set's name, the private estimator's class name,
        ``loader()`` returning ``(X, y)``, ``private(epsilon, seed,
        accountant)`` returning an unfitted private pipeline charged to
        ``accountant``, ``public()`` returning the unfitted non-private
        scikit-learn baseline, and the name of the score (``"accuracy"`` or
        ``"R^2"``).
    """
    from sklearn.svm import LinearSVC

    from .linear_model import DPLogisticRegression
    from .matrix_sensing import DPMatrixSensing, make_matrix_sensing
    from .svm import DPLinearSVC

    tasks = []
    for name, private, public in (
            ("DPLogisticRegression", DPLogisticRegression,
             lambda: LogisticRegression(max_iter=5000)),
            ("DPLinearSVC", DPLinearSVC, LinearSVC)):
        for data, loader in _LOADERS.items():
            tasks.append((
                data, name, lambda loader=loader: loader(return_X_y=True),
                _private_pipeline(data, lambda eps, seed, private=private:
                                  private(epsilon=eps, data_norm=DEMO_DATA_NORM,
                                          random_state=seed)),
                lambda public=public: make_pipeline(StandardScaler(), public()),
                "accuracy"))
    tasks.append(_matrix_sensing_task(DPMatrixSensing, make_matrix_sensing))
    return tasks


def _matrix_sensing_task(DPMatrixSensing, make_matrix_sensing):
    from sklearn.linear_model import Ridge

    def loader():
        X, y, _ = make_matrix_sensing(6000, shape=(10, 10), rank=2, noise=0.01,
                                      random_state=0)
        return X, y

    def private(eps, seed, accountant):
        return DPMatrixSensing(shape=(10, 10), rank=2, epsilon=eps, random_state=seed,
                               accountant=accountant)

    return ("matrix_sensing(10x10, rank 2)", "DPMatrixSensing", loader, private,
            lambda: Ridge(alpha=1e-6), "R^2")


def run_demo(epsilons, n_seeds=5):
    """Fit every task at every epsilon; return the table as Markdown text.

    Each task of :func:`demo_tasks` is split 70 / 30 into training and test
    data (``random_state=0``); the private pipeline is fitted ``n_seeds``
    times per epsilon (seeds ``0, ..., n_seeds - 1``) and its mean test score
    reported next to the score of the non-private baseline. Every fit is
    charged to one fresh, unlimited :class:`~skdp.BudgetAccountant`, whose
    composed total is printed under the table. The data are scikit-learn's
    bundled data sets and synthetic data, so nothing of the caller's is read.

    Parameters
    ----------
    epsilons : sequence of float
        The epsilon of each private fit, one column of the table per value;
        each must be > 0.
    n_seeds : int, default=5
        Private fits per task and epsilon, averaged in each cell.

    Returns
    -------
    table : str
        A Markdown table (one row per task, one column per epsilon plus the
        non-private score) followed by the composed privacy spent by all the
        fits and a paragraph explaining what each column's privacy covers.
    """
    accountant = BudgetAccountant()
    header = "| data | private pipeline | metric | " + " | ".join(
        f"eps={e:g}" for e in epsilons) + " | non-private |"
    lines = [header, "|" + "---|" * (len(epsilons) + 4)]
    for data, name, loader, private, public, metric in demo_tasks():
        X, y = loader()
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
        cells = []
        for eps in epsilons:
            scores = [private(eps, seed, accountant).fit(X_tr, y_tr).score(X_te, y_te)
                      for seed in range(n_seeds)]
            cells.append(f"{np.mean(scores):.3f}")
        base = public().fit(X_tr, y_tr).score(X_te, y_te)
        pipeline = name if metric != "accuracy" else f"BoundedScaler + {name}"
        lines.append(f"| {data} | {pipeline} | {metric} | " + " | ".join(cells)
                     + f" | {base:.3f} |")
    eps_total, delta_total = accountant.spent()
    lines += [
        "",
        f"{len(accountant.spends)} private fits; the accountant composes them to "
        f"(epsilon={eps_total:.2f}, delta={delta_total:.1e}) in total.",
        "Test scores on a 30% hold-out, mean over seeds. Each eps column is the privacy of "
        "the WHOLE pipeline that produced its numbers: BoundedScaler reads no value of the "
        "data (its feature ranges are the data sets' documentation, "
        "skdp.datasets.documented_bounds), the label sets are public (classes=), and the "
        "estimator's fit is the only charged step. The non-private column is scikit-learn's "
        "model behind a StandardScaler, both fitted on the data without privacy.",
    ]
    return "\n".join(lines)

import numpy as np
import matplotlib.pyplot as plt
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from skdp import BudgetAccountant, DPLogisticRegression
from skdp.datasets import documented_bounds
from skdp.preprocessing import BoundedScaler

X, y = load_breast_cancer(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
scaler = BoundedScaler(bounds=documented_bounds("breast_cancer")).fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)


def accuracy(**params):
    return np.mean([
        DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=seed,
                             accountant=BudgetAccountant(epsilon=1.0, delta=1e-5), **params)
        .fit(X_train, y_train).score(X_test, y_test) for seed in range(5)])


values = [0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
fig, ax = plt.subplots()
ax.plot(values, [accuracy(clip_norm=v) for v in values], "o-", label="clip_norm (data_norm=1)")
ax.plot(values, [accuracy(data_norm=v) for v in values], "s-", label="data_norm (clip_norm=1)")
ax.set_xscale("log")
ax.set_xlabel("bound")
ax.set_ylabel("test accuracy, epsilon = 1")
ax.legend()
fig.tight_layout()

import numpy as np
import matplotlib.pyplot as plt

rng = np.random.default_rng(0)
X = rng.standard_normal((300, 2)) * [1.2, 0.6] + [0.4, 0.2]
data_norm = 1.0
norms = np.linalg.norm(X, axis=1)
X_scaled = X * np.minimum(1.0, data_norm / norms)[:, None]

fig, axes = plt.subplots(1, 2, sharex=True, sharey=True)
circle = np.linspace(0, 2 * np.pi, 200)
for ax, data, title in [(axes[0], X, "rows as given"),
                        (axes[1], X_scaled, f"after scaling to data_norm={data_norm}")]:
    ax.scatter(data[:, 0], data[:, 1], s=6, c=norms > data_norm, cmap="coolwarm")
    ax.plot(data_norm * np.cos(circle), data_norm * np.sin(circle), "k--", lw=1)
    ax.set_title(title, fontsize=10)
    ax.set_aspect("equal")
fig.tight_layout()

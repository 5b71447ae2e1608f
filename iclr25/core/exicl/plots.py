"""``constraints.png``: one panel per learned constraint (φ, its mask, the demonstrations)."""

from __future__ import annotations

import numpy as np


def constraints_figure(problem, masks: np.ndarray, phi: np.ndarray):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(masks)
    fig, axes = plt.subplots(1, k, figsize=(2.6 * k, 2.8), squeeze=False)
    spec = problem.spec
    for i, ax in enumerate(axes[0]):
        ax.imshow(phi[i], origin="lower", cmap="RdYlGn", vmin=0, vmax=1)
        ys, xs = np.nonzero(masks[i])
        ax.scatter(xs, ys, marker="s", s=18, c="black", alpha=0.6, label="infeasible")
        wy, wx = np.nonzero(spec.walls)
        ax.scatter(wx, wy, marker="s", s=18, c="grey")
        if problem.hidden is not None:
            hy, hx = np.nonzero(problem.hidden)
            ax.scatter(hx, hy, marker="x", s=10, c="blue", label="hidden")
        for e in problem.demos.episodes:
            ax.plot(e[:, 0], e[:, 1], lw=0.6, c="white", alpha=0.8)
        ax.set_title(f"constraint {i}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("φ(s) (green = allowed), learned mask (black), hidden (blue ×)", fontsize=8)
    return fig

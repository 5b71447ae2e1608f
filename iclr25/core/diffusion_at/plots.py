"""Figures for run directories: samples, loss curves, metric-vs-NFE, mismatch curves.

Every function returns a matplotlib Figure (Agg backend); the caller saves and closes it.
"""

from __future__ import annotations

import numpy as np


def _figure(ncols: int = 1, width: float = 4.5, height: float = 4.0, nrows: int = 1):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, axes.ravel()


def _draw_samples(ax, samples: np.ndarray, kind: str, title: str) -> None:
    ax.set_title(title, fontsize=9)
    if kind == "points":
        ax.scatter(
            samples[:, 0],
            samples[:, 1] if samples.shape[1] > 1 else 0 * samples[:, 0],
            s=2,
            alpha=0.5,
        )
        ax.set_aspect("equal", adjustable="datalim")
        return
    images = np.clip((samples[:64] + 1) / 2, 0, 1)  # (k, C, H, W) in [0, 1]
    k, c, h, w = images.shape
    side = int(np.ceil(np.sqrt(k)))
    sheet = np.ones((side * (h + 1), side * (w + 1), c))
    for i in range(k):
        r, q = divmod(i, side)
        sheet[r * (h + 1) : r * (h + 1) + h, q * (w + 1) : q * (w + 1) + w] = images[i].transpose(
            1, 2, 0
        )
    ax.imshow(sheet[..., 0] if c == 1 else sheet, cmap="gray" if c == 1 else None)
    ax.axis("off")


def samples_figure(panels: list[tuple[str, np.ndarray]], kind: str, ncols: int | None = None):
    """One panel per (title, samples (n, *shape)) pair: scatter for points, grid for images;
    ``ncols`` panels per row (default: all in one row)."""
    ncols = ncols or len(panels)
    nrows = -(-len(panels) // ncols)
    fig, axes = _figure(ncols, width=4.0, nrows=nrows)
    for ax, (title, samples) in zip(axes, panels, strict=False):
        _draw_samples(ax, samples, kind, title)
    for ax in axes[len(panels) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def loss_figure(losses: list[float], title: str = "training loss"):
    fig, (ax,) = _figure(width=6.0, height=3.5)
    steps = np.arange(1, len(losses) + 1)
    ax.plot(steps, losses, lw=0.5, alpha=0.4, label="per step")
    window = max(1, len(losses) // 50)
    if len(losses) >= window:
        smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
        ax.plot(steps[window - 1 :], smooth, lw=1.5, label=f"mean of {window}")
    ax.set_xlabel("optimiser step")
    ax.set_ylabel("loss")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.legend()
    return fig


def metric_vs_nfe_figure(per_nfe: list[dict], metric: str, labels=("baseline", "at")):
    """Mean ± sd over seeds of ``metric`` against NFE, one line per arm."""
    fig, (ax,) = _figure(width=5.5, height=4.0)
    nfe = [row["nfe"] for row in per_nfe]
    for arm in labels:
        mean = np.array([row[arm][metric]["mean"] for row in per_nfe], dtype=float)
        sd = np.array([row[arm][metric]["sd"] or 0.0 for row in per_nfe], dtype=float)
        ax.errorbar(nfe, mean, yerr=sd, marker="o", capsize=3, label=arm)
    ax.set_xscale("log")
    ax.set_xticks(nfe)
    ax.set_xticklabels([str(k) for k in nfe])
    ax.minorticks_off()
    ax.set_xlabel("NFE")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} vs NFE (mean ± sd over seeds)")
    ax.legend()
    return fig


def mismatch_figure(curve: list[dict], metric: str = "mmd", labels=("baseline", "at"), nfe=None):
    """Discrepancy between q(x_t) and p_θ(x_t) along the sampler's steps."""
    fig, (ax,) = _figure(width=6.0, height=4.0)
    steps = [row["step"] for row in curve]
    ticks = [str(row["t"]) if row["t"] >= 0 else "x0" for row in curve]
    for arm in labels:
        mean = np.array([row[arm][metric]["mean"] for row in curve], dtype=float)
        sd = np.array([row[arm][metric]["sd"] or 0.0 for row in curve], dtype=float)
        ax.errorbar(steps, mean, yerr=sd, marker="o", capsize=3, label=arm)
    ax.set_xticks(steps)
    ax.set_xticklabels(ticks, rotation=45, fontsize=8)
    ax.set_xlabel("timestep visited by the sampler")
    ax.set_ylabel(f"{metric}(q(x_t), p_θ(x_t))")
    ax.set_title(f"train/sample mismatch{f' (NFE {nfe})' if nfe else ''}")
    ax.legend()
    return fig

"""Figures of the probe: χ̃ against the noise level per depth (with the controls), C by
tree height at the peak, and the class-change probability with its midpoint."""

from __future__ import annotations


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(6.4, 4.2))


def chi_plot(results: dict):
    fig, ax = _figure()
    levels = results["levels"]
    for d in results["per_depth"]:
        ax.plot(levels, _nan(d["chi_norm"]), marker="o", ms=3, label=f"RHM L={d['depth']}")
    for name, rows in results["controls"].items():
        last = rows[-1]
        ax.plot(levels, _nan(last["chi_norm"]), ls="--", label=f"{name} L={last['depth']}")
    if results["threshold"] is not None:
        ax.axvline(results["threshold"], color="grey", lw=1, label="threshold (DE)")
    ax.set(xlabel=f"noise level ({results['noise']})", ylabel="χ̃ = χ / mean Var σ_i")
    ax.legend(fontsize=8)
    return fig


def corr_plot(results: dict):
    fig, ax = _figure()
    for d in results["per_depth"]:
        heights = range(1, len(d["corr_tree"]) + 1)
        ax.plot(list(heights), d["corr_tree"], marker="o", label=f"L={d['depth']}")
    ax.set(xlabel="height of the common ancestor", ylabel="mean Cov(σ_i, σ_j) at the peak")
    ax.legend(fontsize=8)
    return fig


def class_plot(results: dict):
    fig, ax = _figure()
    for d in results["per_depth"]:
        (line,) = ax.plot(results["levels"], _nan(d["class_change"]), label=f"L={d['depth']}")
        if d["class_midpoint"] is not None:
            ax.axvline(d["class_midpoint"], color=line.get_color(), ls=":", lw=1)
    ax.set(xlabel=f"noise level ({results['noise']})", ylabel="P(class changed)")
    ax.legend(fontsize=8)
    return fig


def _nan(values):
    return [float("nan") if v is None else v for v in values]


def image_plot(results: dict):
    fig, ax = _figure()
    times = [r["t"] for r in results["per_time"]]
    ax.plot(times, _nan([r["chi_norm"] for r in results["per_time"]]), marker="o", label="model")
    if results["control"]:
        ctrl = results["control"]["per_time"]
        ax.plot(times, _nan([r["chi_norm"] for r in ctrl]), ls="--", label="Gaussian control")
    if results["class_midpoint"] is not None:
        ax.axvline(results["class_midpoint"], color="grey", lw=1, label="class midpoint")
    ax.set(xlabel="t / T", ylabel="χ̃")
    ax.legend(fontsize=8)
    return fig

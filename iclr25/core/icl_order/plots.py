"""Figures for ``icl-order`` (matplotlib, Agg): the paper's Fig. 1 view and bar charts."""

from __future__ import annotations

import numpy as np

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def projection_figure(projection: dict, title: str):
    """2-D projection of one draw's orderings: colour = first demo, marker = last demo."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    coords, first, last = projection["coords"], projection["first"], projection["last"]
    cmap = plt.get_cmap("tab10")
    for f in np.unique(first):
        for m_i, lst in enumerate(np.unique(last)):
            sel = (first == f) & (last == lst)
            if sel.any():
                ax.scatter(
                    coords[sel, 0],
                    coords[sel, 1],
                    color=cmap(int(f) % 10),
                    marker=MARKERS[m_i % len(MARKERS)],
                    s=28,
                    alpha=0.85,
                )
    handles = [
        plt.Line2D([], [], color=cmap(int(f) % 10), marker="o", ls="", label=f"first = d{f + 1}")
        for f in np.unique(first)
    ]
    handles += [
        plt.Line2D(
            [],
            [],
            color="grey",
            marker=MARKERS[i % len(MARKERS)],
            ls="",
            label=f"last = d{lst + 1}",
        )
        for i, lst in enumerate(np.unique(last))
    ]
    ax.legend(handles=handles, fontsize=7, loc="best", ncol=2)
    ax.set_title(f"{title} ({projection['method'].upper()})")
    ax.set_xlabel("component 1")
    ax.set_ylabel("component 2")
    return fig


def position_figure(by_position: dict, chance_purity: float):
    """Silhouette and purity of the partition by each demonstration position."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, metric in zip(axes, ("silhouette", "purity"), strict=True):
        values = by_position[metric]
        ax.bar(np.arange(1, len(values) + 1), values, color="tab:blue")
        ax.set_xlabel("demonstration position")
        ax.set_title(metric)
        if metric == "purity":
            ax.axhline(chance_purity, color="grey", ls="--", lw=1, label="1/k")
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def search_figure(comparison: dict, exhaustive_per_query: float, queries: int):
    """Accuracy (with its 95 % interval over queries) against model evaluations per
    query, one point per method."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for method, r in comparison.items():
        low, high = r.get("interval") or (r["accuracy"], r["accuracy"])
        yerr = [[r["accuracy"] - low], [high - r["accuracy"]]]
        ax.errorbar(r["evaluations"] / queries, r["accuracy"], yerr=yerr, fmt="o", capsize=3)
        ax.annotate(
            method,
            (r["evaluations"] / queries, r["accuracy"]),
            fontsize=8,
            xytext=(4, 4),
            textcoords="offset points",
        )
    ax.set_xscale("log")
    ax.set_xlabel("model evaluations per query")
    ax.set_ylabel("accuracy")
    ax.axvline(exhaustive_per_query, color="grey", ls=":", lw=1)
    fig.tight_layout()
    return fig

"""Matplotlib figures of the bandit-replicable results (PNG in a run directory).

Each function takes the JSON ``results`` of a command and returns a figure; matplotlib is
imported inside, with the Agg backend, so importing this module costs nothing.
"""

from __future__ import annotations

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def regret_curves(entries: list[dict], title: str):
    """Mean regret against rounds, one line per algorithm (log-scaled rounds)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for entry in entries:
        curve = entry["regret_curve"]
        if curve["t"]:
            ax.plot(curve["t"], curve["mean_regret"], label=entry["algorithm"])
    ax.set_xscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("mean pseudo-regret")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def trace_frequencies(entries: list[dict], title: str):
    """Share of executions playing the 1st, 2nd, ... most frequent trace (log scale)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for entry in entries:
        shares = entry["top_trace_shares"]
        label = f"{entry['algorithm']} ({entry['distinct_traces']} traces)"
        ax.plot(np.arange(1, len(shares) + 1), shares, marker="o", ms=3, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("trace rank")
    ax.set_ylabel("share of executions")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def sweep_plot(results: dict):
    """log regret against log T, with the fitted slope and the claimed slope."""
    plt = _pyplot()
    rows = results["rows"]
    t = np.array([r["horizon"] for r in rows], float)
    regret = np.array([r["mean_regret"] for r in rows], float)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(t, regret, "o-", label=f"{results['algorithm']} ({results['mode']})")
    anchor = regret[-1] if regret[-1] > 0 else 1.0
    for key, style in (("claimed_exponent", "--"), ("design_exponent", ":")):
        if results.get(key) is not None:
            e = results[key]
            ax.loglog(t, anchor * (t / t[-1]) ** e, style, label=f"{key.split('_')[0]} T^{e:.3f}")
    if results.get("fitted_exponent") is not None:
        ax.set_title(f"fitted exponent {results['fitted_exponent']:.3f}")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("mean pseudo-regret")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def lower_bound_plot(results: dict):
    """regret/T of capped ETC (k-1 traces) and ETC (k traces) against T."""
    plt = _pyplot()
    rows = results["rows"]
    t = [r["horizon"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(
        t,
        [r["capped_worst_regret_over_T"] for r in rows],
        "o-",
        label=f"ETC capped to k-1 = {results['capped_list_size']} traces",
    )
    ax.plot(t, [r["etc_worst_regret_over_T"] for r in rows], "s-", label="ETC (k traces)")
    ax.set_xscale("log")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("worst regret / T over the instance family")
    ax.set_title(f"lower bound, k = {results['k']}, gap = {results['gap']}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig

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
    """log regret against log T: horizons in the fit filled, exploration ones hollow; the
    fitted, claimed and design slopes."""
    plt = _pyplot()
    rows = results["rows"]
    t = np.array([r["horizon"] for r in rows], float)
    regret = np.array([r["mean_regret"] for r in rows], float)
    in_fit = np.array([r["past_exploration"] for r in rows], bool)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.loglog(t, regret, "-", color="C0", alpha=0.5)
    ax.loglog(t[in_fit], regret[in_fit], "o", color="C0", label=f"{results['algorithm']} (fit)")
    if (~in_fit).any():
        ax.loglog(t[~in_fit], regret[~in_fit], "o", mfc="none", color="C0", label="exploring")
    anchor = regret[-1] if regret[-1] > 0 else 1.0
    for key, style in (("claimed_exponent", "--"), ("design_exponent", ":")):
        if results.get(key) is not None:
            e = results[key]
            ax.loglog(t, anchor * (t / t[-1]) ** e, style, label=f"{key.split('_')[0]} T^{e:.3f}")
    if results.get("fitted_exponent") is not None:
        ax.set_title(f"fitted exponent {results['fitted_exponent']:.3f} ({results['mode']})")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("mean pseudo-regret")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def crossing_plot(crossing: dict):
    """Mean regret of ETC and Alg. 1 against T on one instance, with their fits."""
    plt = _pyplot()
    t = np.array(crossing["horizons"], float)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (name, curve) in enumerate(crossing["regret"].items()):
        regret = np.array(curve["mean_regret"], float)
        ax.loglog(t, regret, "o", color=f"C{i}", label=name)
        fit = crossing["fits"][name]
        if fit["fitted_exponent"] is not None:
            grid = np.geomspace(t.min(), t.max() * 100, 50)
            line = np.exp(fit["log_intercept"]) * grid ** fit["fitted_exponent"]
            ax.loglog(grid, line, "--", color=f"C{i}", alpha=0.6)
    cross = crossing["alg1_overtakes_etc"]["horizon"]
    if cross is not None and cross < t.max() * 100:
        ax.axvline(cross, color="grey", ls=":", label=f"crossing T ≈ {cross:.3g}")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("mean pseudo-regret")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def list_size_plot(results: dict):
    """Traces covering 1-δ (one-sided 95% bounds as error bars) against the bound ℓ."""
    plt = _pyplot()
    rows = results["rows"]
    x = np.array([r["value"] for r in rows], float)
    covering = np.array([r["traces_covering_1_minus_delta"] for r in rows], float)
    low = np.array([r["list_size_interval"][0] for r in rows], float)
    high = np.array(
        [np.nan if r["list_size_interval"][1] is None else r["list_size_interval"][1] for r in rows]
    )
    fig, ax = plt.subplots(figsize=(7, 4.5))
    upper = np.where(np.isnan(high), covering, high)
    ax.errorbar(
        x,
        covering,
        yerr=[covering - low, upper - covering],
        fmt="o-",
        capsize=3,
        label="measured: traces covering 1-δ (95% bounds)",
    )
    bound = [r["list_bound"] for r in rows]
    if all(b is not None for b in bound):
        ax.plot(x, np.array(bound, float), "k--", label="bound ℓ")
    prefix = [r.get("prefix_list_bound") for r in rows]
    if all(p is not None for p in prefix):
        ax.plot(x, np.array(prefix, float), "k:", label="prefix bound C(k+B-2, B-1)")
    ax.set_yscale("log")
    ax.set_xlabel(results["over"])
    ax.set_ylabel("list size")
    ax.set_title(f"{results['algorithm']}: list size, T = {results['horizon']:,}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def lower_bound_plot(results: dict):
    """Part B: restricted regret/T (k-1 traces) and each algorithm's own, against T."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, entry in enumerate(results["algorithms"]):
        rows = entry["restricted"]["rows"]
        t = [r["horizon"] for r in rows]
        name = entry["algorithm"]
        ax.plot(
            t,
            [r["restricted_regret_over_T"] for r in rows],
            "o-",
            color=f"C{i}",
            label=f"{name} restricted to k-1 traces",
        )
        ax.plot(
            t,
            [r["unrestricted_regret_over_T"] for r in rows],
            "s:",
            color=f"C{i}",
            label=f"{name} itself",
        )
    ax.axhline(results["pigeonhole_floor"], color="grey", lw=0.8, label="Δ/2 (pigeonhole)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("worst regret / T over the vertex instances")
    ax.set_title(f"lower bound, k = {results['k']}, Δ = {results['gap']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return fig

"""Figures for carbon-report (matplotlib, Agg): the power profile of logs, the stage chart."""

from __future__ import annotations

import numpy as np

MAX_POINTS = 4000  # the power line is averaged down to at most this many points
MAX_SPANS = 1500  # dips drawn as shaded spans (merged across GPUs)


def _downsample(t: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(p) <= MAX_POINTS:
        return t, p
    factor = int(np.ceil(len(p) / MAX_POINTS))
    pad = (-len(p)) % factor
    p2 = np.append(p, np.full(pad, np.nan)).reshape(-1, factor)  # (points, factor)
    t2 = np.append(t, np.full(pad, np.nan)).reshape(-1, factor)
    with np.errstate(invalid="ignore"), _quiet():
        return np.nanmean(t2, axis=1), np.nanmean(p2, axis=1)


class _quiet:
    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def merge_spans(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of (start, duration) intervals as sorted (start, end) pairs."""
    merged: list[list[float]] = []
    for start, duration in sorted(spans):
        end = start + duration
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def power_profile_figure(analysis, low_share: float, high_share: float):
    """Logged total power over time with dips shaded, and time/energy by share of TDP."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_h) = plt.subplots(2, 1, figsize=(10, 7), gridspec_kw={"height_ratios": [3, 2]})
    t0 = analysis.series_t_s[0] if len(analysis.series_t_s) else 0.0
    hours = (analysis.series_t_s - t0) / 3600.0
    t_plot, p_plot = _downsample(hours, analysis.series_power_w / 1000.0)
    ax_t.plot(t_plot, p_plot, lw=0.8, color="tab:blue", label="logged GPU power")
    spans = merge_spans(analysis.dips)
    for a, b in spans[:MAX_SPANS]:
        ax_t.axvspan((a - t0) / 3600.0, (b - t0) / 3600.0, color="tab:red", alpha=0.25, lw=0)
    tdp_kw = analysis.tdp_total_w / 1000.0
    for share, style in ((low_share, ":"), (high_share, "--")):
        ax_t.axhline(share * tdp_kw, color="gray", ls=style, lw=0.8, label=f"{share:.0%} of TDP")
    ax_t.set_xlabel("hours since the first sample")
    ax_t.set_ylabel("power of the logged GPUs (kW)")
    count = analysis.results["profile"]["dips"]["count"]
    title = f"{count} GPU dip(s), {len(spans)} span(s) shaded" if spans else "no dips detected"
    ax_t.set_title(f"GPU power over time ({title})")
    ax_t.legend(loc="lower right", fontsize=8)
    table = analysis.results["profile"]["share_of_tdp"]
    lefts = np.array([row["share_from"] for row in table]) * 100
    ax_h.bar(lefts, [r["time_frac"] for r in table], width=2.4, align="edge", label="time")
    energy = [r["energy_frac"] for r in table]
    ax_h.bar(lefts + 2.4, energy, width=2.4, align="edge", label="energy")
    ax_h.set_xlabel("share of TDP (%), 5% bins; the last bin is above 100%")
    ax_h.set_ylabel("fraction")
    ax_h.legend(fontsize=8)
    fig.tight_layout()
    return fig


def stages_figure(summary: dict):
    """The paper's breakdown: CO2e and water per stage (manufacturing, development, ...)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in summary["breakdown"] if r["stage"] != "total"]
    names = [r["stage"] for r in rows]
    fig, (ax_c, ax_w) = plt.subplots(1, 2, figsize=(10, 4))
    ax_c.bar(names, [r["co2e_kg"] / 1000 for r in rows], color="tab:gray")
    ax_c.set_ylabel("t CO2e")
    ax_w.bar(names, [r["water_l"] / 1000 for r in rows], color="tab:blue")
    ax_w.set_ylabel("kL water")
    for ax in (ax_c, ax_w):
        ax.tick_params(axis="x", rotation=20)
    fig.suptitle("Footprint by stage (manufacturing = embodied share of all runs)")
    fig.tight_layout()
    return fig

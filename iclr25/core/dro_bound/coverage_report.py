"""Aggregating coverage trials: per-cell coverage with intervals, the gap's log-log slope
against −1/2, the verdict on pass conditions fixed here before any run, and the plots.

Cells are (kind, d, n); the control ``empirical`` (ρ = 0) is a kind like the others. The
slope of log(mean gap) against log n is fitted by least squares per (kind, d); its 95 %
interval is the percentile interval of the slope over 1000 bootstrap resamples of the
trials within each cell (a resample whose mean gap is ≤ 0 has no log; when more than 5 %
do, the interval is not reported).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from iclr25.core.dro_bound.coverage import CoverageConfig


def hypothesis(kind: str, entropic: bool) -> str:
    target = "smoothed true risk E_P E_π₀ ℓ" if entropic else "true risk"
    how = {
        "calibrated": "the calibrated radius (c estimated on held-out rows by the bootstrap)",
        "theory": "the theory radius (a stated theorem, every term computed)",
        "user": "the given radius constant c",
    }[kind]
    return (
        f"With {how}, the robust empirical risk of the fitted model is at least its {target} "
        "in ≥ 1 − δ of the trials, and the price of the bound (the gap) shrinks with n like "
        "n^(−1/2)."
    )


CONTROL = "empirical: the same check at ρ = 0 (the ERM model's plain empirical risk), same samples"


def conditions(kind: str) -> dict[str, str]:
    """The pass conditions, fixed before any run, on the primary kind."""
    return {
        "covers": f"{kind} coverage is not significantly below 1 − δ in any cell "
        "(Wilson 95 % upper bound ≥ 1 − δ)",
        "control_fails": "the control covers significantly less than 1 − δ in at least one "
        "cell (Wilson 95 % upper bound < 1 − δ): the check can fail",
        "gap_shrinks": f"for every d, the {kind} gap's log-log slope has its 95 % interval below 0",
    }


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _mean_interval(values: np.ndarray) -> tuple[float, float]:
    from scipy import stats

    if len(values) < 2:
        return (float(values.mean()), float(values.mean()))
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return (float(values.mean() - half), float(values.mean() + half))


def _cell(kind: str, d: int, n: int, rows: list[dict]) -> dict:
    covered = sum(r["covered"] for r in rows)
    uniform = sum(r["uniform"] for r in rows)
    gaps = np.array([r["gap"] for r in rows])
    m = len(rows)
    rhos = np.array([r["rho"] for r in rows], dtype=float)
    constants = [r.get("constant") for r in rows if r.get("constant") is not None]
    thetas = [r["thetas_covered"] for r in rows if r.get("thetas_covered") is not None]
    cell = {
        "kind": kind,
        "d": d,
        "n": n,
        "trials": m,
        "certified_rows": rows[0]["certified_rows"],
        "rho_mean": float(np.mean(rhos[np.isfinite(rhos)])) if np.isfinite(rhos).any() else None,
        "constant_mean": float(np.mean(constants)) if constants else None,
        "coverage": covered / m,
        "coverage_ci": wilson_interval(covered, m),
        "uniform_coverage": uniform / m,
        "uniform_ci": wilson_interval(uniform, m),
        "thetas_covered": float(np.mean(thetas)) if thetas else None,
        "mean_gap": float(gaps.mean()),
        "gap_ci": _mean_interval(gaps),
        "sd_gap": float(gaps.std(ddof=1)) if m > 1 else 0.0,
        "mean_target_risk": float(np.mean([r["target_risk"] for r in rows])),
        "mean_empirical_risk": float(np.mean([r["empirical_risk"] for r in rows])),
    }
    if "covers_plain_true_risk" in rows[0]:
        plain = sum(r["covers_plain_true_risk"] for r in rows)
        cell["plain_true_risk_coverage"] = plain / m
        cell["plain_true_risk_ci"] = wilson_interval(plain, m)
    return cell


def fit_slope(ns, gap_samples: list[np.ndarray], resamples: int = 1000, seed: int = 0) -> dict:
    """Least-squares slope of log(mean gap) on log n, with a bootstrap interval."""
    log_n = np.log(np.asarray(ns, dtype=float))
    means = np.array([g.mean() for g in gap_samples])
    if len(ns) < 2:
        return {"slope": None, "ci": None, "reason": "needs at least 2 sizes"}
    if np.any(means <= 0):
        return {"slope": None, "ci": None, "reason": "a mean gap is ≤ 0 (the bound failed)"}
    slope = float(np.polyfit(log_n, np.log(means), 1)[0])
    rng = np.random.default_rng(seed)
    slopes = []
    for _ in range(resamples):
        boot = np.array([rng.choice(g, size=len(g)).mean() for g in gap_samples])
        if np.all(boot > 0):
            slopes.append(np.polyfit(log_n, np.log(boot), 1)[0])
    if len(slopes) < 0.95 * resamples:
        return {"slope": slope, "ci": None, "reason": "too many resamples with a gap ≤ 0"}
    low, high = np.percentile(slopes, [2.5, 97.5])
    return {
        "slope": slope,
        "ci": (float(low), float(high)),
        "contains_minus_half": bool(low - 1e-9 <= -0.5 <= high + 1e-9),
    }


def summarize(config: CoverageConfig, trials: list[dict]) -> dict:
    """The ``results`` of ``coverage``: cells, slopes, verdict and headline."""
    kinds = [*config.active_kinds, "empirical"]
    by = defaultdict(list)
    for t in trials:
        for kind in kinds:
            by[kind, t["d"], t["n"]].append(t[kind])
    cells = [
        _cell(kind, d, n, by[kind, d, n])
        for kind in kinds
        for d in config.d_grid
        for n in config.n_grid
    ]
    slopes = []
    for kind in kinds:
        for d in config.d_grid:
            gaps = [np.array([r["gap"] for r in by[kind, d, n]]) for n in config.n_grid]
            slopes.append({"kind": kind, "d": d, **fit_slope(config.n_grid, gaps)})
    target = 1.0 - config.delta
    primary = config.active_kinds[0]
    verdict = _verdict(cells, slopes, target, primary)
    return {
        "hypothesis": hypothesis(primary, config.epsilon is not None),
        "control": CONTROL,
        "primary_kind": primary,
        "pass_conditions": conditions(primary),
        "verdict": verdict,
        "target_coverage": target,
        "kinds": list(config.active_kinds),
        "theory": "not applicable: " + config.theory_reason if config.theory_reason else "applies",
        "cells": cells,
        "slopes": slopes,
        "distribution": config.distribution,
        "loss": config.loss_name,
        "entropic": None
        if config.epsilon is None
        else {
            "epsilon": config.epsilon,
            "sigma": config.sigma,
            "samples": config.samples,
            "target": "smoothed true risk E_P E_π₀ ℓ",
        },
        "headline": headline(cells, slopes, verdict, target, primary),
    }


def _verdict(cells: list[dict], slopes: list[dict], target: float, primary: str) -> dict:
    main = [c for c in cells if c["kind"] == primary]
    control = [c for c in cells if c["kind"] == "empirical"]
    main_slopes = [s for s in slopes if s["kind"] == primary]
    met = {
        "covers": all(c["coverage_ci"][1] >= target for c in main),
        "control_fails": any(c["coverage_ci"][1] < target for c in control),
        "gap_shrinks": bool(main_slopes)
        and all(s["ci"] is not None and s["ci"][1] < 0 for s in main_slopes),
    }
    out = {k: ("met" if v else "not met") for k, v in met.items()}
    out["overall"] = "met" if all(met.values()) else "not met"
    out["below_target"] = [
        f"{c['kind']} d={c['d']} n={c['n']}"
        for c in cells
        if c["kind"] != "empirical" and c["coverage_ci"][1] < target
    ]
    return out


def headline(
    cells: list[dict], slopes: list[dict], verdict: dict, target: float, primary: str
) -> str:
    """One line for the docs and the demo, saying plainly when the effect did not appear."""
    main = [c for c in cells if c["kind"] == primary]
    control = [c for c in cells if c["kind"] == "empirical"]
    worst = min(main, key=lambda c: c["coverage"])
    uniform = min(c["uniform_coverage"] for c in main)
    parts = [
        f"{primary} radius: coverage of θ̂ ≥ {worst['coverage']:.2f} in every cell "
        f"(target {target:g}; worst d={worst['d']}, n={worst['n']}), uniformly over the θ "
        f"set ≥ {uniform:.2f}"
    ]
    if control:
        low = min(c["coverage"] for c in control)
        parts.append(f"control (ρ = 0) coverage as low as {low:.2f}")
    shown = [s for s in slopes if s["kind"] == primary and s["slope"] is not None]
    if shown:
        parts.append(
            "gap slope " + ", ".join(f"d={s['d']}: {s['slope']:.2f}" for s in shown) + " (vs −0.5)"
        )
    failed = [k for k, v in verdict.items() if v == "not met" and k != "overall"]
    if failed:
        parts.append(f"NOT MET: {', '.join(failed)}")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------------------
def coverage_plots(results: dict) -> list[tuple[str, object]]:
    """(name, figure): coverage and uniform coverage vs n per kind, and the log-log gap."""
    import matplotlib

    matplotlib.use("Agg")
    return [
        ("coverage_vs_n", _plot_coverage(results, "coverage", "coverage_ci", "θ̂")),
        ("uniform_coverage_vs_n", _plot_coverage(results, "uniform_coverage", "uniform_ci",
                                                 "uniformly over θ̂ and the θ set")),
        ("gap_loglog", _plot_gap(results)),
    ]  # fmt: skip


def _kinds(results: dict) -> list[str]:
    return [*results["kinds"], "empirical"]


def _plot_coverage(results: dict, key: str, ci_key: str, what: str):
    import matplotlib.pyplot as plt

    kinds = _kinds(results)
    fig, axes = plt.subplots(1, len(kinds), figsize=(4 * len(kinds), 3.6), squeeze=False)
    for ax, kind in zip(axes[0], kinds, strict=True):
        cells = [c for c in results["cells"] if c["kind"] == kind]
        for d in sorted({c["d"] for c in cells}):
            row = sorted((c for c in cells if c["d"] == d), key=lambda c: c["n"])
            ns = [c["n"] for c in row]
            cov = [c[key] for c in row]
            err = [[max(c[key] - c[ci_key][0], 0) for c in row],
                   [max(c[ci_key][1] - c[key], 0) for c in row]]  # fmt: skip
            ax.errorbar(ns, cov, yerr=err, marker="o", capsize=3, label=f"d = {d}")
        ax.axhline(results["target_coverage"], color="k", ls="--", lw=1)
        ax.set(xscale="log", xlabel="n", ylim=(-0.02, 1.02), title=kind)
        ax.minorticks_off()
        ax.set_xticks(ns, [str(v) for v in ns])
    axes[0][0].set_ylabel(f"coverage ({what})")
    axes[0][0].legend()
    fig.tight_layout()
    return fig


def _plot_gap(results: dict):
    import matplotlib.pyplot as plt

    kinds = [k for k in _kinds(results) if k != "empirical"]
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.5 * len(kinds), 3.8), squeeze=False)
    slopes = {(s["kind"], s["d"]): s for s in results["slopes"]}
    for ax, kind in zip(axes[0], kinds, strict=True):
        cells = [c for c in results["cells"] if c["kind"] == kind]
        for d in sorted({c["d"] for c in cells}):
            row = sorted((c for c in cells if c["d"] == d), key=lambda c: c["n"])
            ns = np.array([c["n"] for c in row], dtype=float)
            gaps = np.array([c["mean_gap"] for c in row])
            s = slopes.get((kind, d), {})
            label = f"d = {d}" + (f": slope {s['slope']:.2f}" if s.get("slope") is not None else "")
            pos = gaps > 0
            ax.plot(ns[pos], gaps[pos], marker="o", label=label)
            if pos.any():
                ref = gaps[pos][0] * (ns[pos] / ns[pos][0]) ** -0.5
                ax.plot(ns[pos], ref, "k:", lw=0.8)
        ax.set(xscale="log", yscale="log", xlabel="n", title=f"{kind}: mean gap (dotted: n^−1/2)")
        ax.legend(fontsize=8)
    axes[0][0].set_ylabel("mean (robust − true risk)")
    fig.tight_layout()
    return fig

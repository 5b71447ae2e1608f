"""Summaries over seeds and the paired tests behind `compare`'s verdict.

Every variant of a comparison is trained from the same initial weights and the same data
stream for a given seed, and sampled from the same x_T, so the natural test of "variant
better than the baseline" is *paired*: the per-seed differences d_s = m_variant,s −
m_baseline,s of a metric, their mean with a Student-t interval, and the two-sided paired
t-test of E[d] = 0 (``scipy.stats.ttest_rel``'s statistic, computed here so a zero-variance
difference is handled explicitly).

Many (variant, NFE) pairs are tested at once, so the verdict uses Holm's step-down
correction (Holm 1979) over the whole family: it controls the family-wise error rate at
α without assuming independence. Intervals are the unadjusted 95 % t-intervals.

Symbols: ``d`` → d_s, ``n`` → number of seeds, ``alpha`` → the test level α.
"""

from __future__ import annotations

import math

import numpy as np

LEVEL = 0.95  # interval coverage
ALPHA = 0.05  # family-wise error rate of the verdict (Holm)


def mean_sd(values) -> dict:
    """{"mean", "sd"} (sd with ddof 1; NaN when undefined or a value is not finite)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0 or not np.isfinite(arr).all():
        return {"mean": float("nan"), "sd": float("nan")}
    sd = float(arr.std(ddof=1)) if arr.size > 1 else float("nan")
    return {"mean": float(arr.mean()), "sd": sd}


def _t_quantile(n: int, level: float = LEVEL) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, n - 1))


def summary(values) -> dict:
    """{"mean", "sd", "low", "high"}: mean and its t-interval over seeds (NaN if n < 2)."""
    out = mean_sd(values)
    n = len(values)
    if n < 2 or not math.isfinite(out["sd"]):
        return {**out, "low": float("nan"), "high": float("nan")}
    half = _t_quantile(n) * out["sd"] / math.sqrt(n)
    return {**out, "low": out["mean"] - half, "high": out["mean"] + half}


def paired_test(d) -> dict:
    """The paired differences ``d``: summary plus the two-sided t-test p-value of mean 0.

    A difference of zero variance has p = 1 when it is exactly 0 everywhere and p = 0
    otherwise (the t statistic is infinite); fewer than two finite values give p NaN."""
    arr = np.asarray(d, dtype=float)
    out = summary(arr)
    if arr.size < 2 or not np.isfinite(arr).all():
        return {**out, "t": float("nan"), "p_value": float("nan")}
    sd, mean = out["sd"], out["mean"]
    if sd == 0:
        p = 1.0 if mean == 0 else 0.0
        return {**out, "t": math.copysign(math.inf, mean) if mean else 0.0, "p_value": p}
    from scipy import stats

    t = mean / (sd / math.sqrt(arr.size))
    p = float(2 * stats.t.sf(abs(t), arr.size - 1))
    return {**out, "t": float(t), "p_value": p}


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values (same order; NaN stays NaN and is not counted)."""
    index = [i for i, p in enumerate(p_values) if p == p]
    order = sorted(index, key=lambda i: p_values[i])
    m = len(order)
    adjusted = [float("nan")] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted

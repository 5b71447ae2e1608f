"""Regret exponents fitted honestly, and where two regret curves would cross.

**Which horizons enter a fit.** A phase-based algorithm spends its first rounds exploring
uniformly; at such a horizon its regret is T × (mean gap), linear whatever its
asymptotic exponent, and a fit that includes it measures the burn-in. The rule, fixed
before any run: a horizon enters the fit when, on the *easiest* instance simulated at that
horizon (the largest gap of the sweep's grid, or the one instance of a fixed-instance
sweep), the mean regret is at most half of what uniform play would cost there
(:data:`EXPLOITING_SHARE`) — the algorithm has started to act on what it learned. The
exponent is the least-squares slope of log regret on log T over those horizons, with a
95% interval from the t distribution (n - 2 degrees of freedom, so ≥ 3 horizons).

**Crossing.** With fits R_a(T) = A_a T^{e_a} and R_b(T) = A_b T^{e_b}, the curves cross at
T× = exp((log A_a - log A_b) / (e_b - e_a)); :func:`crossing` also gives the range of T×
over the slopes' 95% intervals (each line pivoting about its data's centroid), and says
when no crossing lies ahead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

EXPLOITING_SHARE = 0.5  # a horizon counts once regret ≤ this share of uniform play's
FIT_RULE = (
    "horizons where the mean regret on the easiest simulated instance is at most half "
    "of uniform play's (past the exploration phase)"
)


def exploiting(regret: float, uniform_regret: float) -> bool:
    """The rule of the module docstring for one horizon (True when there is nothing to
    exploit: every arm equal)."""
    return uniform_regret <= 0 or regret <= EXPLOITING_SHARE * uniform_regret


def fit_exponent(horizons: Sequence[int], regrets: Sequence[float]) -> dict:
    """Slope of log regret on log T with a 95% interval (t distribution, n-2 df), plus the
    intercept and the centroid used by :func:`crossing`."""
    from scipy import stats

    t = np.asarray(horizons, np.float64)
    r = np.asarray(regrets, np.float64)
    ok = r > 0
    empty = {
        "fitted_exponent": None,
        "fitted_exponent_ci95": None,
        "log_intercept": None,
        "centroid": None,
    }
    if ok.sum() < 2:
        return empty
    x, y = np.log(t[ok]), np.log(r[ok])
    fit = stats.linregress(x, y)
    out = {
        "fitted_exponent": float(fit.slope),
        "fitted_exponent_ci95": None,
        "log_intercept": float(fit.intercept),
        "centroid": [float(x.mean()), float(y.mean())],
    }
    if ok.sum() >= 3:
        half = stats.t.ppf(0.975, ok.sum() - 2) * fit.stderr
        out["fitted_exponent_ci95"] = [float(fit.slope - half), float(fit.slope + half)]
    return out


def honest_fit(horizons: Sequence[int], regrets: Sequence[float], in_fit: Sequence[bool]):
    """:func:`fit_exponent` over the horizons with ``in_fit`` (the exploration rule), and
    the fit over all horizons beside it."""
    kept = [(t, r) for t, r, keep in zip(horizons, regrets, in_fit, strict=True) if keep]
    fit = fit_exponent([t for t, _ in kept], [r for _, r in kept])
    every = fit_exponent(horizons, regrets)
    return {
        **fit,
        "fit_rule": FIT_RULE,
        "fit_horizons": [int(t) for t, _ in kept],
        "exploration_horizons": [
            int(t) for t, keep in zip(horizons, in_fit, strict=True) if not keep
        ],
        "fitted_exponent_all_horizons": every["fitted_exponent"],
        "fitted_exponent_all_horizons_ci95": every["fitted_exponent_ci95"],
    }


def _cross(log_a: float, slope_a: float, log_b: float, slope_b: float) -> float | None:
    """log T where the lines log R = log_x + slope_x log T meet (None when parallel)."""
    if math.isclose(slope_a, slope_b, rel_tol=0, abs_tol=1e-12):
        return None
    return (log_b - log_a) / (slope_a - slope_b)


def crossing(fit_a: dict, fit_b: dict, beyond: float) -> dict:
    """Where ``a`` (e.g. Alg. 1) overtakes ``b`` (e.g. ETC): the horizon past which the
    fitted R_a < R_b, extrapolated, if ``a`` is still behind at ``beyond`` (the largest
    simulated horizon). Range: the crossing over the slopes' 95% intervals."""
    if fit_a.get("fitted_exponent") is None or fit_b.get("fitted_exponent") is None:
        return {"horizon": None, "range": None, "note": "a fit is missing (too few horizons)"}
    ea, eb = fit_a["fitted_exponent"], fit_b["fitted_exponent"]
    log_t = _cross(fit_a["log_intercept"], ea, fit_b["log_intercept"], eb)
    if ea >= eb:
        note = f"no crossing ahead: the fitted exponent {ea:.3f} is not below {eb:.3f}"
        return {"horizon": None, "range": None, "note": note}
    horizon = math.exp(log_t) if log_t is not None and log_t < 690 else None
    ends = []
    for sa in fit_a.get("fitted_exponent_ci95") or [ea]:
        for sb in fit_b.get("fitted_exponent_ci95") or [eb]:
            ends.append(_pivot_cross(fit_a["centroid"], sa, fit_b["centroid"], sb))
    finite = [e for e in ends if e is not None]
    low = min(finite) if finite else None
    high = max(finite) if len(finite) == len(ends) else None  # None: unbounded
    if horizon is None:
        note = "the fits meet only beyond T = 1e300"
    elif horizon > beyond:
        note = f"extrapolated: the fits meet at T ≈ {horizon:.3g}"
    else:
        note = f"the fits meet at T ≈ {horizon:.3g}, within the simulated horizons"
    return {"horizon": horizon, "range": [low, high], "note": note}


def _pivot_cross(centroid_a, slope_a, centroid_b, slope_b) -> float | None:
    """Crossing of two lines through the fits' centroids with the given slopes: None when
    ``a`` never gets below ``b`` ahead (or only beyond 1e300)."""
    (xa, ya), (xb, yb) = centroid_a, centroid_b
    log_a, log_b = ya - slope_a * xa, yb - slope_b * xb
    if slope_a >= slope_b:
        return None
    log_t = _cross(log_a, slope_a, log_b, slope_b)
    return math.exp(log_t) if log_t is not None and log_t < 690 else None

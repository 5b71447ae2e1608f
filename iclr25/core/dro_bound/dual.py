"""The dual of the robust risk: a one-dimensional convex minimisation over λ ≥ 0.

Strong duality (as used by Le & Malick 2025 and Azizian et al. 2023; Gao & Kleywegt 2016;
Blanchet & Murthy 2019)::

    R_ρ(θ; P_n) = sup_{Q : W_c(P_n, Q) ≤ ρ} E_Q[ℓ(θ; ζ)]
                = inf_{λ ≥ 0}  λρ + (1/n) Σ_i φ_i(λ),   φ_i(λ) = sup_ζ ℓ(θ; ζ) − λ c(ξ_i, ζ).

Code names -> paper symbols: ``lam`` -> λ (the multiplier of the transport budget),
``rho`` -> ρ, ``phi(lam)`` -> (1/n) Σ_i φ_i(λ) (the mean inner sup; +∞ where an inner sup is
unbounded). Each φ_i is a supremum of affine functions of λ, so g(λ) = λρ + Φ(λ) is convex:
a bracket by doubling followed by a bounded Brent search finds its minimum. ``lam_min`` is
where Φ becomes finite (e.g. Lip·‖w‖_* for q = 1 and a Lipschitz linear model).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from iclr25.errors import RunFailure


@dataclass(frozen=True)
class DualSolution:
    value: float  # min_λ λρ + Φ(λ) = the robust risk
    lam: float  # the minimising λ
    lam_min: float  # the lower end of the search (Φ = ∞ below it)
    evaluations: int  # how many times Φ was evaluated


def minimize_dual(
    phi: Callable[[float], float],
    rho: float,
    lam_min: float = 0.0,
    lam_scale: float = 1.0,
    rtol: float = 1e-10,
    max_doublings: int = 80,
) -> DualSolution:
    """Minimise g(λ) = λρ + Φ(λ) over λ ≥ ``lam_min`` (ρ > 0, Φ convex non-increasing)."""
    calls = 0

    def g(lam: float) -> float:
        nonlocal calls
        calls += 1
        value = phi(lam)
        return lam * rho + value if math.isfinite(value) else math.inf

    # 1. a finite starting point at (or just above) lam_min
    lam_scale = lam_scale if lam_scale > 0 and math.isfinite(lam_scale) else 1.0
    lo = max(lam_min, 0.0)
    g_lo = g(lo)
    step = max(lo, lam_scale) * 1e-9
    while not math.isfinite(g_lo) and step < 1e12 * max(lo, lam_scale):
        lo, step = lo + step, step * 10.0
        g_lo = g(lo)
    if not math.isfinite(g_lo):
        raise RunFailure(
            "the robust risk is +∞: every multiplier λ leaves an inner supremum unbounded",
            "use a Lipschitz loss, a larger cost power --q, or a bounded support",
        )
    # 2. bracket the minimum by doubling: stop when g rises again
    prev, g_prev = lo, g_lo
    hi = max(lo * 2.0, lo + lam_scale)
    g_hi = g(hi)
    for _ in range(max_doublings):
        if g_hi >= g_prev:
            break
        prev, g_prev = hi, g_hi
        hi = hi * 2.0
        g_hi = g(hi)
    # 3. bounded Brent search on [lo, hi]; keep the best point seen
    best_lam, best_val = (lo, g_lo) if g_lo <= g_prev else (prev, g_prev)
    if hi > lo:
        res = minimize_scalar(
            g, bounds=(lo, hi), method="bounded", options={"xatol": rtol * max(hi, 1e-300)}
        )
        if res.fun < best_val:
            best_lam, best_val = float(res.x), float(res.fun)
    return DualSolution(float(best_val), float(best_lam), float(lo), calls)


def minimize_dual_by_slope(
    evaluate: Callable[[float], tuple[float, float]],
    rho: float,
    lam_min: float = 0.0,
    lam_scale: float = 1.0,
    rtol: float = 1e-9,
    lam_guess: float | None = None,
) -> DualSolution:
    """Minimise g(λ) = λρ + Φ(λ) from its slope g'(λ) = ρ − mean_i c(ξ_i, ζ*_i(λ)).

    ``evaluate(λ)`` returns (Φ(λ), mean transport cost of the maximisers) — by the envelope
    theorem the cost is −Φ'(λ) (a subgradient where the maximiser is not unique). g' is
    non-decreasing, so the minimiser is the sign change of g', found by Brent's root
    search in a bracket grown by doubling (far fewer Φ evaluations than a value search)."""
    calls = 0
    cache: dict[float, tuple[float, float]] = {}

    def ev(lam: float) -> tuple[float, float]:
        nonlocal calls
        if lam not in cache:
            calls += 1
            cache[lam] = evaluate(lam)
        return cache[lam]

    def slope(lam: float) -> float:
        value, mean_cost = ev(lam)
        return rho - mean_cost if math.isfinite(value) else -math.inf

    lo = max(lam_min, 0.0)
    scale = lam_scale if lam_scale > 0 and math.isfinite(lam_scale) else 1.0
    step = max(lo, scale) * 1e-9
    while not math.isfinite(ev(lo)[0]) and step < 1e12 * max(lo, scale):
        lo, step = lo + step, step * 10.0
    if not math.isfinite(ev(lo)[0]):
        raise RunFailure(
            "the robust risk is +∞: every multiplier λ leaves an inner supremum unbounded",
            "use a Lipschitz loss, a larger cost power --q, or a bounded support",
        )
    if slope(lo) >= 0.0:
        lam = lo
    else:
        lo, hi = _bracket(slope, lo, scale, lam_guess)
        lam = hi if slope(hi) < 0.0 else brentq(slope, lo, hi, xtol=rtol * hi, rtol=1e-12)
    # the root is known to ±xtol: where g has a kink (a jump of g') take the best neighbour
    candidates = [lam] + [c for c in (lam * (1 - 2 * rtol), lam * (1 + 2 * rtol)) if c >= lo]
    values = [c * rho + ev(c)[0] for c in candidates]
    best = int(np.argmin(values))
    return DualSolution(float(values[best]), float(candidates[best]), float(lo), calls)


def _bracket(
    slope: Callable[[float], float], lo: float, scale: float, guess: float | None
) -> tuple[float, float]:
    """[a, b] with slope(a) < 0 ≤ slope(b), starting from a guess (e.g. the last λ*)."""
    if guess is not None and guess > lo and math.isfinite(guess):
        if slope(guess) < 0.0:
            lo, hi = guess, guess * 2.0
        else:
            hi, trial = guess, guess / 2.0
            while trial > lo and slope(trial) >= 0.0:
                hi, trial = trial, trial / 2.0
            return (max(trial, lo), hi)
    else:
        hi = max(2.0 * lo, lo + scale)
    while slope(hi) < 0.0 and hi < 1e15 * scale:
        lo, hi = hi, hi * 2.0
    return lo, hi


def required_radius(
    risk_at: Callable[[float], float], target: float, rho_hi: float, iterations: int = 60
) -> float:
    """Smallest ρ ≥ 0 with R_ρ ≥ ``target`` (R_ρ is non-decreasing and concave in ρ).

    Bisection on [0, ρ_hi], growing ρ_hi first; returns ∞ when no radius reaches the target
    (a bounded loss can cap the robust risk below it)."""
    if risk_at(0.0) >= target:
        return 0.0
    hi = rho_hi
    for _ in range(60):
        if risk_at(hi) >= target:
            break
        hi *= 2.0
    else:
        return math.inf
    lo = 0.0
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        if risk_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi

"""Exact inner suprema and robust risks of linear models under norm costs.

For f_θ(x) = wᵀx + b, cost ‖x − x'‖_p^q + κ·1{y ≠ y'} and unbounded feature support, the
worst move of length t shifts the loss scalar by s = a·t with a = ‖w‖_* (Hölder), so

    φ_i(λ) = max( sup_{s≥0} ψ(u_i, s) − λ (s/a)^q ,                 (label kept)
                  sup_{s≥0} ψ(−u_i, s) − λ (s/a)^q − λκ )           (label switched)

with u_i the margin or residual and ψ = :meth:`Loss.worst_shift` (Shafieezadeh-Abadeh,
Mohajerin Esfahani & Kuhn 2015; Blanchet, Kang & Murthy 2019 for q = 2).

Exact cases (no numerical search):

- q = 1, convex loss whose slope bound Lip is attained (logistic, hinge, absolute, Huber):
  φ_i(λ) = L(u_i) for λ ≥ Lip·a, +∞ below; with κ finite, max(L(z_i), L(−z_i) − κλ).
  So R_ρ = E_n ℓ + ρ·Lip·‖w‖_* for κ = ∞ (:func:`lipschitz_formula`), and for finite κ the
  dual is piecewise linear in λ and :func:`piecewise_linear_dual` minimises it exactly.
- q = 1, ramp loss: φ_i(λ) = max(ramp(z), 1 − (λ/a)·max(z, 0)).
- q = 2, squared loss: φ_i(λ) = r²·μ/(μ − 1), μ = λ/a² > 1, so R_ρ = (√(E r²) + √ρ·a)².

Other (loss, q) pairs use a one-dimensional global search per sample (:func:`sup_1d`):
a grid on [0, s_max] (s_max from the Lipschitz bound) refined by golden sections.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.dual import minimize_dual_by_slope
from iclr25.core.dro_bound.losses import Loss
from iclr25.errors import UsageError

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class InnerSup:
    values: np.ndarray  # (n,) φ_i(λ)
    shift: np.ndarray  # (n,) the maximising s (scalar shift; feature move t = s / a)
    flipped: np.ndarray  # (n,) bool: the worst case switches the label


@dataclass(frozen=True)
class RobustRisk:
    value: float  # R_ρ(θ; P_n)
    empirical: float  # E_{P_n} ℓ(θ; ξ)
    lam: float  # the optimal multiplier λ*
    method: str  # which exact path computed it
    mean_transport: float = 0.0  # mean feature move t of the worst case (at λ*)
    flipped_fraction: float = 0.0  # share of worst-case points with a switched label


def lipschitz_formula(empirical: float, rho: float, lipschitz: float, dual_norm: float) -> float:
    """E_n ℓ + ρ·Lip·‖w‖_* (exact for q = 1, κ = ∞ and slope-attaining losses, else an
    upper bound for any Lip-Lipschitz loss by Kantorovich–Rubinstein duality)."""
    if dual_norm == 0.0:
        return float(empirical)
    return float(empirical + rho * lipschitz * dual_norm)


def _closed_form_kind(loss: Loss, q: float) -> str | None:
    if q == 1.0 and loss.convex and loss.slope_attained:
        return "lipschitz"
    if q == 1.0 and loss.name == "ramp":
        return "ramp"
    if q == 2.0 and loss.name == "squared":
        return "squared-q2"
    return None


def _lambda_threshold(loss: Loss, a: float, q: float) -> float:
    """The λ below which some φ_i is +∞ (0 when every φ_i is finite for λ > 0)."""
    if a == 0.0:
        return 0.0
    if q == 1.0:
        return loss.lipschitz * a if loss.name != "ramp" else 0.0
    if loss.name == "squared":
        return a * a if q == 2.0 else (0.0 if q > 2.0 else math.inf)
    return 0.0


def sup_1d(loss: Loss, u: np.ndarray, mu: float, q: float, grid: int = 64, refine: int = 24):
    """max_{s ≥ 0} ψ(u, s) − μ s^q per sample, by grid + golden-section refinement.

    Returns (values (n,), argmax s (n,)). Needs a bounded search interval: for a
    Lip-Lipschitz loss the maximiser satisfies μ s^(q−1) ≤ Lip."""
    u = np.asarray(u, dtype=np.float64)
    if loss.name == "squared":
        s_max = max((4.0 / mu) ** (1.0 / (q - 2.0)), float(np.max((4.0 * u * u / mu) ** (1 / q))))
    else:
        s_max = (loss.lipschitz / mu) ** (1.0 / (q - 1.0))
    s_max = max(s_max, 1e-12)
    # 1. grid: uniform on [0, s_max] plus a geometric part near 0 (shape (G,))
    frac = np.concatenate([np.linspace(0.0, 1.0, grid), np.geomspace(1e-6, 1.0 / grid, 16)])
    s_grid = np.sort(frac) * s_max
    f = loss.worst_shift(u[:, None], s_grid[None, :]) - mu * s_grid[None, :] ** q  # (n, G)
    k = np.argmax(f, axis=1)
    lo = s_grid[np.maximum(k - 1, 0)]
    hi = s_grid[np.minimum(k + 1, len(s_grid) - 1)]

    # 2. golden sections inside the best grid cell (vectorised over samples)
    def obj(s: np.ndarray) -> np.ndarray:
        return loss.worst_shift(u, s) - mu * s**q

    x1, x2 = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    f1, f2 = obj(x1), obj(x2)
    for _ in range(refine):
        left = f1 >= f2
        hi = np.where(left, x2, hi)
        lo = np.where(left, lo, x1)
        x2n = np.where(left, x1, lo + _GOLDEN * (hi - lo))
        x1n = np.where(left, hi - _GOLDEN * (hi - lo), x2)
        f1, f2 = np.where(left, obj(x1n), f2), np.where(left, f1, obj(x2n))
        x1, x2 = x1n, x2n
    s_best = 0.5 * (lo + hi)
    # 3. Newton polish of the argmax on ∂F/∂s = 0 (kept only where F does not decrease), so
    #    that the maximiser — hence the slope of the dual — is exact to rounding
    v_best = obj(s_best)
    for _ in range(4):
        d1, d2 = loss.shift_derivatives(u, s_best)
        f1p = d1 - mu * q * np.power(s_best, q - 1.0)
        f2p = d2 - mu * q * (q - 1.0) * np.power(np.maximum(s_best, 1e-300), q - 2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            trial = np.where(f2p < 0, s_best - f1p / f2p, s_best)
        trial = np.where(np.isfinite(trial) & (trial >= 0), trial, s_best)
        v_trial = obj(trial)
        better = v_trial >= v_best
        s_best, v_best = np.where(better, trial, s_best), np.where(better, v_trial, v_best)
    grid_best = f[np.arange(len(u)), k]
    use_grid = grid_best > v_best
    return np.where(use_grid, grid_best, v_best), np.where(use_grid, s_grid[k], s_best)


def _sup_kept(loss: Loss, u: np.ndarray, a: float, lam: float, q: float):
    """sup_{s≥0} ψ(u, s) − λ (s/a)^q: (values, argmax s)."""
    base = loss.value(u)
    if a == 0.0 or a**q == 0.0:  # a flat model (a^q underflows): moving x changes nothing
        return base, np.zeros_like(base)
    kind = _closed_form_kind(loss, q)
    mu = lam / a**q
    if kind == "lipschitz":
        if mu >= loss.lipschitz:
            return base, np.zeros_like(base)
        return np.full_like(base, math.inf), np.full_like(base, math.inf)
    if kind == "ramp":
        move = 1.0 - mu * np.maximum(u, 0.0)
        better = move > base
        return np.where(better, move, base), np.where(better, np.maximum(u, 0.0), 0.0)
    if kind == "squared-q2":
        if mu <= 1.0:
            return np.full_like(base, math.inf), np.full_like(base, math.inf)
        return base * mu / (mu - 1.0), np.abs(u) / (mu - 1.0)
    if q == 1.0:
        raise UsageError(
            f"the robust {loss.name} loss is +∞ for q = 1 on an unbounded support",
            "use --q 2 or a Lipschitz loss (--loss absolute or huber)",
        )
    if lam <= 0.0:
        return np.full_like(base, math.inf), np.full_like(base, math.inf)
    return sup_1d(loss, u, mu, q)


def linear_inner_sup(loss: Loss, u: np.ndarray, a: float, lam: float, cost: TransportCost):
    """φ_i(λ) for a linear model with scalar u_i and a = ‖w‖_*: an :class:`InnerSup`."""
    kept, s_kept = _sup_kept(loss, u, a, lam, cost.q)
    if cost.labels_fixed or loss.kind != "margin":
        return InnerSup(kept, s_kept, np.zeros(len(u), dtype=bool))
    switched, s_sw = _sup_kept(loss, -np.asarray(u), a, lam, cost.q)
    switched = switched - lam * cost.kappa
    flip = switched > kept
    return InnerSup(np.where(flip, switched, kept), np.where(flip, s_sw, s_kept), flip)


def transport_cost(inner: InnerSup, a: float, cost: TransportCost) -> np.ndarray:
    """c(ξ_i, ζ*_i) of the maximisers: (s/a)^q plus κ for a switched label. (n,)"""
    t = inner.shift / a if a > 0 else np.zeros_like(inner.shift)
    with np.errstate(invalid="ignore"):
        label = np.where(inner.flipped, cost.kappa, 0.0)
    return np.power(t, cost.q) + label


def piecewise_linear_dual(
    kept: np.ndarray, switched: np.ndarray, kappa: float, rho: float, lam_min: float
) -> tuple[float, float]:
    """Exact min over λ ≥ lam_min of λρ + mean_i max(A_i, B_i − κλ); returns (value, λ*).

    The slope is ρ − κ·#{i : β_i > λ}/n with breakpoints β_i = (B_i − A_i)/κ, so the minimum
    sits at the (K+1)-th largest breakpoint, K = ⌊nρ/κ⌋ (or at lam_min)."""
    n = len(kept)
    beta = np.sort((switched - kept) / kappa)[::-1]  # descending breakpoints
    k = int(math.floor(n * rho / kappa))
    lam = lam_min if k >= n else max(lam_min, float(beta[k]), 0.0)
    value = lam * rho + float(np.mean(np.maximum(kept, switched - kappa * lam)))
    return value, lam


def linear_robust_risk(
    loss: Loss,
    u: np.ndarray,
    a: float,
    cost: TransportCost,
    rho: float,
    lam_guess: float | None = None,
) -> RobustRisk:
    """R_ρ(θ; P_n) of a linear model (scalars ``u`` (n,), a = ‖w‖_*), exactly."""
    u = np.asarray(u, dtype=np.float64)
    empirical = float(np.mean(loss.value(u)))
    if rho == 0.0:
        return RobustRisk(empirical, empirical, math.inf, "empirical (ρ = 0)")
    kind = _closed_form_kind(loss, cost.q)
    margin_switch = not cost.labels_fixed and loss.kind == "margin"
    lam_min = _lambda_threshold(loss, a, cost.q)
    if kind == "lipschitz" and not margin_switch:
        value = lipschitz_formula(empirical, rho, loss.lipschitz, a)
        return RobustRisk(
            value,
            empirical,
            lam_min,
            "closed form E_n ℓ + ρ·Lip·‖w‖_*",
            mean_transport=math.nan if a > 0 else 0.0,
        )
    if kind == "lipschitz":
        value, lam = piecewise_linear_dual(loss.value(u), loss.value(-u), cost.kappa, rho, lam_min)
        flip = loss.value(-u) - cost.kappa * lam > loss.value(u)
        return RobustRisk(
            value,
            empirical,
            lam,
            "exact piecewise-linear dual (q = 1)",
            flipped_fraction=float(np.mean(flip)),
        )
    if math.isinf(lam_min):
        raise UsageError(
            f"the robust {loss.name} loss is +∞ for q = {cost.q:g}",
            "use --q 2 or more, or a Lipschitz loss (--loss absolute or huber)",
        )

    def evaluate(lam: float) -> tuple[float, float]:
        inner = linear_inner_sup(loss, u, a, lam, cost)
        return float(np.mean(inner.values)), float(np.mean(transport_cost(inner, a, cost)))

    sol = minimize_dual_by_slope(
        evaluate, rho, lam_min=lam_min, lam_scale=max(a, 1e-12) ** cost.q, lam_guess=lam_guess
    )
    inner = linear_inner_sup(loss, u, a, sol.lam, cost)
    t = inner.shift / a if a > 0 else inner.shift
    method = "closed-form inner sup, 1-D dual" if kind else "1-D inner search, 1-D dual"
    return RobustRisk(
        sol.value, empirical, sol.lam, method, float(np.mean(t)), float(np.mean(inner.flipped))
    )

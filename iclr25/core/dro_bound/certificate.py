"""The certificate: a radius ρ_n = c·√(log(1/δ)/n) at which, with probability ≥ 1 − δ,
the robust empirical risk upper-bounds the true risk.

Le & Malick (2025), main generalisation theorem (and Azizian et al. 2023): under their
assumptions, for ρ_n ≤ ρ < ρ_c (the critical radius), with probability ≥ 1 − δ,
E_P[ℓ(θ; ξ)] ≤ R_ρ(θ; P_n) for all θ simultaneously, with ρ_n of order √(log(1/δ)/n) —
no n^(−1/d) rate. The paper states explicit constants for linear and logistic models; we
could not read them from the sources available to us, so c is either

- user-supplied (``--radius-constant``), or
- estimated by a bootstrap of the certificate itself (our choice, documented): treat P_n
  as the truth, draw B resamples P*_b, and for each take the smallest radius ρ*_b at which
  R_ρ(θ; P*_b) ≥ E_{P_n} ℓ(θ) for every θ in a set Θ_b — the model being certified, and
  (``refit``) the same robust estimator refitted on P*_b at the current radius, so that
  the data-dependence of a fitted θ is part of the statistic. The (1 − δ)-quantile of ρ*_b
  is the radius; two rounds update the refitting radius. c = ρ̂·√(n/log(1/δ)).

An estimated c makes the statement approximate; ``coverage`` measures how often it holds
on data with a known truth. A degenerate direction makes ρ*_b infinite: with κ = ∞ and a
linear model whose slope w = 0 the robust risk equals the empirical one (this is the
critical-radius condition ρ < ρ_c failing); such resamples are counted as failures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.dro_bound.dual import required_radius
from iclr25.errors import UsageError


@dataclass(frozen=True)
class CertificateConfig:
    delta: float = 0.05  # failure probability δ
    radius_constant: float | None = None  # c; None -> bootstrap estimate
    bootstrap: int = 100  # B resamples
    rounds: int = 2  # refit rounds (1 when nothing is refitted)

    def __post_init__(self) -> None:
        if not (0.0 < self.delta < 1.0):
            raise UsageError(f"--delta {self.delta} is not in (0, 1)", "pass e.g. --delta 0.05")
        if self.radius_constant is not None and not (self.radius_constant >= 0):
            raise UsageError(f"--radius-constant {self.radius_constant} is negative", "pass c ≥ 0")
        if self.bootstrap < 10:
            raise UsageError(
                f"--bootstrap {self.bootstrap} is below 10",
                "use at least 10 resamples (100 or more for δ = 0.05)",
            )


def certificate_radius(c: float, n: int, delta: float) -> float:
    """ρ_n = c·√(log(1/δ)/n)."""
    return c * math.sqrt(math.log(1.0 / delta) / n)


def constant_from_radius(rho: float, n: int, delta: float) -> float:
    return rho * math.sqrt(n / math.log(1.0 / delta))


@dataclass
class RadiusEstimate:
    constant: float  # c
    rho: float  # ρ_n = c·√(log(1/δ)/n)
    source: str  # "user-supplied" or "bootstrap estimate (...)"
    required: list[float] | None = None  # ρ*_b of the last round
    infinite_share: float = 0.0  # share of resamples no radius could cover


# (model, X, y, ρ) -> R_ρ(model; (X, y))
RiskFn = Callable[[object, np.ndarray, np.ndarray, float], float]
# (X, y, ρ) -> models refitted on (X, y) at radius ρ
RefitFn = Callable[[np.ndarray, np.ndarray, float], list]
# (model, X, y) -> per-sample losses
LossesFn = Callable[[object, np.ndarray, np.ndarray], np.ndarray]


def user_radius(config: CertificateConfig, n: int) -> RadiusEstimate:
    c = float(config.radius_constant)
    return RadiusEstimate(c, certificate_radius(c, n, config.delta), "user-supplied")


def bootstrap_radius(
    X: np.ndarray,
    y: np.ndarray,
    fixed: list,
    risk: RiskFn,
    losses: LossesFn,
    refit: RefitFn | None,
    config: CertificateConfig,
    rng: np.random.Generator,
    rho_start: float,
    on_progress: Callable | None = None,
) -> RadiusEstimate:
    """The bootstrap estimate of ρ_n and c (see the module docstring)."""
    n = len(y)
    rounds = config.rounds if refit is not None else 1
    rho = rho_start
    required = np.zeros(config.bootstrap)
    for _ in range(rounds):
        for b in range(config.bootstrap):
            idx = rng.integers(0, n, size=n)
            Xb, yb = X[idx], y[idx]
            models = list(fixed) + (refit(Xb, yb, rho) if refit is not None else [])
            required[b] = max(
                _required_for(m, X, y, Xb, yb, risk, losses, rho_start) for m in models
            )
            if on_progress is not None:
                on_progress(1)
        finite = required[np.isfinite(required)]
        quantile = np.quantile(required, 1.0 - config.delta, method="higher")
        rho = (
            float(quantile)
            if math.isfinite(quantile)
            else (float(finite.max()) if finite.size else rho)
        )
    c = constant_from_radius(rho, n, config.delta)
    source = (
        f"bootstrap estimate: (1−δ)-quantile of the covering radius over "
        f"{config.bootstrap} resamples, {rounds} round(s)"
        f"{', refitting the estimator' if refit is not None else ''}"
    )
    return RadiusEstimate(c, rho, source, required.tolist(), float(np.mean(~np.isfinite(required))))


def _required_for(model, X, y, Xb, yb, risk: RiskFn, losses: LossesFn, rho_hi: float) -> float:
    target = float(np.mean(losses(model, X, y)))  # E_{P_n} ℓ(θ): the "truth" of the bootstrap
    return required_radius(
        lambda r: risk(model, Xb, yb, r), target, max(rho_hi, 1e-6), iterations=40
    )


def statement(
    robust: float, empirical: float, estimate: RadiusEstimate, n: int, delta: float
) -> str:
    approx = (
        ""
        if estimate.source == "user-supplied"
        else (
            " The constant is estimated, so the guarantee is approximate; "
            "`iclr25 dro-bound coverage` measures it on data with a known truth."
        )
    )
    return (
        f"With probability at least {1 - delta:.0%} over the draw of the n = {n} samples, "
        f"the true risk E_P[ℓ(θ; ξ)] is at most the robust risk R_ρ(θ; P_n) = {robust:.6g} "
        f"at radius ρ = {estimate.rho:.4g} = c·√(log(1/δ)/n) with c = {estimate.constant:.4g} "
        f"({estimate.source}); the empirical risk is {empirical:.6g}, so the certified "
        f"margin over it is {robust - empirical:.4g}.{approx}"
    )

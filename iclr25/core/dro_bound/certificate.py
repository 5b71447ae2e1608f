"""The certificate and its radius, always of one of three kinds, labelled in every output.

Le & Malick (2025) and Azizian et al. (2023): under their assumptions (compact data
space, ρ below a critical radius, n above a threshold), with probability ≥ 1 − δ,
E_P ℓ(θ; ξ) ≤ R_ρ(θ; P_n) for all θ at once, for ρ_n of order √(log(1/δ)/n) — without the
n^(−1/d) rate of Wasserstein concentration. What ρ to use is the practical question; the
three kinds answer it differently and say which answer they give:

- ``calibrated``: ρ = c·√(log(1/δ)/n) with c **estimated on rows held out from the sample
  being certified** (a random split of the user's data, ``calibration_split`` of the rows,
  stated in the output) by the bootstrap of :mod:`bootstrap`. The certified sample never
  enters the estimate (:func:`calibrated_radius` receives only the held-out rows and the
  certified sample's size). An estimate, not a proof: ``coverage`` measures how often it
  holds on data with a known truth.
- ``theory``: the radius of a stated theorem with every term computed (:mod:`theory`): a
  classical uniform Rademacher bound for linear models with q = 1, κ = ∞, p = 2 on a
  support the user bounds (``--support-radius``). Le & Malick's own constants are not
  offered (their text was not reachable here). It is a guarantee under its assumptions.
- ``user``: ρ given (``--rho``), or c given (``--radius-constant``): conditional on that
  number being a valid radius for the problem.

The entropic version bounds a different quantity: R^ε_ρ(θ; P_n) upper-bounds the
*smoothed* true risk E_{ξ~P} E_{ζ~π₀(·|ξ)} ℓ(θ; ζ) (π₀: the Gaussian reference of
:mod:`entropic`; the population regularised risk dominates it as soon as ρ exceeds the
reference's mean transport cost, since π₀ itself is then feasible), not E_P ℓ itself; the
statement says so. For non-convex models (MLP) the robust risk comes from gradient ascent,
a lower estimate, and the statement is labelled an estimate, never a certificate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.dro_bound.bootstrap import (
    MIN_BOOTSTRAP_N,
    BootstrapConfig,
    LossesFn,
    RefitFn,
    RiskFn,
    bootstrap_radius,
)
from iclr25.core.dro_bound.theory import THEOREM, TheoryConfig
from iclr25.errors import UsageError

KINDS = ("calibrated", "theory", "user")


@dataclass(frozen=True)
class CertificateConfig:
    delta: float = 0.05  # failure probability δ
    radius_constant: float | None = None  # c given by the user (kind "user")
    bootstrap: int = 100  # B resamples of the calibrated estimate
    rounds: int = 1  # refit rounds of the bootstrap (2+: refit again at the last radius)
    calibration_split: float = 0.3  # share of the rows held out to calibrate c
    theory: TheoryConfig | None = None  # the support bounds the theory radius needs

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
        if not (0.0 < self.calibration_split < 1.0):
            raise UsageError(
                f"--calibration-split {self.calibration_split} is not in (0, 1)",
                "hold out a share of the rows, e.g. --calibration-split 0.3",
            )


def certificate_radius(c: float, n: int, delta: float) -> float:
    """ρ_n = c·√(log(1/δ)/n)."""
    return c * math.sqrt(math.log(1.0 / delta) / n)


def constant_from_radius(rho: float, n: int, delta: float) -> float:
    return rho * math.sqrt(n / math.log(1.0 / delta))


@dataclass
class Radius:
    """A radius and what it rests on."""

    kind: str  # calibrated | theory | user
    rho: float
    n: int  # size of the certified sample
    delta: float
    constant: float | None  # c of ρ = c·√(log(1/δ)/n) (None for a θ-dependent theory ρ)
    how: str  # one line: how ρ was obtained
    split: dict | None = None  # calibrated: the rows held out
    bootstrap: dict | None = None  # calibrated: the bootstrap summary
    theory: dict | None = None  # theory: the terms of the bound
    notes: list[str] = field(default_factory=list)

    @property
    def guarantee(self) -> str:
        """What the statement's probability rests on, in one line."""
        if self.kind == "calibrated":
            held = self.split["calibration_rows"] if self.split else "held-out"
            return (
                f"calibrated: c estimated by a bootstrap on {held} held-out rows, never on "
                f"the {self.n} certified rows; the 1 − δ level is approximate (an estimate of "
                "c, not a proof)"
            )
        if self.kind == "theory":
            return f"theory: holds under the stated support bounds, by the {THEOREM}"
        return "user: holds if the given radius is valid for this problem (not checked)"

    def as_dict(self) -> dict:
        out = {
            "kind": self.kind,
            "rho": self.rho,
            "constant": self.constant,
            "delta": self.delta,
            "certified_rows": self.n,
            "how": self.how,
            "guarantee": self.guarantee,
        }
        for key in ("split", "bootstrap", "theory"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def user_radius(config: CertificateConfig, n: int, rho: float | None = None) -> Radius:
    """The ``user`` kind: ρ given, or c given (ρ = c·√(log(1/δ)/n))."""
    delta = config.delta
    if rho is not None:
        c = constant_from_radius(rho, n, delta) if n > 0 else None
        return Radius("user", rho, n, delta, c, "given (--rho)")
    c = float(config.radius_constant)
    return Radius(
        "user", certificate_radius(c, n, delta), n, delta, c, "ρ = c·√(log(1/δ)/n), c given"
    )


def split_rows(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(calibration rows, certified rows): a random split, disjoint and covering 0 … n−1."""
    m = int(round(fraction * n))
    if m < MIN_BOOTSTRAP_N or n - m < 2:
        raise UsageError(
            f"the calibrated radius holds out {m} of n = {n} rows (--calibration-split "
            f"{fraction:g}); it needs at least {MIN_BOOTSTRAP_N} held-out rows and 2 others",
            "pass more data or a larger --calibration-split, or give --rho / --radius-constant",
        )
    order = np.random.default_rng([seed, 104729]).permutation(n)
    return np.sort(order[:m]), np.sort(order[m:])


def calibrated_radius(
    X_cal: np.ndarray,
    y_cal: np.ndarray,
    n_certified: int,
    fixed: list,
    risk: RiskFn,
    losses: LossesFn,
    refit: RefitFn | None,
    config: CertificateConfig,
    seed: int,
    on_progress: Callable | None = None,
) -> Radius:
    """The ``calibrated`` kind from the held-out rows only: c from the bootstrap radius at
    m = len(y_cal), then ρ = c·√(log(1/δ)/n_certified)."""
    from iclr25.threads import small_problem_threads

    m = len(y_cal)
    with small_problem_threads():  # one limit for the hundreds of small solves inside
        est = _bootstrap(X_cal, y_cal, fixed, risk, losses, refit, config, seed, on_progress)
    c = constant_from_radius(est.rho, m, config.delta)
    return _calibrated(est, c, m, n_certified, config, refit is not None)


def _bootstrap(X_cal, y_cal, fixed, risk, losses, refit, config, seed, on_progress):
    return bootstrap_radius(
        X_cal,
        y_cal,
        fixed,
        risk,
        losses,
        refit,
        BootstrapConfig(config.delta, config.bootstrap, config.rounds),
        np.random.default_rng([seed, 7]),
        1.0 / math.sqrt(len(y_cal)),
        on_progress,
    )


def _calibrated(est, c: float, m: int, n_certified: int, config, refit: bool) -> Radius:
    how = (
        f"c = {c:.4g} from the (1 − δ)-quantile of the covering radius over "
        f"{config.bootstrap} bootstrap resamples of the {m} held-out rows (out-of-bag "
        f"optimism correction{', estimator refitted' if refit else ''})"
    )
    split = {
        "calibration_rows": m,
        "certified_rows": n_certified,
        "calibration_split": m / (m + n_certified),
        "rule": "random split by --seed; the model is fitted and certified on the other rows",
    }
    rho = certificate_radius(c, n_certified, config.delta)
    return Radius("calibrated", rho, n_certified, config.delta, c, how, split, est.summary())


def theory_target_text(entropic: dict | None) -> str:
    if entropic is None:
        return "the true risk E_P[ℓ(θ; ξ)]"
    return (
        f"the smoothed true risk E_{{ξ~P}} E_{{ζ~π₀(·|ξ)}} ℓ(θ; ζ) (π₀: features + "
        f"N(0, σ²I), σ = {entropic['sigma']:.4g}; this is not a bound on E_P ℓ itself)"
    )


def statement(
    robust: float,
    empirical: float,
    radius: Radius,
    entropic: dict | None = None,
    estimate: bool = False,
) -> str:
    """The certificate in words, with its numbers and the status of its radius."""
    name = "R^ε_ρ(θ; P_n)" if entropic else "R_ρ(θ; P_n)"
    c = "" if radius.constant is None else f" (c = {radius.constant:.4g})"
    head = (
        f"[{radius.kind}] With probability at least {1 - radius.delta:.0%} over the draw of "
        f"the n = {radius.n} certified samples, {theory_target_text(entropic)} is at most "
        f"the robust risk {name} = {robust:.6g} at radius ρ = {radius.rho:.4g}{c}; the "
        f"empirical risk is {empirical:.6g} (margin {robust - empirical:.4g}). "
        f"{radius.guarantee}."
    )
    if estimate:
        head = (
            "[estimate — not a certificate: the robust risk of this non-convex model comes "
            "from multi-start gradient ascent, a lower estimate of the supremum] " + head
        )
    return head

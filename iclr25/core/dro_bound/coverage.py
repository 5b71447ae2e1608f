"""The coverage experiment: how often is the robust empirical risk above the true risk?

For a known distribution (:mod:`synthetic`), each dimension d of a grid and each sample
size n of a grid, M independent training sets are drawn; on each the robust model is fitted
at ρ_n = c·√(log(1/δ)/n) and we record whether R_ρn(θ̂; P_n) ≥ E_P ℓ(θ̂) — the true risk
from a large independent test sample (fixed per d). Reported per (d, n): the coverage (share
of trials covered, with a Wilson 95 % interval) against the target 1 − δ, the mean gap
R − true risk (the price of the bound, which should shrink like 1/√n), and, for contrast,
the coverage of the plain empirical risk of the same θ̂.

The constant c is the user's (``radius_constant``) or, per d, the bootstrap estimate of
:mod:`certificate` on an independent pilot sample of the middle n of the grid (reported).
Le & Malick (2025) prove ρ_n of order √(log(1/δ)/n) suffices with constants that depend
on the model class (not through an n^(−1/d) rate): the d-grid measures how the needed c
and the achieved coverage behave with d.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.dro_bound.certificate import (
    MIN_BOOTSTRAP_N,
    CertificateConfig,
    bootstrap_radius,
    certificate_radius,
)
from iclr25.core.dro_bound.closed_forms import linear_robust_risk
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.fit import FitConfig, fit_linear
from iclr25.core.dro_bound.losses import get_loss
from iclr25.core.dro_bound.synthetic import SYNTHETIC, is_classification, sample_synthetic
from iclr25.errors import UsageError


@dataclass(frozen=True)
class CoverageConfig:
    distribution: str = "gaussian-classes"
    n_grid: tuple[int, ...] = (50, 200, 800)
    d_grid: tuple[int, ...] = (2, 10, 50)
    trials: int = 100  # M per (d, n)
    delta: float = 0.05
    radius_constant: float | None = None  # c; None -> pilot bootstrap estimate per d
    bootstrap: int = 50  # B of the pilot estimate
    test_size: int = 50_000  # held-out sample for the true risk
    cost: TransportCost = TransportCost()
    loss: str | None = None  # None: logistic for classes, absolute for regression
    seed: int = 0

    def __post_init__(self) -> None:
        if self.distribution not in SYNTHETIC:
            raise UsageError(
                f"unknown distribution {self.distribution!r}", f"use one of: {', '.join(SYNTHETIC)}"
            )
        if not self.n_grid or min(self.n_grid) < 2 or not self.d_grid or min(self.d_grid) < 1:
            raise UsageError(
                f"grids n={self.n_grid}, d={self.d_grid} are invalid",
                "pass sizes n ≥ 2 and dimensions d ≥ 1, e.g. --n-grid 50,200",
            )
        if self.radius_constant is None and self.pilot_n < MIN_BOOTSTRAP_N:
            raise UsageError(
                f"the pilot estimate of c runs at n = {self.pilot_n}, below {MIN_BOOTSTRAP_N}",
                "pass --radius-constant C, or larger sizes in --n-grid",
            )
        if self.trials < 2:
            raise UsageError(f"--trials {self.trials} is below 2", "pass --trials 20 or more")
        if self.test_size * max(self.d_grid) > 5e7:
            raise UsageError(
                f"--test-size {self.test_size} × d = {max(self.d_grid)} is too many values "
                "(limit 5e7)",
                "pass a smaller --test-size",
            )
        if self.test_size < 1000:
            raise UsageError(
                f"--test-size {self.test_size} is too small for a true risk",
                "pass --test-size 10000 or more",
            )

    @property
    def pilot_n(self) -> int:
        """The sample size of the pilot estimate of c: the middle of the n grid."""
        return sorted(self.n_grid)[len(self.n_grid) // 2]

    @property
    def loss_name(self) -> str:
        if self.loss is not None:
            return self.loss
        return "logistic" if is_classification(self.distribution) else "absolute"

    @property
    def model_kind(self) -> str:
        return "logistic" if is_classification(self.distribution) else "linear"


@dataclass
class CoverageCell:
    d: int
    n: int
    rho: float
    coverage: float  # share of trials with R_ρ(θ̂; P_n) ≥ E_P ℓ(θ̂)
    coverage_ci: tuple[float, float]  # Wilson 95 % interval
    mean_gap: float  # mean of R_ρ(θ̂; P_n) − E_P ℓ(θ̂)
    sd_gap: float
    empirical_coverage: float  # share with E_n ℓ(θ̂) ≥ E_P ℓ(θ̂)
    mean_true_risk: float


@dataclass
class CoverageResult:
    cells: list[CoverageCell]
    target: float  # 1 − δ
    radius_constants: dict[int, float]  # c per d
    radius_source: str
    loss: str
    details: dict = field(default_factory=dict)


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1.0 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _fitter(config: CoverageConfig):
    loss = get_loss(config.loss_name)

    def fit(X, y, rho):
        return fit_linear(X, y, config.model_kind, loss, FitConfig(rho, config.cost))

    return loss, fit


def _pilot_constant(config: CoverageConfig, d: int, rng, fit) -> float:
    n_pilot = config.pilot_n
    X, y = sample_synthetic(config.distribution, n_pilot, d, rng)
    cost = config.cost

    def risk(model, Xb, yb, rho):
        a = cost.dual_norm(model.coef)
        return linear_robust_risk(model.loss, model.scalars(Xb, yb), a, cost, rho).value

    cert = CertificateConfig(config.delta, None, config.bootstrap)
    est = bootstrap_radius(
        X,
        y,
        [],
        risk,
        lambda m, Xb, yb: m.losses(Xb, yb),
        lambda Xb, yb, rho: [fit(Xb, yb, rho).model],
        cert,
        rng,
        rho_start=1.0 / math.sqrt(n_pilot),
    )
    return est.constant


def run_coverage(config: CoverageConfig, on_progress: Callable | None = None) -> CoverageResult:
    """Run the experiment (see the module docstring)."""
    rng = np.random.default_rng(config.seed)
    loss, fit = _fitter(config)
    constants: dict[int, float] = {}
    cells: list[CoverageCell] = []
    for d in config.d_grid:
        if config.radius_constant is not None:
            constants[d] = float(config.radius_constant)
        else:
            constants[d] = _pilot_constant(
                config, d, np.random.default_rng([config.seed, d, 1]), fit
            )
        X_test, y_test = sample_synthetic(
            config.distribution, config.test_size, d, np.random.default_rng([config.seed, d, 2])
        )
        for n in config.n_grid:
            rho = certificate_radius(constants[d], n, config.delta)
            cells.append(_cell(config, d, n, rho, fit, X_test, y_test, rng, on_progress))
    source = (
        "user-supplied"
        if config.radius_constant is not None
        else (
            "bootstrap estimate per d on a pilot sample (bias-corrected, "
            f"B = {config.bootstrap}; not the paper's constant)"
        )
    )
    return CoverageResult(
        cells,
        1.0 - config.delta,
        constants,
        source,
        loss.name,
        {"distribution": config.distribution, "test_size": config.test_size},
    )


def _cell(
    config: CoverageConfig, d: int, n: int, rho: float, fit, X_test, y_test, rng, on_progress
) -> CoverageCell:
    covered, emp_covered, gaps, true_risks = 0, 0, [], []
    for _ in range(config.trials):
        X, y = sample_synthetic(config.distribution, n, d, rng)
        result = fit(X, y, rho)
        true_risk = float(np.mean(result.model.losses(X_test, y_test)))
        covered += result.robust_objective >= true_risk
        emp_covered += result.empirical_risk >= true_risk
        gaps.append(result.robust_objective - true_risk)
        true_risks.append(true_risk)
        if on_progress is not None:
            on_progress(1, cell=f"d={d} n={n}")
    gaps_arr = np.asarray(gaps)
    return CoverageCell(
        d,
        n,
        rho,
        covered / config.trials,
        wilson_interval(covered, config.trials),
        float(gaps_arr.mean()),
        float(gaps_arr.std(ddof=1)),
        emp_covered / config.trials,
        float(np.mean(true_risks)),
    )


def coverage_plots(result: CoverageResult) -> list[tuple[str, object]]:
    """(name, matplotlib figure) for coverage vs n, gap vs n and coverage vs d."""
    import matplotlib

    matplotlib.use("Agg")
    ds = sorted({c.d for c in result.cells})
    ns = sorted({c.n for c in result.cells})
    by = {(c.d, c.n): c for c in result.cells}
    return [
        ("coverage_vs_n", _plot_coverage_vs_n(result, ds, ns, by)),
        ("gap_vs_n", _plot_gap_vs_n(ds, ns, by)),
        ("coverage_vs_d", _plot_coverage_vs_d(result, ds, ns, by)),
    ]


def _ticks(ax, values) -> None:
    """The grid values themselves as ticks, without log-scale minor labels."""
    ax.minorticks_off()
    ax.set_xticks(values, [str(v) for v in values])


def _plot_coverage_vs_n(result: CoverageResult, ds, ns, by):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for d in ds:
        cov = [by[d, n].coverage for n in ns]
        low = [max(by[d, n].coverage - by[d, n].coverage_ci[0], 0.0) for n in ns]
        high = [max(by[d, n].coverage_ci[1] - by[d, n].coverage, 0.0) for n in ns]
        ax.errorbar(ns, cov, yerr=[low, high], marker="o", capsize=3, label=f"d = {d}")
    ax.axhline(result.target, color="k", ls="--", lw=1, label=f"1 − δ = {result.target:g}")
    ax.set(
        xscale="log",
        xlabel="n",
        ylabel="coverage",
        ylim=(0, 1.02),
        title="P(robust empirical risk ≥ true risk)",
    )
    _ticks(ax, ns)
    ax.legend()
    return fig


def _plot_gap_vs_n(ds, ns, by):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for d in ds:  # linear scale: a negative mean gap (the bound failing) must stay visible
        ax.plot(ns, [by[d, n].mean_gap for n in ns], marker="o", label=f"d = {d}")
    first = by[ds[0], ns[0]].mean_gap
    if first > 0:
        ax.plot(ns, [first * math.sqrt(ns[0] / n) for n in ns], "k:", label="∝ 1/√n")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set(
        xscale="log", xlabel="n", ylabel="mean (robust − true risk)", title="the gap of the bound"
    )
    _ticks(ax, ns)
    ax.legend()
    return fig


def _plot_coverage_vs_d(result: CoverageResult, ds, ns, by):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for n in ns:
        ax.plot(ds, [by[d, n].coverage for d in ds], marker="o", label=f"n = {n}")
    ax.axhline(result.target, color="k", ls="--", lw=1)
    ax.set(
        xscale="log",
        xlabel="d",
        ylabel="coverage",
        ylim=(0, 1.02),
        title="coverage vs dimension at ρ = c·√(log(1/δ)/n)",
    )
    _ticks(ax, ds)
    ax.legend()
    return fig

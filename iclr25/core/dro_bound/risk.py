"""Robust risk R_ρ(θ; P_n) of a given model on given data: picks the exact path when one
exists, else the general dual with a numerical inner maximisation, or the entropic version.

Paths (``RiskConfig.solver``):

- ``exact`` (default for linear/logistic models): :mod:`closed_forms` — closed forms for
  q = 1 and for the squared loss with q = 2, a 1-D search per sample otherwise;
- ``pga`` (default for MLPs): :mod:`inner_max` inside the 1-D dual of :mod:`dual`; where an
  inner supremum can be +∞ (q = 1, unbounded support) the smallest feasible λ is first
  located by bisection on "the ascent ran away". Gradient ascent finds local maxima, so
  the result is an **estimate** (``exact = False``): at the optimal λ* the inner
  maximisation is rerun from ``restarts`` − 1 further random starts, the per-sample best
  over all runs is kept, and the spread of the dual value across runs is reported;
- ``entropic`` whenever ε is given: :mod:`entropic`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.dro_bound.closed_forms import linear_robust_risk
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.dual import minimize_dual_by_slope
from iclr25.core.dro_bound.entropic import EntropicConfig, entropic_robust_risk
from iclr25.core.dro_bound.inner_max import (
    InnerMaxConfig,
    InnerMaxResult,
    inner_maximize,
)
from iclr25.core.dro_bound.models import LinearModel, Model
from iclr25.errors import UsageError
from iclr25.threads import small_problem_threads


@dataclass(frozen=True)
class RiskConfig:
    rho: float  # ρ ≥ 0, the Wasserstein radius
    cost: TransportCost = TransportCost()
    solver: str = "auto"  # auto | exact | pga
    inner: InnerMaxConfig = InnerMaxConfig()
    entropic: EntropicConfig | None = None  # set -> the ε-regularised risk
    device: str = "cpu"
    seed: int = 0
    restarts: int = 3  # pga: runs of the inner maximisation at λ* (the spread is reported)

    def __post_init__(self) -> None:
        if not (self.rho >= 0) or not math.isfinite(self.rho):
            raise UsageError(f"--rho {self.rho} is not a finite number ≥ 0", "pass ρ ≥ 0 or auto")
        if self.solver not in ("auto", "exact", "pga"):
            raise UsageError(f"unknown solver {self.solver!r}", "use auto, exact or pga")


@dataclass
class RiskReport:
    robust_risk: float
    empirical_risk: float
    rho: float
    lam: float
    method: str
    diagnostics: dict = field(default_factory=dict)
    exact: bool = True  # False: an estimate (gradient ascent on the inner suprema)


def data_scale(x: np.ndarray) -> float:
    """A length scale of the features: the RMS distance to the mean (1 if degenerate)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return 1.0
    rms = float(np.sqrt(np.mean(np.sum((x - x.mean(axis=0)) ** 2, axis=1))))
    return rms if rms > 0 and math.isfinite(rms) else 1.0


def _torch_setup(x, y, device: str):
    import torch

    dtype = torch.float32 if device == "cuda" else torch.float64
    xt = torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=dtype, device=device)
    yt = torch.as_tensor(np.asarray(y, dtype=np.float64), dtype=dtype, device=device)
    return xt, yt, dtype


def robust_risk(
    model: Model,
    x: np.ndarray,
    y: np.ndarray,
    config: RiskConfig,
    on_progress: Callable | None = None,
) -> RiskReport:
    """R_ρ(θ; P_n) (or R^ε_ρ with ``config.entropic``) of ``model`` on (x (n, d), y (n,))."""
    elements = int(np.size(x)) * (config.inner.starts + 1) * 2
    with small_problem_threads(elements):
        return _robust_risk(model, x, y, config, on_progress)


def _robust_risk(model: Model, x, y, config: RiskConfig, on_progress) -> RiskReport:
    empirical = float(np.mean(model.losses(x, y)))
    if config.entropic is not None:
        return _entropic(model, x, y, config, empirical)
    if isinstance(model, LinearModel) and config.solver in ("auto", "exact"):
        a = config.cost.dual_norm(model.coef)
        res = linear_robust_risk(model.loss, model.scalars(x, y), a, config.cost, config.rho)
        diag = {
            "dual_norm": a,
            "mean_transport": res.mean_transport,
            "flipped_fraction": res.flipped_fraction,
        }
        return RiskReport(res.value, empirical, config.rho, res.lam, res.method, diag)
    if config.solver == "exact":
        raise UsageError("the exact solver needs a linear or logistic model", "use --solver pga")
    if config.rho == 0.0:
        return RiskReport(empirical, empirical, 0.0, math.inf, "empirical (ρ = 0)")
    return general_robust_risk(model, x, y, config, empirical, on_progress)


def _entropic(model: Model, x, y, config: RiskConfig, empirical: float) -> RiskReport:
    import torch

    if config.rho <= 0.0:
        raise UsageError(
            "the entropic risk at ρ = 0 is −∞ (the dual's λ runs to ∞)",
            "pass --rho > 0 (or auto) or drop --epsilon",
        )
    xt, yt, dtype = _torch_setup(x, y, config.device)
    gen = torch.Generator().manual_seed(config.seed)
    switch = not config.cost.labels_fixed and model.loss.kind == "margin"
    res = entropic_robust_risk(
        model.torch_loss_fn(dtype, config.device),
        xt,
        yt,
        config.cost,
        config.rho,
        config.entropic,
        gen,
        switch,
        config.device,
    )
    diag = {
        "epsilon": res.epsilon,
        "sigma": res.sigma,
        "samples": res.samples,
        "mean_weighted_cost": res.mean_weighted_cost,
        "backend": res.backend,
    }
    return RiskReport(res.value, empirical, config.rho, res.lam, "entropic (Monte Carlo)", diag)


class _PhiOracle:
    """Φ(λ) = mean_i φ_i(λ) by :func:`inner_maximize`, warm-started, with a call log."""

    def __init__(self, model: Model, x, y, config: RiskConfig, on_progress):
        import torch

        self.xt, self.yt, dtype = _torch_setup(x, y, config.device)
        self.loss_fn = model.torch_loss_fn(dtype, config.device)
        self.config = config
        self.scale = data_scale(x)
        margin_switch = not config.cost.labels_fixed and model.loss.kind == "margin"
        self.labels = (1.0, -1.0) if margin_switch else (1.0,)
        self.warm = None
        self.calls = 0
        self.seed_offset = 0  # other random starts for the restarts at λ*
        self.last: InnerMaxResult | None = None
        self.on_progress = on_progress
        self.torch = torch

    def run(self, lam: float) -> InnerMaxResult:
        gen = self.torch.Generator().manual_seed(self.config.seed + self.calls + self.seed_offset)
        res = inner_maximize(
            self.loss_fn,
            self.xt,
            self.yt,
            lam,
            self.config.cost,
            self.scale,
            self.config.inner,
            gen,
            self.warm,
            self.labels,
        )
        self.calls += 1
        if res.unbounded == 0:
            self.warm = res.maximisers
        if self.on_progress is not None:
            self.on_progress(1, lam=f"{lam:.4g}")
        self.last = res
        return res

    def __call__(self, lam: float) -> float:
        res = self.run(lam)
        return math.inf if res.unbounded else float(np.mean(res.values))

    def with_slope(self, lam: float) -> tuple[float, float]:
        """(Φ(λ), mean c(ξ_i, ζ*_i)): the value and minus the slope of Φ."""
        res = self.run(lam)
        if res.unbounded:
            return math.inf, math.inf
        kappa = self.config.cost.kappa if not self.config.cost.labels_fixed else 0.0
        cost = res.transport + kappa * res.flipped
        return float(np.mean(res.values)), float(np.mean(cost))


def _feasible_lambda_range(phi: _PhiOracle, lam_guess: float, rtol: float = 1e-7):
    """(λ_min, λ_feasible): Φ is +∞ below λ_min. Bisection on the runaway flag."""
    hi = max(lam_guess, 1e-8)
    for _ in range(60):
        if math.isfinite(phi(hi)):
            break
        hi *= 4.0
    else:
        raise UsageError(
            "no multiplier λ keeps the inner suprema finite",
            "use a Lipschitz loss or a cost with a larger power --q",
        )
    if math.isfinite(phi(0.0)):
        return 0.0, hi
    lo, top = 0.0, hi
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        if math.isfinite(phi(mid)):
            hi = mid
        else:
            lo = mid
    return hi, top


def general_robust_risk(
    model: Model, x, y, config: RiskConfig, empirical: float, on_progress: Callable | None = None
) -> RiskReport:
    """The dual of :mod:`dual` with Φ from projected gradient ascent (any torch model): an
    estimate, with its spread over restarts of the ascent at λ*."""
    phi = _PhiOracle(model, x, y, config, on_progress)
    grad_scale = _gradient_scale(phi)
    lam_min, lam_feasible = _feasible_lambda_range(phi, grad_scale)
    sol = minimize_dual_by_slope(
        phi.with_slope, config.rho, lam_min=lam_min, lam_scale=lam_feasible, rtol=1e-8
    )
    runs = [phi.run(sol.lam)]
    phi.warm = None  # the restarts start afresh (other random starts, no warm start)
    for r in range(1, max(config.restarts, 1)):
        phi.seed_offset = 104_729 * r  # another seed for the random starts
        runs.append(phi.run(sol.lam))
    values = np.stack([run.values for run in runs])  # (R, n)
    per_run = sol.lam * config.rho + values.mean(axis=1)
    best = sol.lam * config.rho + float(np.mean(values.max(axis=0)))
    final = runs[0]
    diag = {
        "lambda_min": lam_min,
        "phi_evaluations": phi.calls,
        "converged_fraction": final.converged,
        "start_agreement": final.start_agreement,
        "iterations": final.iterations,
        "mean_transport": float(np.mean(final.transport)),
        "flipped_fraction": float(np.mean(final.flipped)),
        "restarts": len(runs),
        "spread_across_restarts": float(per_run.max() - per_run.min())
        if np.all(np.isfinite(per_run))
        else None,
        "dual_value_first_run": float(per_run[0]),
    }
    value = best if math.isfinite(best) else sol.value
    return RiskReport(
        value,
        empirical,
        config.rho,
        sol.lam,
        "estimate: projected gradient ascent (multi-start) inside the 1-D dual",
        diag,
        exact=False,
    )


def _gradient_scale(phi: _PhiOracle) -> float:
    """Mean ‖∇_x ℓ‖ at the data: the order of magnitude of the critical λ (q = 1)."""
    torch = phi.torch
    with torch.enable_grad():
        xg = phi.xt.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(phi.loss_fn(xg, phi.yt).sum(), xg)
    value = float(g.norm(dim=-1).mean())
    return value * phi.scale ** (1.0 - phi.config.cost.q) if value > 0 else 1.0

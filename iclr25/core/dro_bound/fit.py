"""Fitting Wasserstein-robust linear and logistic models, and plain ERM for comparison.

Minimises R_ρ(θ; P_n) = min_λ≥0 λρ + E_n φ(λ; θ) jointly over θ = (w, b) and λ:

- q = 1 with a convex, slope-attaining loss (logistic, hinge, absolute, Huber): the exact
  convex program, by :mod:`convex_solver` (smoothed Newton with continuation);
- other (loss, q) pairs (q = 2, the ramp loss, the squared loss with q = 2): L-BFGS over θ
  on the exact robust risk of :mod:`closed_forms`, whose λ is minimised exactly inside
  each evaluation; the gradient in θ follows from the envelope (Danskin) theorem at the
  optimal λ* and worst-case shifts s*_i:
      ∂R/∂θ = mean_i ∂_u[ψ(u_i, s*_i)]·∂u_i/∂θ + mean_i λ* q s*_i^q / a^(q+1) · ∂a/∂w,
  a = ‖w‖_*;
- with ε (entropic): L-BFGS in torch over (θ, λ) on the Monte Carlo entropic objective of
  :mod:`entropic` with samples drawn once.

ERM (ρ = 0) uses the same solvers. Results report the exact robust objective of the
solution (re-evaluated by :func:`closed_forms.linear_robust_risk`, or the entropic value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import minimize

from iclr25.core.dro_bound.closed_forms import (
    _closed_form_kind,
    linear_inner_sup,
    linear_robust_risk,
)
from iclr25.core.dro_bound.convex_solver import smooth_dual_norm, solve_q1
from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.entropic import EntropicConfig, draw_reference, minimize_entropic_dual
from iclr25.core.dro_bound.losses import Loss
from iclr25.core.dro_bound.models import LinearModel
from iclr25.threads import small_problem_threads


@dataclass(frozen=True)
class FitConfig:
    rho: float
    cost: TransportCost = TransportCost()
    entropic: EntropicConfig | None = None
    fit_intercept: bool = True  # the intercept is fitted and never transported
    seed: int = 0
    max_iter: int = 500  # L-BFGS iterations (generic and entropic paths)


@dataclass
class LinearFit:
    model: LinearModel
    robust_objective: float  # R_ρ(θ̂; P_n) (or R^ε_ρ with --epsilon)
    lam: float  # λ* at θ̂
    empirical_risk: float  # E_n ℓ(θ̂)
    solver: str
    converged: bool
    iterations: int
    details: dict = field(default_factory=dict)


def fit_linear(X: np.ndarray, y: np.ndarray, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    """The robust (ρ > 0) or ERM (ρ = 0) linear/logistic model on (X (n, d), y (n,))."""
    with small_problem_threads():
        return _fit_linear(X, y, kind, loss, config)


def _fit_linear(X, y, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    if config.entropic is not None and config.rho > 0:
        return _fit_entropic(X, y, kind, loss, config)
    q1_exact = _closed_form_kind(loss, config.cost.q) == "lipschitz"
    if q1_exact or (config.rho == 0.0 and loss.convex):
        cost = config.cost if config.rho > 0 else TransportCost(config.cost.p, 1.0)
        res = solve_q1(X, y, loss, cost, config.rho, config.fit_intercept)
        model = LinearModel(kind, loss, res.w, res.b if config.fit_intercept else 0.0)
        return _finish(
            model,
            X,
            y,
            config,
            "exact convex program (smoothed Newton)",
            res.converged,
            res.newton_steps,
        )
    return _fit_lbfgs(X, y, kind, loss, config)


def _finish(
    model: LinearModel,
    X,
    y,
    config: FitConfig,
    solver: str,
    converged: bool,
    iterations: int,
    details: dict | None = None,
) -> LinearFit:
    a = config.cost.dual_norm(model.coef)
    risk = linear_robust_risk(model.loss, model.scalars(X, y), a, config.cost, config.rho)
    return LinearFit(
        model, risk.value, risk.lam, risk.empirical, solver, converged, iterations, details or {}
    )


def _design(X, y, loss: Loss, fit_intercept: bool):
    ones = np.ones((len(X), 1)) if fit_intercept else np.zeros((len(X), 1))
    design = np.hstack([X, ones])
    if loss.kind == "margin":
        return y[:, None] * design, np.zeros(len(X))
    return -design, np.asarray(y, np.float64)


def _dual_norm_grad(w: np.ndarray, r: float) -> np.ndarray:
    if not np.any(w):
        return np.zeros_like(w)
    return smooth_dual_norm(w, r, 0.0)[1] if math.isfinite(r) else _linf_grad(w)


def _linf_grad(w: np.ndarray) -> np.ndarray:
    g = np.zeros_like(w)
    j = int(np.argmax(np.abs(w)))
    g[j] = np.sign(w[j])
    return g


def robust_risk_and_grad(
    theta, A, base, loss: Loss, cost: TransportCost, rho: float, memory: dict | None = None
):
    """(R_ρ(θ), ∂R/∂θ) for θ = (w, b) by the envelope theorem (see the module docstring).
    ``memory`` carries the last λ* between calls (a warm start for the 1-D dual)."""
    d = A.shape[1] - 1
    w = theta[:d]
    u = base + A @ theta
    a = cost.dual_norm(w)
    memory = memory if memory is not None else {}
    risk = linear_robust_risk(loss, u, a, cost, rho, memory.get("lam"))
    if math.isfinite(risk.lam) and risk.lam > 0:
        memory["lam"] = risk.lam
    if rho == 0.0:
        return risk.value, A.T @ loss.derivative(u) / len(u)
    inner = linear_inner_sup(loss, u, a, risk.lam, cost)
    s, flip = inner.shift, inner.flipped
    sign = np.where(flip, -1.0, 1.0)
    uu = sign * u  # the scalar the chosen branch sees
    if loss.kind == "margin":
        du = loss.derivative(uu - s) * sign
    else:
        du = loss.derivative(np.abs(uu) + s) * np.sign(uu)
    grad = A.T @ du / len(u)
    if a > 0:
        q = cost.q
        da = float(np.mean(risk.lam * q * np.power(s, q) / a ** (q + 1.0)))
        grad[:d] += da * _dual_norm_grad(w, cost.dual_p)
    return risk.value, grad


def _fit_lbfgs(X, y, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    A, base = _design(
        np.asarray(X, np.float64), np.asarray(y, np.float64), loss, config.fit_intercept
    )
    start = np.zeros(A.shape[1])
    if loss.convex or loss.name == "ramp":  # warm start from the q = 1 (or ERM) convex fit
        seed_loss = loss if loss.convex else _logistic_like(loss)
        pilot = solve_q1(
            X,
            y,
            seed_loss,
            TransportCost(config.cost.p, 1.0),
            0.0 if loss.name == "squared" else config.rho,
            config.fit_intercept,
        )
        start[:-1], start[-1] = pilot.w, pilot.b
    res = minimize(
        robust_risk_and_grad,
        start,
        args=(A, base, loss, config.cost, config.rho, {}),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": config.max_iter, "ftol": 1e-15, "gtol": 1e-10},
    )
    theta = res.x
    model = LinearModel(
        kind, loss, theta[:-1].copy(), float(theta[-1]) if config.fit_intercept else 0.0
    )
    return _finish(
        model,
        X,
        y,
        config,
        "L-BFGS on the exact robust risk (envelope gradient)",
        bool(res.success),
        int(res.nit),
        {"message": str(res.message)},
    )


def _logistic_like(loss: Loss) -> Loss:
    from iclr25.core.dro_bound.losses import get_loss

    return get_loss("hinge" if loss.kind == "margin" else "absolute")


def _fit_entropic(X, y, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    """Joint L-BFGS over (w, b, λ) of the entropic objective with fixed samples."""
    import torch  # noqa: F401 - loaded so that its threads can be limited

    with small_problem_threads(int(np.size(X)) * config.entropic.samples):
        return _fit_entropic_torch(X, y, kind, loss, config)


def _fit_entropic_torch(X, y, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    import torch

    X64, y64 = np.asarray(X, np.float64), np.asarray(y, np.float64)
    n, d = X64.shape
    ent = config.entropic
    xt, yt = torch.as_tensor(X64), torch.as_tensor(y64)
    gen = torch.Generator().manual_seed(config.seed)
    switch = loss.kind == "margin" and not config.cost.labels_fixed
    sigma = ent.sigma_for(config.rho, config.cost, d)
    ref = draw_reference(xt, yt, config.cost, sigma, ent.samples, gen, switch)
    w = torch.zeros(d, dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=config.fit_intercept)
    nu = torch.zeros((), dtype=torch.float64, requires_grad=True)  # λ = softplus(ν)·scale
    lam_scale = 1.0
    params = [w, nu] + ([b] if config.fit_intercept else [])
    opt = torch.optim.LBFGS(
        params,
        lr=1.0,
        max_iter=config.max_iter,
        tolerance_grad=1e-10,
        tolerance_change=1e-14,
        history_size=20,
        line_search_fn="strong_wolfe",
    )

    def losses_at_samples():
        f = torch.einsum("nmd,d->nm", ref.zeta, w) + b  # (n, m)
        return loss.torch_value(ref.labels * f if loss.kind == "margin" else ref.labels - f)

    def closure():
        opt.zero_grad()
        lam = torch.nn.functional.softplus(nu) * lam_scale
        a = (losses_at_samples() - lam * ref.cost) / ent.epsilon  # (n, m)
        lse = torch.logsumexp(a, dim=1) - math.log(ent.samples)
        obj = lam * config.rho + ent.epsilon * lse.mean()
        obj.backward()
        return obj

    opt.step(closure)
    with torch.no_grad():
        L = losses_at_samples()
    value, lam, wc, _ = minimize_entropic_dual(L, ref.cost, config.rho, ent.epsilon)
    model = LinearModel(
        kind, loss, w.detach().numpy().copy(), float(b.detach()) if config.fit_intercept else 0.0
    )
    empirical = float(np.mean(model.losses(X64, y64)))
    state = opt.state[opt._params[0]]
    return LinearFit(
        model,
        value,
        lam,
        empirical,
        "L-BFGS on the entropic objective (torch)",
        True,
        int(state.get("n_iter", 0)),
        {"epsilon": ent.epsilon, "sigma": sigma, "samples": ent.samples, "mean_weighted_cost": wc},
    )

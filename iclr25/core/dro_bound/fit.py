"""Fitting Wasserstein-robust linear and logistic models, and plain ERM for comparison.

Minimises R_ρ(θ; P_n) = min_λ≥0 λρ + E_n φ(λ; θ) jointly over θ = (w, b) and λ:

- q = 1 with a convex, slope-attaining loss (logistic, hinge, absolute, Huber): the exact
  convex program, by :mod:`convex_solver` (smoothed Newton with continuation);
- the squared loss: ERM (ρ = 0) is ordinary least squares (``numpy.linalg.lstsq`` on
  [X, 1]); its robust risk is +∞ for q < 2 (quadratic growth against a cost of power q),
  so robust squared-loss fits need q ≥ 2 and are refused otherwise;
- other (loss, q) pairs (q = 2, the ramp loss, the squared loss with q ≥ 2): L-BFGS over θ
  on the exact robust risk of :mod:`closed_forms`, whose λ is minimised exactly inside
  each evaluation; the gradient in θ follows from the envelope (Danskin) theorem at the
  optimal λ* and worst-case shifts s*_i:
      ∂R/∂θ = mean_i ∂_u[ψ(u_i, s*_i)]·∂u_i/∂θ + mean_i λ* q s*_i^q / a^(q+1) · ∂a/∂w,
  a = ‖w‖_*;
- with ε (entropic): L-BFGS in torch over (θ, λ) on the Monte Carlo entropic objective of
  :mod:`entropic` with samples drawn once.

ERM (ρ = 0) uses the same solvers (least squares for the squared loss). Results report
the exact robust objective of the solution (re-evaluated by
:func:`closed_forms.linear_robust_risk`, or the entropic value), and every fit compares it
with the objective of its own starting point: a solver that ends worse than it started
returns the starting point instead, with ``improved = False`` and a note saying so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

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
from iclr25.errors import UsageError
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
    start_objective: float = math.nan  # the same objective at the solver's starting point
    improved: bool = True  # objective(θ̂) ≤ objective(start); else θ̂ is the start


# a fit may end above its start by rounding only (relative)
START_TOLERANCE = 1e-9


def fit_linear(X: np.ndarray, y: np.ndarray, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    """The robust (ρ > 0) or ERM (ρ = 0) linear/logistic model on (X (n, d), y (n,))."""
    check_loss_cost(loss, config.cost, config.rho)
    with small_problem_threads():
        return _fit_linear(X, y, kind, loss, config)


def check_loss_cost(loss: Loss, cost: TransportCost, rho: float | None) -> None:
    """Refuse (loss, q) pairs whose robust risk is +∞ at every ρ > 0 (``rho`` None: auto)."""
    if loss.name == "squared" and cost.q < 2.0 and (rho is None or rho > 0):
        raise UsageError(
            f"the robust squared loss is +∞ for q = {cost.q:g} (quadratic growth beats a "
            "transport cost of power q < 2)",
            "use --q 2 (the square-root-lasso case), --rho 0 for least squares, or a "
            "Lipschitz loss (--loss absolute or huber)",
        )


def _fit_linear(X, y, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    if config.entropic is not None and config.rho > 0:
        return _fit_entropic(X, y, kind, loss, config)
    if loss.name == "squared" and config.rho == 0.0:
        return _fit_least_squares(X, y, kind, loss, config)
    q1_exact = _closed_form_kind(loss, config.cost.q) == "lipschitz"
    if q1_exact or (config.rho == 0.0 and loss.convex):
        cost = config.cost if config.rho > 0 else TransportCost(config.cost.p, 1.0)
        res = solve_q1(X, y, loss, cost, config.rho, config.fit_intercept)
        model = LinearModel(kind, loss, res.w, res.b if config.fit_intercept else 0.0)
        start = LinearModel(kind, loss, np.zeros(X.shape[1]), 0.0)  # Newton starts at 0
        return _finish(
            model,
            start,
            X,
            y,
            config,
            "exact convex program (smoothed Newton)",
            res.converged,
            res.newton_steps,
        )
    return _fit_lbfgs(X, y, kind, loss, config)


def least_squares(X: np.ndarray, y: np.ndarray, fit_intercept: bool = True):
    """(w, b) of ordinary least squares, by ``numpy.linalg.lstsq`` (minimum-norm solution
    when the design is rank deficient)."""
    X = np.asarray(X, np.float64)
    ones = np.ones((len(X), 1)) if fit_intercept else np.zeros((len(X), 1))
    theta = np.linalg.lstsq(np.hstack([X, ones]), np.asarray(y, np.float64), rcond=None)[0]
    return theta[:-1].copy(), float(theta[-1]) if fit_intercept else 0.0


def _fit_least_squares(X, y, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    w, b = least_squares(X, y, config.fit_intercept)
    model = LinearModel(kind, loss, w, b)
    start = LinearModel(kind, loss, np.zeros(X.shape[1]), 0.0)
    return _finish(model, start, X, y, config, "least squares (numpy.linalg.lstsq)", True, 1)


def _objective(model: LinearModel, X, y, config: FitConfig):
    a = config.cost.dual_norm(model.coef)
    return linear_robust_risk(model.loss, model.scalars(X, y), a, config.cost, config.rho)


def _finish(
    model: LinearModel,
    start: LinearModel,
    X,
    y,
    config: FitConfig,
    solver: str,
    converged: bool,
    iterations: int,
    details: dict | None = None,
) -> LinearFit:
    """The fit's exact objective, checked against its starting point's (see the docstring)."""
    risk = _objective(model, X, y, config)
    start_risk = _objective(start, X, y, config)
    details = dict(details or {})
    improved = risk.value <= start_risk.value + START_TOLERANCE * max(1.0, abs(start_risk.value))
    if not improved:
        details["note"] = (
            f"the solver ended at objective {risk.value:.6g}, above its starting point's "
            f"{start_risk.value:.6g}: the starting point is returned"
        )
        model, risk = start, start_risk
    return LinearFit(
        model,
        risk.value,
        risk.lam,
        risk.empirical,
        solver,
        converged and improved,
        iterations,
        details,
        start_risk.value,
        improved,
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
    start = _lbfgs_start(X, y, loss, config, A.shape[1])
    res = minimize(
        robust_risk_and_grad,
        start,
        args=(A, base, loss, config.cost, config.rho, {}),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": config.max_iter, "ftol": 1e-15, "gtol": 1e-10},
    )
    return _finish(
        _model_of(res.x, kind, loss, config),
        _model_of(start, kind, loss, config),
        X,
        y,
        config,
        "L-BFGS on the exact robust risk (envelope gradient)",
        bool(res.success),
        int(res.nit),
        {"message": str(res.message)},
    )


def _model_of(theta: np.ndarray, kind: str, loss: Loss, config: FitConfig) -> LinearModel:
    b = float(theta[-1]) if config.fit_intercept else 0.0
    return LinearModel(kind, loss, np.array(theta[:-1], dtype=np.float64), b)


def _lbfgs_start(X, y, loss: Loss, config: FitConfig, dim: int) -> np.ndarray:
    """A warm start: least squares (squared loss), else the q = 1 convex fit at the same ρ
    (ERM when ρ = 0) of the loss or, for the ramp loss, of the hinge loss."""
    start = np.zeros(dim)
    if loss.name == "squared":
        w, b = least_squares(X, y, config.fit_intercept)
        start[:-1], start[-1] = w, b
    elif loss.convex or loss.name == "ramp":
        seed_loss = loss if loss.convex else _logistic_like(loss)
        pilot = solve_q1(
            X, y, seed_loss, TransportCost(config.cost.p, 1.0), config.rho, config.fit_intercept
        )
        start[:-1], start[-1] = pilot.w, pilot.b
    return start


def _logistic_like(loss: Loss) -> Loss:
    from iclr25.core.dro_bound.losses import get_loss

    return get_loss("hinge" if loss.kind == "margin" else "absolute")


def _fit_entropic(X, y, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    """Joint L-BFGS over (w, b, λ) of the entropic objective with fixed samples."""
    import torch  # noqa: F401 - loaded so that its threads can be limited

    with small_problem_threads(int(np.size(X)) * config.entropic.samples):
        return _fit_entropic_torch(X, y, kind, loss, config)


def _fit_entropic_torch(X, y, kind: str, loss: Loss, config: FitConfig) -> LinearFit:
    """From the ERM model (warm start) by L-BFGS over (w, b, ν), λ = softplus(ν); the
    objective of the start and of the end are both computed on the same samples."""
    import torch

    X64, y64 = np.asarray(X, np.float64), np.asarray(y, np.float64)
    d = X64.shape[1]
    ent = config.entropic
    xt, yt = torch.as_tensor(X64), torch.as_tensor(y64)
    gen = torch.Generator().manual_seed(config.seed)
    switch = loss.kind == "margin" and not config.cost.labels_fixed
    sigma = ent.sigma_for(config.rho, config.cost, d)
    ref = draw_reference(xt, yt, config.cost, sigma, ent.samples, gen, switch)
    erm = _fit_linear(X64, y64, kind, loss, replace(config, rho=0.0, entropic=None)).model
    w = torch.tensor(erm.coef, dtype=torch.float64, requires_grad=True)
    b = torch.tensor(erm.intercept, dtype=torch.float64, requires_grad=config.fit_intercept)
    nu = torch.zeros((), dtype=torch.float64, requires_grad=True)  # λ = softplus(ν)
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

    def losses_at_samples(w_, b_):
        f = torch.einsum("nmd,d->nm", ref.zeta, w_) + b_  # (n, m)
        return loss.torch_value(ref.labels * f if loss.kind == "margin" else ref.labels - f)

    def closure():
        opt.zero_grad()
        lam = torch.nn.functional.softplus(nu)
        a = (losses_at_samples(w, b) - lam * ref.cost) / ent.epsilon  # (n, m)
        lse = torch.logsumexp(a, dim=1) - math.log(ent.samples)
        obj = lam * config.rho + ent.epsilon * lse.mean()
        obj.backward()
        return obj

    def dual_at(model: LinearModel):
        with torch.no_grad():
            L = losses_at_samples(torch.as_tensor(model.coef), float(model.intercept))
        return minimize_entropic_dual(L, ref.cost, config.rho, ent.epsilon)

    start_value = dual_at(erm)[0]
    opt.step(closure)
    model = LinearModel(
        kind, loss, w.detach().numpy().copy(), float(b.detach()) if config.fit_intercept else 0.0
    )
    value, lam, wc, _ = dual_at(model)
    details = {"epsilon": ent.epsilon, "sigma": sigma, "samples": ent.samples}
    improved = value <= start_value + START_TOLERANCE * max(1.0, abs(start_value))
    if not improved:
        details["note"] = (
            f"L-BFGS ended at objective {value:.6g}, above its ERM starting point's "
            f"{start_value:.6g}: the starting point is returned"
        )
        model = erm
        value, lam, wc, _ = dual_at(erm)
    details["mean_weighted_cost"] = wc
    state = opt.state[opt._params[0]]
    return LinearFit(
        model,
        value,
        lam,
        float(np.mean(model.losses(X64, y64))),
        "L-BFGS on the entropic objective (torch), from the ERM model",
        improved,
        int(state.get("n_iter", 0)),
        details,
        start_value,
        improved,
    )

"""Robust training of a small ReLU MLP: min_θ min_λ≥0 λρ + E_n sup_ζ [ℓ(θ; ζ) − λ c(ξ, ζ)].

Jointly over θ and λ by alternating first-order steps (a WRM-style scheme — Sinha,
Namkoong & Duchi 2018 — with the multiplier λ learned instead of fixed):

1. ascent: ``inner_steps`` proximal gradient steps on ζ_i (warm-started from the previous
   epoch) for the current (θ, λ), as in :mod:`inner_max`;
2. descent on θ: Adam on E_n ℓ(θ; ζ_i) (the cost term does not depend on θ);
3. descent on λ = softplus(ν): its gradient is ρ − E_n c(ξ_i, ζ_i) (envelope theorem);
   when an ascent runs away (λ below the loss's growth rate, possible for q = 1) λ is
   raised ×1.5 and those ζ_i restart at ξ_i.

With ε (entropic) the objective is the smooth Monte Carlo one of :mod:`entropic` and Adam
runs on (θ, ν) directly. ERM is Adam on E_n ℓ(θ; ξ_i). Robust training starts from a given
model (``init``: the ERM network, a warm start) rather than a fresh initialisation. The
reported robust objective is always re-evaluated afterwards by the dual of :mod:`risk`
(multi-start ascent: an estimate), and the workflow (:mod:`pipeline`) keeps the starting
model when training did not lower that objective.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.dro_bound.costs import TransportCost
from iclr25.core.dro_bound.entropic import EntropicConfig, draw_reference
from iclr25.core.dro_bound.inner_max import _propose, feature_cost_torch
from iclr25.core.dro_bound.losses import Loss
from iclr25.core.dro_bound.models import MLPModel
from iclr25.errors import UsageError
from iclr25.threads import small_problem_threads


@dataclass(frozen=True)
class MLPConfig:
    hidden: tuple[int, ...] = (32,)
    epochs: int = 300
    lr: float = 1e-2  # Adam step for θ and ν
    inner_steps: int = 5  # ascent steps on ζ per epoch (warm-started)
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.hidden or min(self.hidden) < 1:
            raise UsageError(f"--hidden {self.hidden} has an empty layer", "e.g. --hidden 32,32")
        if self.epochs < 1:
            raise UsageError(f"--epochs {self.epochs} is below 1", "pass --epochs 1 or more")


@dataclass
class MLPFit:
    model: MLPModel
    lam: float  # the learned λ (training estimate)
    epochs: int
    final_train_objective: float  # λρ + E_n[ℓ(θ; ζ) − λc] at the last epoch


def build_mlp(d: int, hidden: tuple[int, ...], seed: int):
    import torch

    torch.manual_seed(seed)
    layers: list = []
    width = d
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, 1))
    return torch.nn.Sequential(*layers).double()


def _loss_of(net, loss: Loss):
    margin = loss.kind == "margin"

    def loss_fn(x, y):
        f = net(x).squeeze(-1)
        return loss.torch_value(y * f if margin else y - f)

    return loss_fn


def train_mlp(
    X: np.ndarray,
    y: np.ndarray,
    loss: Loss,
    rho: float,
    cost: TransportCost,
    config: MLPConfig,
    entropic: EntropicConfig | None = None,
    on_progress: Callable | None = None,
    init: MLPModel | None = None,
) -> MLPFit:
    """ERM (ρ = 0), robust, or entropic-robust training (see the module docstring), from
    ``init``'s weights when given."""
    samples = entropic.samples if entropic is not None else 2
    with small_problem_threads(int(np.size(X)) * samples * max(config.hidden)):
        return _train(X, y, loss, rho, cost, config, entropic, on_progress, init)


def _train(
    X,
    y,
    loss: Loss,
    rho: float,
    cost: TransportCost,
    config: MLPConfig,
    entropic: EntropicConfig | None,
    on_progress,
    init: MLPModel | None = None,
) -> MLPFit:
    import torch

    xt, yt = torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(y, dtype=torch.float64)
    net = build_mlp(xt.shape[1], config.hidden, config.seed)
    if init is not None:
        if init.hidden != list(config.hidden):
            raise UsageError(
                f"the warm start has hidden widths {init.hidden}, not {list(config.hidden)}",
                "start from a network of the same shape",
            )
        net = init.module().train()
        for p in net.parameters():
            p.requires_grad_(True)
    loss_fn = _loss_of(net, loss)
    nu = torch.zeros((), dtype=torch.float64, requires_grad=True)  # λ = softplus(ν)
    opt = torch.optim.Adam([*net.parameters(), nu], lr=config.lr)
    if rho == 0.0:
        step = _erm_step(loss_fn, xt, yt)
    elif entropic is not None:
        switch = not cost.labels_fixed and loss.kind == "margin"
        step = _entropic_step(loss_fn, xt, yt, rho, cost, entropic, config.seed, nu, switch)
    else:
        step = _robust_step(loss_fn, xt, yt, rho, cost, nu, config.inner_steps)
    value = math.nan
    for _epoch in range(config.epochs):
        opt.zero_grad()
        objective = step()
        objective.backward()
        opt.step()
        value = float(objective.detach())
        if on_progress is not None:
            on_progress(1, objective=f"{value:.4g}")
    lam = float(torch.nn.functional.softplus(nu).detach()) if rho > 0 else math.inf
    return MLPFit(MLPModel.from_module(net, loss), lam, config.epochs, value)


def _erm_step(loss_fn, xt, yt):
    return lambda: loss_fn(xt, yt).mean()


def _entropic_step(
    loss_fn, xt, yt, rho, cost, entropic: EntropicConfig, seed: int, nu, switch: bool
):
    import torch

    n, d = xt.shape
    gen = torch.Generator().manual_seed(seed)
    ref = draw_reference(
        xt, yt, cost, entropic.sigma_for(rho, cost, d), entropic.samples, gen, switch
    )
    m = entropic.samples

    def step():
        lam = torch.nn.functional.softplus(nu)
        L = loss_fn(ref.zeta.reshape(n * m, d), ref.labels.reshape(n * m)).reshape(n, m)
        lse = torch.logsumexp((L - lam * ref.cost) / entropic.epsilon, dim=1) - math.log(m)
        return lam * rho + entropic.epsilon * lse.mean()

    return step


def _robust_step(loss_fn, xt, yt, rho, cost: TransportCost, nu, inner_steps: int = 5):
    """One epoch of the alternating scheme; returns the training objective (a tensor)."""
    import torch

    scale = float(torch.sqrt(((xt - xt.mean(0)) ** 2).sum(1).mean())) or 1.0
    state = {"zeta": xt.clone(), "eta": torch.full((len(xt), 1), 0.05 * scale, dtype=xt.dtype)}
    runaway = 1e3 * scale

    def ascend(lam: float):
        zeta, eta = state["zeta"], state["eta"]
        for _ in range(inner_steps):
            with torch.enable_grad():
                zg = zeta.detach().requires_grad_(True)
                (g,) = torch.autograd.grad(loss_fn(zg, yt).sum(), zg)
            with torch.no_grad():
                old = loss_fn(zeta, yt) - lam * feature_cost_torch(zeta - xt, cost)
                new_z = _propose(zeta, g, xt, eta, lam, cost)
                new = loss_fn(new_z, yt) - lam * feature_cost_torch(new_z - xt, cost)
                ok = new >= old
                zeta = torch.where(ok[:, None], new_z, zeta)
                eta = torch.where(ok[:, None], eta * 1.5, eta * 0.3).clamp(1e-12, 1e6)
        far = (zeta - xt).norm(dim=-1) > runaway
        if bool(far.any()):  # λ is below the growth rate of the loss: raise it, restart
            with torch.no_grad():
                nu.copy_(_softplus_inverse(1.5 * lam + 1e-3))
            zeta = torch.where(far[:, None], xt, zeta)
        state["zeta"], state["eta"] = zeta.detach(), eta

    def step():
        lam_value = float(torch.nn.functional.softplus(nu).detach())
        ascend(lam_value)
        zeta = state["zeta"]
        lam = torch.nn.functional.softplus(nu)
        c = feature_cost_torch(zeta - xt, cost)
        return lam * rho + (loss_fn(zeta, yt) - lam * c).mean()

    return step


def _softplus_inverse(v: float):
    import torch

    return torch.tensor(v + math.log(-math.expm1(-v)) if v < 30 else v, dtype=torch.float64)

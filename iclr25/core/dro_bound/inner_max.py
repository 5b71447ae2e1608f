"""The inner maximisation φ_i(λ) = sup_ζ ℓ(θ; ζ) − λ c(ξ_i, ζ) for any torch loss.

Used for models without a closed form (ReLU MLPs, any differentiable or piecewise-smooth
loss) and, in tests, checked against the closed forms on linear models. Method: batched
proximal gradient ascent with one adaptive step per candidate, from several starts per
sample, projected onto the support (a box, when one is given):

- starts: ξ_i itself, a small jitter, half a data scale and ``far_scale`` data scales along
  the adversarial direction (∇_x ℓ, or its average around ξ_i where the loss is flat),
  far random directions, and the previous λ's maximiser (warm start) — the far starts
  find suprema that sit "at infinity" (q = 1 and a loss of linear growth);
- step: x ← prox_{ηλc(x_i, ·)}(x + η∇ℓ) for the Euclidean costs (soft-thresholding towards
  x_i for q = 1, shrinkage for q = 2), a plain (sub)gradient step on ℓ − λc otherwise;
  a step is kept only if the objective does not decrease, then η grows ×1.5, else ×0.3;
- convergence: the objective changed by less than ``tol``·(1 + |F|) over the last
  ``window`` iterations; a candidate that moves more than ``runaway_scale`` data scales
  away while still improving marks φ_i = +∞ (λ is below the loss's growth rate).

The report (:class:`InnerMaxResult`) carries the converged share, the iterations used and
``start_agreement``: the share of samples where at least two starts reached the best value
— a check that the maximum found is not one start's local optimum.

Paper symbols: ``lam`` -> λ, ``cost`` -> c, candidates -> ζ, ``values`` -> φ_i(λ).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.dro_bound.costs import TransportCost


@dataclass(frozen=True)
class InnerMaxConfig:
    starts: int = 5  # ξ_i, a jitter, near and far along ∇ℓ, then far random (+ a warm start)
    max_iter: int = 400
    tol: float = 1e-9  # relative change over ``window`` iterations that counts as converged
    window: int = 8
    step_init: float = 0.05  # first move, in data scales
    far_scale: float = 50.0  # far starts this many data scales from ξ_i
    runaway_scale: float = 1e4  # beyond this many data scales the sup is declared +∞
    support: tuple[float, float] | None = None  # box [lo, hi] for every feature; None = R^d


@dataclass
class InnerMaxResult:
    values: np.ndarray  # (n,) φ_i(λ) (+∞ where unbounded)
    maximisers: object  # torch (n, d): the best ζ per sample (features)
    labels: object  # torch (n,): its label
    flipped: np.ndarray  # (n,) bool
    transport: np.ndarray  # (n,) feature cost c(x_i, ζ_i) of the best candidate
    unbounded: int  # samples whose sup is +∞
    converged: float  # share of samples whose best candidate converged
    iterations: int
    start_agreement: float  # share of samples where ≥ 2 starts reach the best value


LossFn = Callable[[object, object], object]  # (x (N, d), y (N,)) -> per-sample loss (N,)


def feature_cost_torch(delta, cost: TransportCost):
    """‖Δ‖_p^q row-wise for a torch tensor Δ (N, d); differentiable away from Δ = 0."""
    import torch

    if math.isinf(cost.p):
        norm = delta.abs().amax(dim=-1) if delta.shape[-1] else delta.sum(dim=-1)
    else:
        norm = torch.linalg.vector_norm(delta, ord=cost.p, dim=-1)
    return norm if cost.q == 1.0 else norm**cost.q


def _unit(v):
    return v / v.norm(dim=-1, keepdim=True).clamp_min(1e-300)


def _adversarial_direction(loss_fn, x, y, scale: float, generator):
    """Unit ∇_x ℓ at ξ_i; where it vanishes (flat loss), the mean gradient at 8 random
    points half a data scale away; where that vanishes too, a random direction. (n, d)"""
    import torch

    def grad_at(z):
        with torch.enable_grad():
            zg = z.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(loss_fn(zg, y).sum() + 0.0 * zg.sum(), zg)
        return g

    g = grad_at(x)
    flat = g.norm(dim=-1) <= 1e-12
    if bool(flat.any()):
        acc = torch.zeros_like(g)
        for _ in range(8):
            u = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x)
            acc += grad_at(x + 0.5 * scale * _unit(u))
        g = torch.where(flat[:, None], acc, g)
    rand = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x)
    still_flat = (g.norm(dim=-1) <= 1e-12)[:, None]
    return _unit(torch.where(still_flat, rand, g))


def _starts(x, direction, scale: float, config: InnerMaxConfig, generator, warm):
    """(S, n, d) starting points: ξ_i, a jitter, half a data scale and ``far_scale`` data
    scales along the adversarial direction, far random points, then the warm start."""
    import torch

    n, d = x.shape
    far = config.far_scale * scale
    jitter = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x)
    out = [
        x,
        x + 0.05 * scale * jitter / math.sqrt(max(d, 1)),
        x + 0.5 * scale * direction,
        x + far * direction,
    ]
    while len(out) < config.starts:
        u = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x)
        out.append(x + far * _unit(u))
    out = out[: config.starts]
    if warm is not None:
        out.append(warm)
    return torch.stack(out)  # (S, n, d)


def _propose(z, grad_loss, anchor, eta, lam: float, cost: TransportCost):
    """One proximal (Euclidean costs) or (sub)gradient step; ``eta`` has shape (N, 1)."""
    import torch

    v = z + eta * grad_loss
    if cost.p == 2.0 and cost.q == 1.0:  # prox of ηλ‖· − x_i‖₂: soft-threshold towards x_i
        delta = v - anchor
        norm = delta.norm(dim=-1, keepdim=True)
        return anchor + delta * torch.clamp(1.0 - eta * lam / norm.clamp_min(1e-300), min=0.0)
    if cost.p == 2.0 and cost.q == 2.0:  # prox of ηλ‖· − x_i‖₂²: shrink towards x_i
        return anchor + (v - anchor) / (1.0 + 2.0 * eta * lam)
    zc = z.detach().requires_grad_(True)
    c = feature_cost_torch(zc - anchor + 1e-12, cost).sum()
    (gc,) = torch.autograd.grad(c, zc)
    return v - eta * lam * gc


def _objective(loss_fn, z, labels, anchor, lam: float, extra, cost: TransportCost):
    return loss_fn(z, labels) - lam * feature_cost_torch(z - anchor, cost) - extra


def inner_maximize(
    loss_fn: LossFn,
    x,
    y,
    lam: float,
    cost: TransportCost,
    scale: float,
    config: InnerMaxConfig = InnerMaxConfig(),
    generator=None,
    warm=None,
    label_options: tuple[float, ...] = (1.0,),
) -> InnerMaxResult:
    """φ_i(λ) for every sample (x (n, d), y (n,) torch tensors). ``label_options`` are
    multipliers of y: (1,) keeps labels, (1, −1) also tries the switched label at cost κ."""
    import torch

    n, d = x.shape
    if n == 0:
        empty = np.zeros(0)
        return InnerMaxResult(empty, x, y, empty.astype(bool), empty, 0, 1.0, 0, 1.0)
    generator = generator if generator is not None else torch.Generator().manual_seed(0)
    per_label = []
    for mult in label_options:  # the adversarial direction depends on the label
        direction = _adversarial_direction(loss_fn, x, mult * y, scale, generator)
        per_label.append(_starts(x, direction, scale, config, generator, warm))  # (S, n, d)
    starts = torch.stack(per_label)  # (L, S, n, d)
    n_labels, n_starts = starts.shape[0], starts.shape[1]
    # candidates: (L, S, n, d) flattened to (N, d) with N = L·S·n
    z = starts.reshape(-1, d).clone()
    if config.support is not None:
        z = z.clamp(*config.support)
    anchor = x.unsqueeze(0).unsqueeze(0).expand(n_labels, n_starts, -1, -1).reshape(-1, d)
    mult = torch.tensor(label_options, dtype=x.dtype, device=x.device)
    labels = (mult[:, None, None] * y[None, None, :]).expand(-1, n_starts, -1).reshape(-1)
    switched = (mult[:, None, None] < 0).expand(-1, n_starts, n).reshape(-1)
    extra = switched.to(x.dtype) * (lam * cost.kappa if not cost.labels_fixed else 0.0)
    return _ascend(
        loss_fn,
        z,
        labels,
        anchor,
        extra,
        switched,
        lam,
        cost,
        scale,
        config,
        (n_labels, n_starts, n),
    )


def _ascend(loss_fn, z, labels, anchor, extra, switched, lam, cost, scale, config, shape):
    import torch

    n_labels, n_starts, n = shape
    big = config.runaway_scale * scale
    with torch.no_grad():
        f = _objective(loss_fn, z, labels, anchor, lam, extra, cost)
    g_loss = _loss_grad(loss_fn, z, labels)
    gnorm = g_loss.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    eta = (config.step_init * scale / gnorm).clamp_max(1e6)
    history = [f.clone()]
    runaway = torch.zeros_like(f, dtype=torch.bool)
    converged = torch.zeros_like(runaway)
    iterations = 0
    for iterations in range(1, config.max_iter + 1):  # noqa: B007 - reported below
        active = ~(runaway | converged)
        if not bool(active.any()):
            break
        z_new = _propose(z, g_loss, anchor, eta, lam, cost)
        if config.support is not None:
            z_new = z_new.clamp(*config.support)
        with torch.no_grad():
            f_new = _objective(loss_fn, z_new, labels, anchor, lam, extra, cost)
        ok = (f_new >= f - 1e-15 * f.abs()) & active
        z = torch.where(ok[:, None], z_new, z)
        f = torch.where(ok, f_new, f)
        eta = torch.where(ok[:, None], eta * 1.5, eta * 0.3).clamp(1e-30, 1e30)
        far = (z - anchor).norm(dim=-1) > big
        runaway |= far & ok
        history.append(f.clone())
        if len(history) > config.window:
            old = history[-config.window - 1]
            converged |= ok & ((f - old).abs() <= config.tol * (1.0 + f.abs()))
        if bool(ok.any()):
            g_loss = torch.where(ok[:, None], _loss_grad(loss_fn, z, labels), g_loss)
    return _collect(
        f, z, labels, switched, runaway, converged, anchor, cost, iterations, shape, config
    )


def _loss_grad(loss_fn, z, labels):
    import torch

    with torch.enable_grad():
        zg = z.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(loss_fn(zg, labels).sum() + 0.0 * zg.sum(), zg)
    return g


def _collect(f, z, labels, switched, runaway, converged, anchor, cost, iterations, shape, config):
    import torch

    n_labels, n_starts, n = shape
    d = z.shape[-1]
    f_all = f.reshape(n_labels * n_starts, n)  # (L·S, n)
    best_val, best_idx = f_all.max(dim=0)  # (n,)
    cols = torch.arange(n, device=f.device)
    pick = best_idx * n + cols  # flat index of the winner per sample
    unbounded = runaway.reshape(n_labels * n_starts, n).any(dim=0)
    tol_agree = 1e-6 * (1.0 + best_val.abs())
    agree = (f_all >= best_val - tol_agree).sum(dim=0) >= 2
    values = best_val.detach().cpu().numpy().astype(np.float64)
    values[unbounded.cpu().numpy()] = math.inf
    transport = feature_cost_torch(z[pick] - anchor[pick], cost).detach().cpu().numpy()
    return InnerMaxResult(
        values=values,
        maximisers=z[pick].reshape(n, d).detach(),
        labels=labels[pick].detach(),
        flipped=switched[pick].cpu().numpy(),
        transport=transport,
        unbounded=int(unbounded.sum()),
        converged=float(converged[pick].double().mean()),
        iterations=int(iterations),
        start_agreement=float(agree.double().mean()),
    )

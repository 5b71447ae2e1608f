"""Training: label-free PI-DION and the supervised DeepONet reference, same budget.

PI-DION loss (Cho & Son 2025, Sec. 3; weights and normalisation ours), per batch of
instances i with data d_i and scale s_i = RMS(d_i):
  L = w_res · mean_{i,j} |𝓛u_θ,i(x_j) − f_θ,i(x_j)|² / (F s_i)²   (residual, M random x_j)
    +         mean_{i,s} |u_θ,i(z_s) − d_i,s|² / s_i²              (data at the sensors)
with F = ``f_scale`` = (2π)² + |c| (the operator's size on the second sine mode: a
property of 𝓛, not of any label). The boundary term is zero by construction (hard
factor x(1−x)). No f enters this loss; :func:`train_pi_dion` never receives f.

Supervised reference: the same inverse branch and trunk (a fresh PIDION, u branch
unused), optimiser, schedule and steps; loss mean |f_θ,i(x_g) − f_i(x_g)|² / (F s_i)² on
the 129-point grid for N labelled pairs.

Optimiser (ours): Adam, learning rate ``lr`` with cosine decay to 1% over ``steps``,
mini-batches of ``batch`` instances drawn without replacement per epoch, fresh uniform
collocation points every step; then (``lbfgs_steps`` > 0) full-batch L-BFGS at fixed
midpoint collocation points. The supervised reference gets the same optimiser.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from iclr25.core.pi_dion.model import PIDION, NetConfig

# the recipe lives in a torch-free module (options are checked before torch loads)
from iclr25.core.pi_dion.recipe import TrainConfig as TrainConfig
from iclr25.core.pi_dion.recipe import check as check
from iclr25.core.pi_dion.recipe import for_dim as for_dim

DTYPE = torch.float32  # training precision (the reference tests use float64)


def f_scale(c: float) -> float:
    return (2 * math.pi) ** 2 + abs(c)


def _new_model(cfg: TrainConfig, sensors: int, c: float, seed: int) -> PIDION:
    torch.manual_seed(seed)
    net = NetConfig(sensors, cfg.width, cfg.depth, cfg.basis, f_scale(c))
    return PIDION(net).to(DTYPE)


def _batches(n: int, batch: int, gen: torch.Generator):
    while True:
        perm = torch.randperm(n, generator=gen)
        for start in range(0, n - min(batch, n) + 1, min(batch, n)):
            yield perm[start : start + min(batch, n)]


def _fit(
    model: torch.nn.Module,
    loss_of: Callable,
    cfg: TrainConfig,
    n: int,
    seed: int,
    progress=None,
    group=None,
    on_loss=None,
    dim: int = 1,
):
    """Adam steps then (``lbfgs_steps``) L-BFGS; collocation points in ``dim`` dimensions.
    ``group`` (a launched :class:`iclr25.distributed_torch.Context`) trains data-parallel:
    every rank draws the same instances and collocation points, computes the loss on its
    share of the instances, and DDP averages the weighted gradients, so each step is the
    one-process step (to float32 summation order); ``on_loss`` gets every Adam step's
    batch loss."""
    parallel = None
    if group is not None and group.active:
        from iclr25.distributed_torch import DataParallel, forward_of

        parallel = DataParallel(group, min(cfg.batch, n))
        parallel.attach(forward_of(model, lambda _m, idx, x: loss_of(idx, x)))
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda t: 0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * t / cfg.steps))
    )
    batches = _batches(n, cfg.batch, gen)
    last = float("nan")
    for step in range(cfg.steps):
        idx = next(batches)
        shape = (cfg.collocation,) if dim == 1 else (cfg.collocation, dim)
        x = torch.rand(shape, generator=gen, dtype=DTYPE)
        opt.zero_grad(set_to_none=True)
        if parallel is None:
            loss = loss_of(idx, x)
            loss.backward()
            last = float(loss.detach())
        else:
            loss = parallel.module(idx[parallel.rows(len(idx))], x)
            parallel.scale(loss).backward()
            last = parallel.mean(loss)
        opt.step()
        sched.step()
        if on_loss is not None:
            on_loss(last)
        if progress and (step + 1) % 100 == 0:
            progress(100)
    return _lbfgs(model, loss_of, cfg, n, dim, parallel) if cfg.lbfgs_steps else last


def midpoints(collocation: int, dim: int = 1) -> torch.Tensor:
    """L-BFGS's fixed collocation set: 2·collocation midpoints on [0, 1] (1-D), or the
    midpoints of a k × k grid with k² ≥ 2·collocation on [0, 1]² (2-D, (k², 2))."""
    if dim == 1:
        return (torch.arange(2 * collocation, dtype=DTYPE) + 0.5) / (2 * collocation)
    k = math.ceil(math.sqrt(2 * collocation))
    s = (torch.arange(k, dtype=DTYPE) + 0.5) / k
    return torch.cartesian_prod(s, s)


def _lbfgs(
    model: torch.nn.Module, loss_of: Callable, cfg: TrainConfig, n: int, dim=1, parallel=None
) -> float:
    """Full-batch L-BFGS (strong Wolfe line search) at fixed midpoints (:func:`midpoints`).
    Data-parallel: each rank's share of the instances, the closure's loss is the all-reduced
    batch mean, so every rank takes the same line-search decisions."""
    idx = torch.arange(n)
    x = midpoints(cfg.collocation, dim)
    opt = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=cfg.lbfgs_steps,
                            history_size=50, tolerance_grad=0.0, tolerance_change=0.0,
                            line_search_fn="strong_wolfe")  # fmt: skip

    def closure():
        opt.zero_grad(set_to_none=True)
        if parallel is None:
            loss = loss_of(idx, x)
            loss.backward()
            return loss
        rows = idx[parallel.rows(n)]
        loss = parallel.module(rows, x)
        parallel.scale(loss, len(rows), n).backward()
        return torch.tensor(parallel.mean(loss, len(rows), n), dtype=DTYPE)

    opt.step(closure)
    if parallel is not None:
        from iclr25.distributed_torch import parameters_in_sync

        if not parameters_in_sync(parallel.ctx, model):
            raise RuntimeError("data-parallel L-BFGS: the ranks' parameters diverged")
    with torch.no_grad():
        return float(loss_of(idx, x))


def train_pi_dion(
    d: np.ndarray,
    sensors: np.ndarray,
    c: float,
    cfg: TrainConfig,
    seed: int,
    progress=None,
    group=None,
    on_loss=None,
) -> tuple[PIDION, float]:
    """Label-free: only the noisy sensor data ``d`` (N, m) and their positions (m,).
    ``group``, ``on_loss``: as for :func:`_fit` (data-parallel under torchrun)."""
    model = _new_model(cfg, d.shape[1], c, seed)
    data = torch.as_tensor(d, dtype=DTYPE)
    z = torch.as_tensor(sensors, dtype=DTYPE)
    loss_of = label_free_loss(model, data, z, c, cfg.w_res)
    return model, _fit(model, loss_of, cfg, len(d), seed, progress, group, on_loss)


def label_free_loss(model, data: torch.Tensor, z: torch.Tensor, c: float, w_res: float):
    """The PI-DION loss (module docstring) of instances ``idx`` at collocation points ``x``,
    for any model with ``residual_and_fit`` and ``config.f_scale`` (1-D and 2-D)."""
    scale2 = data.pow(2).mean(1, keepdim=True)  # (N, 1) s_i²
    big_f2 = model.config.f_scale**2

    def loss_of(idx, x):
        res, u_s = model.residual_and_fit(data[idx], x, z, c)  # (B, M), (B, m)
        s2 = scale2[idx]
        return w_res * (res.pow(2) / (big_f2 * s2)).mean() + ((u_s - data[idx]).pow(2) / s2).mean()

    return loss_of


def supervised_loss(model, data: torch.Tensor, target: torch.Tensor, x: torch.Tensor):
    """The supervised reference's loss: MSE on f at the points ``x``, scaled by (F s_i)².
    The u branch takes no part in it and is frozen (its gradient would be None anyway, so
    one process trains as before; DDP must not wait for a gradient that never comes)."""
    model.branch_u.requires_grad_(False)
    scale2 = data.pow(2).mean(1, keepdim=True) * model.config.f_scale**2

    def loss_of(idx, _x):
        _, f_hat = model.fields(data[idx], x)
        return ((f_hat - target[idx]).pow(2) / scale2[idx]).mean()

    return loss_of


def train_supervised(
    d: np.ndarray,
    f: np.ndarray,
    grid: np.ndarray,
    c: float,
    cfg: TrainConfig,
    seed: int,
    progress=None,
    on_loss=None,
    group=None,
) -> tuple[PIDION, float]:
    """DeepONet on N labelled pairs (d_i, f_i on ``grid``): MSE on f only. ``group``,
    ``on_loss``: as for :func:`_fit` (data-parallel over the N instances under torchrun)."""
    model = _new_model(cfg, d.shape[1], c, seed)
    data = torch.as_tensor(d, dtype=DTYPE)
    target = torch.as_tensor(f, dtype=DTYPE)
    loss_of = supervised_loss(model, data, target, torch.as_tensor(grid, dtype=DTYPE))
    return model, _fit(model, loss_of, cfg, len(d), seed, progress, group, on_loss)


LOSS_EVERY = 100  # a training-loss curve keeps every 100th Adam step's batch loss


def loss_curve(losses: list[float], final: float | None) -> dict | None:
    """A run's training record for a result file: ``{"adam": every LOSS_EVERY-th Adam
    step's batch loss, "final": the loss after training}``; None when nothing was trained."""
    if final is None:
        return None
    return {"adam": losses[LOSS_EVERY - 1 :: LOSS_EVERY], "final": float(final)}


@torch.no_grad()
def predict(model: PIDION, d: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u, f) on ``grid`` for data ``d`` (N, m) → two (N, len(grid))."""
    u, f = model.fields(torch.as_tensor(d, dtype=DTYPE), torch.as_tensor(grid, dtype=DTYPE))
    return u.numpy(), f.numpy()

"""Single-constraint maximum-entropy ICL with an exact tabular forward pass (the baseline).

Malik, Anwar, Aghasi, Ahmed, "Inverse Constrained Reinforcement Learning" (ICML 2021):
the expert's trajectories are modelled by the maximum-entropy distribution of the
constrained MDP, P_ζ(τ) ∝ exp(β r(τ)) · Π_t ζ(s_t), and the feasibility ζ is fitted by
maximum likelihood, with Malik et al.'s regulariser pulling ζ towards 1. On a grid2d spec
the forward problem is solved exactly (no sampled policy, no PPO): the partition function
and the state visitation come from a forward recursion over the horizon, as in Scobee &
Sastry's tabular maximum-likelihood constraint inference (ICLR 2020).

Symbols (code → paper):

- ``theta`` (H_g, W_g) → per-cell logits, ζ_c = σ(θ_c) (Malik et al.'s ζ_θ, tabular);
- ``beta`` → the inverse temperature β of r(τ) = −(path length);
- :func:`log_partition` → log Z(s_i, g_i) = log Σ_τ exp(β r(τ)) Π_t ζ(s_t) over paths of
  exactly ``horizon`` states from s_i that end at g_i; the goal is absorbing (a stay there
  costs nothing, every other move costs its length), so shorter paths are padded by stays
  at the goal, as the demonstrations are;
- :func:`visitation` → E_{P_ζ}[Σ_t 1(s_t = c)] = ∂ log Z / ∂ log ζ_c (autograd);
- :func:`fit_maxent` → Adam steps on −(1/N) Σ_i log P_ζ(τ_i) + δ_s · mean_c (1 − ζ_c).

The baseline of the headline runs :func:`fit_maxent` K times on bootstrap resamples of the
demonstrations (each its own resample and initialisation): K single constraints, each what
a standard ICL method returns, to compare ExICL's diversity with. Its mask uses the same
rule as ExICL's (``ζ < 0.5``, cells the demonstrations need kept open).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.exicl import grid
from iclr25.core.exicl.spec import GridSpec


@dataclass(frozen=True)
class MaxEntConfig:
    steps: int = 200  # Adam steps (the experiment: rounds × net_steps, ExICL's φ budget)
    lr: float = 0.1  # Adam step on the logits
    beta: float = 2.0  # β: inverse temperature of r = −length (larger: closer to optimal)
    sparsity: float = 0.1  # δ_s: weight of mean(1 − ζ) (Malik et al.'s regulariser)
    init_logit: float = 3.0  # ζ ≈ 0.95 everywhere at the start
    horizon: int = 32  # states per path (the prior's horizon)


def transition_weights(spec: GridSpec, beta: float):
    """(C, C) dense exp(−β·step) of every legal move u → v with the known walls; 0 else."""
    import torch

    e = grid.edges(spec)
    keep = grid.open_edges(spec, spec.walls)
    w = torch.zeros((spec.cells, spec.cells), dtype=torch.float64)
    w[e.src[keep], e.dst[keep]] = torch.as_tensor(np.exp(-beta * e.weight[keep]))
    return w


def log_partition(log_zeta, weights, starts: np.ndarray, goals: np.ndarray, horizon: int):
    """log Z (N,) of paths of ``horizon`` states from ``starts`` to ``goals`` (cell
    indices (N,)); ``log_zeta`` (C,) log-feasibility of every cell, ``weights`` (C, C)."""
    import torch

    n = len(starts)
    rows = torch.arange(n)
    g = torch.as_tensor(goals, dtype=torch.long)
    zeta = log_zeta.exp()
    alpha = torch.zeros((n, weights.shape[0]), dtype=log_zeta.dtype)
    alpha[rows, torch.as_tensor(starts, dtype=torch.long)] = 1.0
    alpha = alpha * zeta[None]  # (N, C): s_0 weighted by ζ(s_0)
    log_scale = torch.zeros(n, dtype=log_zeta.dtype)
    for _ in range(horizon - 1):
        at_goal = alpha[rows, g]  # (N,) mass already absorbed at the goal
        moving = alpha.clone()
        moving[rows, g] = 0.0
        alpha = (moving @ weights) * zeta[None]  # (N, C)
        alpha = alpha.index_put((rows, g), alpha[rows, g] + at_goal * zeta[g])
        norm = alpha.sum(dim=1).clamp_min(1e-300)  # (N,)
        alpha = alpha / norm[:, None]
        log_scale = log_scale + norm.log()
    return (alpha[rows, g].clamp_min(1e-300)).log() + log_scale


def path_log_weight(log_zeta, spec: GridSpec, paths: list[np.ndarray], beta: float, horizon: int):
    """log [exp(β r(τ)) Π_t ζ(s_t)] (N,) of cell paths padded to ``horizon`` states."""
    import torch

    out = []
    for p in paths:
        cells = grid.cell_index(spec, p)
        padded = np.concatenate([cells, np.full(horizon - len(cells), cells[-1])])
        reward = -beta * grid.path_length(spec, p)
        out.append(log_zeta[torch.as_tensor(padded, dtype=torch.long)].sum() + reward)
    return torch.stack(out)


def visitation(spec: GridSpec, zeta: np.ndarray, start, goal, horizon: int, beta: float):
    """(H_g, W_g) expected visits E[Σ_t 1(s_t = c)] of the max-entropy path distribution
    from ``start`` to ``goal`` (cells as (x, y)) under feasibility ``zeta`` (H_g, W_g)."""
    import torch

    log_zeta = torch.as_tensor(np.log(zeta).ravel(), dtype=torch.float64).requires_grad_(True)
    s = grid.cell_index(spec, np.asarray([start]))
    g = grid.cell_index(spec, np.asarray([goal]))
    log_z = log_partition(log_zeta, transition_weights(spec, beta), s, g, horizon)
    (grad,) = torch.autograd.grad(log_z.sum(), log_zeta)
    return grad.numpy().reshape(spec.height, spec.width)


def fit_maxent(spec: GridSpec, paths: list[np.ndarray], config: MaxEntConfig, seed: int):
    """Fit ζ on ``paths`` (cell paths (T, 2)); returns ζ (H_g, W_g)."""
    import torch

    g = torch.Generator().manual_seed(int(seed) % 2**63)
    theta = torch.full((spec.cells,), config.init_logit, dtype=torch.float64)
    theta = theta + 0.1 * torch.randn(spec.cells, generator=g, dtype=torch.float64)
    theta.requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=config.lr)
    weights = transition_weights(spec, config.beta)
    starts = grid.cell_index(spec, np.array([p[0] for p in paths]))
    goals = grid.cell_index(spec, np.array([p[-1] for p in paths]))
    free = torch.as_tensor(~spec.walls.ravel())
    for _ in range(config.steps):
        log_zeta = torch.nn.functional.logsigmoid(theta)
        log_z = log_partition(log_zeta, weights, starts, goals, config.horizon)
        log_p = path_log_weight(log_zeta, spec, paths, config.beta, config.horizon) - log_z
        zeta = log_zeta.exp()
        loss = -log_p.mean() + config.sparsity * (1.0 - zeta[free]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return torch.sigmoid(theta).numpy().reshape(spec.height, spec.width)


def bootstrap_constraints(spec: GridSpec, paths: list[np.ndarray], k: int, config: MaxEntConfig,
                          seed: int) -> np.ndarray:  # fmt: skip
    """ζ (K, H_g, W_g) of K fits, each on its own bootstrap resample of ``paths``."""
    rng = np.random.default_rng(seed)
    out = []
    for j in range(k):
        pick = rng.integers(0, len(paths), len(paths))
        out.append(fit_maxent(spec, [paths[i] for i in pick], config, seed + 104729 * (j + 1)))
    return np.stack(out)

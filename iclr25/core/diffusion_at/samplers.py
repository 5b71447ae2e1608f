"""Samplers: DDPM ancestral, DDIM with 1…T steps, and one-/two-step consistency sampling.

DDIM (Song, Meng & Ermon 2021, eq. 12) on the grid τ_1 > … > τ_K (``timesteps_for``):

    x̂_0 = (x_τ - σ_τ ε_θ(x_τ, τ)) / √ᾱ_τ
    x_τ' = √ᾱ_τ' x̂_0 + √(1 - ᾱ_τ' - σ_η²) ε_θ + σ_η z,
    σ_η = η √((1-ᾱ_τ')/(1-ᾱ_τ)) √(1 - ᾱ_τ/ᾱ_τ'),

with τ' the next grid point (ᾱ = 1 after the last one, where x̂_0 is returned). η = 0 is
deterministic DDIM; η = 1 is DDPM ancestral sampling (Ho et al. 2020, Alg. 2) on the
respaced grid — with K = T the two coincide exactly. K is the number of function
evaluations (NFE). For images x̂_0 is clipped to [-1, 1] and ε re-derived from it (ADM).

Consistency sampling (Song et al. 2023, Alg. 1): x̂_0 = f_θ(x_T, t_N) (one step); two
steps re-noise x̂_0 to the grid point whose s_t = σ_t/√ᾱ_t is nearest ``mid_s`` (0.8,
close to the 0.821 they use on CIFAR-10) and apply f_θ again.

Every sampler starts from x_T ~ N(0, I) drawn from the given generator, so a sampler is a
deterministic function of (weights, generator seed); DDIM with η = 0 uses no other noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from iclr25.core.diffusion_at.consistency import ConsistencyParam
from iclr25.core.diffusion_at.names import SAMPLERS
from iclr25.core.diffusion_at.schedules import NoiseSchedule

CM_MID_S = 0.8


@dataclass(frozen=True)
class SamplerSpec:
    kind: str = "ddim"  # ddim | ddpm | cm
    nfe: int = 10

    def __post_init__(self) -> None:
        if self.kind not in SAMPLERS:
            raise ValueError(f"unknown sampler {self.kind!r}; use one of {SAMPLERS}")
        if self.kind == "cm" and self.nfe not in (1, 2):
            raise ValueError(f"consistency sampling takes 1 or 2 steps, got NFE {self.nfe}")
        if self.nfe < 1:
            raise ValueError(f"NFE must be >= 1, got {self.nfe}")


def _clip_x0(x0: torch.Tensor, clip: float | None) -> torch.Tensor:
    return x0 if clip is None else x0.clamp(-clip, clip)


@torch.no_grad()
def ddim_trajectory(
    model: nn.Module,
    schedule: NoiseSchedule,
    x_T: torch.Tensor,
    nfe: int,
    eta: float = 0.0,
    gen: torch.Generator | None = None,
    clip: float | None = None,
) -> list[tuple[int, torch.Tensor]]:
    """[(τ_1, x_T), (τ_2, x_τ2), …, (-1, x̂_0)]: the sampler's state at every grid point."""
    grid = schedule.timesteps_for(nfe)
    abar = list(schedule.alpha_bar) + [1.0]  # abar[-1] = 1
    x, states = x_T, [(grid[0], x_T)]
    for i, t in enumerate(grid):
        t_prev = grid[i + 1] if i + 1 < len(grid) else -1
        t_vec = torch.full((x.shape[0],), t, dtype=torch.int64, device=x.device)
        eps = model(x, t_vec)
        x0 = _clip_x0((x - math.sqrt(1 - abar[t]) * eps) / math.sqrt(abar[t]), clip)
        if clip is not None:
            eps = (x - math.sqrt(abar[t]) * x0) / math.sqrt(1 - abar[t])
        if t_prev == -1:
            x = x0
        else:
            a_t, a_p = abar[t], abar[t_prev]
            sigma = eta * math.sqrt((1 - a_p) / (1 - a_t) * (1 - a_t / a_p))
            x = math.sqrt(a_p) * x0 + math.sqrt(max(1 - a_p - sigma**2, 0.0)) * eps
            if sigma > 0:
                x = x + sigma * torch.randn(x.shape, generator=gen).to(x.device)
        states.append((t_prev, x))
    return states


@torch.no_grad()
def cm_trajectory(
    model: nn.Module,
    param: ConsistencyParam,
    x_T: torch.Tensor,
    steps: int,
    gen: torch.Generator,
    clip: float | None = None,
    mid_s: float = CM_MID_S,
) -> list[tuple[int, torch.Tensor]]:
    """[(t_N, x_T), (t_mid, x_mid) for two steps, (-1, x̂_0)]: consistency sampling."""
    t_top = int(param.grid[-1])
    t_vec = torch.full((x_T.shape[0],), t_top, dtype=torch.int64, device=x_T.device)
    x0 = _clip_x0(param.f(model, x_T, t_vec), clip)
    states = [(t_top, x_T)]
    if steps == 2:
        t_mid = int(param.grid[param.nearest_grid_index(mid_s)])
        a, s = param.schedule.coefficients(torch.tensor([t_mid]), x0.dim())
        z = torch.randn(x0.shape, generator=gen).to(x0.device)
        x_mid = a.to(x0.device) * x0 + s.to(x0.device) * z
        states.append((t_mid, x_mid))
        x0 = _clip_x0(param.f(model, x_mid, torch.full_like(t_vec, t_mid)), clip)
    states.append((-1, x0))
    return states


def trajectory(
    model: nn.Module,
    spec: SamplerSpec,
    schedule: NoiseSchedule,
    x_T: torch.Tensor,
    gen: torch.Generator,
    clip: float | None = None,
    param: ConsistencyParam | None = None,
) -> list[tuple[int, torch.Tensor]]:
    """The states (t, x_t) a sampler visits from ``x_T``, ending with (-1, x̂_0)."""
    if spec.kind == "cm":
        if param is None:
            raise ValueError("consistency sampling needs the model's ConsistencyParam")
        return cm_trajectory(model, param, x_T, spec.nfe, gen, clip)
    if spec.nfe > schedule.num_steps:
        raise ValueError(f"NFE {spec.nfe} exceeds the {schedule.num_steps} diffusion steps")
    eta = 1.0 if spec.kind == "ddpm" else 0.0
    return ddim_trajectory(model, schedule, x_T, spec.nfe, eta, gen, clip)


def generate(
    model: nn.Module,
    spec: SamplerSpec,
    schedule: NoiseSchedule,
    n: int,
    shape: tuple[int, ...],
    gen: torch.Generator,
    clip: float | None = None,
    param: ConsistencyParam | None = None,
    device: str = "cpu",
    chunk: int = 4096,
) -> torch.Tensor:
    """n samples of one sample ``shape``, in chunks; returns a CPU float32 tensor."""
    was_training = model.training
    model.eval()
    out = []
    for start in range(0, n, chunk):
        x_T = torch.randn((min(chunk, n - start), *shape), generator=gen).to(device)
        out.append(trajectory(model, spec, schedule, x_T, gen, clip, param)[-1][1].float().cpu())
    model.train(was_training)
    return torch.cat(out) if out else torch.empty((0, *shape))

"""The train/sample mismatch: q(x_t) against the sampler's own p_θ(x_t), per timestep.

Wang et al. (ICLR 2025, §3): training feeds the denoiser x_t ~ q(x_t) = ∫ q(x_t|x_0)
q(x_0), sampling feeds it the sampler's previous output, x_t ~ p_θ(x_t); the gap grows
along the chain and with fewer steps. AT is meant to keep p_θ(x_t) inside a ball around
q(x_t) at every t (their Fig. 1).

:func:`mismatch_curve` makes this visible: it runs a sampler (DDIM / DDPM on the NFE grid,
or the consistency sampler) from n draws of x_T ~ N(0, I), keeps its state at every
visited timestep τ, draws n exact samples of q(x_τ) = √ᾱ_τ x_0 + σ_τ ε with fresh x_0
(exact samplers) or x_0 from the data set, and measures the discrepancy at each τ:
the unbiased MMD² (Gaussian kernels at the median distance of the q(x_τ) sample) and the
sliced W₂, on the flattened x (pixels for images). The last point (τ = -1) is the data
itself. Seeds are fixed, so two models scored with the same seed see the same x_T and
the same q samples.
"""

from __future__ import annotations

import torch
from torch import nn

from iclr25.core.diffusion_at import metrics
from iclr25.core.diffusion_at.consistency import ConsistencyParam
from iclr25.core.diffusion_at.data import Dataset
from iclr25.core.diffusion_at.samplers import SamplerSpec, trajectory
from iclr25.core.diffusion_at.schedules import NoiseSchedule


def q_marginal(
    dataset: Dataset, schedule: NoiseSchedule, t: int, n: int, gen: torch.Generator
) -> torch.Tensor:
    """n exact samples of q(x_t) (t = -1: the data)."""
    x0 = dataset.sample(n, gen)
    if t < 0:
        return x0
    eps = torch.randn(x0.shape, generator=gen)
    return schedule.q_sample(x0, torch.full((n,), t, dtype=torch.int64), eps)


def discrepancy(model_x: torch.Tensor, true_x: torch.Tensor, seed: int, device: str) -> dict:
    """MMD² and SW₂ between two (n, *shape) sets, kernel bandwidth from ``true_x``."""
    a = model_x.reshape(model_x.shape[0], -1).double().numpy()
    b = true_x.reshape(true_x.shape[0], -1).double().numpy()
    h = metrics.median_bandwidth(b, seed=seed)
    return {"mmd": metrics.mmd2(a, b, h, device), "sw": metrics.sliced_wasserstein(a, b, seed=seed)}


@torch.no_grad()
def mismatch_curve(
    model: nn.Module,
    spec: SamplerSpec,
    schedule: NoiseSchedule,
    dataset: Dataset,
    n: int = 1000,
    seed: int = 0,
    param: ConsistencyParam | None = None,
    device: str = "cpu",
) -> list[dict]:
    """[{"step", "t", "mmd", "sw"}] for every state of the sampler, x_T first, data last."""
    gen = torch.Generator().manual_seed(seed)
    was_training = model.training
    model.eval()
    x_T = torch.randn((n, *dataset.shape), generator=gen).to(device)
    states = trajectory(model, spec, schedule, x_T, gen, dataset.clip, param)
    model.train(was_training)
    q_gen = torch.Generator().manual_seed(seed + 1)
    curve = []
    for step, (t, x_t) in enumerate(states):
        true_x = q_marginal(dataset, schedule, t, n, q_gen)
        x_t = x_t.float().cpu()
        if not torch.isfinite(x_t).all():
            curve.append({"step": step, "t": t, "mmd": float("nan"), "sw": float("nan")})
            continue
        curve.append({"step": step, "t": t, **discrepancy(x_t, true_x, seed, device)})
    return curve

"""The per-timestep discrepancy between q(x_t) and the sampler's p_θ(x_t)."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from iclr25.core.diffusion_at.data import Dataset
from iclr25.core.diffusion_at.mismatch import mismatch_curve, q_marginal
from iclr25.core.diffusion_at.samplers import SamplerSpec
from iclr25.core.diffusion_at.schedules import NoiseSchedule

VAR = 0.25


def gaussian_data() -> Dataset:
    return Dataset(
        "gauss",
        "points",
        (2,),
        sampler=lambda n, gen: math.sqrt(VAR) * torch.randn(n, 2, generator=gen),
    )


class GaussianEps(nn.Module):
    """Exact ε for x_0 ~ N(0, VAR I)."""

    def __init__(self, schedule, scale: float = 1.0):
        super().__init__()
        self.abar = torch.tensor(schedule.alpha_bar, dtype=torch.float32)
        self.scale = scale

    def forward(self, x, t):
        abar = self.abar[t.long()][:, None]
        return self.scale * (1 - abar).sqrt() * x / (abar * VAR + 1 - abar)


def test_q_marginal_has_the_closed_form_variance():
    s = NoiseSchedule.make("linear", 100)
    x = q_marginal(gaussian_data(), s, 50, 20000, torch.Generator().manual_seed(0))
    expected = s.alpha_bar[50] * VAR + 1 - s.alpha_bar[50]  # Var q(x_t) = ᾱ v + σ²
    assert abs(float(x.var()) - expected) < 0.03 * expected


def test_exact_model_has_no_mismatch_and_a_wrong_one_grows_along_the_chain():
    # T = 40 with NFE 40 (every step): the exact ε leaves only a small discretisation gap
    s = NoiseSchedule.make("linear", 40)
    spec = SamplerSpec("ddim", 40)
    exact = mismatch_curve(GaussianEps(s), spec, s, gaussian_data(), n=300, seed=0)
    wrong = mismatch_curve(GaussianEps(s, scale=1.6), spec, s, gaussian_data(), n=300, seed=0)
    assert [p["t"] for p in exact] == s.timesteps_for(40) + [-1]
    exact_mmd = np.array([p["mmd"] for p in exact])
    wrong_mmd = np.array([p["mmd"] for p in wrong])
    assert np.abs(exact_mmd).max() < 0.02  # samples of (nearly) the same law: MMD² ≈ 0
    assert wrong_mmd[0] == exact_mmd[0]  # both start from the same x_T draws
    assert wrong_mmd[-1] > 0.1 and wrong_mmd[-1] > 5 * np.abs(exact_mmd).max()
    assert wrong_mmd[len(wrong_mmd) // 2] > 10 * abs(wrong_mmd[0])  # grows along the chain
    assert wrong[-1]["sw"] > 3 * exact[-1]["sw"]

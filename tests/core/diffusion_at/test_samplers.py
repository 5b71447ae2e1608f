"""Samplers: DDIM determinism, DDPM ≡ DDIM(η=1) on the full grid, a Gaussian known answer."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from iclr25.core.diffusion_at.consistency import ConsistencyParam
from iclr25.core.diffusion_at.samplers import SamplerSpec, ddim_trajectory, generate, trajectory
from iclr25.core.diffusion_at.schedules import NoiseSchedule
from iclr25.testing import assert_close


class GaussianEps(nn.Module):
    """The exact ε-predictor for data x_0 ~ N(0, v I): E[ε | x_t] = σ_t x_t / (ᾱ_t v + σ_t²)."""

    def __init__(self, schedule: NoiseSchedule, variance: float) -> None:
        super().__init__()
        self.abar = torch.tensor(schedule.alpha_bar, dtype=torch.float64)
        self.v = variance

    def forward(self, x, t):
        abar = self.abar[t.long()].to(x.dtype).view(-1, *[1] * (x.dim() - 1))
        sigma2 = 1 - abar
        return sigma2.sqrt() * x / (abar * self.v + sigma2)


def test_ddim_is_deterministic():
    s = NoiseSchedule.make("linear", 100)
    model = GaussianEps(s, 0.25)
    a = generate(model, SamplerSpec("ddim", 7), s, 50, (2,), torch.Generator().manual_seed(5))
    b = generate(model, SamplerSpec("ddim", 7), s, 50, (2,), torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    x_T = torch.randn(30, 2, dtype=torch.float64)
    run1 = ddim_trajectory(model, s, x_T, 9, eta=0.0, gen=torch.Generator().manual_seed(1))
    run2 = ddim_trajectory(model, s, x_T, 9, eta=0.0, gen=torch.Generator().manual_seed(2))
    assert torch.equal(run1[-1][1], run2[-1][1])  # η = 0 draws no noise: the generator is unused


def test_ddim_on_gaussian_data_reaches_the_data_variance():
    # with the exact ε of N(0, v I) data, DDIM (the PF-ODE) maps N(0, I) onto N(0, v I);
    # with 200 steps the discretisation error on the std is below 2 %
    s = NoiseSchedule.make("linear", 1000)
    v = 0.25
    model = GaussianEps(s, v)
    x_T = torch.randn(20000, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x0 = ddim_trajectory(model, s, x_T, 200)[-1][1]
    assert abs(float(x0.std()) - math.sqrt(v)) < 0.02 * math.sqrt(v)
    # one step returns the posterior mean E[x_0 | x_T] = √ᾱ v x_T / (ᾱ v + σ²) (known answer)
    one = ddim_trajectory(model, s, x_T, 1)[-1][1]
    abar = s.alpha_bar[-1]
    assert_close(one, x_T * math.sqrt(abar) * v / (abar * v + 1 - abar), rtol=1e-9)


def test_ddpm_sampler_is_ancestral_sampling_with_the_posterior():
    # η = 1 on the full grid: x_{t-1} = μ̃(x_t, x̂_0) + √β̃_t z (Ho et al. eq. 7, Alg. 2)
    s = NoiseSchedule.make("linear", 20)
    model = GaussianEps(s, 0.5)
    x_T = torch.randn(8, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    states = ddim_trajectory(model, s, x_T, 20, eta=1.0, gen=torch.Generator().manual_seed(4))
    gen = torch.Generator().manual_seed(4)
    x = x_T
    for t in range(19, 0, -1):
        eps = model(x, torch.full((8,), t))
        x0 = (x - math.sqrt(1 - s.alpha_bar[t]) * eps) / math.sqrt(s.alpha_bar[t])
        c0, ct, var = s.posterior(t)
        x = c0 * x0 + ct * x + math.sqrt(var) * torch.randn(x.shape, generator=gen).double()
        assert_close(states[20 - t][1], x, rtol=1e-6, atol=1e-6, what=f"t={t}")  # z is float32


def test_trajectory_visits_the_grid_and_ends_at_x0():
    s = NoiseSchedule.make("linear", 50)
    states = trajectory(
        GaussianEps(s, 1.0),
        SamplerSpec("ddim", 5),
        s,
        torch.randn(4, 2, dtype=torch.float64),
        torch.Generator(),
    )
    assert [t for t, _ in states] == s.timesteps_for(5) + [-1]


def test_nfe_beyond_the_diffusion_steps_is_refused():
    s = NoiseSchedule.make("linear", 50)
    with pytest.raises(ValueError, match="exceeds the 50 diffusion steps"):
        trajectory(
            GaussianEps(s, 1.0), SamplerSpec("ddim", 51), s, torch.randn(2, 2), torch.Generator()
        )
    with pytest.raises(ValueError, match="1 or 2 steps"):
        SamplerSpec("cm", 3)


def test_images_are_clipped():
    s = NoiseSchedule.make("linear", 50)
    out = generate(
        GaussianEps(s, 100.0),
        SamplerSpec("ddim", 3),
        s,
        16,
        (1, 2, 2),
        torch.Generator().manual_seed(0),
        clip=1.0,
    )
    assert out.abs().max() <= 1.0


def test_consistency_sampling_one_and_two_steps():
    s = NoiseSchedule.make("linear", 100)
    param = ConsistencyParam(s, 10)

    class Zero(nn.Module):
        def forward(self, x, t):
            return torch.zeros_like(x)

    # F_θ = 0: f(x, t) = c_skip(s_t) x/√ᾱ_t, so one step is a known rescaling of x_T
    x_T = torch.randn(5, 2, generator=torch.Generator().manual_seed(0))
    out = trajectory(Zero(), SamplerSpec("cm", 1), s, x_T, torch.Generator(), param=param)
    top = torch.full((5,), int(param.grid[-1]))
    c_skip, _ = param.c_skip_out(top)
    expected = c_skip[:, None] * x_T / math.sqrt(s.alpha_bar[int(param.grid[-1])])
    assert_close(out[-1][1], expected, rtol=1e-5)
    two = trajectory(Zero(), SamplerSpec("cm", 2), s, x_T, torch.Generator(), param=param)
    assert len(two) == 3 and two[1][0] == int(param.grid[param.nearest_grid_index(0.8)])

"""Noise-schedule identities (Ho et al. 2020; Nichol & Dhariwal 2021)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.diffusion_at.schedules import NoiseSchedule
from iclr25.testing import assert_close


def test_linear_endpoints_match_ho_et_al():
    # Ho et al. §4: β_1 = 1e-4, β_T = 0.02 for T = 1000
    s = NoiseSchedule.make("linear", 1000)
    assert_close(s.betas[[0, -1]], np.array([1e-4, 0.02]), rtol=1e-12)
    # rescaled for T = 500: 2e-4 .. 0.04 (1000/T scaling)
    assert_close(NoiseSchedule.make("linear", 500).betas[[0, -1]], np.array([2e-4, 0.04]))


def test_linear_alpha_bar_known_value():
    # ᾱ_T for the T = 1000 linear schedule is 4.04e-5 (exp of Σ log(1-β), computed in closed form)
    s = NoiseSchedule.make("linear", 1000)
    expected = math.exp(np.log1p(-np.linspace(1e-4, 0.02, 1000)).sum())
    assert_close(s.alpha_bar[-1], expected, rtol=1e-12)
    assert 4.0e-5 < s.alpha_bar[-1] < 4.1e-5


@pytest.mark.parametrize("kind", ["linear", "cosine"])
@given(num_steps=st.integers(2, 400))
def test_schedule_identities(kind, num_steps):
    s = NoiseSchedule.make(kind, num_steps)
    assert_close(s.alpha_bar, np.cumprod(1 - s.betas), rtol=1e-12)
    assert_close(s.alpha_bar + s.sigma**2, np.ones(num_steps), rtol=1e-12)
    assert np.all(np.diff(s.alpha_bar) < 0), "ᾱ_t must decrease"
    assert np.all((s.betas > 0) & (s.betas <= 0.999))


def test_cosine_matches_its_closed_form_where_unclipped():
    # Nichol & Dhariwal eq. 17: ᾱ_t = f(t+1)/f(0), f(u) = cos²((u/T + s)/(1 + s) π/2)
    T = 1000
    s = NoiseSchedule.make("cosine", T)
    f = np.cos((np.arange(T + 1) / T + 0.008) / 1.008 * np.pi / 2) ** 2
    unclipped = s.betas < 0.999
    first_clip = np.argmin(unclipped) if not unclipped.all() else T
    assert_close(s.alpha_bar[:first_clip], (f[1:] / f[0])[:first_clip], rtol=1e-9)


def test_q_sample_and_predict_x0_are_inverse():
    s = NoiseSchedule.make("cosine", 200)
    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(64, 3, generator=gen, dtype=torch.float32)
    eps = torch.randn(64, 3, generator=gen)
    t = torch.randint(0, 190, (64,), generator=gen)
    x_t = s.q_sample(x0, t, eps)
    assert_close(s.predict_x0(x_t, t, eps), x0, rtol=1e-4, atol=1e-4)
    assert_close(s.predict_eps(x_t, t, x0), eps, rtol=1e-4, atol=1e-4)


def test_index_minus_one_is_clean_data():
    s = NoiseSchedule.make("linear", 10)
    t = torch.tensor([-1, 0])
    assert_close(s.alpha_bar_at(t), torch.tensor([1.0, s.alpha_bar[0]], dtype=torch.float32))


def test_posterior_variance_is_beta_tilde():
    # Ho et al. eq. 7: β̃_t = (1-ᾱ_{t-1})/(1-ᾱ_t) β_t, and coefficients sum: mean of x0 = x_t
    s = NoiseSchedule.make("linear", 100)
    for t in (1, 50, 99):
        c0, ct, var = s.posterior(t)
        expected = (1 - s.alpha_bar[t - 1]) / (1 - s.alpha_bar[t]) * s.betas[t]
        assert_close(var, expected, rtol=1e-12)
        # E[x_{t-1} | x_t, x_0] with x_t = √ᾱ_t x_0 (ε = 0) must be √ᾱ_{t-1} x_0
        assert_close(c0 + ct * math.sqrt(s.alpha_bar[t]), math.sqrt(s.alpha_bar[t - 1]), rtol=1e-12)


@given(T=st.integers(1, 300), data=st.data())
def test_timesteps_for_are_distinct_descending_and_evenly_trailing(T, data):
    nfe = data.draw(st.integers(1, T))
    grid = NoiseSchedule.make("linear", T).timesteps_for(nfe)
    assert len(grid) == nfe and grid[0] == T - 1
    assert all(a > b for a, b in zip(grid, grid[1:], strict=False))
    # trailing spacing: every gap and the last point + 1 are T/K rounded down or up
    gaps = [a - b for a, b in zip(grid, [*grid[1:], -1], strict=True)]
    assert all(math.floor(T / nfe) <= g <= math.ceil(T / nfe) for g in gaps)


def test_trailing_grid_known_answers():
    # Lin et al. 2024 ("Common diffusion noise schedules and sample steps are flawed"),
    # Table 2, trailing, T = 1000, 10 steps: 1000, 900, …, 100 (1-based) = 999, …, 99 here
    s = NoiseSchedule.make("linear", 1000)
    assert s.timesteps_for(10) == list(range(999, 0, -100))
    assert s.timesteps_for(2) == [999, 499]  # a grid ending at t = 0 would waste step 2
    assert NoiseSchedule.make("linear", 20).timesteps_for(20) == list(range(19, -1, -1))
    assert s.evenly_spaced(5) == [0, 250, 500, 749, 999]  # the consistency grid keeps t = 0


def test_nfe_out_of_range_is_refused():
    s = NoiseSchedule.make("linear", 50)
    with pytest.raises(ValueError, match="within 1..50"):
        s.timesteps_for(51)
    with pytest.raises(ValueError, match="unknown schedule"):
        NoiseSchedule.make("sigmoid", 10)

"""The perturbation ball, its projection, ascent steps, searches and AT targets."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.diffusion_at.adversarial import (
    ATConfig,
    ascent_step,
    ball_radius,
    free_update,
    project,
    regression_target,
    search_delta,
)
from iclr25.core.diffusion_at.schedules import NoiseSchedule
from iclr25.testing import assert_close

NORMS = ["l2", "linf"]


def _norms(delta: torch.Tensor, norm: str) -> torch.Tensor:
    flat = delta.reshape(delta.shape[0], -1)
    return flat.norm(dim=1) if norm == "l2" else flat.abs().amax(dim=1)


@pytest.mark.parametrize("norm", NORMS)
@given(
    seed=st.integers(0, 10_000),
    alpha=st.floats(0, 3),
    scale=st.floats(1e-3, 100),
    shape=st.sampled_from([(5, 2), (3, 1, 8, 8), (1, 7)]),
)
def test_projection_respects_the_norm_bound(norm, seed, alpha, scale, shape):
    gen = torch.Generator().manual_seed(seed)
    delta = scale * torch.randn(shape, generator=gen, dtype=torch.float64)
    projected = project(delta, norm, alpha)
    d = math.prod(shape[1:])
    radius = ball_radius(norm, alpha, d)
    assert (_norms(projected, norm) <= radius * (1 + 1e-9) + 1e-12).all()
    # idempotent, and the identity inside the ball
    assert_close(project(projected, norm, alpha), projected, rtol=1e-12, atol=1e-12)
    inside = (
        delta
        * 0.5
        * radius
        / _norms(delta, norm).clamp_min(1e-12).view(-1, *[1] * (len(shape) - 1))
    )
    assert_close(project(inside, norm, alpha), inside, rtol=1e-12, atol=1e-12)


def test_ball_radius_units():
    # ℓ∞: α per coordinate; ℓ2: α √d, so an 8×8 image (d = 64) at α = 0.1 has radius 0.8
    assert ball_radius("linf", 0.1, 64) == 0.1
    assert_close(ball_radius("l2", 0.1, 64), 0.8, rtol=1e-12)


def test_ascent_step_sizes():
    grad = torch.tensor([[3.0, 4.0], [0.0, -2.0]])
    zero = torch.zeros_like(grad)
    l2 = ascent_step(zero, grad, "l2", 0.5)  # ℓ2 step of length 0.5 √2 along g/|g|
    assert_close(l2.norm(dim=1), torch.full((2,), 0.5 * math.sqrt(2)), rtol=1e-6)
    assert_close(l2[0], torch.tensor([0.6, 0.8]) * 0.5 * math.sqrt(2), rtol=1e-6)
    assert_close(ascent_step(zero, grad, "linf", 0.5), 0.5 * grad.sign())


@pytest.mark.parametrize("method", ["fgsm", "pgd"])
@pytest.mark.parametrize("norm", NORMS)
def test_search_respects_the_bound_and_increases_the_loss(method, norm):
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(32, 4, generator=gen)
    w = torch.randn(4, 4, generator=gen)
    target = torch.randn(32, 4, generator=gen)

    def loss_of(delta):
        return ((x + delta) @ w - target).square().mean()

    config = ATConfig(method=method, norm=norm, alpha=0.2, pgd_steps=5)
    delta = search_delta(loss_of, x, config)
    assert (_norms(delta, norm) <= ball_radius(norm, 0.2, 4) + 1e-6).all()
    assert float(loss_of(delta)) > float(loss_of(torch.zeros_like(x)))
    assert not delta.requires_grad


def test_pgd_finds_at_least_the_fgsm_loss_on_a_convex_loss():
    gen = torch.Generator().manual_seed(2)
    x, target = torch.randn(16, 3, generator=gen), torch.randn(16, 3, generator=gen)

    def loss_of(delta):
        return (x + delta - target).square().sum()

    fgsm = search_delta(loss_of, x, ATConfig(method="fgsm", alpha=0.3))
    pgd = search_delta(loss_of, x, ATConfig(method="pgd", alpha=0.3, pgd_steps=10))
    # for ‖x + δ - y‖² the ℓ2 maximiser is δ = r (x - y)/‖x - y‖: FGSM from 0 finds it exactly
    assert_close(float(loss_of(pgd)), float(loss_of(fgsm)), rtol=1e-4)


def test_alpha_zero_gives_exactly_zero():
    x = torch.randn(8, 2)
    for method in ("fgsm", "pgd"):
        delta = search_delta(
            lambda d: (x + d).square().sum(), x, ATConfig(method=method, alpha=0.0)
        )
        assert torch.equal(delta.abs(), torch.zeros_like(x))
    assert not ATConfig(method="free", alpha=0.0).active


def test_free_update_steps_then_projects():
    config = ATConfig(method="free", norm="linf", alpha=0.1)
    delta = torch.full((2, 3), 0.08)
    out = free_update(delta, torch.ones(2, 3), config)
    assert_close(out, torch.full((2, 3), 0.1))  # 0.08 + 0.1 → clipped at the radius 0.1
    assert torch.equal(free_update(delta, None, config), delta)


def test_x0_target_keeps_the_clean_image():
    # x_t + δ = √ᾱ x_0 + σ (ε + δ/σ): predicting ε + δ/σ from x_t + δ recovers x_0 exactly
    s = NoiseSchedule.make("linear", 100)
    gen = torch.Generator().manual_seed(3)
    x0, eps = torch.randn(10, 2, generator=gen), torch.randn(10, 2, generator=gen)
    t = torch.randint(0, 100, (10,), generator=gen)
    delta = 0.3 * torch.randn(10, 2, generator=gen)
    _, sigma = s.coefficients(t, 2)
    target = regression_target(eps, delta, sigma, "x0")
    assert_close(s.predict_x0(s.q_sample(x0, t, eps) + delta, t, target), x0, rtol=1e-4, atol=1e-4)
    assert regression_target(eps, delta, sigma, "eps") is eps


@pytest.mark.parametrize(
    "bad",
    [
        {"alpha": -0.1},
        {"alpha": float("nan")},
        {"method": "tpgd"},
        {"norm": "l1"},
        {"target": "x1"},
        {"pgd_steps": 0},
        {"step": 0},
    ],
)
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        ATConfig(**bad)


def test_default_steps():
    assert ATConfig(method="pgd", alpha=0.1, pgd_steps=5).step_size() == pytest.approx(0.05)
    assert ATConfig(method="free", alpha=0.1).step_size() == 0.1
    assert ATConfig(method="fgsm", alpha=0.1, step=0.02).step_size() == 0.02

"""The study's class-conditional DDPM: v-prediction identities, determinism, labels matter,
and the cache round trip."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr25.core.diffusion_at.schedules import NoiseSchedule
from iclr25.core.style_check import generator as G
from iclr25.testing import assert_close


def _works(n_per: int = 6, size: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Two 'artists': dark red and light blue squares with noise."""
    rng = np.random.default_rng(0)
    red = np.array([150, 20, 20]) + rng.integers(-10, 10, (n_per, size, size, 3))
    blue = np.array([60, 120, 230]) + rng.integers(-10, 10, (n_per, size, size, 3))
    images = np.clip(np.concatenate([red, blue]), 0, 255).astype(np.uint8)
    return images, np.repeat([0, 1], n_per)


def test_v_target_recovers_eps_and_x0():
    schedule = NoiseSchedule.make("cosine", 50)
    gen = torch.Generator().manual_seed(0)
    x0, eps = torch.randn(4, 3, 4, 4, generator=gen), torch.randn(4, 3, 4, 4, generator=gen)
    t = torch.tensor([0, 10, 30, 49])
    x_t = schedule.q_sample(x0, t, eps)
    v = G.v_target(schedule, x0, t, eps)
    a, s = schedule.coefficients(t, 4)
    assert_close((s * x_t + a * v).numpy(), eps.numpy(), atol=1e-5)  # ε = σ x_t + √ᾱ v
    assert_close((a * x_t - s * v).numpy(), x0.numpy(), atol=1e-5)  # x_0 = √ᾱ x_t - σ v


def test_training_is_deterministic_and_round_trips():
    images, labels = _works()
    cfg = G.GeneratorConfig(
        size_px=8, width=8, steps=15, batch_size=8, diffusion_steps=20, sample_nfe=10
    )
    one = G.train_generator(images, labels, 2, cfg, seed=3)
    two = G.train_generator(images, labels, 2, cfg, seed=3)
    assert one.losses == two.losses
    back = G.from_bytes(G.to_bytes(one))
    samples = G.sample(one, np.array([0, 1, 1]), seed=5)
    assert samples.shape == (3, 8, 8, 3) and samples.dtype == np.uint8
    np.testing.assert_array_equal(samples, G.sample(back, np.array([0, 1, 1]), seed=5))
    assert G.cache_key(cfg, images, labels, 3) != G.cache_key(cfg, images, labels, 4)


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_the_label_steers_the_conditional_model_and_not_the_control():
    """After a short training the red label gives redder samples than the blue one; the
    unconditional control ignores labels (same noise -> same image)."""
    images, labels = _works()
    cfg = G.GeneratorConfig(size_px=8, width=8, steps=150, batch_size=12, diffusion_steps=50)
    cond = G.train_generator(images, labels, 2, cfg, seed=0)
    red, blue = G.sample(cond, np.zeros(6, int), 1), G.sample(cond, np.ones(6, int), 1)
    redness = lambda x: float(x[..., 0].mean() - x[..., 2].mean())  # noqa: E731
    assert redness(red) > redness(blue) + 40
    from dataclasses import replace

    uncond = G.train_generator(images, labels, 2, replace(cfg, conditional=False), seed=0)
    np.testing.assert_array_equal(
        G.sample(uncond, np.zeros(4, int), 2), G.sample(uncond, np.ones(4, int), 2)
    )

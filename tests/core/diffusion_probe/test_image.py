"""The image path: reverse process, Gaussian control, token changes, verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from iclr25.core.diffusion_probe import image


class TinyEps(torch.nn.Module):
    """A fixed, non-trivial ε-predictor for 1×4×4 images."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x, t):
        flat = x.reshape(len(x), -1)
        return torch.tanh(self.lin(flat) + t[:, None].float() / 50).reshape(x.shape)


def test_full_grid_reverse_process_equals_the_ddpm_ancestral_sampler():
    """η = 1 on every step from T−1 is DDPM (checked against diffusion-at's sampler)."""
    from iclr25.core.diffusion_at.samplers import ddim_trajectory
    from iclr25.core.diffusion_at.schedules import NoiseSchedule

    schedule = NoiseSchedule.make("linear", 40)
    model = TinyEps().eval()
    x_T = torch.randn((6, 1, 4, 4), generator=torch.Generator().manual_seed(1))
    den = image.Denoiser(model, schedule.alpha_bar, clip=1.0)
    ours = image.reverse_from(den, x_T, 39, None, 1.0, torch.Generator().manual_seed(2))
    theirs = ddim_trajectory(model, schedule, x_T, 40, 1.0, torch.Generator().manual_seed(2), 1.0)
    torch.testing.assert_close(ours, theirs[-1][1], rtol=0, atol=1e-6)


def test_gaussian_posterior_equals_joint_gaussian_conditioning():
    rng = np.random.default_rng(0)
    a_mat = rng.normal(size=(3, 3))
    sigma = a_mat @ a_mat.T + 0.5 * np.eye(3)
    mu = rng.normal(size=3)
    abar = 0.37
    a, b, s = image.gaussian_posterior(mu, sigma, abar)
    xt = rng.normal(size=3)
    cov_xt = abar * sigma + (1 - abar) * np.eye(3)
    gain = math.sqrt(abar) * sigma @ np.linalg.inv(cov_xt)
    np.testing.assert_allclose(a @ xt + b, mu + gain @ (xt - math.sqrt(abar) * mu), atol=1e-10)
    np.testing.assert_allclose(s, sigma - math.sqrt(abar) * gain @ sigma, atol=1e-10)


def test_token_changes_by_patch_and_threshold():
    x0 = np.zeros((1, 1, 4, 4))
    xhat = np.zeros((1, 1, 4, 4))
    xhat[0, 0, 0, 0] = 2.0  # one pixel of the top-left 2×2 patch
    np.testing.assert_allclose(image.token_changes(x0, xhat, 2, None), [[1.0, 0, 0, 0]])
    np.testing.assert_allclose(image.token_changes(x0, xhat, 1, 3.0)[0, :2], [1.0, 0.0])


def test_grid_correlation_bins_pairs_by_distance():
    rng = np.random.default_rng(1)
    change = rng.random((200, 4))  # a 2×2 grid: distances 0, 1 and √2 → 1
    out = image.correlation_by_grid_distance(change, 2)
    assert set(out) == {0, 1}
    assert out[0] == pytest.approx(np.var(change, axis=0, ddof=1).mean())


def test_verdict_on_made_up_curves():
    times = [0.1, 0.3, 0.5, 0.7, 0.9]
    model = [
        {"chi_norm": c, "class_change": p}
        for c, p in zip([1.5, 3.0, 4.0, 2.5, 2.0], [0.0, 0.1, 0.5, 0.8, 0.9], strict=True)
    ]
    flat = [{"chi_norm": c} for c in [1.0, 1.1, 1.2, 1.3, 1.4]]  # monotone: no interior peak
    v = image.image_verdict(times, model, flat)
    assert v["interior_peak"] and v["peak_near_class_midpoint"] and v["observed"]
    assert v["peak_time"] == pytest.approx(0.5) and 0.3 < v["class_midpoint"] < 0.5
    v = image.image_verdict(times, model, model)  # the control peaks too
    assert not v["observed"] and v["failed"] == ["control_has_no_interior_peak"]


def test_gaussian_control_has_no_structure_beyond_its_covariance():
    """Independent pixels (diagonal covariance): χ̃ ≈ 1 at every time."""
    rng = np.random.default_rng(2)
    data = rng.normal(size=(3000, 1, 4, 4))
    abar = np.linspace(0.99, 0.01, 100)
    rows = image.probe_gaussian(data, abar, image.ImageProbeConfig(samples=3000), rng)
    assert all(abs(r["chi_norm"] - 1) < 0.1 for r in rows)

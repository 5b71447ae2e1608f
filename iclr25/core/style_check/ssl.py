"""A second encoder not built around any generator: a small CNN trained self-supervised.

The style statistics (``encoders/stats.py``) were designed by hand, with the synthetic
artists in view: they measure palette, stroke orientation and texture, which is what the
procedural generator varies. A learned encoder is the check on that: a small CNN trained
on the reference corpus alone, with no labels, by an augmentation-invariance objective —
SimCLR's NT-Xent (Chen et al. 2020, eq. 1):

    ℓ(i, j) = -log exp(sim(z_i, z_j)/τ) / Σ_{k≠i} exp(sim(z_i, z_k)/τ)

over the 2B views of a minibatch of B works, where (i, j) are two augmentations of the
same work, z = g(h(x)) the projection of the representation h, sim the cosine, τ the
temperature. The embedding is h (before the projector), as in SimCLR.

Augmentations keep what the paper calls style and change where things are: random
resized crops (scale 0.3-1 of the area, aspect 3/4-4/3), a brightness factor within
±10%, Gaussian pixel noise (σ = 0.03 on [-1, 1]). No flips or rotations: a stroke
direction is part of a style. So the CNN learns what stays the same across crops of one
work — palette, texture, mark shape — and, through the other works in the batch, what
differs between works. Nothing in it names or measures the generator's parameters.

Choices (the paper uses CLIP and does not train an encoder): four 3 x 3 convolutions
(16, 32, 32, 64 channels, two with stride 2) with GroupNorm and ReLU; h = the mean and
the standard deviation over positions of the last feature map (128 numbers — the
channel statistics that style transfer (Huang & Belongie 2017) treats as style);
projector 128 -> 128 -> 64; τ = 0.2; Adam. Deterministic for a seed on one thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr25.core.style_check.configs import SSLConfig as SSLConfig
from iclr25.core.style_check.generator import images_to_tensor, one_torch_thread


class StyleCNN(nn.Module):
    """h(x): (B, 3, S, S) in [-1, 1] -> (B, 128) channel means and standard deviations."""

    channels = (16, 32, 32, 64)
    strides = (1, 2, 1, 2)

    def __init__(self) -> None:
        super().__init__()
        layers, c_in = [], 3
        for c_out, stride in zip(self.channels, self.strides, strict=True):
            layers += [nn.Conv2d(c_in, c_out, 3, stride, 1), nn.GroupNorm(4, c_out), nn.ReLU()]
            c_in = c_out
        self.body = nn.Sequential(*layers)
        self.projector = nn.Sequential(nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 64))

    @property
    def dim(self) -> int:
        return 2 * self.channels[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = self.body(x).flatten(2)  # (B, 64, positions)
        return torch.cat([f.mean(dim=2), f.std(dim=2)], dim=1)  # (B, 128)


def augment(x: torch.Tensor, config: SSLConfig, gen: torch.Generator) -> torch.Tensor:
    """One random view per work: resized crop, brightness, noise. (B, 3, S, S)."""
    b = x.shape[0]
    lo, hi = config.crop_scale
    area = lo + (hi - lo) * torch.rand(b, generator=gen)  # (B,)
    log_ratio = (torch.rand(b, generator=gen) - 0.5) * 2 * math.log(4 / 3)
    sx = (area * log_ratio.exp()).sqrt().clamp(max=1.0)  # crop width / image width
    sy = (area / log_ratio.exp()).sqrt().clamp(max=1.0)
    tx = (1 - sx) * (2 * torch.rand(b, generator=gen) - 1)  # centre, in [-1, 1] units
    ty = (1 - sy) * (2 * torch.rand(b, generator=gen) - 1)
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0], theta[:, 0, 2], theta[:, 1, 1], theta[:, 1, 2] = sx, tx, sy, ty
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)  # (B, S, S, 2)
    view = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
    factor = 1 + config.brightness * (2 * torch.rand(b, 1, 1, 1, generator=gen) - 1)
    view = (view + 1) * factor - 1 + config.noise * torch.randn(view.shape, generator=gen)
    return view.clamp(-1, 1)


def nt_xent(z: torch.Tensor, temperature: float) -> torch.Tensor:
    """SimCLR's loss over (2B, d) projections whose rows i and i + B are one work's views."""
    z = F.normalize(z, dim=1)
    n = z.shape[0] // 2
    logits = z @ z.T / temperature  # (2B, 2B)
    logits.fill_diagonal_(float("-inf"))
    positive = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])  # (2B,)
    return F.cross_entropy(logits, positive)


def train_ssl_cnn(
    images: np.ndarray,
    config: SSLConfig,
    seed: int,
    on_step: Callable[[int, float], None] | None = None,
) -> tuple[StyleCNN, list[float]]:
    """Train h on works (N, S, S, 3) uint8 with NT-Xent; returns (h in eval mode, losses)."""
    if images.ndim != 4 or images.shape[1:] != (config.size_px, config.size_px, 3):
        raise ValueError(f"works must be (N, {config.size_px}, {config.size_px}, 3) uint8")
    if len(images) < 2:
        raise ValueError("the contrastive objective needs at least 2 works")
    x_all = images_to_tensor(images)  # (N, 3, S, S)
    batch = min(config.batch_size, len(x_all))
    losses: list[float] = []
    with one_torch_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = StyleCNN()
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
        gen = torch.Generator().manual_seed(seed)
        for step in range(config.steps):
            rows = torch.randperm(len(x_all), generator=gen)[:batch]
            x = x_all[rows]  # (B, 3, S, S)
            views = torch.cat([augment(x, config, gen), augment(x, config, gen)])  # (2B, ...)
            loss = nt_xent(model.projector(model(views)), config.temperature)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
            if on_step is not None:
                on_step(step + 1, losses[-1])
    return model.eval().requires_grad_(False), losses


@torch.no_grad()
def embed(model: StyleCNN, images: np.ndarray, batch: int = 256) -> np.ndarray:
    """h(x) of (N, S, S, 3) uint8 works: (N, 128) float32."""
    out = []
    with one_torch_thread():
        for start in range(0, len(images), batch):
            out.append(model(images_to_tensor(images[start : start + batch])).numpy())
    return np.concatenate(out).astype(np.float32) if out else np.zeros((0, model.dim), np.float32)

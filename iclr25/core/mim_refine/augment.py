"""Seeded batch schedule and augmentations shared by every training arm.

``batch_plan(seed, step)`` fixes which images a step sees and how they are augmented, so
the NNA arms and continued MAE training see the same data order and the same views for a
given seed (the experiment's equal-budget control). Views: random resized crop (scale
0.25–1, aspect 3/4–4/3), horizontal flip, colour jitter (p 0.8: brightness 0.4, contrast
0.4, saturation 0.2) and grayscale (p 0.2): the BYOL-style global views of the paper at
toy size, without blur and solarisation (meaningless at 32 px).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def step_generator(seed: int, step: int, stream: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed((seed * 1_000_003 + step * 101 + stream) % 2**63)


def batch_indices(n: int, batch_size: int, seed: int, step: int) -> torch.Tensor:
    """Epoch-wise seeded permutations, cut into batches (the last partial batch dropped)."""
    per_epoch = max(1, n // batch_size)
    epoch, offset = divmod(step, per_epoch)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed * 7919 + epoch))
    return order[offset * batch_size : (offset + 1) * batch_size]


def augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One random view of a batch x in [0, 1], (B, 3, S, S) → (B, 3, S, S)."""
    b = len(x)
    u = lambda *shape: torch.rand(*shape, generator=gen)  # noqa: E731
    scale = 0.25 + 0.75 * u(b)
    log_ratio = math.log(3 / 4) + (math.log(4 / 3) - math.log(3 / 4)) * u(b)
    ratio = torch.exp(log_ratio)
    w = torch.sqrt(scale * ratio).clamp(max=1.0)  # crop width / height, fractions of the side
    h = torch.sqrt(scale / ratio).clamp(max=1.0)
    cx = (1 - w) * (2 * u(b) - 1)  # centre in [-1, 1] coordinates, crop inside the image
    cy = (1 - h) * (2 * u(b) - 1)
    flip = torch.where(u(b) < 0.5, -1.0, 1.0)
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0], theta[:, 0, 2] = w * flip, cx
    theta[:, 1, 1], theta[:, 1, 2] = h, cy
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)  # (B, S, S, 2)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
    jitter = (u(b) < 0.8).float()[:, None, None, None]
    bright = 1 + 0.4 * (2 * u(b, 1, 1, 1) - 1) * jitter
    contrast = 1 + 0.4 * (2 * u(b, 1, 1, 1) - 1) * jitter
    sat = 1 + 0.2 * (2 * u(b, 1, 1, 1) - 1) * jitter
    x = x * bright
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * contrast + mean
    gray = (0.299 * x[:, :1] + 0.587 * x[:, 1:2] + 0.114 * x[:, 2:]).expand_as(x)
    x = (x - gray) * sat + gray
    to_gray = (u(b) < 0.2)[:, None, None, None]
    x = torch.where(to_gray, gray, x)
    return x.clamp(0, 1)


def normalise(x: torch.Tensor, mean, std) -> torch.Tensor:
    return (x - torch.tensor(mean).view(1, 3, 1, 1)) / torch.tensor(std).view(1, 3, 1, 1)


def views(images_u8: torch.Tensor, idx: torch.Tensor, seed: int, step: int, n_views: int, enc):
    """``n_views`` augmented, normalised views of the images ``idx`` for this step."""
    x = images_u8[idx].permute(0, 3, 1, 2).float() / 255.0  # (B, 3, H, W)
    if x.shape[-1] != enc.image_size:
        x = F.interpolate(x, size=(enc.image_size,) * 2, mode="bicubic", align_corners=False)
    return [
        normalise(augment(x, step_generator(seed, step, v + 1)), enc.mean, enc.std)
        for v in range(n_views)
    ]

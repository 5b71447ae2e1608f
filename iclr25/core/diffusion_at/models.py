"""Denoisers ε_θ(x_t, t): a time-embedded MLP for points and a small U-Net for images.

Both take a batch x of shape (B, *data_shape) and a timestep t of shape (B,) (integer
DDPM steps, or real values for consistency models) and return a tensor of x's shape.
Time enters through the sinusoidal embedding of Vaswani et al. (2017) as used by Ho et al.
(2020, App. B), followed by a two-layer MLP.

- :class:`MLPDenoiser`: residual MLP, the embedding is added to every hidden layer.
- :class:`UNet`: two resolutions (e.g. 8×8 → 4×4) of residual conv blocks with GroupNorm,
  time embedding added per block, skip connections (Ronneberger et al. 2015; the DDPM
  U-Net of Ho et al. scaled down to a few hundred thousand parameters for CPUs).

:class:`ModelSpec` (a dataclass) describes an architecture; :func:`build_model` builds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

ARCHITECTURES = ("mlp", "unet")


def timestep_embedding(t: torch.Tensor, dim: int, max_period: float = 10000.0) -> torch.Tensor:
    """Sinusoidal embedding of (B,) timesteps → (B, dim) (Vaswani et al. 2017, §3.5)."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None, :]  # (B, half)
    emb = torch.cat([torch.cos(args), torch.sin(args)], dim=1)  # (B, 2 half)
    if dim % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=1)  # (B, dim)
    return emb


class TimeEmbedding(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.SiLU(), nn.Linear(dim * 2, dim))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        return self.mlp(timestep_embedding(t, self.dim))  # (B, dim)


class MLPDenoiser(nn.Module):
    """ε_θ for points in R^d: input layer, ``depth`` residual SiLU blocks, output layer."""

    def __init__(self, dim: int, hidden: int = 128, depth: int = 3, time_dim: int = 64) -> None:
        super().__init__()
        self.time = TimeEmbedding(time_dim)
        self.inp = nn.Linear(dim, hidden)
        self.blocks = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth))
        self.time_proj = nn.ModuleList(nn.Linear(time_dim, hidden) for _ in range(depth))
        self.out = nn.Linear(hidden, dim)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        emb = self.time(t)  # (B, time_dim)
        h = self.inp(x)  # (B, hidden)
        for block, proj in zip(self.blocks, self.time_proj, strict=True):
            h = h + block(self.act(h + proj(emb)))
        return self.out(self.act(h))  # (B, dim)


class ResBlock(nn.Module):
    """GroupNorm → SiLU → conv, + time embedding, GroupNorm → SiLU → conv, + skip."""

    def __init__(self, c_in: int, c_out: int, time_dim: int, groups: int = 8) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(math.gcd(groups, c_in), c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.time_proj = nn.Linear(time_dim, c_out)
        self.norm2 = nn.GroupNorm(math.gcd(groups, c_out), c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        h = self.conv1(self.act(self.norm1(x)))  # (B, c_out, H, W)
        h = h + self.time_proj(emb)[:, :, None, None]
        h = self.conv2(self.act(self.norm2(h)))
        return h + self.skip(x)


class UNet(nn.Module):
    """A two-level U-Net for small images (H and W divisible by 2), e.g. 8×8 digits."""

    def __init__(self, channels: int, base: int = 32, time_dim: int = 64) -> None:
        super().__init__()
        self.time = TimeEmbedding(time_dim)
        self.inp = nn.Conv2d(channels, base, 3, padding=1)
        self.down1 = ResBlock(base, base, time_dim)
        self.pool = nn.Conv2d(base, base * 2, 3, stride=2, padding=1)
        self.down2 = ResBlock(base * 2, base * 2, time_dim)
        self.mid = ResBlock(base * 2, base * 2, time_dim)
        self.up2 = ResBlock(base * 4, base * 2, time_dim)
        self.upsample = nn.ConvTranspose2d(base * 2, base, 2, stride=2)
        self.up1 = ResBlock(base * 2, base, time_dim)
        norm = nn.GroupNorm(math.gcd(8, base), base)
        self.out = nn.Sequential(norm, nn.SiLU(), nn.Conv2d(base, channels, 3, padding=1))

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        emb = self.time(t)  # (B, time_dim)
        h1 = self.down1(self.inp(x), emb)  # (B, base, H, W)
        h2 = self.down2(self.pool(h1), emb)  # (B, 2 base, H/2, W/2)
        h = self.mid(h2, emb)
        h = self.up2(torch.cat([h, h2], dim=1), emb)  # (B, 2 base, H/2, W/2)
        h = self.up1(torch.cat([self.upsample(h), h1], dim=1), emb)  # (B, base, H, W)
        return self.out(h)


@dataclass(frozen=True)
class ModelSpec:
    """An architecture: ``mlp`` for (d,) points, ``unet`` for (C, H, W) images."""

    arch: str
    data_shape: tuple[int, ...]
    width: int = 128  # MLP hidden units, or U-Net base channels
    depth: int = 3  # MLP residual blocks (ignored by the U-Net)
    time_dim: int = 64

    @classmethod
    def default_for(cls, data_shape: tuple[int, ...]) -> ModelSpec:
        """MLP (128 wide, 3 blocks) for points; U-Net (32 base channels) for images."""
        if len(data_shape) == 1:
            return cls("mlp", tuple(data_shape))
        return cls("unet", tuple(data_shape), width=32)


def build_model(spec: ModelSpec) -> nn.Module:
    if spec.arch == "mlp":
        if len(spec.data_shape) != 1:
            raise ValueError(f"the MLP needs (d,) points, got data shape {spec.data_shape}")
        return MLPDenoiser(spec.data_shape[0], spec.width, spec.depth, spec.time_dim)
    if spec.arch == "unet":
        if len(spec.data_shape) != 3 or spec.data_shape[1] % 2 or spec.data_shape[2] % 2:
            raise ValueError(f"the U-Net needs (C, H, W) with even H, W, got {spec.data_shape}")
        return UNet(spec.data_shape[0], spec.width, spec.time_dim)
    raise ValueError(f"unknown architecture {spec.arch!r}; use one of {ARCHITECTURES}")


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())

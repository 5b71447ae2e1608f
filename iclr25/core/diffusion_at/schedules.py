"""Noise schedules of DDPM (Ho et al., 2020) and the closed forms built on them.

Forward process (Ho et al., eq. 4): x_t = √ᾱ_t x_0 + √(1-ᾱ_t) ε,  ε ~ N(0, I).

Two schedules:

- ``linear`` (Ho et al. §4): β_t evenly spaced from 1e-4 to 0.02, rescaled by 1000/T so
  that the schedule keeps its shape for any number of steps T (β clipped at 0.999);
- ``cosine`` (Nichol & Dhariwal 2021, eq. 17): ᾱ(s) = f(s)/f(0) with
  f(s) = cos²((s/T + 0.008)/1.008 · π/2), β_t = min(1 - ᾱ_t/ᾱ_{t-1}, 0.999).

Timesteps are indexed 0 … T-1 (index 0 is one step of noise, as in ADM); the index -1
stands for the clean data (ᾱ = 1), which samplers use as their last target.

Symbols: ``betas`` → β_t, ``alphas`` → α_t = 1 - β_t, ``alpha_bar`` → ᾱ_t = ∏_{s≤t} α_s,
``sigma`` → σ_t = √(1-ᾱ_t), ``sqrt_alpha_bar`` → √ᾱ_t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from iclr25.core.diffusion_at.names import SCHEDULES


def linear_betas(num_steps: int, max_beta: float = 0.999) -> np.ndarray:
    """β_t for the linear schedule of Ho et al., rescaled to ``num_steps`` (float64).

    Below T = 21 the rescaled β would exceed 1; they are clipped at ``max_beta`` as the
    cosine schedule is."""
    scale = 1000.0 / num_steps
    betas = np.linspace(scale * 1e-4, scale * 0.02, num_steps, dtype=np.float64)
    return np.minimum(betas, max_beta)


def cosine_betas(num_steps: int, offset: float = 0.008, max_beta: float = 0.999) -> np.ndarray:
    """β_t of the cosine schedule (Nichol & Dhariwal 2021, eq. 17), clipped at ``max_beta``."""

    def f(s: float) -> float:
        return math.cos((s / num_steps + offset) / (1 + offset) * math.pi / 2) ** 2

    betas = [min(1 - f(i + 1) / f(i), max_beta) for i in range(num_steps)]
    return np.asarray(betas, dtype=np.float64)


@dataclass(frozen=True)
class NoiseSchedule:
    """A discrete DDPM schedule with T steps; all arrays are float64 numpy of shape (T,)."""

    kind: str
    num_steps: int
    betas: np.ndarray

    @classmethod
    def make(cls, kind: str = "linear", num_steps: int = 1000) -> NoiseSchedule:
        if kind not in SCHEDULES:
            raise ValueError(f"unknown schedule {kind!r}; use one of {SCHEDULES}")
        if num_steps < 1:
            raise ValueError(f"num_steps must be >= 1, got {num_steps}")
        betas = linear_betas(num_steps) if kind == "linear" else cosine_betas(num_steps)
        return cls(kind, num_steps, betas)

    @property
    def alphas(self) -> np.ndarray:
        return 1.0 - self.betas

    @property
    def alpha_bar(self) -> np.ndarray:
        return np.cumprod(self.alphas)

    @property
    def sigma(self) -> np.ndarray:
        return np.sqrt(1.0 - self.alpha_bar)

    def alpha_bar_at(self, t: torch.Tensor) -> torch.Tensor:
        """ᾱ at integer timesteps ``t`` (index -1 → 1.0), as float32 of t's shape."""
        table = torch.from_numpy(np.append(self.alpha_bar, 1.0)).float()  # (T+1,), [-1] = 1
        return table[t.long()]

    def coefficients(self, t: torch.Tensor, ndim: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(√ᾱ_t, σ_t) shaped (B, 1, …) to broadcast against a batch with ``ndim`` dims."""
        abar = self.alpha_bar_at(t).view(-1, *([1] * (ndim - 1)))  # (B, 1, ...)
        return abar.sqrt(), (1.0 - abar).clamp_min(0.0).sqrt()

    def q_sample(self, x0: torch.Tensor, t: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """x_t = √ᾱ_t x_0 + σ_t ε (Ho et al., eq. 4)."""
        a, s = self.coefficients(t, x0.dim())
        return a * x0 + s * eps

    def predict_x0(self, x_t: torch.Tensor, t: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        """x̂_0 = (x_t - σ_t ε̂) / √ᾱ_t, the inverse of :meth:`q_sample`."""
        a, s = self.coefficients(t, x_t.dim())
        return (x_t - s * eps) / a

    def predict_eps(self, x_t: torch.Tensor, t: torch.Tensor, x0: torch.Tensor) -> torch.Tensor:
        """ε̂ = (x_t - √ᾱ_t x̂_0) / σ_t."""
        a, s = self.coefficients(t, x_t.dim())
        return (x_t - a * x0) / s

    def posterior(self, t: int) -> tuple[float, float, float]:
        """(coef_x0, coef_xt, variance) of q(x_{t-1} | x_t, x_0) (Ho et al., eq. 7), t ≥ 1."""
        abar, abar_prev = self.alpha_bar[t], self.alpha_bar[t - 1]
        beta = self.betas[t]
        coef_x0 = beta * math.sqrt(abar_prev) / (1 - abar)
        coef_xt = (1 - abar_prev) * math.sqrt(self.alphas[t]) / (1 - abar)
        return coef_x0, coef_xt, beta * (1 - abar_prev) / (1 - abar)

    def timesteps_for(self, nfe: int) -> list[int]:
        """The sampler's grid τ_1 > … > τ_K for K = ``nfe``: "trailing" spacing, τ_i =
        round(T - (i-1) T/K) - 1, i.e. T-1, T-1-T/K, …, T/K - 1 (Lin et al. 2024, "Common
        diffusion noise schedules and sample steps are flawed", §3.4 and Table 2).

        The sampler starts from pure noise at T-1 and its last evaluation is at T/K - 1,
        where x̂_0 is still informative; a grid ending at t = 0 (σ_0 ≈ 0.01) spends its
        last evaluation on an almost clean input, so NFE K would do the work of K-1."""
        if not 1 <= nfe <= self.num_steps:
            raise ValueError(f"NFE must be within 1..{self.num_steps}, got {nfe}")
        stride = self.num_steps / nfe
        # floor(x + ½), not banker's rounding: values ≥ 1 apart stay distinct
        return [int(math.floor(self.num_steps - i * stride + 0.5)) - 1 for i in range(nfe)]

    def evenly_spaced(self, n: int) -> list[int]:
        """``n`` ≥ 2 timesteps from 0 to T-1 inclusive, ascending (a consistency model's
        discretisation t_1 = 0 < … < t_N = T-1, whose first point carries the boundary
        condition)."""
        if not 2 <= n <= self.num_steps:
            raise ValueError(f"the grid needs 2..{self.num_steps} points, got {n}")
        return [int(v) for v in np.round(np.linspace(0, self.num_steps - 1, n)).astype(int)]

"""The DDPM of the trajectory prior (Ho, Jain, Abbeel 2020), written out.

Symbols (code → paper):

- ``betas`` → β_t, ``alphas`` → α_t = 1 − β_t, ``alpha_bar`` → ᾱ_t = Π_{s≤t} α_s;
- :meth:`q_sample` → τ^i ~ q(τ^i | τ^0) = N(√ᾱ_i τ^0, (1 − ᾱ_i) I);
- :meth:`predict_x0` → τ̂^0 = (τ^i − √(1 − ᾱ_i) ε_θ) / √ᾱ_i;
- :meth:`posterior` → μ̃_i(τ^i, τ̂^0) = c0·τ̂^0 + ci·τ^i and
  Σ_i = β̃_i = β_i (1 − ᾱ_{i−1}) / (1 − ᾱ_i) (the "fixed small" variance);
- :meth:`step` → τ^{i−1} = μ + √Σ_i · z (no noise at i = 0).

Indices run i = 0 … T−1 as in diffusers' ``DDPMScheduler`` (whose ``step`` this matches
to 1e-6 with ``variance_type="fixed_small"`` and ``clip_sample`` = our ``clip``; see the
tests).
Schedules: ``linear`` (β from 1e-4 to 0.02 scaled to T steps) and ``cosine`` (Nichol &
Dhariwal 2021, β capped at 0.999; diffusers' ``squaredcos_cap_v2``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def make_betas(schedule: str, steps: int, beta_start: float = 1e-4, beta_end: float = 0.02):
    if schedule == "linear":
        return np.linspace(beta_start, beta_end, steps, dtype=np.float64)
    if schedule == "cosine":

        def f(t: float) -> float:
            return math.cos((t + 0.008) / 1.008 * math.pi / 2) ** 2

        return np.array([min(1 - f((i + 1) / steps) / f(i / steps), 0.999) for i in range(steps)])
    raise ValueError(f"unknown schedule {schedule!r}: use linear or cosine")


@dataclass
class DDPM:
    steps: int = 50  # T, diffusion steps (train and sample)
    schedule: str = "cosine"
    beta_start: float = 1e-4  # linear schedule only
    beta_end: float = 0.02

    def __post_init__(self) -> None:
        import torch

        b = make_betas(self.schedule, self.steps, self.beta_start, self.beta_end)
        a_bar = np.cumprod(1.0 - b)
        a_bar_prev = np.concatenate([[1.0], a_bar[:-1]])
        var = b * (1.0 - a_bar_prev) / (1.0 - a_bar)
        t = torch.tensor  # float64 schedules, cast to the data dtype on use
        self.betas = t(b)
        self.alphas = t(1.0 - b)
        self.alpha_bar = t(a_bar)
        self.alpha_bar_prev = t(a_bar_prev)
        self.posterior_variance = t(np.maximum(var, 1e-20))  # Σ_i (β̃_i)
        self.coef_x0 = t(np.sqrt(a_bar_prev) * b / (1.0 - a_bar))  # c0
        self.coef_xt = t(np.sqrt(1.0 - b) * (1.0 - a_bar_prev) / (1.0 - a_bar))  # ci

    @staticmethod
    def _at(values, i, like):
        """values[i] broadcast to ``like`` (B, ...), in its dtype."""
        v = values.to(like.dtype)[i]
        return v.reshape(-1, *([1] * (like.ndim - 1)))

    def q_sample(self, x0, i, noise):
        """τ^i from τ^0 (B, ...) at levels i (B,) with standard normal ``noise``."""
        ab = self._at(self.alpha_bar, i, x0)
        return ab.sqrt() * x0 + (1.0 - ab).sqrt() * noise

    def predict_x0(self, x_t, i, eps):
        ab = self._at(self.alpha_bar, i, x_t)
        return (x_t - (1.0 - ab).sqrt() * eps) / ab.sqrt()

    def posterior(self, x_t, i, x0):
        """(μ̃, Σ) of q(τ^{i−1} | τ^i, τ^0)."""
        mean = self._at(self.coef_x0, i, x_t) * x0 + self._at(self.coef_xt, i, x_t) * x_t
        return mean, self._at(self.posterior_variance, i, x_t)

    def p_mean_variance(self, x_t, i, eps, clip: bool = True):
        """(μ_θ, Σ_i); with ``clip`` the predicted τ̂^0 is clamped to [−1, 1] first (the
        data range; Diffuser's ``clip_denoised``, diffusers' ``clip_sample``). Without it
        the cosine schedule's last levels (ᾱ ≈ 0) make τ̂^0 explode."""
        x0 = self.predict_x0(x_t, i, eps)
        if clip:
            x0 = x0.clamp(-1.0, 1.0)
        return self.posterior(x_t, i, x0)

    def step(self, eps, i: int, x_t, noise, clip: bool = True):
        """One unguided reverse step τ^i → τ^{i−1} for a scalar level ``i``."""
        import torch

        idx = torch.full((x_t.shape[0],), i, dtype=torch.long)
        mean, var = self.p_mean_variance(x_t, idx, eps, clip)
        return mean if i == 0 else mean + var.sqrt() * noise

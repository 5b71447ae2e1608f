"""Consistency models: consistency training (CT) and distillation (CD), with AT.

Song, Dhariwal, Chen & Sutskever (2023), "Consistency Models", on the DDPM schedule.
Write y = x_t/√ᾱ_t = x_0 + s_t ε with s_t = σ_t/√ᾱ_t (the variance-exploding view of
the same process; the PF-ODE trajectories are shared). The consistency function is
parameterised as in their eq. 7 (with s in place of their t):

    f_θ(x_t, t) = c_skip(s_t) y + c_out(s_t) F_θ(x_t, t),
    c_skip(s) = σ_d² / ((s - s_min)² + σ_d²),   c_out(s) = σ_d (s - s_min) / √(σ_d² + s²),

so f_θ(x, t_1) = y exactly at the first grid point (the boundary condition). F_θ is the
same network as the DDPM denoiser (``models.py``), fed the well-scaled x_t.

Discretisation: N grid points t_1 = 0 < … < t_N = T-1 (``schedules.evenly_spaced``).
With n ~ U{1..N-1}, x_0 from the data and one ε:

- CT (their Alg. 3): x_{n+1} = √ᾱ x_0 + σ ε at t_{n+1}; target point x_n with the same
  ε at t_n; loss ‖f_θ(x_{n+1}, t_{n+1}) - f_θ⁻(x_n, t_n)‖²;
- CD (their Alg. 2): target point x̂_n = one DDIM (PF-ODE) step of the frozen DDPM
  teacher ε_φ from x_{n+1} to t_n.

The target network θ⁻ is an exponential moving average of θ, θ⁻ ← μθ⁻ + (1-μ)θ after
every optimiser step (their Alg. 2 and 3, ``cm_target_ema`` = μ, with fixed N: the
setting of their distillation runs; their CT grows N(k) during training, which is not
implemented). μ = 0 is θ⁻ = stop-gradient(θ) (Song & Dhariwal 2023, "Improved
techniques"); on 2-D data that made training unstable (the raw weights never settled and
only the sampling EMA gave usable samples), μ = 0.95 (their CD value) did not —
docs/diffusion-at.md has the measurements. The distance is the squared ℓ2 (mean over
coordinates), their choice for non-image data (LPIPS is for images).

AT (Wang et al., ICLR 2025, §5): the online input x_{n+1} becomes x_{n+1} + δ, δ in a
norm ball maximising the loss. Target ``eps`` keeps the clean target point; target
``x0`` reads δ as extra noise, ε' = ε + sg(δ)/σ_{n+1}, so the target point stays on the
trajectory of the same x_0: CT uses x_n = √ᾱ_n x_0 + σ_n ε', CD runs the teacher step
from x_{n+1} + sg(δ).

Symbols: ``s`` → s_t, ``sigma_data`` → σ_d, ``grid`` → t_1..t_N, ``n`` → n.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from iclr25.core.diffusion_at.adversarial import regression_target
from iclr25.core.diffusion_at.data import Dataset
from iclr25.core.diffusion_at.schedules import NoiseSchedule

SIGMA_DATA = 0.5  # σ_d of Song et al. (2023) for data in [-1, 1]


class ConsistencyParam:
    """c_skip / c_out on a grid of N DDPM timesteps, and f_θ built from a network F_θ."""

    def __init__(self, schedule: NoiseSchedule, grid_size: int, sigma_data: float = SIGMA_DATA):
        if not 2 <= grid_size <= schedule.num_steps:
            raise ValueError(f"the consistency grid needs 2..{schedule.num_steps} points")
        self.schedule = schedule
        self.grid = torch.tensor(schedule.evenly_spaced(grid_size))  # (N,) ascending
        abar = schedule.alpha_bar
        self.s_table = torch.from_numpy(np.sqrt((1 - abar) / abar)).float()  # (T,) s_t
        self.s_min = float(self.s_table[self.grid[0]])
        self.sigma_data = sigma_data

    def c_skip_out(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s = self.s_table[t.long().cpu()]
        sd2 = self.sigma_data**2
        c_skip = sd2 / ((s - self.s_min) ** 2 + sd2)
        c_out = self.sigma_data * (s - self.s_min) / (sd2 + s**2).sqrt()
        return c_skip, c_out

    def f(self, model: nn.Module, x_t: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """f_θ(x_t, t), an estimate of x_0."""
        shape = (-1, *([1] * (x_t.dim() - 1)))
        c_skip, c_out = (c.to(x_t.device).view(shape) for c in self.c_skip_out(t))
        a, _ = self.schedule.coefficients(t.cpu(), x_t.dim())
        return c_skip * (x_t / a.to(x_t.device)) + c_out * model(x_t, t)

    def nearest_grid_index(self, s_value: float) -> int:
        """The grid point whose s_t is closest to ``s_value`` (for two-step sampling)."""
        return int(torch.argmin((self.s_table[self.grid] - s_value).abs()))


@dataclass
class CMBatch:
    x0: torch.Tensor  # (B, *shape)
    n: torch.Tensor  # (B,) grid index of t_n, in 0..N-2
    eps: torch.Tensor
    x_next: torch.Tensor  # x at t_{n+1}: the online network's input

    @property
    def net_input(self) -> torch.Tensor:
        return self.x_next

    def tensors(self) -> dict[str, torch.Tensor]:
        return {"x0": self.x0, "n": self.n, "eps": self.eps, "x_next": self.x_next}


class ConsistencyObjective:
    """CT (``teacher`` None) or CD (``teacher`` a frozen ε-prediction DDPM)."""

    def __init__(
        self,
        param: ConsistencyParam,
        dataset: Dataset,
        at_target: str = "x0",
        teacher: nn.Module | None = None,
        device: str = "cpu",
    ) -> None:
        self.param = param
        self.schedule = param.schedule
        self.dataset = dataset
        self.at_target = at_target
        self.teacher = teacher.requires_grad_(False).eval() if teacher is not None else None
        self.device = device
        self.name = "ct" if teacher is None else "cd"

    def _coef(self, t: torch.Tensor, ndim: int) -> tuple[torch.Tensor, torch.Tensor]:
        a, s = self.schedule.coefficients(t.cpu(), ndim)
        return a.to(self.device), s.to(self.device)

    def draw(self, n: int, gen: torch.Generator) -> CMBatch:
        x0 = self.dataset.sample(n, gen)
        idx = torch.randint(0, len(self.param.grid) - 1, (n,), generator=gen)
        eps = torch.randn(x0.shape, generator=gen)
        x0, idx, eps = x0.to(self.device), idx.to(self.device), eps.to(self.device)
        a, s = self._coef(self.param.grid[idx.cpu() + 1], x0.dim())
        return CMBatch(x0, idx, eps, a * x0 + s * eps)

    @torch.no_grad()
    def target_point(self, batch: CMBatch, delta: torch.Tensor | None) -> torch.Tensor:
        """x_n at t_n: same ε (CT) or the teacher's DDIM step (CD); see the docstring."""
        t_next = self.param.grid[batch.n.cpu() + 1].to(self.device)
        t_now = self.param.grid[batch.n.cpu()].to(self.device)
        a_now, s_now = self._coef(t_now, batch.x0.dim())
        perturbed = delta is not None and self.at_target == "x0"
        if self.teacher is None:
            eps = batch.eps
            if perturbed:
                _, s_next = self._coef(t_next, batch.x0.dim())
                eps = regression_target(batch.eps, delta, s_next, "x0")
            return a_now * batch.x0 + s_now * eps
        start = batch.x_next + delta.detach() if perturbed else batch.x_next
        eps_hat = self.teacher(start, t_next)
        a_next, s_next = self._coef(t_next, batch.x0.dim())
        x0_hat = (start - s_next * eps_hat) / a_next
        return a_now * x0_hat + s_now * eps_hat

    def loss(
        self,
        model: nn.Module,
        batch: CMBatch,
        delta: torch.Tensor | None = None,
        target_model: nn.Module | None = None,
    ) -> torch.Tensor:
        """mean ‖f_θ(x_{n+1} + δ, t_{n+1}) - f_{θ⁻}(x_n, t_n)‖², θ⁻ = ``target_model``
        (without one, θ⁻ = sg(θ))."""
        t_next = self.param.grid[batch.n.cpu() + 1].to(self.device)
        t_now = self.param.grid[batch.n.cpu()].to(self.device)
        net_in = batch.x_next if delta is None else batch.x_next + delta
        online = self.param.f(model, net_in, t_next)
        with torch.no_grad():
            target_net = model if target_model is None else target_model
            target = self.param.f(target_net, self.target_point(batch, delta), t_now)
        return (online - target).square().mean()

    @staticmethod
    def restore(tensors: dict[str, torch.Tensor]) -> CMBatch:
        return CMBatch(tensors["x0"], tensors["n"], tensors["eps"], tensors["x_next"])

"""The DDPM denoising objective with ε-prediction, and its adversarial version.

Ho et al. (2020), Alg. 1 / eq. 14 ("L_simple"):

    L(θ) = E_{x_0, t ~ U{0..T-1}, ε ~ N(0, I)} ‖ε_θ(√ᾱ_t x_0 + σ_t ε, t) - ε‖²

Wang et al. (ICLR 2025), eq. 12–14: the DRO over a KL ball around q(x_t) is adversarial
training of the input, ‖ε_θ(x_t + δ, t) - target(δ)‖² with δ in a norm ball (see
``adversarial.py`` for the ball, the search and the two targets ε and ε + δ/σ_t).

:class:`DDPMObjective` implements the protocol the training loop (``training.py``) needs:
``draw`` the random part of a minibatch, and ``loss`` of a model on it with an optional
input perturbation δ. The loss is the mean over the batch of the per-sample mean of
squared errors (``mean_flat`` in ADM).

Symbols: ``x0`` → x_0, ``x_t`` → x_t, ``eps`` → ε, ``t`` → t, ``delta`` → δ.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from iclr25.core.diffusion_at.adversarial import regression_target
from iclr25.core.diffusion_at.data import Dataset
from iclr25.core.diffusion_at.schedules import NoiseSchedule


@dataclass
class DDPMBatch:
    x0: torch.Tensor  # (B, *shape)
    t: torch.Tensor  # (B,) int64 in 0..T-1
    eps: torch.Tensor  # (B, *shape)
    x_t: torch.Tensor  # (B, *shape), the clean network input

    @property
    def net_input(self) -> torch.Tensor:
        """The tensor δ is added to (its shape is δ's shape)."""
        return self.x_t

    def tensors(self) -> dict[str, torch.Tensor]:
        return {"x0": self.x0, "t": self.t, "eps": self.eps, "x_t": self.x_t}


class DDPMObjective:
    """ε-prediction loss on q(x_t | x_0), with the AT target chosen by ``at_target``."""

    name = "ddpm"

    def __init__(
        self, schedule: NoiseSchedule, dataset: Dataset, at_target: str = "x0", device: str = "cpu"
    ) -> None:
        self.schedule = schedule
        self.dataset = dataset
        self.at_target = at_target
        self.device = device

    def draw(self, n: int, gen: torch.Generator) -> DDPMBatch:
        """x_0 from the data, t uniform, ε Gaussian — all from ``gen`` (on the CPU)."""
        x0 = self.dataset.sample(n, gen)
        t = torch.randint(0, self.schedule.num_steps, (n,), generator=gen)
        eps = torch.randn(x0.shape, generator=gen)
        x0, t, eps = x0.to(self.device), t.to(self.device), eps.to(self.device)
        return DDPMBatch(x0, t, eps, self.schedule_q(x0, t, eps))

    def schedule_q(self, x0: torch.Tensor, t: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
        a, s = self.coefficients(t, x0.dim())
        return a * x0 + s * eps

    def coefficients(self, t: torch.Tensor, ndim: int) -> tuple[torch.Tensor, torch.Tensor]:
        a, s = self.schedule.coefficients(t.cpu(), ndim)
        return a.to(self.device), s.to(self.device)

    def loss(
        self,
        model: nn.Module,
        batch: DDPMBatch,
        delta: torch.Tensor | None = None,
        target_model: nn.Module | None = None,
    ) -> torch.Tensor:
        """mean ‖ε_θ(x_t + δ, t) - target‖² (target ε, or ε + sg(δ)/σ_t for ``x0``);
        ``target_model`` is unused (the consistency objective's target network)."""
        if delta is None:
            net_in, target = batch.x_t, batch.eps
        else:
            _, sigma = self.coefficients(batch.t, batch.x_t.dim())
            net_in = batch.x_t + delta
            target = regression_target(batch.eps, delta, sigma, self.at_target)
        return (model(net_in, batch.t) - target).square().mean()

    @staticmethod
    def restore(tensors: dict[str, torch.Tensor]) -> DDPMBatch:
        return DDPMBatch(tensors["x0"], tensors["t"], tensors["eps"], tensors["x_t"])


@torch.no_grad()
def held_out_loss(model: nn.Module, objective, n: int = 2048, seed: int = 12345) -> float:
    """The clean objective on a fixed batch (its own generator): comparable across steps."""
    gen = torch.Generator().manual_seed(seed)
    was_training = model.training
    model.eval()
    value = float(objective.loss(model, objective.draw(n, gen)))
    model.train(was_training)
    return value

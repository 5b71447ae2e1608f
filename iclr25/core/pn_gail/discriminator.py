"""The discriminator f_ω(s, a) and one update step for each adversarial method.

f_ω is an MLP 2×100 tanh → one logit on (s, a) scaled by the spaces' bounds (a choice:
the official scripts feed raw values; scaling keeps Pendulum's θ̇ ∈ ±8 from dominating).
Adam 1e-3. One ``update`` = ``steps`` Adam steps, each on the whole rollout (agent pairs,
label 1) and as many demonstration pairs drawn with replacement (label 0), through the
method's loss file:

| method | loss file |
|---|---|
| gail | ``loss_gail.py`` |
| 2iwil | ``loss_2iwil.py`` |
| ic-gail | ``loss_ic_gail.py`` (as many labelled and as many unlabelled pairs) |
| wgail | ``loss_wgail.py`` (weights refreshed by the trainer) |
| pn-gail | ``loss_pn_gail.py`` |

The reward of every method is r̃ = −log σ(f_ω(s, a)) (``loss_gail.reward``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from iclr25.core.pn_gail import loss_2iwil, loss_gail, loss_ic_gail, loss_pn_gail, loss_wgail

ADVERSARIAL = ("gail", "2iwil", "ic-gail", "wgail", "pn-gail")
HIDDEN = 100
LEARNING_RATE = 1e-3


class Discriminator(nn.Module):
    """f_ω: (B, ds + da) pairs -> (B,) logits (D = σ(f) = P(agent))."""

    def __init__(self, dim: int, scale: np.ndarray, hidden: int = HIDDEN) -> None:
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float32))
        self.net = nn.Sequential(
            nn.Linear(dim, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x / self.scale).squeeze(-1)

    @torch.no_grad()
    def reward(self, x: torch.Tensor) -> torch.Tensor:
        """r̃ = −log σ(f(x)) (B,)."""
        return loss_gail.reward(self(x))


@dataclass
class DemoTensors:
    """The demonstrations as the discriminator sees them."""

    x: torch.Tensor  # (N, ds + da) pairs
    r: torch.Tensor  # (N,) confidence: given where labelled, predicted elsewhere
    labeled: torch.Tensor  # (N,) bool
    w: torch.Tensor  # (N,) WGAIL weights (ones until the trainer refreshes them)

    @classmethod
    def build(cls, x: np.ndarray, r: np.ndarray, labeled: np.ndarray) -> DemoTensors:
        x_t = torch.as_tensor(x, dtype=torch.float32)
        return cls(
            x_t,
            torch.as_tensor(r, dtype=torch.float32),
            torch.as_tensor(labeled, dtype=torch.bool),
            torch.ones(len(x_t)),
        )

    @property
    def z(self) -> float:
        return float(self.r.mean())

    @property
    def mean_r_labeled(self) -> float:
        return float(self.r[self.labeled].mean())


def _draw(indices: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    return indices[torch.randint(len(indices), (n,), generator=generator)]


def method_loss(
    method: str,
    disc: Discriminator,
    x_agent: torch.Tensor,
    demos: DemoTensors,
    generator: torch.Generator,
) -> torch.Tensor:
    """The method's loss on the agent pairs (B, d) and B demonstration pairs drawn."""
    n = len(x_agent)
    f_agent = disc(x_agent)
    if method == "ic-gail":
        labeled = torch.nonzero(demos.labeled).squeeze(1)
        unlabeled = torch.nonzero(~demos.labeled).squeeze(1)
        c, u = _draw(labeled, n, generator), _draw(unlabeled, n, generator)
        f_c, f_u = disc(demos.x[c]), disc(demos.x[u])
        return loss_ic_gail.loss(f_agent, f_c, demos.r[c], f_u, demos.mean_r_labeled)
    idx = torch.randint(len(demos.x), (n,), generator=generator)
    f_demo = disc(demos.x[idx])
    if method == "gail":
        return loss_gail.loss(f_agent, f_demo)
    if method == "2iwil":
        return loss_2iwil.loss(f_agent, f_demo, demos.r[idx], demos.z)
    if method == "wgail":
        return loss_wgail.loss(f_agent, f_demo, demos.w[idx])
    if method == "pn-gail":
        return loss_pn_gail.loss(f_agent, f_demo, demos.r[idx])
    raise ValueError(f"unknown adversarial method {method!r}")


def update(
    method: str,
    disc: Discriminator,
    optimizer: torch.optim.Optimizer,
    x_agent: torch.Tensor,
    demos: DemoTensors,
    generator: torch.Generator,
    steps: int,
) -> float:
    """``steps`` Adam steps of the method's loss; returns the last loss."""
    value = float("nan")
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        loss = method_loss(method, disc, x_agent, demos, generator)
        loss.backward()
        optimizer.step()
        value = float(loss.detach())
    return value

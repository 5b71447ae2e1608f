"""Behavioural cloning on the same demonstrations, plain and confidence-weighted.

A deterministic policy π(s) (MLP 2×100 tanh, observation scaled by the space's bounds)
regresses the demonstrated actions: 3,000 Adam steps (1e-3) on batches of 256,

    bc:           L = mean‖π(s) − a‖²
    weighted-bc:  L = Σ w‖π(s) − a‖² / Σ w,   w = confidence (given or predicted)

No environment interaction: BC is reported beside the adversarial methods, not as an
equal-budget control. Its policy is evaluated like theirs (:mod:`.evaluation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from iclr25.threads import small_problem_threads

BC_METHODS = ("bc", "weighted-bc")


@dataclass(frozen=True)
class BCConfig:
    hidden: int = 100
    steps: int = 3000
    batch: int = 256
    learning_rate: float = 1e-3


def fit_bc(
    obs: np.ndarray,
    actions: np.ndarray,
    weights: np.ndarray | None,
    obs_scale: np.ndarray,
    config: BCConfig,
    seed: int,
) -> nn.Module:
    """The fitted π: (E, ds) -> (E, da)."""
    with small_problem_threads():
        return _fit(obs, actions, weights, obs_scale, config, seed)


def _fit(obs, actions, weights, obs_scale, config: BCConfig, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    scale = torch.as_tensor(obs_scale, dtype=torch.float32)
    x = torch.as_tensor(obs, dtype=torch.float32) / scale  # (N, ds)
    y = torch.as_tensor(actions, dtype=torch.float32)  # (N, da)
    w = torch.ones(len(x)) if weights is None else torch.as_tensor(weights, dtype=torch.float32)
    h = config.hidden
    net = nn.Sequential(
        nn.Linear(x.shape[1], h), nn.Tanh(), nn.Linear(h, h), nn.Tanh(), nn.Linear(h, y.shape[1])
    )
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)
    for _ in range(config.steps):
        idx = torch.randint(len(x), (config.batch,), generator=generator)
        err = ((net(x[idx]) - y[idx]) ** 2).sum(dim=1)  # (batch,)
        loss = (w[idx] * err).sum() / w[idx].sum().clamp(min=1e-12)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    net.eval()

    class Policy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net, self.scale = net, scale

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return self.net(obs / self.scale)

    return Policy()


def as_numpy_policy(policy: nn.Module, low: np.ndarray, high: np.ndarray):
    def act(obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            a = policy(torch.as_tensor(np.asarray(obs, dtype=np.float32))).numpy()
        return np.clip(a, low, high)

    return act

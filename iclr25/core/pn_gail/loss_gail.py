"""GAIL's discriminator loss (Ho & Ermon, NeurIPS 2016), in PN-GAIL's sign convention.

D = σ(f_ω(s, a)) is the probability of "agent"; agent pairs are labelled 1, demonstrations
0, and the policy's reward is r̃(s, a) = −log D(s, a) (:func:`reward`):

    L_GAIL(ω) = BCE(f(π), 1) + BCE(f(demo), 0)

BCE is the mean binary cross-entropy on logits. ``agent_weight`` / ``demo_weight`` are
per-sample weights inside the means (mean[w·BCE], divided by the batch size, not by Σw):
exact expectations over a finite support (the tabular fixed point) pass w = n·p(x).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

Tensor = torch.Tensor


def bce(logits: Tensor, label: float, weight: Tensor | None = None) -> Tensor:
    """mean[w · BCE(f, label)] over the batch (w = 1 when None)."""
    target = torch.full_like(logits, label)
    return F.binary_cross_entropy_with_logits(logits, target, weight=weight)


def reward(logits: Tensor) -> Tensor:
    """r̃ = −log σ(f) ≥ 0, the reward the policy maximises (every method's)."""
    return -F.logsigmoid(logits)


def loss(
    f_agent: Tensor,
    f_demo: Tensor,
    agent_weight: Tensor | None = None,
    demo_weight: Tensor | None = None,
) -> Tensor:
    """L_GAIL for agent logits (B,) and demonstration logits (M,)."""
    return bce(f_agent, 1.0, agent_weight) + bce(f_demo, 0.0, demo_weight)

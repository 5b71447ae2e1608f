"""WGAIL's discriminator loss (Wang, Xu, Du, Lee, ICML 2021, "Learning to Weight
Imperfect Demonstrations"): demonstrations weighted by an estimate of their optimality
from the discriminator and the policy itself, no confidence labels needed.

    L_W(ω) = BCE(f(π), 1) + mean[w · BCE(f(demo), 0)],
    w(s, a) ∝ ((1/D − 1) · π(a | s))^{1/(β+1)},   β = 1

With D = σ(f), 1/D − 1 = e^{−f}, so log w = (−f + log π(a|s)) / (β + 1). The weights are
refreshed every 50 iterations up to iteration 400 (then frozen) and normalised here to mean
1 over the demonstrations (the paper leaves the scale to the optimiser; a mean of 1 keeps
the demonstration term on GAIL's scale). Before the first refresh w ≡ 1 (GAIL).
"""

from __future__ import annotations

import torch

from iclr25.core.pn_gail.loss_gail import Tensor, bce

BETA = 1.0
REFRESH_EVERY = 50  # iterations (rollouts)
REFRESH_UNTIL = 400


def weights(f_demo: Tensor, log_pi: Tensor, beta: float = BETA) -> Tensor:
    """w (M,) from demonstration logits and the policy's log π(a|s), mean 1."""
    log_w = (-f_demo + log_pi) / (beta + 1.0)
    w = torch.exp(log_w - log_w.max())  # stable; the scale is fixed by the normalisation
    return w / w.mean()


def refresh_due(iteration: int) -> bool:
    """Whether the weights are recomputed at ``iteration`` (1-based rollouts)."""
    return iteration % REFRESH_EVERY == 0 and iteration <= REFRESH_UNTIL


def loss(f_agent: Tensor, f_demo: Tensor, w: Tensor) -> Tensor:
    """L_W for agent logits (B,), demonstration logits (M,) and weights w (M,)."""
    return bce(f_agent, 1.0) + bce(f_demo, 0.0, w)

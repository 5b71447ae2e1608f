"""PN-GAIL's discriminator loss (Liu, Fu, Tang, Chen, Dong, ICLR 2025).

Each demonstration pair x counts as positive (expert-like, label 0) with its confidence
r(x) = P(optimal | x) and as negative (agent-like, label 1) with 1 − r(x):

    L_PN(ω) = BCE(f(π), 1) + mean[r · BCE(f(demo), 0)] + mean[(1 − r) · BCE(f(demo), 1)]

(the "positive and negative risks"; no normaliser Z). With r ≡ 1 it is GAIL's loss, and
the code below then computes exactly GAIL's numbers (the last term is an exact zero).

Fixed point (derived in ``fixed_point.py``): with B = p_d·r and N = p_d·(1 − r), the
optimal discriminator is D* = (p_π + N) / (p_π + p_d) and the policy's optimum is
p_π* = max(0, κB − N), κ normalising: pushed away from where non-optimal pairs are dense.

Code ↔ paper: ``f_agent`` f_ω(π), ``f_demo`` f_ω(x ∼ D), ``r`` r(x).
"""

from __future__ import annotations

from iclr25.core.pn_gail.loss_gail import Tensor, bce


def loss(
    f_agent: Tensor,
    f_demo: Tensor,
    r: Tensor,
    agent_weight: Tensor | None = None,
    demo_weight: Tensor | None = None,
) -> Tensor:
    """L_PN for agent logits (B,), demonstration logits (M,) and confidences r (M,)."""
    positive = r if demo_weight is None else r * demo_weight
    negative = 1.0 - r if demo_weight is None else (1.0 - r) * demo_weight
    return bce(f_agent, 1.0, agent_weight) + bce(f_demo, 0.0, positive) + bce(f_demo, 1.0, negative)

"""2IWIL's discriminator loss (Wu, Charoenphakdee, Bao, Tangkaratt, Sugiyama, ICML 2019,
"Imitation Learning from Imperfect Demonstration"): importance-weighted GAIL.

Demonstrations are re-weighted by their confidence normalised to mean 1:

    L_2IWIL(ω) = BCE(f(π), 1) + mean[(r / Z) · BCE(f(demo), 0)],   Z = mean r

``z`` is the mean confidence over the whole demonstration set (computed once, not per
batch). Its fixed point is p_π = B / ∫B (B = p_d·r): p_opt when r is exact.
"""

from __future__ import annotations

from iclr25.core.pn_gail.loss_gail import Tensor, bce


def loss(
    f_agent: Tensor,
    f_demo: Tensor,
    r: Tensor,
    z: float,
    agent_weight: Tensor | None = None,
    demo_weight: Tensor | None = None,
) -> Tensor:
    """L_2IWIL for agent logits (B,), demonstration logits (M,), confidences r (M,), Z."""
    w = r / z if demo_weight is None else r / z * demo_weight
    return bce(f_agent, 1.0, agent_weight) + bce(f_demo, 0.0, w)

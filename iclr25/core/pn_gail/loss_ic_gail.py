"""IC-GAIL's discriminator loss (Wu et al., ICML 2019): confidence-labelled pairs are
mixed into the agent side, the unlabelled demonstrations are the "expert" side.

    L_IC(ω) = Z · BCE(f(π), 1)
            + (1 − Z) / (1 − mean r_c) · mean[(1 − r_c) · BCE(f(x_c), 1)]
            + BCE(f(x_u), 0),                      Z = max(mean r_c, 0.7)

x_c are labelled pairs with confidences r_c, x_u unlabelled pairs. The agent is trained to
match the unlabelled mixture *after* the non-optimal part (weighted by 1 − r_c) has been
added to its side. Labelled confidences all equal to 1 make 1 − mean r_c zero: refused.
"""

from __future__ import annotations

from iclr25.core.pn_gail.loss_gail import Tensor, bce

Z_FLOOR = 0.7  # the 2IWIL repository's IC-GAIL: Z = max(mean r_c, 0.7)


def class_prior(mean_r_labeled: float) -> float:
    """Z = max(mean r_c, 0.7)."""
    return max(float(mean_r_labeled), Z_FLOOR)


def loss(
    f_agent: Tensor,
    f_labeled: Tensor,
    r_labeled: Tensor,
    f_unlabeled: Tensor,
    mean_r_labeled: float,
) -> Tensor:
    """L_IC for agent logits (B,), labelled logits (C,) with r_c (C,), unlabelled (U,)."""
    if mean_r_labeled >= 1.0:
        raise ValueError("IC-GAIL needs mean labelled confidence < 1 (it divides by 1 − mean r_c)")
    z = class_prior(mean_r_labeled)
    negative = (1.0 - z) / (1.0 - mean_r_labeled) * bce(f_labeled, 1.0, 1.0 - r_labeled)
    return z * bce(f_agent, 1.0) + negative + bce(f_unlabeled, 0.0)

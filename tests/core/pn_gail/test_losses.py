"""Each discriminator loss against its hand-computed value; PN-GAIL with r ≡ 1 is GAIL;
a tabular discriminator reaches PN-GAIL's optimal D* = (p_π + N) / (p_π + p_d)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from iclr25.core.pn_gail import (
    fixed_point,
    loss_2iwil,
    loss_gail,
    loss_ic_gail,
    loss_pn_gail,
    loss_wgail,
)
from iclr25.testing import assert_close

F_AGENT = torch.tensor([0.5, -1.0])
F_DEMO = torch.tensor([2.0, 0.0, -0.5])
R = torch.tensor([1.0, 0.5, 0.2])


def softplus(x: float) -> float:
    return math.log1p(math.exp(x))


def bce1(f: float) -> float:  # −log σ(f)
    return softplus(-f)


def bce0(f: float) -> float:  # −log(1 − σ(f))
    return softplus(f)


def mean(xs) -> float:
    return sum(xs) / len(xs)


AGENT_TERM = mean([bce1(0.5), bce1(-1.0)])


def test_gail_by_hand():
    expected = AGENT_TERM + mean([bce0(2.0), bce0(0.0), bce0(-0.5)])
    assert_close(loss_gail.loss(F_AGENT, F_DEMO), expected, rtol=1e-6)


def test_pn_gail_by_hand():
    r = [1.0, 0.5, 0.2]
    positive = mean([ri * bce0(f) for ri, f in zip(r, [2.0, 0.0, -0.5], strict=True)])
    negative = mean([(1 - ri) * bce1(f) for ri, f in zip(r, [2.0, 0.0, -0.5], strict=True)])
    assert_close(loss_pn_gail.loss(F_AGENT, F_DEMO, R), AGENT_TERM + positive + negative, rtol=1e-6)


def test_2iwil_by_hand():
    z = 0.4  # a set-wide mean, not the batch's (1.7 / 3)
    demo = mean([r / z * bce0(f) for r, f in zip([1.0, 0.5, 0.2], [2.0, 0.0, -0.5], strict=True)])
    assert_close(loss_2iwil.loss(F_AGENT, F_DEMO, R, z), AGENT_TERM + demo, rtol=1e-6)


def test_ic_gail_by_hand():
    f_c, r_c, f_u = torch.tensor([1.0, -2.0]), torch.tensor([0.9, 0.1]), torch.tensor([0.3])
    mean_rc = 0.6  # below 0.7: Z = 0.7
    z = 0.7
    labeled = mean([(1 - 0.9) * bce1(1.0), (1 - 0.1) * bce1(-2.0)])
    expected = z * AGENT_TERM + (1 - z) / (1 - mean_rc) * labeled + bce0(0.3)
    assert_close(loss_ic_gail.loss(F_AGENT, f_c, r_c, f_u, mean_rc), expected, rtol=1e-6)
    assert loss_ic_gail.class_prior(0.9) == 0.9
    with pytest.raises(ValueError, match="1 − mean r_c"):
        loss_ic_gail.loss(F_AGENT, f_c, r_c, f_u, 1.0)


def test_wgail_weights_and_loss_by_hand():
    log_pi = torch.tensor([-1.0, 0.0, -3.0])
    w = loss_wgail.weights(F_DEMO, log_pi)
    raw = [
        math.sqrt(math.exp(-f) * math.exp(lp))
        for f, lp in zip([2.0, 0.0, -0.5], [-1.0, 0.0, -3.0], strict=True)
    ]
    expected_w = [x / mean(raw) for x in raw]
    assert_close(w, expected_w, rtol=1e-5)
    demo = mean([wi * bce0(f) for wi, f in zip(expected_w, [2.0, 0.0, -0.5], strict=True)])
    assert_close(loss_wgail.loss(F_AGENT, F_DEMO, w), AGENT_TERM + demo, rtol=1e-5)
    assert [loss_wgail.refresh_due(i) for i in (49, 50, 400, 450)] == [False, True, True, False]


def test_pn_gail_with_unit_confidence_is_gail_bit_for_bit():
    torch.manual_seed(0)
    f_a, f_d = torch.randn(64, requires_grad=True), torch.randn(80, requires_grad=True)
    gail = loss_gail.loss(f_a, f_d)
    grads_gail = torch.autograd.grad(gail, (f_a, f_d))
    pn = loss_pn_gail.loss(f_a, f_d, torch.ones(80))
    grads_pn = torch.autograd.grad(pn, (f_a, f_d))
    assert pn.item() == gail.item()
    for a, b in zip(grads_pn, grads_gail, strict=True):
        assert torch.equal(a, b)


def test_reward_is_minus_log_d():
    f = torch.tensor([-3.0, 0.0, 4.0])
    assert_close(loss_gail.reward(f), -torch.log(torch.sigmoid(f.double())), rtol=1e-5)
    assert (loss_gail.reward(f) >= 0).all()


def test_tabular_discriminator_reaches_optimal_d():
    """Minimise PN-GAIL's loss over per-action logits with p_π fixed: σ(f) → D*."""
    game = fixed_point.make_game([[0.8, 0.1, 0.1], [0.1, 0.1, 0.8]], [1.0, 0.2], [0.2, 0.8])
    p_pi = np.array([0.5, 0.3, 0.2])
    k, j = 3, 2
    f = torch.zeros(k, requires_grad=True)
    opt = torch.optim.Adam([f], lr=0.05)
    demo_w = torch.as_tensor(
        j * k * game.shares[:, None] * game.probs, dtype=torch.float32
    ).reshape(-1)
    demo_r = torch.as_tensor(np.repeat(game.confidence, k), dtype=torch.float32)
    agent_w = torch.as_tensor(k * p_pi, dtype=torch.float32)
    for _ in range(1500):
        loss = loss_pn_gail.loss(f, f.repeat(j), demo_r, agent_w, demo_w)
        opt.zero_grad()
        loss.backward()
        opt.step()
    expected = fixed_point.optimal_discriminator(game, p_pi)
    assert_close(torch.sigmoid(f.detach()), expected, atol=2e-3, rtol=0)

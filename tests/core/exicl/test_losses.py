"""The constraint losses (Eq. 11–13) and the exploration metrics."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr25.core.exicl import feasibility as F
from iclr25.core.exicl import metrics
from iclr25.core.exicl.ddpm import DDPM


def _phi_at(net, pts):
    with torch.no_grad():
        return torch.sigmoid(net(pts[None], 0.0))[0]


def test_icl_loss_raises_phi_on_expert_and_lowers_it_on_generated_only_states():
    torch.manual_seed(0)
    net = F.make_feasibility_net(1, 32, seed=0, init_bias=0.0)
    expert = torch.tensor([[[-0.8, -0.8], [-0.6, -0.6], [-0.4, -0.4]]]).repeat(8, 1, 1)
    generated = torch.tensor([[[0.6, 0.6], [0.7, 0.7], [0.8, 0.8]]]).repeat(8, 1, 1)
    e_pts, g_pts = expert[0], generated[0]
    before_e, before_g = _phi_at(net, e_pts), _phi_at(net, g_pts)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    ddpm = DDPM(10)
    for _ in range(60):
        loss = F.noise_robust_icl_loss(net, expert, generated, ddpm, g)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert (_phi_at(net, e_pts) > before_e).all()
    assert (_phi_at(net, g_pts) < before_g).all()
    assert (_phi_at(net, g_pts) < 0.5).all() and (_phi_at(net, e_pts) > 0.5).all()


def test_info_nce_is_zero_without_accepted_constraints():
    phi = torch.rand(50)
    assert float(F.info_nce_loss(phi, None, 0.1)) == 0.0
    assert float(F.info_nce_loss(phi, torch.zeros((0, 50)), 0.1)) == 0.0


def test_info_nce_grows_as_phi_nears_an_accepted_forbidding_constraint():
    accepted = torch.zeros((1, 20))  # φ̃ forbids all 20 points
    levels = (1.0, 0.7, 0.3, 0.0)
    values = [float(F.info_nce_loss(torch.full((20,), p), accepted, 0.1)) for p in levels]
    assert all(a < b for a, b in zip(values, values[1:], strict=False))
    # where φ̃ allows (φ̃ = 1) the positive and negative coincide: log 2, no gradient
    allowed = torch.ones((1, 20))
    phi = torch.full((20,), 0.4, requires_grad=True)
    loss = F.info_nce_loss(phi, allowed, 0.1)
    loss.backward()
    assert abs(float(loss.detach()) - np.log(2)) < 1e-6
    assert float(phi.grad.abs().max()) < 1e-6


def test_mask_permissibility_reproduces_the_mask_at_cell_centres():
    mask = np.zeros((1, 6, 5), bool)
    mask[0, 2, 3] = mask[0, 5, 0] = True
    phi_fn = F.MaskPermissibility(mask)
    masks, phi = F.masks_of(phi_fn, 5, 6)
    np.testing.assert_array_equal(masks, mask)


def test_iou_groups_and_cost_variance():
    region = np.ones((4, 4), bool)
    a = np.zeros((4, 4), bool)
    a[:, 0] = True
    b = a.copy()
    b[0, 1] = True  # IoU 4/5 with a: same group
    c = np.zeros((4, 4), bool)
    c[:, 3] = True  # disjoint: a new group
    assert metrics.iou(a, b, region) == 0.8
    assert metrics.distinct_groups([a, b, c], region) == [0, 2]
    assert metrics.iou(a, a & ~region, region & ~a) == 1.0  # empty on R
    phi = np.stack([np.where(a, 0.01, 1.0), np.where(c, 0.01, 1.0)])
    path = [np.array([(0, 0), (1, 0), (2, 0), (3, 0)])]  # crosses both walls once
    assert metrics.cost_variance(phi, path) < 1e-9
    path2 = [np.array([(0, 0), (0, 1)])]  # only a's wall
    assert metrics.cost_variance(phi, path2) > 1.0


def test_cell_table_acts_at_the_clean_level_only_and_hits_cell_centres():
    net = F.make_feasibility_net(1, 16, seed=0, cells=(5, 6))
    pts = F.cell_centres_unit(5, 6)[None]  # (1, 30, 2)
    with torch.no_grad():
        before_clean, before_noisy = net(pts, 0.0), net(pts, 0.3)
        net.table[0, 2, 3] = -4.0  # cell (x 3, y 2)
        after_clean, after_noisy = net(pts, 0.0), net(pts, 0.3)
    delta = (after_clean - before_clean).reshape(6, 5)
    assert delta[2, 3] == pytest.approx(-4.0, abs=1e-5)  # exactly that cell's centre
    assert delta.abs().sum() == pytest.approx(4.0, abs=1e-4)  # and no other centre
    assert torch.equal(after_noisy, before_noisy)  # noised levels: the MLP alone


def test_ddpm_index_zero_is_noised_so_phi_reserves_level_zero_for_clean_states():
    ddpm = DDPM(20)
    x = torch.zeros((4, 3, 2))
    noised = ddpm.q_sample(x, torch.zeros(4, dtype=torch.long), torch.ones_like(x))
    assert float(noised.abs().min()) > 0.05  # index 0 already carries noise
    assert F.level_of(0, 20) == pytest.approx(1 / 20)
    assert F.level_of(19, 20) == pytest.approx(1.0)


def test_the_cell_table_learns_from_clean_states_only():
    """With generated = expert trajectories the clean terms cancel, so the table (which acts
    at level 0 only) must get no gradient: the noised terms, i = 0 included, reach the MLP
    alone. (The first version fed index-0 noised states to the table at level 0.)"""
    net = F.make_feasibility_net(1, 16, seed=0, cells=(8, 8))
    traj = torch.rand((64, 5, 2), generator=torch.Generator().manual_seed(0)) * 2 - 1
    g = torch.Generator().manual_seed(1)
    loss = F.noise_robust_icl_loss(net, traj, traj.clone(), DDPM(20), g)
    loss.backward()
    assert float(net.table.grad.abs().max()) < 1e-7
    assert float(net.w1.grad.abs().max()) > 0  # the noised terms still train the MLP


def test_info_nce_stops_pulling_once_the_constraint_differs_from_the_accepted_ones():
    """The constraint-level form saturates: a candidate forbidding other states than the
    accepted constraint gets (almost) no push towards all-permissive, while one equal to
    it is pushed hard (the per-state form pushed both towards 1 and emptied it)."""
    accepted = torch.ones((1, 40))
    accepted[0, :30] = 0.0  # forbids states 0–29
    same = accepted[0].clone().requires_grad_(True)
    other = torch.ones(40)
    other[30:] = 0.0  # forbids states 30–39 instead
    other.requires_grad_(True)
    loss_same = F.info_nce_loss(same, accepted, 0.1)
    loss_other = F.info_nce_loss(other, accepted, 0.1)
    loss_same.backward()
    loss_other.backward()
    assert loss_other.item() < 0.01 < 1.0 < loss_same.item()
    assert float(other.grad.abs().sum()) < 0.01 * float(same.grad.abs().sum())


def test_dual_step_is_projected_ascent_with_a_cap():
    from iclr25.core.exicl.exicl import ExiclConfig, dual_step

    c = ExiclConfig(lambda_lr=0.5, lambda_max=3.0)
    assert dual_step(1.0, 2.0, 0.0, c) == pytest.approx(2.0)  # samples cost more: λ up
    assert dual_step(1.0, 0.0, 1.0, c) == pytest.approx(0.5)  # less: λ down
    assert dual_step(0.2, 0.0, 1.0, c) == 0.0
    assert dual_step(2.9, 10.0, 0.0, c) == 3.0

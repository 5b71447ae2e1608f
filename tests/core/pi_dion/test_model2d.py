"""2-D PI-DION network: Taylor-mode Laplacian and the factorised residual against autograd."""

import pytest
import torch

from iclr25.core.pi_dion.model2d import PIDION2D, NetConfig2D, taylor_trunk_2d


def _net(seed=0, u_scale=1.0):
    torch.manual_seed(seed)
    cfg = NetConfig2D(side=6, channels=4, width=12, depth=3, basis=5, f_scale=3.0,
                      u_scale=u_scale)  # fmt: skip
    return PIDION2D(cfg).double()


def test_taylor_trunk_2d_equals_autograd():
    net = _net()
    pts = torch.rand(9, 2, dtype=torch.float64)
    tau, grad, second = taylor_trunk_2d(net.trunk, pts)
    for k in range(tau.shape[1]):
        p = pts.clone().requires_grad_(True)
        out = net.trunk(p)[:, k]
        (g,) = torch.autograd.grad(out.sum(), p, create_graph=True)  # (M, 2)
        for axis in range(2):
            (h,) = torch.autograd.grad(g[:, axis].sum(), p, retain_graph=True)
            assert torch.allclose(grad[axis][:, k], g[:, axis].detach(), atol=1e-12)
            assert torch.allclose(second[axis][:, k], h[:, axis], atol=1e-10)


@pytest.mark.parametrize("u_scale", [1.0, 16.0])  # 16: the trained models' boundary factor
def test_factorised_residual_equals_autograd_through_the_network(u_scale):
    net, c = _net(1, u_scale), 2.5
    d = torch.randn(3, 36, dtype=torch.float64)
    pts = torch.rand(7, 2, dtype=torch.float64)
    res = net.residual(d, pts, c)  # (3, 7)
    p = pts.clone().requires_grad_(True)
    u, f = net.fields(d, p)  # (3, 7)
    lap = torch.zeros_like(u)
    for i in range(len(d)):
        (g,) = torch.autograd.grad(u[i].sum(), p, create_graph=True)
        for axis in range(2):
            (h,) = torch.autograd.grad(g[:, axis].sum(), p, retain_graph=True)
            lap[i] += h[:, axis]
    expected = (-lap + c * u - f).detach()
    assert torch.allclose(res.detach(), expected, atol=1e-9 * float(expected.abs().max()))


def test_2d_network_is_homogeneous_and_u_vanishes_on_the_boundary():
    net = _net(2)
    d = torch.randn(2, 36, dtype=torch.float64)
    pts = torch.tensor([[0.0, 0.3], [0.7, 1.0], [0.4, 0.6]], dtype=torch.float64)
    u, f = net.fields(d, pts)
    u10, f10 = net.fields(10 * d, pts)
    assert torch.allclose(u10, 10 * u) and torch.allclose(f10, 10 * f)
    assert torch.all(u[:, :2] == 0) and torch.all(u[:, 2] != 0)

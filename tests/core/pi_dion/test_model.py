"""PI-DION network: Taylor-mode derivatives and the factorised residual against autograd."""

import pytest
import torch

from iclr25.core.pi_dion.model import PIDION, NetConfig, taylor_trunk


def _net(seed=0):
    torch.manual_seed(seed)
    return PIDION(NetConfig(sensors=8, width=16, depth=3, basis=5, f_scale=3.0)).double()


def test_taylor_trunk_equals_autograd():
    net = _net()
    x = torch.rand(17, dtype=torch.float64)
    tau, tau1, tau2 = taylor_trunk(net.trunk, x)
    for k in range(tau.shape[1]):
        xs = x.clone().requires_grad_(True)
        out = net.trunk(xs[:, None])[:, k]
        (g1,) = torch.autograd.grad(out.sum(), xs, create_graph=True)
        (g2,) = torch.autograd.grad(g1.sum(), xs)
        assert torch.allclose(tau[:, k], out, atol=1e-12)
        assert torch.allclose(tau1[:, k], g1, atol=1e-10)
        assert torch.allclose(tau2[:, k], g2, atol=1e-10)


def test_factorised_residual_equals_autograd_through_the_network():
    net, c = _net(1), 2.5
    d = torch.randn(4, 8, dtype=torch.float64)
    x = torch.rand(11, dtype=torch.float64)
    fast = net.residual(d, x, c)
    for i in range(4):
        xs = x.clone().requires_grad_(True)
        u, f = net.fields(d[i : i + 1], xs)
        (g1,) = torch.autograd.grad(u.sum(), xs, create_graph=True)
        (g2,) = torch.autograd.grad(g1.sum(), xs)
        slow = -g2 + c * u[0].detach() - f[0].detach()
        assert torch.allclose(fast[i], slow, atol=1e-8 * slow.abs().max())


def test_exact_positive_homogeneity_and_boundary():
    net = _net(2)
    d = torch.randn(3, 8, dtype=torch.float64)
    x = torch.tensor([0.0, 0.3, 1.0], dtype=torch.float64)
    u1, f1 = net.fields(d, x)
    u10, f10 = net.fields(10 * d, x)
    assert torch.allclose(f10, 10 * f1, rtol=1e-12) and torch.allclose(u10, 10 * u1, rtol=1e-12)
    assert torch.all(u1[:, [0, 2]] == 0)


def test_fused_residual_and_fit_equal_the_separate_paths():
    net, c = _net(3), -4.0
    d = torch.randn(5, 8, dtype=torch.float64)
    x, z = torch.rand(7, dtype=torch.float64), torch.rand(8, dtype=torch.float64)
    res, u_z = net.residual_and_fit(d, x, z, c)
    assert torch.allclose(res, net.residual(d, x, c), atol=1e-12)
    assert torch.allclose(u_z, net.fields(d, z)[0], atol=1e-12)


@pytest.mark.gpu
def test_taylor_trunk_on_cuda_uses_the_fused_kernel_and_equals_cpu():
    net = _net().float()
    x = torch.rand(300)
    cpu = taylor_trunk(net.trunk, x)
    gpu = taylor_trunk(net.cuda().trunk, x.cuda())
    for a, b in zip(cpu, gpu, strict=True):
        assert torch.allclose(a, b.cpu(), rtol=1e-5, atol=1e-5)

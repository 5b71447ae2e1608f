"""Fused Taylor-mode tanh layer: hand backward vs autograd and finite differences (CPU),
CUDA kernel vs the torch reference (``gpu`` marker)."""

from __future__ import annotations

import pytest
import torch

from iclr25.gpu.kernels.taylor_tanh import (
    taylor_tanh,
    taylor_tanh_backward_reference,
    taylor_tanh_reference,
)
from iclr25.testing import assert_close

SHAPES = [(0, 4), (1, 1), (7, 13), (128, 64)]


def _inputs(shape, dtype=torch.float64, device="cpu", seed=0):
    gen = torch.Generator().manual_seed(seed)
    z = 3 * torch.randn(shape, generator=gen, dtype=torch.float64)  # tails saturate tanh
    z1, z2 = (torch.randn(shape, generator=gen, dtype=torch.float64) for _ in range(2))
    return [t.to(dtype=dtype, device=device) for t in (z, z1, z2)]


def test_reference_is_the_second_order_taylor_expansion_of_tanh():
    # along a line z(x) = z0 + z1 x + z2 x²/2: (a, a', a'') at x = 0 by autograd of tanh
    z0, z1, z2 = (torch.tensor([v], dtype=torch.float64) for v in (0.7, -1.3, 2.1))
    x = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    a = torch.tanh(z0 + z1 * x + z2 * x**2 / 2)
    (a1,) = torch.autograd.grad(a.sum(), x, create_graph=True)
    (a2,) = torch.autograd.grad(a1.sum(), x)
    got = taylor_tanh_reference(z0, z1, z2)
    assert_close(torch.cat(got), torch.cat([a.detach(), a1.detach(), a2]), rtol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
def test_hand_backward_equals_autograd(shape):
    z, z1, z2 = (t.requires_grad_(True) for t in _inputs(shape))
    g = _inputs(shape, seed=1)
    out = taylor_tanh_reference(z, z1, z2)
    expected = torch.autograd.grad(out, (z, z1, z2), g, allow_unused=True)
    got = taylor_tanh_backward_reference(z.detach(), z1.detach(), z2.detach(), *g)
    for e, r in zip(expected, got, strict=True):
        assert_close(r, e, rtol=1e-12, atol=1e-12)


def test_function_passes_gradcheck_on_cpu():
    z, z1, z2 = (t.requires_grad_(True) for t in _inputs((5, 3)))
    assert torch.autograd.gradcheck(taylor_tanh, (z, z1, z2))


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES + [(1000, 1001)])
def test_kernel_equals_reference_forward_and_backward(shape):
    z, z1, z2 = (t.requires_grad_(True) for t in _inputs(shape, torch.float32, "cuda"))
    g = _inputs(shape, torch.float32, "cuda", seed=1)
    got = taylor_tanh(z, z1, z2)
    grads = torch.autograd.grad(got, (z, z1, z2), g)
    ref = taylor_tanh_reference(z, z1, z2)
    ref_grads = torch.autograd.grad(ref, (z, z1, z2), g)
    for a, b in zip((*got, *grads), (*ref, *ref_grads), strict=True):
        assert_close(a, b, rtol=1e-5, atol=1e-6)

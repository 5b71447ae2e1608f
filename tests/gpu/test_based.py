"""Based (Taylor feature map + linear attention): the feature map and the blocked
composition against the quadratic definition on the CPU, the 16-bit rounding model against
its tolerance, and the kernel path on a GPU (gpu-marked)."""

from __future__ import annotations

import math

import pytest
import torch

from iclr25.gpu.flops import based_flops
from iclr25.gpu.kernels.linear_attention import linear_attention_chunked
from iclr25.gpu.kernels.linear_attention.based import (
    BLOCK,
    based_attention,
    based_reference,
    based_tolerance,
    blocked_inputs,
    feature_size,
    taylor_feature_map,
)
from iclr25.gpu.tolerance import compare
from iclr25.testing import assert_close


def _qkv(b, h, n, d, dv, dtype=torch.float64, seed=0, device="cpu"):
    gen = torch.Generator(device=device).manual_seed(seed)
    q, k = (torch.randn(b, h, n, d, generator=gen, device=device, dtype=dtype) for _ in range(2))
    v = torch.randn(b, h, n, dv, generator=gen, device=device, dtype=dtype)
    return q, k, v


def test_feature_map_inner_product_is_the_taylor_expansion():
    gen = torch.Generator().manual_seed(1)
    q, k = torch.randn(2, 50, 16, generator=gen, dtype=torch.float64)
    s = (q * k).sum(-1) / 4.0  # q.k / sqrt(16)
    phi = (taylor_feature_map(q) * taylor_feature_map(k)).sum(-1)
    assert taylor_feature_map(q).shape == (50, 273) == (50, feature_size(16))
    assert_close(phi, 1 + s + s * s / 2, rtol=1e-12)


def test_reference_hand_computed_two_positions():
    # d' = 1: s_ij = q_i k_j; a = 1 + s + s^2/2
    q = torch.tensor([[[[1.0], [2.0]]]], dtype=torch.float64)
    k = torch.tensor([[[[0.0], [1.0]]]], dtype=torch.float64)
    v = torch.tensor([[[[3.0], [5.0]]]], dtype=torch.float64)
    a10, a11 = 1.0, 1 + 2 + 2.0  # s = 0 and s = 2
    expected = torch.tensor([[[[3.0], [(a10 * 3 + a11 * 5) / (a10 + a11)]]]], dtype=torch.float64)
    assert_close(based_reference(q, k, v), expected, rtol=1e-12)


@pytest.mark.parametrize(("d", "dv", "n"), [(16, 64, 130), (4, 8, 65), (16, 13, 1), (8, 24, 200)])
def test_blocked_composition_is_exact_in_float64(d, dv, n):
    q, k, v = _qkv(2, 3, n, d, dv, seed=d + n)
    got = based_attention(q, k, v, linear=linear_attention_chunked)
    assert got.shape == (2, 3, n, dv) and got.dtype == torch.float64
    assert_close(got, based_reference(q, k, v), rtol=1e-9, atol=1e-10)


def test_blocks_are_kernel_shaped():
    q, k, v = _qkv(1, 2, 10, 16, 64, dtype=torch.bfloat16)
    qb, kb, vb, nb = blocked_inputs(q, k, v)
    assert nb == 3 and qb.shape == kb.shape == (1, 6, 10, BLOCK)
    assert vb.shape == (1, 6, 10, 72)  # 64 + the ones column, padded to a multiple of 8
    assert bool((vb[..., 64] == 1).all()) and bool((vb[..., 65:] == 0).all())
    assert bool((qb[:, 2::3, :, 273 - 2 * BLOCK :] == 0).all())  # zero padding features


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_16_bit_chunked_stays_inside_the_tolerance_and_a_wrong_map_does_not(dtype):
    """The rounding model: the composition in 16 bits (the plain PyTorch chunked algorithm
    stands in for the kernel) is within the tolerance of the exact output, and a feature
    map off by the √2 of the quadratic term falls outside it."""
    q, k, v = _qkv(1, 4, 300, 16, 64, dtype=dtype, seed=3)
    exact = based_reference(q, k, v)
    ours = based_attention(q, k, v, linear=linear_attention_chunked)
    report = compare("O", ours, exact, based_tolerance(dtype))
    assert report.ok and report.error_ratio < 0.6, report

    wrong_sq = 1 + (q.double() @ k.double().mT) / 4
    wrong_sq = wrong_sq + ((q.double() @ k.double().mT) / 4) ** 2  # s^2 instead of s^2/2
    a = wrong_sq * torch.ones(300, 300, dtype=torch.bool).tril()
    wrong = (a @ v.double()) / a.sum(-1, keepdim=True)
    assert compare("O", wrong, exact, based_tolerance(dtype)).error_ratio > 5


def test_flops_count_the_feature_map():
    assert based_flops(1, 1, 64, 16, 64) == pytest.approx(
        64 * ((64 + 1) * (273 + 65) + 4 * 273 * 65)
    )
    assert math.isclose(based_flops(2, 3, 64, 16, 64), 6 * based_flops(1, 1, 64, 16, 64))


def test_shape_errors_are_clear():
    q, k, v = _qkv(1, 2, 5, 16, 8)
    with pytest.raises(ValueError, match="Based needs"):
        based_attention(q, k[:, :1], v, linear=linear_attention_chunked)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize(("b", "h", "n", "dv"), [(1, 2, 65, 64), (2, 4, 700, 64), (1, 1, 1, 8)])
def test_kernel_path_matches_the_definition(b, h, n, dv, dtype):
    q, k, v = _qkv(b, h, n, 16, dv, dtype=dtype, device="cuda", seed=n)
    got = based_attention(q, k, v)
    assert got.dtype == dtype and got.shape == (b, h, n, dv)
    report = compare("O", got, based_reference(q, k, v), based_tolerance(dtype))
    assert report.ok, report

"""Linear attention: the chunked algorithm against the quadratic definition on the CPU
(decay or not, any N); the kernel against the fp32 references on a GPU (gpu-marked)."""

from __future__ import annotations

import math
import re

import pytest
import torch

from iclr25.gpu.kernels import linear_attention as lin
from iclr25.gpu.kernels.linear_attention import (
    decay_matrix,
    linear_attention,
    linear_attention_chunked,
    linear_attention_reference,
    linear_attention_tolerance,
)
from iclr25.testing import assert_close


def _qkv(b, h, n, dk, dv, dtype=torch.float64, seed=0, device="cpu"):
    gen = torch.Generator(device=device).manual_seed(seed)
    q, k = (
        torch.randn(b, h, n, dk, generator=gen, device=device, dtype=dtype) / dk**0.5
        for _ in range(2)
    )
    v = torch.randn(b, h, n, dv, generator=gen, device=device, dtype=dtype)
    return q, k, v


def test_decay_matrix_known_values():
    w = decay_matrix(3, torch.tensor([math.log(2.0)]), torch.float64)  # lambda = 1/2
    expected = torch.tensor(
        [[[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.25, 0.5, 1.0]]], dtype=torch.float64
    )
    assert_close(w, expected, rtol=1e-12)
    assert_close(decay_matrix(2, None), torch.tensor([[[1.0, 0.0], [1.0, 1.0]]]))


def test_reference_known_answer_two_positions():
    # o_0 = (q0.k0) v0 ; o_1 = lambda (q1.k0) v0 + (q1.k1) v1 with lambda = e^-1
    q = torch.tensor([[[[1.0, 0.0], [0.0, 2.0]]]], dtype=torch.float64)
    k = torch.tensor([[[[3.0, 1.0], [1.0, 1.0]]]], dtype=torch.float64)
    v = torch.tensor([[[[1.0], [10.0]]]], dtype=torch.float64)
    got = linear_attention_reference(q, k, v, torch.tensor([1.0]), dtype=torch.float64)
    expected = torch.tensor([[[[3.0], [math.exp(-1) * 2.0 + 2.0 * 10.0]]]], dtype=torch.float64)
    assert_close(got, expected, rtol=1e-12)


@pytest.mark.parametrize("n", [1, 5, 63, 64, 65, 130, 200])
@pytest.mark.parametrize("chunk", [8, 64])
@pytest.mark.parametrize("decay", [None, "slopes", "zeros"])
def test_chunked_equals_definition(n, chunk, decay):
    q, k, v = _qkv(2, 3, n, 16, 12, seed=n + chunk)
    slopes = {None: None, "slopes": torch.tensor([0.02, 0.3, 1.5]), "zeros": torch.zeros(3)}[decay]
    got = linear_attention_chunked(q, k, v, slopes, chunk=chunk)
    assert got.dtype == torch.float64 and got.shape == (2, 3, n, 12)
    assert_close(
        got,
        linear_attention_reference(q, k, v, slopes, dtype=torch.float64),
        rtol=1e-10,
        atol=1e-10,
    )


def test_chunked_handles_empty_sequences():
    q, k, v = _qkv(1, 2, 0, 8, 4)
    assert linear_attention_chunked(q, k, v).shape == (1, 2, 0, 4)


def test_large_decay_keeps_only_the_diagonal():
    q, k, v = _qkv(1, 1, 20, 4, 3, seed=9)
    o = linear_attention_chunked(q, k, v, torch.tensor([60.0], dtype=torch.float64), chunk=8)
    diag = (q * k).sum(-1, keepdim=True) * v  # (q_i . k_i) v_i
    assert_close(o, diag, rtol=1e-12, atol=1e-12)


def test_reference_rejects_bad_shapes():
    q, k, v = _qkv(1, 2, 4, 8, 4)
    with pytest.raises(ValueError, match="slopes must have shape"):
        linear_attention_reference(q, k, v, torch.zeros(3))
    with pytest.raises(ValueError, match=r"\(B, H, N, DK\)"):
        linear_attention_chunked(q[0], k[0], v[0])


def test_python_constants_match_kernel_source():
    src = lin.SPEC.read_source()
    found = {k: int(v) for k, v in re.findall(r"\b(C|BDV|WARPS)\s*=\s*(\d+)", src)}
    assert found == {"C": 64, "BDV": 64, "WARPS": 4}
    assert lin.BLOCK_DV == found["BDV"] and lin.reference.CHUNK == found["C"]
    assert lin.smem_bytes(128) == 2 * (2 * 64 * 128 + 64 * 64) * 2 + 128 * 64 * 2 + 4 * 80
    for dtype in ("bfloat16", "float16"):
        for dk in (64, 128):
            assert lin.function_name(dtype, dk) + "," in src


def test_wrapper_validates_before_touching_a_gpu():
    q, k, v = _qkv(1, 1, 4, 64, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        linear_attention(q, k, v)


# --- GPU ----------------------------------------------------------------------------------
GPU_SHAPES = [
    (1, 1, 1, 64, 64),
    (1, 2, 63, 64, 64),
    (2, 2, 64, 128, 128),
    (1, 3, 65, 64, 72),
    (2, 2, 200, 128, 64),
    (1, 4, 1000, 128, 128),
    (2, 8, 4096, 64, 128),
    (1, 2, 70, 64, 8),  # D_v below one 64-column block
    (1, 1, 130, 128, 136),  # three D_v blocks, the last one 8 wide
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("decay", [False, True])
@pytest.mark.parametrize(("b", "h", "n", "dk", "dv"), GPU_SHAPES)
def test_kernel_matches_fp32_reference(b, h, n, dk, dv, decay, dtype):
    q, k, v = _qkv(b, h, n, dk, dv, dtype=dtype, device="cuda")
    slopes = torch.linspace(0.01, 0.8, h, device="cuda") if decay else None
    got = linear_attention(q, k, v, slopes)
    if n <= 1000:
        expected = linear_attention_reference(q, k, v, slopes)
    else:  # the quadratic definition needs N^2 memory: the fp32 chunked algorithm instead
        expected = linear_attention_chunked(q.float(), k.float(), v.float(), slopes)
    assert got.dtype == dtype and got.shape == (b, h, n, dv)
    scale = float(expected.abs().max()) or 1.0
    tol = linear_attention_tolerance(dtype) * scale
    assert_close(got.float(), expected, rtol=0, atol=tol, what=f"{b, h, n, dk, dv, decay}")


@pytest.mark.gpu
def test_kernel_agrees_with_plain_pytorch_chunked_in_bf16():
    q, k, v = _qkv(2, 4, 777, 128, 128, dtype=torch.bfloat16, device="cuda", seed=5)
    slopes = torch.linspace(0.05, 0.5, 4, device="cuda")
    got, peer = (
        linear_attention(q, k, v, slopes).float(),
        linear_attention_chunked(q, k, v, slopes).float(),
    )
    tol = 2 * linear_attention_tolerance(torch.bfloat16) * float(peer.abs().max())
    assert_close(got, peer, rtol=0, atol=tol)


@pytest.mark.gpu
def test_kernel_empty_sequence():
    q, k, v = _qkv(1, 2, 0, 64, 64, dtype=torch.bfloat16, device="cuda")
    assert linear_attention(q, k, v).shape == (1, 2, 0, 64)

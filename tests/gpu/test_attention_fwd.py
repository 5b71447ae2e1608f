"""Attention forward: the references and the kernel's algorithm on the CPU; the kernel
against the fp32 reference on a GPU (gpu-marked)."""

from __future__ import annotations

import math
import re

import pytest
import torch

from iclr25.gpu.kernels import attention_fwd
from iclr25.gpu.kernels.attention_fwd import attention_mma_sync as attention_forward
from iclr25.gpu.kernels.attention_fwd import (
    attention_reference,
    attention_tiled_reference,
    attention_tolerance,
)
from iclr25.gpu.kernels.attention_fwd.reference import kv_tile_count
from iclr25.testing import assert_close

# These tests pin the mma.sync kernel (the proven one, every GPU's fallback); the public
# path, which takes the Hopper kernel once it passed its self-check, is tested in
# tests/gpu/test_attention_hopper.py.


def test_reference_known_answer():
    # one query, two keys with scores 0 and ln 3 (scale 1): weights 1/4 and 3/4
    q = torch.tensor([[[1.0, 0.0]]])
    k = torch.tensor([[[0.0, 0.0], [math.log(3.0), 0.0]]])
    v = torch.tensor([[[4.0, 0.0], [0.0, 8.0]]])
    o, lse = attention_reference(q, k, v, scale=1.0)
    assert_close(o, torch.tensor([[[1.0, 6.0]]]), rtol=1e-6)
    assert_close(lse, torch.tensor([[math.log(4.0)]]), rtol=1e-6)  # log(e^0 + e^ln3)


def test_reference_causal_first_row_sees_only_the_first_key():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 5, 8, generator=gen) for _ in range(3))
    o, _ = attention_reference(q, k, v, causal=True)
    assert_close(o[:, 0], v[:, 0], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("n_q", "n_kv"), [(7, 7), (5, 9), (9, 5)])
def test_reference_matches_torch_sdpa_including_the_causal_convention(n_q, n_kv):
    gen = torch.Generator().manual_seed(n_q * 10 + n_kv)
    q = torch.randn(2, 3, n_q, 16, generator=gen)
    k, v = (torch.randn(2, 3, n_kv, 16, generator=gen) for _ in range(2))
    for causal in (False, True):
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        assert_close(attention_reference(q, k, v, causal)[0], expected, rtol=1e-5, atol=1e-5)


def test_reference_batch_chunking_changes_nothing():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(6, 10, 8, generator=gen) for _ in range(3))
    whole, whole_lse = attention_reference(q, k, v, causal=True)
    chunked, chunked_lse = attention_reference(q, k, v, causal=True, batch_chunk=4)
    assert_close(chunked, whole, rtol=0, atol=0)
    assert_close(chunked_lse, whole_lse, rtol=0, atol=0)


CPU_SHAPES = [
    (1, 1, 64),
    (63, 63, 64),
    (64, 64, 64),
    (65, 65, 128),
    (130, 70, 64),
    (70, 200, 64),
    (200, 64, 128),
]


@pytest.mark.parametrize(("n_q", "n_kv", "d"), CPU_SHAPES)
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_algorithm_equals_the_definition(n_q, n_kv, d, causal):
    """The kernel's block structure, tile skipping, masking and -inf guards, in torch."""
    gen = torch.Generator().manual_seed(n_q + n_kv + d)
    q = torch.randn(2, n_q, d, generator=gen, dtype=torch.float64)
    k, v = (torch.randn(2, n_kv, d, generator=gen, dtype=torch.float64) for _ in range(2))
    o, lse = attention_tiled_reference(q, k, v, causal)
    o_ref, lse_ref = attention_reference(q, k, v, causal, dtype=torch.float64)
    assert_close(o, o_ref, rtol=1e-5, atol=1e-5)
    assert_close(lse, lse_ref, rtol=1e-5, atol=1e-5)


def test_kv_tile_count_brute_force():
    for causal in (False, True):
        for n_kv in range(0, 200, 9):
            for q0 in range(0, 256, 64):
                needed = {
                    j // 64 for q in range(q0, q0 + 64) for j in range(n_kv) if not causal or j <= q
                }
                assert needed == set(range(kv_tile_count(q0, 64, n_kv, 64, causal)))


def test_python_constants_match_kernel_source():
    src = attention_fwd.SPEC.read_source()
    found = {k: int(v) for k, v in re.findall(r"\b(BQ|BKV|WARPS)\s*=\s*(\d+)", src)}
    assert found == {"BQ": 64, "BKV": 64, "WARPS": 4}
    assert attention_fwd.THREADS == 32 * found["WARPS"]
    assert attention_fwd.smem_bytes(128) == (64 * 128 + 4 * 64 * 128) * 2
    for dtype in ("bfloat16", "float16"):
        for d in (64, 128):
            assert attention_fwd.function_name(dtype, d) + "," in src


def test_tolerance_is_per_dtype():
    assert attention_tolerance(torch.bfloat16)[0] > attention_tolerance(torch.float16)[0]


def test_wrapper_validates_before_touching_a_gpu():
    t = torch.zeros(1, 1, 4, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        attention_forward(t, t, t)


# --- GPU ----------------------------------------------------------------------------------
GPU_SHAPES = [
    (1, 1, 1, 1),
    (2, 3, 64, 64),
    (1, 2, 65, 65),
    (2, 2, 127, 127),
    (1, 4, 200, 333),
    (1, 4, 333, 200),
    (2, 8, 1024, 1024),
    (1, 2, 4097, 4097),
]


def _qkv(b, h, n_q, n_kv, d, dtype, seed=0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(b, h, n_q, d, device="cuda", dtype=dtype, generator=gen)
    k, v = (torch.randn(b, h, n_kv, d, device="cuda", dtype=dtype, generator=gen) for _ in range(2))
    return q, k, v


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("b", "h", "n_q", "n_kv"), GPU_SHAPES)
def test_kernel_matches_fp32_reference(b, h, n_q, n_kv, causal, d, dtype):
    q, k, v = _qkv(b, h, n_q, n_kv, d, dtype)
    o, lse = attention_forward(q, k, v, causal=causal, return_lse=True)
    o_ref, lse_ref = attention_reference(q, k, v, causal, batch_chunk=8)
    rtol, atol = attention_tolerance(dtype)
    assert o.dtype == dtype and o.shape == q.shape
    assert_close(o.float(), o_ref, rtol=rtol, atol=atol, what=f"O {b, h, n_q, n_kv, d}")
    assert_close(lse, lse_ref, rtol=1e-3, atol=1e-3, what="LSE")


@pytest.mark.gpu
def test_kernel_scale_argument_and_non_contiguous_inputs():
    q, k, v = _qkv(2, 4, 100, 100, 64, torch.bfloat16, seed=3)
    qt = q.transpose(1, 2).contiguous().transpose(1, 2)  # same values, non-contiguous view
    got = attention_forward(qt, k, v, scale=0.3)
    rtol, atol = attention_tolerance(torch.bfloat16)
    assert_close(got.float(), attention_reference(q, k, v, scale=0.3)[0], rtol=rtol, atol=atol)


@pytest.mark.gpu
def test_kernel_agrees_with_sdpa():
    q, k, v = _qkv(2, 8, 512, 512, 128, torch.bfloat16, seed=4)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    rtol, atol = attention_tolerance(torch.bfloat16)
    for causal in (False, True):
        expected = sdpa(q, k, v, is_causal=causal).float()
        assert_close(
            attention_forward(q, k, v, causal).float(), expected, rtol=2 * rtol, atol=2 * atol
        )


@pytest.mark.gpu
def test_kernel_refuses_more_heads_than_grid_y_allows():
    q = torch.zeros(65536, 1, 1, 64, device="cuda", dtype=torch.bfloat16)  # B x H = 65536
    with pytest.raises(ValueError, match="exceeds 65535"):
        attention_forward(q, q, q)
    out = attention_forward(q[:65535], q[:65535], q[:65535])  # the limit itself runs
    assert out.shape == (65535, 1, 1, 64) and not out.isnan().any()


@pytest.mark.gpu
def test_kernel_empty_query_and_zero_keys():
    q, k, v = _qkv(1, 2, 0, 5, 64, torch.bfloat16)
    assert attention_forward(q, k, v).shape == (1, 2, 0, 64)
    q, k, v = _qkv(1, 2, 5, 0, 64, torch.bfloat16)
    with pytest.raises(ValueError, match="zero keys"):
        attention_forward(q, k, v)

"""Attention backward: the kernels' algorithm and constants on the CPU; the kernels, the
differentiable attention() and its fallback on a GPU (gpu-marked)."""

from __future__ import annotations

import re
import warnings

import pytest
import torch

from iclr25.gpu import selfcheck
from iclr25.gpu.kernels import attention_bwd
from iclr25.gpu.kernels.attention_bwd import (
    attention_backward_reference,
    attention_backward_tiled_reference,
    attention_grad_tolerance,
)
from iclr25.gpu.kernels.attention_fwd.reference import attention_reference, expand_kv
from iclr25.gpu.tolerance import compare

#: (B, Hq, Hkv, N_q, N_kv, D, causal): partial tiles, N_q != N_kv both ways, GQA and MQA
SHAPES = [
    (1, 1, 1, 1, 1, 32, False),
    (1, 2, 2, 70, 130, 32, True),
    (2, 4, 2, 130, 65, 16, True),
    (1, 3, 1, 33, 200, 16, False),
    (1, 2, 1, 129, 129, 16, True),
]


def _inputs(b, hq, hkv, n_q, n_kv, d, dtype=torch.float64, device="cpu", seed=0):
    gen = torch.Generator(device=device).manual_seed(seed)
    q = torch.randn(b, hq, n_q, d, generator=gen, dtype=dtype, device=device)
    k, v = (torch.randn(b, hkv, n_kv, d, generator=gen, dtype=dtype, device=device) for _ in "kv")
    do = torch.randn(b, hq, n_q, d, generator=gen, dtype=dtype, device=device)
    return q, k, v, do


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("block_q", [64, 16])  # the dK/dV kernel's query tile for D = 64 / 128
def test_the_kernels_algorithm_matches_autograd(shape, block_q):
    *dims, causal = shape
    q, k, v, do = _inputs(*dims)
    group = dims[1] // dims[2]
    o, lse = attention_reference(
        q, expand_kv(k, group), expand_kv(v, group), causal, dtype=torch.float64
    )
    tiled = attention_backward_tiled_reference(q, k, v, o, lse, do, causal, block_q=block_q)
    exact = attention_backward_reference(q, k, v, do, causal, dtype=torch.float64)
    for got, want in zip(tiled, exact, strict=True):
        assert got.shape == want.shape
        torch.testing.assert_close(got.double(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_closed_form_at_the_exact_output_is_autograd(shape):
    *dims, causal = shape
    q, k, v, do = _inputs(*dims, seed=1)
    group = dims[1] // dims[2]
    o = attention_reference(
        q, expand_kv(k, group), expand_kv(v, group), causal, dtype=torch.float64
    )[0]
    closed = attention_backward_reference(q, k, v, do, causal, dtype=torch.float64, o=o)
    auto = attention_backward_reference(q, k, v, do, causal, dtype=torch.float64)
    for got, want in zip(closed, auto, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_gqa_gradients_sum_over_the_query_heads_of_a_group():
    q, k, v, do = _inputs(1, 4, 1, 20, 20, 8, seed=2)
    _, dk, dv = attention_backward_reference(q, k, v, do, dtype=torch.float64)
    _, dk_full, dv_full = attention_backward_reference(
        q, expand_kv(k, 4), expand_kv(v, 4), do, dtype=torch.float64
    )
    torch.testing.assert_close(dk[:, 0], dk_full.sum(1))
    torch.testing.assert_close(dv[:, 0], dv_full.sum(1))


def test_bad_head_counts_are_refused():
    q, k, v, _ = _inputs(1, 3, 2, 8, 8, 8)
    with pytest.raises(ValueError, match="multiple of kv heads"):
        attention_backward_reference(q, k, v, q)


def test_python_constants_match_kernel_source():
    src = attention_bwd.SPEC.read_source()
    assert re.search(r"BQ = D == 64 \? 64 : 16;", src) and re.search(
        r"BKV_DQ = D == 64 \? 64 : 32;", src
    )
    assert attention_bwd.tiles(64) == (64, 64) and attention_bwd.tiles(128) == (16, 32)
    assert re.search(r"constexpr int BKV = 64, WARPS = 4, THREADS = 32 \* WARPS;", src)
    for d in (64, 128):
        for name in attention_bwd.function_names(torch.bfloat16, d) + attention_bwd.function_names(
            torch.float16, d
        ):
            suffix = name.split("_", 3)[-1]
            assert f"ICLR25_BWD_ENTRY({suffix}," in src
        # within sm_80's 163 KiB per block and Hopper's 227 KiB
        assert attention_bwd.smem_bytes("dkdv", d) <= 163 * 1024
        assert attention_bwd.smem_bytes("dq", d) <= 163 * 1024
    assert attention_bwd.smem_bytes("dkdv", 64) == 2 * 8192 + 2 * (2 * 8192 + 512)
    assert attention_bwd.smem_bytes("dq", 128) == 2 * 16384 + 4 * 32 * 128 * 2


# --- GPU --------------------------------------------------------------------------------
def _verified() -> bool:
    return attention_bwd.backward_verdict(torch.device("cuda", 0)) is None


@pytest.mark.gpu
def test_the_backward_kernels_pass_their_self_check_on_this_gpu():
    """In a subprocess with a time limit: a deadlock or a crash is a failure, not a hang."""
    why = attention_bwd.backward_verdict(torch.device("cuda", 0))
    assert why is None, why


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize(
    "shape", SHAPES + [(2, 8, 2, 1000, 1000, 128, True), (1, 4, 4, 4097, 4097, 64, False)]
)
def test_kernels_match_the_fp32_gradients(shape, dtype):
    if not _verified():
        pytest.fail("the backward kernels failed their self-check (see the test above)")
    *dims, causal = shape
    dims[-1] = 64 if dims[-1] < 64 else dims[-1]
    q, k, v, do = _inputs(*dims, dtype=dtype, device="cuda")
    from iclr25.gpu.kernels.attention_fwd import attention_forward

    o, lse = attention_forward(q, k, v, causal=causal, return_lse=True)
    got = attention_bwd.attention_backward(q, k, v, o, lse, do, causal)
    exact = attention_backward_reference(q, k, v, do, causal, o=o)
    for name, ours, ref in zip(("dQ", "dK", "dV"), got, exact, strict=True):
        report = compare(name, ours, ref, attention_grad_tolerance(dtype))
        assert report.ok, report


@pytest.mark.gpu
def test_attention_is_differentiable_end_to_end():
    q, k, v, do = _inputs(2, 4, 2, 300, 300, 64, dtype=torch.bfloat16, device="cuda", seed=3)
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    out = attention_bwd.attention(*leaves, causal=True)
    out.backward(do)
    exact = attention_backward_reference(q, k, v, do, True, o=out.detach())
    for name, leaf, ref in zip(("dQ", "dK", "dV"), leaves, exact, strict=True):
        assert compare(name, leaf.grad, ref, attention_grad_tolerance(torch.bfloat16)).ok


@pytest.mark.gpu
def test_an_unverified_backward_falls_back_to_sdpa_with_a_warning(monkeypatch):
    failed = selfcheck.Verdict("attention_bwd", False, "timed out")
    monkeypatch.setattr(selfcheck, "verify", lambda name, index, runner=None: failed)
    selfcheck.forget()
    q, k, v, do = _inputs(1, 2, 2, 100, 100, 64, dtype=torch.bfloat16, device="cuda", seed=4)
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        attention_bwd.attention(*leaves).backward(do)
    assert any("attention_bwd failed its self-check" in str(w.message) for w in caught)
    exact = attention_backward_reference(q, k, v, do)
    assert (
        compare(
            "dQ", leaves[0].grad, exact[0], attention_grad_tolerance(torch.bfloat16)
        ).error_ratio
        < 5
    )
    selfcheck.forget()

"""The Hopper attention forward through the public path (attention_forward): its
self-check, shapes against the fp32 reference with the row-RMS bound and the LSE, GQA, and
the fallback warning; its constants on the CPU."""

from __future__ import annotations

import re
import warnings

import pytest
import torch

from iclr25.gpu import selfcheck
from iclr25.gpu.kernels import attention_fwd, attention_hopper
from iclr25.gpu.kernels.attention_fwd import (
    LSE_TOLERANCE,
    attention_forward,
    attention_reference,
    attention_rms_tolerance,
    expand_kv,
)
from iclr25.gpu.tolerance import compare


def test_constants_match_the_kernel_source():
    src = attention_hopper.SPEC.read_source()
    assert re.search(r"constexpr int BQ = 128, BKV = 128, STAGES = 2, THREADS = 384;", src)
    assert "__grid_constant__ TensorMap map_q" in src
    for d in attention_hopper.HEAD_DIMS:
        for dtype in (torch.bfloat16, torch.float16):
            assert f"HP_ATTN_ENTRY({attention_hopper.function_name(dtype, d)}," in src
        assert attention_hopper.smem_bytes(d) <= 227 * 1024
    assert attention_hopper.smem_bytes(128) == 32768 + 131072 + 1024 + 40


def test_off_the_gpu_the_mma_sync_kernel_is_planned():
    q = torch.zeros(1, 2, 8, 64, dtype=torch.bfloat16)
    assert attention_fwd.attention_plan(q, q, q) == attention_fwd.AttentionPlan("attention_fwd")
    assert attention_hopper.applies(q, q, q) == "needs an sm_90 (Hopper) device"


# --- GPU ----------------------------------------------------------------------------------
def _hopper() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


hopper = pytest.mark.skipif("not _hopper()", reason="needs an sm_90 GPU")


@pytest.mark.gpu
@hopper
def test_attention_hopper_passes_its_self_check_on_this_gpu():
    verdict = selfcheck.verify("attention_hopper", torch.cuda.current_device())
    assert verdict.ok, verdict.reason


@pytest.mark.gpu
@hopper
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    ("b", "hq", "hkv", "n_q", "n_kv", "d"),
    [(1, 1, 1, 1, 1, 64), (2, 4, 4, 127, 129, 128), (1, 8, 2, 4097, 4097, 128),
     (2, 4, 1, 300, 1000, 64), (1, 2, 2, 1000, 300, 128)],
)  # fmt: skip
def test_public_path_matches_the_fp32_reference(b, hq, hkv, n_q, n_kv, d, causal, dtype):
    if not selfcheck.verify("attention_hopper", torch.cuda.current_device()).ok:
        pytest.fail("attention_hopper failed its self-check (see the test above)")
    gen = torch.Generator(device="cuda").manual_seed(n_q + n_kv)
    q = torch.randn(b, hq, n_q, d, device="cuda", dtype=dtype, generator=gen)
    k, v = (torch.randn(b, hkv, n_kv, d, device="cuda", dtype=dtype, generator=gen) for _ in "kv")
    assert attention_fwd.attention_plan(q, k, v).kernel == "attention_hopper"
    o, lse = attention_forward(q, k, v, causal=causal, return_lse=True)
    group = hq // hkv
    exact_o, exact_lse = attention_reference(q, expand_kv(k, group), expand_kv(v, group), causal)
    assert compare("O", o, exact_o, attention_rms_tolerance(dtype)).ok
    assert compare("LSE", lse, exact_lse, LSE_TOLERANCE).ok


@pytest.mark.gpu
@hopper
def test_a_failed_self_check_falls_back_to_mma_sync_with_a_warning(monkeypatch):
    failed = selfcheck.Verdict("attention_hopper", False, "timed out")
    monkeypatch.setattr(selfcheck, "verify", lambda name, index, runner=None: failed)
    selfcheck.forget()
    q = torch.randn(1, 2, 200, 64, device="cuda", dtype=torch.bfloat16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        o = attention_forward(q, q, q)
    assert attention_fwd.attention_plan(q, q, q).kernel == "attention_fwd"
    assert any("attention_hopper failed its self-check" in str(w.message) for w in caught)
    assert compare(
        "O", o, attention_reference(q, q, q)[0], attention_rms_tolerance(torch.bfloat16)
    ).ok
    selfcheck.forget()

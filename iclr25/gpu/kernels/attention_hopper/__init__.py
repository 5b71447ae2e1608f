"""Attention forward on Hopper: wgmma for S = Q K^T and O += P V, a TMA producer warpgroup
and two consumer warpgroups taking turns (FlashAttention-3's ping-pong), kernel.cu.

The first choice of :func:`iclr25.gpu.kernels.attention_fwd.attention_forward` on sm_90
devices for (B, H, N, D) bf16/fp16 inputs, D = 64 or 128, causal or not, grouped-query
attention natively (k, v with fewer heads). Q, K, V and O are read and written in place
through 3-D tensor maps (by value, ``__grid_constant__``). Written without a GPU at hand:
used on a device only after :func:`self_check` passed there (:mod:`iclr25.gpu.selfcheck`),
otherwise the mma.sync forward runs, with a warning. The consumer loop is peeled (tile 0: S
only; steady state: S_t with P_{t-1} V_{t-1} in flight; last: P V only) so that no wgmma
wait is conditional: ptxas keeps the products asynchronous (no C7514 serialization
report, which the compile test checks).
"""

from __future__ import annotations

import math

from iclr25.gpu.kernels.attention_hopper.reference import (
    LSE_TOLERANCE,
    attention_reference,
    attention_rms_tolerance,
    expand_kv,
)
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="attention_hopper",
    package=__name__,
    description="attention forward, wgmma S = QK^T and O += PV, TMA producer, 2 consumer "
    "warpgroups ping-pong, causal, GQA, D = 64/128",
    archs=("sm_90a",),
    skip_reason="TMA and wgmma are Hopper-only (sm_90a)",
)
# Must match kernel.cu.
BQ, BKV, STAGES, THREADS = 128, 128, 2, 384
HEAD_DIMS = (64, 128)
MAX_GRID_Y = 65535


def smem_bytes(head_dim: int) -> int:
    """Q (128 rows) + 2 stages of K and V (128 rows each) + 1 KiB alignment + barriers."""
    panels = head_dim // 64
    return panels * BQ * 128 + STAGES * 2 * panels * BKV * 128 + 1024 + 8 * (1 + 2 * STAGES)


def function_name(dtype, head_dim: int) -> str:
    short = {"bfloat16": "bf16", "float16": "f16"}[str(dtype).removeprefix("torch.")]
    return f"attn_hopper_{short}_d{head_dim}"


def applies(q, k, v) -> str | None:
    """Why the Hopper forward cannot take these inputs (None when it can)."""
    import torch

    if not (q.is_cuda and k.is_cuda and v.is_cuda) or torch.cuda.get_device_capability(
        q.device
    ) != (9, 0):
        return "needs an sm_90 (Hopper) device"
    if q.ndim != 4 or k.ndim != 4 or k.shape != v.shape or q.dtype != k.dtype or q.dtype != v.dtype:
        return "needs (B, H, N, D) q, k, v of one dtype"
    if q.dtype not in (torch.bfloat16, torch.float16) or q.shape[-1] not in HEAD_DIMS:
        return "needs bf16 or fp16 with D = 64 or 128"
    if (
        q.shape[0] != k.shape[0]
        or k.shape[1] == 0
        or q.shape[1] % k.shape[1]
        or k.shape[-1] != q.shape[-1]
    ):
        return "needs matching batch and head dims, Hq a multiple of Hkv"
    if min(q.shape[2], k.shape[2]) < 1 or q.shape[0] * q.shape[1] > MAX_GRID_Y:
        return "needs N_q, N_kv >= 1 and B x H <= 65535"
    return None


def attention_hopper(
    q, k, v, causal: bool = False, scale: float | None = None, return_lse: bool = False
):
    """O (and the fp32 natural-log LSE) with the Hopper kernel; the caller checks
    :func:`applies` (and the self-check) first. Inputs are made contiguous if they are not."""
    import torch

    from iclr25.gpu import driver, tensor_map
    from iclr25.gpu.compile import cubin_path

    q, k, v = (t.contiguous() for t in (q, k, v))
    (b, hq, n_q, d), (hkv, n_kv) = q.shape, k.shape[1:3]
    o = torch.empty_like(q)
    lse = torch.empty((b, hq, n_q), dtype=torch.float32, device=q.device) if return_lse else None
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    index = q.device.index if q.device.index is not None else torch.cuda.current_device()
    fn = driver.function(
        cubin_path(SPEC.name, "sm_90a"), function_name(q.dtype, d), index, smem_bytes(d)
    )
    params = [
        tensor_map.param(q.reshape(b * hq, n_q, d), 64, BQ),
        tensor_map.param(k.reshape(b * hkv, n_kv, d), 64, BKV),
        tensor_map.param(v.reshape(b * hkv, n_kv, d), 64, BKV),
        driver.u64(o.data_ptr()),
        driver.u64(0 if lse is None else lse.data_ptr()),
        driver.i32(n_q),
        driver.i32(n_kv),
        driver.i32(hq),
        driver.i32(hkv),
        driver.Param(struct_f32(scale * math.log2(math.e)), align=4),
        driver.i32(int(bool(causal))),
    ]
    grid = (-(-n_q // BQ), b * hq, 1)
    stream = torch.cuda.current_stream(q.device).cuda_stream
    driver.launch(fn, grid, (THREADS, 1, 1), params, smem_bytes(d), stream)
    return (o, lse) if return_lse else o


def struct_f32(value: float) -> bytes:
    import struct

    return struct.pack("<f", value)


# --- self-check (run by iclr25.gpu.selfcheck in a subprocess) ----------------------------
#: (B, Hq, Hkv, N_q, N_kv, D, causal): one element; partial tiles of both; several key tiles;
#: N_q != N_kv both ways; GQA and MQA; causal with a query block the second consumer masks.
SELF_CHECKS = (
    (1, 1, 1, 1, 1, 64, False),
    (1, 2, 2, 130, 300, 64, True),
    (2, 4, 2, 200, 77, 128, False),
    (1, 4, 1, 257, 257, 128, True),
    (1, 2, 2, 64, 1000, 128, False),
    (2, 2, 1, 300, 129, 64, True),
)


def check_case(b, hq, hkv, n_q, n_kv, d, causal, dtype, seed=0) -> str:
    import torch

    from iclr25.gpu.selfcheck import SelfCheckFailed
    from iclr25.gpu.tolerance import compare

    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(b, hq, n_q, d, device="cuda", dtype=dtype, generator=gen)
    k, v = (torch.randn(b, hkv, n_kv, d, device="cuda", dtype=dtype, generator=gen) for _ in "kv")
    o, lse = attention_hopper(q, k, v, causal, return_lse=True)
    torch.cuda.synchronize()
    group = hq // hkv
    exact_o, exact_lse = attention_reference(q, expand_kv(k, group), expand_kv(v, group), causal)
    what = f"B={b} Hq={hq} Hkv={hkv} Nq={n_q} Nkv={n_kv} D={d} causal={causal} {dtype}"
    for name, ours, ref, tol in (
        ("O", o, exact_o, attention_rms_tolerance(dtype)),
        ("LSE", lse, exact_lse, LSE_TOLERANCE),
    ):
        report = compare(name, ours, ref, tol)
        if not report.ok:
            ratio = f"{report.error_ratio:.3g}x the bound"
            raise SelfCheckFailed(f"{what}: {name} off by {report.max_abs_err:.3g} ({ratio})")
    return what


def self_check(index: int) -> list[str]:
    """Every case of :data:`SELF_CHECKS` in bf16 (and the first three in fp16)."""
    import torch

    with torch.cuda.device(index):
        done = [check_case(*case, torch.bfloat16, seed=i) for i, case in enumerate(SELF_CHECKS)]
        done += [check_case(*case, torch.float16, seed=i) for i, case in enumerate(SELF_CHECKS[:3])]
    return done


__all__ = ["SPEC", "applies", "attention_hopper", "function_name", "self_check", "smem_bytes"]

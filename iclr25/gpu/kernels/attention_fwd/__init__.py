"""Attention forward (flash style, online softmax) on tensor cores (kernel.cu).

``attention_forward(q, k, v, causal=False, scale=None, return_lse=False)`` takes torch CUDA
tensors (..., N, D) — bf16 or fp16, D = 64 or 128, any N_q, N_kv >= 1; (B, H, N, D) with
fewer kv heads for grouped-query attention — and returns O (and the natural-log row LSE
in fp32). Causal masking is top-left aligned like torch's
``scaled_dot_product_attention``. Tested against :mod:`.reference` in
tests/gpu/test_attention_fwd.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from iclr25.gpu.kernels.attention_fwd.reference import (
    LSE_TOLERANCE,
    attention_reference,
    attention_rms_tolerance,
    attention_tiled_reference,
    attention_tolerance,
    check_shapes,
    expand_kv,
)
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="attention_fwd",
    package=__name__,
    description="attention forward, online softmax, causal or not, D = 64/128, 64x64 tiles",
)
# Must match kernel.cu.
BLOCK_Q, BLOCK_KV, THREADS = 64, 64, 128
HEAD_DIMS = (64, 128)
MAX_HEADS_TIMES_BATCH = 65535  # gridDim.y


def smem_bytes(head_dim: int) -> int:
    """Q tile + 2 stages of (K, V) tiles, 16-bit elements."""
    return (BLOCK_Q + 4 * BLOCK_KV) * head_dim * 2


def function_name(dtype, head_dim: int) -> str:
    short = {"bfloat16": "bf16", "float16": "f16"}[str(dtype).removeprefix("torch.")]
    return f"attn_fwd_{short}_d{head_dim}"


def _expand_groups(q, k, v):
    """Grouped-query / multi-query attention, q (B, Hq, N, D) and k, v (B, Hkv, N, D) with
    Hq a multiple of Hkv: each kv head repeated for its query heads (a copy; this kernel
    reads one kv head per query head)."""
    if q.ndim == 4 and k.ndim == 4 and k.shape == v.shape and k.shape[1] != q.shape[1]:
        group = check_shapes(q, k, v)
        return expand_kv(k, group), expand_kv(v, group)
    return k, v


def _check_shapes(q, k, v) -> None:
    if q.ndim < 2 or k.shape != v.shape or q.shape[:-2] != k.shape[:-2]:
        raise ValueError(
            f"attention needs q (..., Nq, D), k and v (..., Nkv, D) with equal leading dims; "
            f"got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    d = q.shape[-1]
    if d not in HEAD_DIMS or k.shape[-1] != d:
        raise ValueError(f"head dim must be one of {HEAD_DIMS} for q, k and v; got {d}")
    if q.shape[-2] > 0 and k.shape[-2] == 0:
        raise ValueError("attention over zero keys is undefined: pass at least one key")


@dataclass(frozen=True)
class AttentionPlan:
    """The kernel :func:`attention_forward` runs, and why not a faster one."""

    kernel: str  # "attention_hopper" or "attention_fwd" (mma.sync)
    reason: str = ""  # on an sm_90 device: why the Hopper kernel was not taken
    failed_self_check: str = ""  # its self-check verdict, when that was the reason


def attention_plan(q, k, v) -> AttentionPlan:
    """The Hopper kernel on an sm_90 device once it passed its self-check there
    (:mod:`iclr25.gpu.selfcheck`), else this package's mma.sync kernel."""
    import torch

    from iclr25.gpu.kernels import attention_hopper

    if not (q.is_cuda and torch.cuda.get_device_capability(q.device) == (9, 0)):
        return AttentionPlan("attention_fwd")
    why = attention_hopper.applies(q, k, v)
    if why is not None:
        return AttentionPlan("attention_fwd", f"attention_hopper: {why}")
    from iclr25.gpu import selfcheck

    index = q.device.index if q.device.index is not None else torch.cuda.current_device()
    try:
        verdict = selfcheck.verify(attention_hopper.SPEC.name, index)
    except Exception as exc:  # noqa: BLE001 - an unwritable cache: not verified
        verdict = selfcheck.Verdict(
            "attention_hopper", False, f"the self-check could not run: {exc}"
        )
    if verdict.ok:
        return AttentionPlan("attention_hopper")
    reason = f"attention_hopper: failed its self-check on this GPU ({verdict.reason})"
    return AttentionPlan("attention_fwd", reason, verdict.reason)


def attention_forward(
    q, k, v, causal: bool = False, scale: float | None = None, return_lse: bool = False
):
    """O = softmax(scale Q K^T [causal]) V; (O, LSE) if return_lse. On Hopper the wgmma
    kernel (:func:`attention_plan`), else the mma.sync tile kernel."""
    import torch

    if isinstance(q, torch.Tensor) and q.is_cuda:
        plan = attention_plan(q, k, v)
        if plan.kernel == "attention_hopper":
            from iclr25.gpu.kernels.attention_hopper import attention_hopper

            return attention_hopper(q, k, v, causal, scale, return_lse)
        if plan.failed_self_check:
            from iclr25.gpu import selfcheck

            selfcheck.fallback_warning("attention_hopper", plan.failed_self_check, "attention_fwd")
    return attention_mma_sync(q, k, v, causal, scale, return_lse)


def attention_mma_sync(
    q, k, v, causal: bool = False, scale: float | None = None, return_lse: bool = False
):
    """O (and LSE) with this package's mma.sync kernel (sm_80+)."""
    import torch

    from iclr25.gpu.launch import (
        contiguous_aligned,
        kernel_function,
        launch,
        ptr,
        require_cuda_tensors,
    )

    require_cuda_tensors({"q": q, "k": k, "v": v}, (torch.bfloat16, torch.float16))
    k, v = _expand_groups(q, k, v)
    _check_shapes(q, k, v)
    q, k, v = (contiguous_aligned(t) for t in (q, k, v))
    n_q, n_kv, d = q.shape[-2], k.shape[-2], q.shape[-1]
    bh = math.prod(q.shape[:-2])
    if bh > MAX_HEADS_TIMES_BATCH:
        raise ValueError(f"batch x heads = {bh} exceeds {MAX_HEADS_TIMES_BATCH}: split the batch")
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device) if return_lse else None
    if bh > 0 and n_q > 0:
        scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
        fn = kernel_function(SPEC.name, function_name(q.dtype, d))
        args = (ptr(q), ptr(k), ptr(v), ptr(o), ptr(lse), np.int32(n_q), np.int32(n_kv))
        args += (np.float32(scale * math.log2(math.e)), np.int32(bool(causal)))
        grid = (-(-n_q // BLOCK_Q), bh, 1)
        launch(fn, grid, (THREADS, 1, 1), args, smem_bytes(d), q.device)
    return (o, lse) if return_lse else o


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: bf16, D = 128, against torch SDPA (its default backend choice)."""
    from iclr25.gpu.flops import attention_forward_flops
    from iclr25.gpu.hotpath import HotPathCase

    lengths = [4096] if quick else [1024, 4096, 8192]

    def make(n: int, causal: bool) -> HotPathCase:
        batch, heads, d = max(1, 16384 // n), 16, 128

        def setup():
            import torch

            gen = torch.Generator(device="cuda").manual_seed(0)
            q, k, v = (
                torch.randn(batch, heads, n, d, device="cuda", dtype=torch.bfloat16, generator=gen)
                for _ in range(3)
            )
            sdpa = torch.nn.functional.scaled_dot_product_attention
            return (lambda: attention_forward(q, k, v, causal)), (
                lambda: sdpa(q, k, v, is_causal=causal)
            )

        rtol, atol = attention_tolerance("bfloat16")
        shape = f"B={batch} H={heads} N={n} D={d}{' causal' if causal else ''} bf16"
        flops = attention_forward_flops(batch, heads, n, n, d, causal)
        return HotPathCase(
            SPEC.name, shape, flops, "torch SDPA (default backend)", setup, rtol, atol
        )

    return [make(n, causal) for n in lengths for causal in (False, True)]


__all__ = [
    "LSE_TOLERANCE",
    "SPEC",
    "AttentionPlan",
    "attention_mma_sync",
    "attention_plan",
    "attention_forward",
    "attention_reference",
    "attention_rms_tolerance",
    "attention_tiled_reference",
    "attention_tolerance",
    "hot_path_cases",
    "smem_bytes",
]

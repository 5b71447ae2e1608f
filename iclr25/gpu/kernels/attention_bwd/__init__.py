"""Attention backward (FlashAttention-2 style recomputation) on tensor cores (kernel.cu), and
``attention()``: attention with a forward and a backward from our kernels, as a torch
autograd function.

``attention_backward(q, k, v, o, lse, grad_out, causal=False, scale=None)`` takes the
forward's inputs, output O and row log-sum-exp (``attention_forward(..., return_lse=True)``)
and the upstream gradient, all (B, H, N, D) torch CUDA tensors — bf16 or fp16, D = 64 or
128, any N_q, N_kv >= 1, grouped-query / multi-query attention when k and v have fewer heads
(Hq a multiple of Hkv) — and returns (dQ, dK, dV). Delta = rowsum(dO * O) is computed by
torch (one fused elementwise reduction); the two kernels do the rest.

The kernels were written without a GPU at hand: :func:`attention` uses them on a device
only after :func:`self_check` passed there (:mod:`iclr25.gpu.selfcheck`); otherwise its
backward is torch's SDPA backward, with a warning. Tested against
:func:`reference.attention_backward_reference` (fp32 autograd and the closed form at the
forward's O) in tests/gpu/test_attention_bwd.py; the algorithm itself is checked on the
CPU through :func:`reference.attention_backward_tiled_reference`.
"""

from __future__ import annotations

import math

import numpy as np

from iclr25.gpu.kernels.attention_bwd.reference import (
    attention_backward_reference,
    attention_backward_tiled_reference,
    attention_grad_tolerance,
    check_shapes,
    expand_kv,
)
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="attention_bwd",
    package=__name__,
    description="attention backward (FA2-style recomputation): dK/dV and dQ kernels, "
    "causal, GQA/MQA, D = 64/128",
)
# Must match kernel.cu.
BLOCK, THREADS = 64, 128
HEAD_DIMS = (64, 128)
MAX_GRID_Y = 65535


def tiles(head_dim: int) -> tuple[int, int]:
    """(query tile of the dK/dV kernel, key tile of the dQ kernel) for ``head_dim``."""
    return (64, 64) if head_dim == 64 else (16, 32)


def smem_bytes(kind: str, head_dim: int) -> int:
    """Dynamic shared memory of the ``"dkdv"`` or ``"dq"`` kernel (16-bit tiles)."""
    bq, bkv_dq = tiles(head_dim)
    if kind == "dkdv":  # K, V resident + 2 stages of (Q, dO, LSE, Delta)
        return 2 * BLOCK * head_dim * 2 + 2 * (2 * bq * head_dim * 2 + 2 * bq * 4)
    return 2 * BLOCK * head_dim * 2 + 4 * bkv_dq * head_dim * 2  # Q, dO + 2 stages of (K, V)


def function_names(dtype, head_dim: int) -> tuple[str, str]:
    short = {"bfloat16": "bf16", "float16": "f16"}[str(dtype).removeprefix("torch.")]
    return f"attn_bwd_dkdv_{short}_d{head_dim}", f"attn_bwd_dq_{short}_d{head_dim}"


def _check(q, k, v, o, lse, grad_out) -> None:
    import torch

    from iclr25.gpu.launch import require_cuda_tensors

    names = {"q": q, "k": k, "v": v, "o": o, "grad_out": grad_out}
    require_cuda_tensors(names, (torch.bfloat16, torch.float16))
    check_shapes(q, k, v)
    if o.shape != q.shape or grad_out.shape != q.shape or tuple(lse.shape) != tuple(q.shape[:3]):
        raise ValueError(
            f"o and grad_out must have q's shape {tuple(q.shape)} and lse {tuple(q.shape[:3])}; "
            f"got {tuple(o.shape)}, {tuple(grad_out.shape)}, {tuple(lse.shape)}"
        )
    if q.shape[-1] not in HEAD_DIMS:
        raise ValueError(f"head dim must be one of {HEAD_DIMS}; got {q.shape[-1]}")
    if q.shape[2] > 0 and k.shape[2] == 0:
        raise ValueError("attention over zero keys is undefined: pass at least one key")
    if max(q.shape[0] * q.shape[1], k.shape[0] * k.shape[1]) > MAX_GRID_Y:
        raise ValueError(f"batch x heads exceeds {MAX_GRID_Y}: split the batch")


def attention_backward(q, k, v, o, lse, grad_out, causal: bool = False, scale: float | None = None):
    """(dQ, dK, dV) of O = softmax(scale Q K^T [causal]) V with the backward kernels."""
    import torch

    from iclr25.gpu.launch import contiguous_aligned, kernel_function, launch, ptr

    _check(q, k, v, o, lse, grad_out)
    q, k, v, grad_out = (contiguous_aligned(t) for t in (q, k, v, grad_out))
    (b, hq, n_q, d), (hkv, n_kv) = q.shape, k.shape[1:3]
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    if b * hkv == 0 or n_kv == 0:
        return dq, dk, dv
    if n_q == 0:
        return dq, dk.zero_(), dv.zero_()
    delta = (grad_out.float() * o.float()).sum(-1).contiguous()  # (B, Hq, Nq)
    lse = lse.float().contiguous()
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    names = function_names(q.dtype, d)
    common = (ptr(q), ptr(k), ptr(v), ptr(grad_out), ptr(lse), ptr(delta))
    tail = (np.int32(n_q), np.int32(n_kv), np.int32(hq), np.int32(hkv))
    tail += (np.float32(scale * math.log2(math.e)), np.float32(scale), np.int32(bool(causal)))
    launch(
        kernel_function(SPEC.name, names[0]), (-(-n_kv // BLOCK), b * hkv, 1), (THREADS, 1, 1),
        (*common, ptr(dk), ptr(dv), *tail), smem_bytes("dkdv", d), q.device,
    )  # fmt: skip
    launch(
        kernel_function(SPEC.name, names[1]), (-(-n_q // BLOCK), b * hq, 1), (THREADS, 1, 1),
        (*common, ptr(dq), *tail), smem_bytes("dq", d), q.device,
    )  # fmt: skip
    return dq, dk, dv


# --- attention with a backward ------------------------------------------------------------
def _sdpa_backward(q, k, v, grad_out, causal, scale):
    """torch's SDPA backward (whatever backend it picks): the fallback of :func:`attention`."""
    import torch

    group = q.shape[1] // k.shape[1]
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        out = torch.nn.functional.scaled_dot_product_attention(
            leaves[0], expand_kv(leaves[1], group), expand_kv(leaves[2], group),
            is_causal=causal, scale=scale,
        )  # fmt: skip
        return torch.autograd.grad(out, leaves, grad_out)


def backward_verdict(device) -> str | None:
    """None when the backward kernels passed their self-check on ``device``, else why not."""
    import torch

    from iclr25.gpu import selfcheck

    index = device.index if device.index is not None else torch.cuda.current_device()
    try:
        verdict = selfcheck.verify(SPEC.name, index)
    except Exception as exc:  # noqa: BLE001 - an unwritable cache: not verified
        return f"the self-check could not run: {exc}"
    return None if verdict.ok else verdict.reason


def _make_function():
    import torch

    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, scale):
            from iclr25.gpu.kernels.attention_fwd import attention_forward

            o, lse = attention_forward(q, k, v, causal=causal, scale=scale, return_lse=True)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.causal, ctx.scale = causal, scale
            return o

        @staticmethod
        def backward(ctx, grad_out):
            from iclr25.gpu import selfcheck

            q, k, v, o, lse = ctx.saved_tensors
            why = backward_verdict(q.device)
            if why is None:
                grads = attention_backward(q, k, v, o, lse, grad_out, ctx.causal, ctx.scale)
            else:
                selfcheck.fallback_warning(SPEC.name, why, "torch SDPA's backward")
                grads = _sdpa_backward(q, k, v, grad_out, ctx.causal, ctx.scale)
            return (*grads, None, None)

    return Attention


_FUNCTION = None


def attention(q, k, v, causal: bool = False, scale: float | None = None):
    """softmax(scale Q K^T [causal]) V with our forward and backward kernels, differentiable
    with torch autograd: q (B, Hq, N_q, D), k and v (B, Hkv, N_kv, D)."""
    global _FUNCTION
    if _FUNCTION is None:
        _FUNCTION = _make_function()
    return _FUNCTION.apply(q, k, v, causal, scale)


# --- self-check (run by iclr25.gpu.selfcheck in a subprocess) ----------------------------
#: (B, Hq, Hkv, N_q, N_kv, D, causal): one element; partial tiles; N_q != N_kv both ways;
#: GQA and MQA; several key blocks per query block and the reverse, causal and not.
SELF_CHECKS = (
    (1, 1, 1, 1, 1, 64, False),
    (1, 2, 2, 65, 130, 64, True),
    (2, 4, 2, 200, 77, 128, False),
    (1, 4, 1, 129, 129, 128, True),
    (1, 2, 2, 257, 100, 64, True),
    (2, 2, 1, 96, 200, 128, True),
)


def check_case(b, hq, hkv, n_q, n_kv, d, causal, dtype, seed=0) -> str:
    """Our backward on one case against the fp32 closed form at our forward's O;
    SelfCheckFailed names the worst gradient."""
    import torch

    from iclr25.gpu.kernels.attention_fwd import attention_forward
    from iclr25.gpu.selfcheck import SelfCheckFailed
    from iclr25.gpu.tolerance import compare

    gen = torch.Generator(device="cuda").manual_seed(seed)
    q = torch.randn(b, hq, n_q, d, device="cuda", dtype=dtype, generator=gen)
    k, v = (torch.randn(b, hkv, n_kv, d, device="cuda", dtype=dtype, generator=gen) for _ in "kv")
    do = torch.randn(b, hq, n_q, d, device="cuda", dtype=dtype, generator=gen)
    o, lse = attention_forward(q, k, v, causal=causal, return_lse=True)
    got = attention_backward(q, k, v, o, lse, do, causal)
    torch.cuda.synchronize()
    exact = attention_backward_reference(q, k, v, do, causal, o=o)
    what = f"B={b} Hq={hq} Hkv={hkv} Nq={n_q} Nkv={n_kv} D={d} causal={causal} {dtype}"
    for name, ours, ref in zip(("dQ", "dK", "dV"), got, exact, strict=True):
        report = compare(name, ours, ref, attention_grad_tolerance(dtype))
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


__all__ = [
    "SPEC",
    "attention",
    "attention_backward",
    "attention_backward_reference",
    "attention_backward_tiled_reference",
    "attention_grad_tolerance",
    "backward_verdict",
    "self_check",
    "smem_bytes",
]

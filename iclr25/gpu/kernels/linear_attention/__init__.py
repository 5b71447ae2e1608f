"""Causal chunked linear attention with optional per-head decay, on tensor cores (kernel.cu).

``linear_attention(q, k, v, slopes=None)``: q, k (B, H, N, DK) and v (B, H, N, DV) torch
CUDA tensors, bf16 or fp16, DK = 64 or 128, DV a multiple of 8, any N; ``slopes`` (H,)
gives the decay lambda_h = exp(-slope_h). Tested against :mod:`.reference` (the quadratic
definition and the plain PyTorch chunked algorithm) in tests/gpu/test_linear_attention.py.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.linear_attention.reference import (
    CHUNK,
    decay_matrix,
    linear_attention_chunked,
    linear_attention_reference,
    linear_attention_tolerance,
)
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="linear_attention",
    package=__name__,
    description="causal chunked linear attention, optional per-head decay, DK = 64/128",
)
# Must match kernel.cu.
BLOCK_DV, THREADS = 64, 128
KEY_DIMS = (64, 128)
MAX_HEADS_TIMES_BATCH = 65535  # gridDim.y


def smem_bytes(dim_k: int) -> int:
    """2 stages of (Q, K, V) chunk tiles + the 16-bit state + the decay-power table."""
    stage = (2 * CHUNK * dim_k + CHUNK * BLOCK_DV) * 2
    return 2 * stage + dim_k * BLOCK_DV * 2 + 4 * (CHUNK + 16)


def function_name(dtype, dim_k: int) -> str:
    short = {"bfloat16": "bf16", "float16": "f16"}[str(dtype).removeprefix("torch.")]
    return f"lin_attn_{short}_dk{dim_k}"


def _check(q, k, v, slopes) -> None:
    if q.ndim != 4 or q.shape != k.shape or v.ndim != 4 or v.shape[:3] != q.shape[:3]:
        raise ValueError(
            f"linear attention needs q, k (B, H, N, DK) and v (B, H, N, DV); got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[-1] not in KEY_DIMS:
        raise ValueError(f"DK must be one of {KEY_DIMS}, got {q.shape[-1]}")
    if v.shape[-1] % 8 != 0:
        raise ValueError(f"DV must be a multiple of 8, got {v.shape[-1]}")
    if slopes is not None and tuple(slopes.shape) != (q.shape[1],):
        raise ValueError(
            f"slopes must have shape (H,) = ({q.shape[1]},), got {tuple(slopes.shape)}"
        )


def linear_attention(q, k, v, slopes=None):
    """o_i = sum_{j <= i} exp(-slope_h (i - j)) (q_i . k_j) v_j with the tile kernel."""
    import torch

    from iclr25.gpu.launch import (
        contiguous_aligned,
        kernel_function,
        launch,
        ptr,
        require_cuda_tensors,
    )

    require_cuda_tensors({"q": q, "k": k, "v": v}, (torch.bfloat16, torch.float16))
    _check(q, k, v, slopes)
    q, k, v = (contiguous_aligned(t) for t in (q, k, v))
    b, h, n, dk = q.shape
    dv = v.shape[-1]
    if b * h > MAX_HEADS_TIMES_BATCH:
        raise ValueError(
            f"batch x heads = {b * h} exceeds {MAX_HEADS_TIMES_BATCH}: split the batch"
        )
    o = torch.empty((b, h, n, dv), dtype=q.dtype, device=q.device)
    if b * h == 0 or n == 0 or dv == 0:
        return o
    if slopes is not None:
        slopes = slopes.to(device=q.device, dtype=torch.float32).contiguous()
    fn = kernel_function(SPEC.name, function_name(q.dtype, dk))
    args = (ptr(q), ptr(k), ptr(v), ptr(o), ptr(slopes), np.int32(h), np.int32(n), np.int32(dv))
    grid = (-(-dv // BLOCK_DV), b * h, 1)
    launch(fn, grid, (THREADS, 1, 1), args, smem_bytes(dk), q.device)
    return o


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: bf16, DK = DV = 128, against the plain PyTorch chunked algorithm."""
    from iclr25.gpu.flops import linear_attention_flops
    from iclr25.gpu.hotpath import HotPathCase

    lengths = [4096] if quick else [1024, 4096, 16384]

    def make(n: int, decay: bool) -> HotPathCase:
        batch, heads, d = 8, 16, 128

        def setup():
            import torch

            gen = torch.Generator(device="cuda").manual_seed(0)
            q, k = (
                torch.randn(batch, heads, n, d, device="cuda", dtype=torch.bfloat16, generator=gen)
                / d**0.5
                for _ in range(2)
            )
            v = torch.randn(batch, heads, n, d, device="cuda", dtype=torch.bfloat16, generator=gen)
            slopes = torch.linspace(0.01, 0.5, heads, device="cuda") if decay else None
            return (lambda: linear_attention(q, k, v, slopes)), (
                lambda: linear_attention_chunked(q, k, v, slopes)
            )

        tol = linear_attention_tolerance("bfloat16")
        shape = f"B={batch} H={heads} N={n} D={d} decay={'yes' if decay else 'no'} bf16"
        flops = linear_attention_flops(batch, heads, n, d, d, CHUNK)
        return HotPathCase(SPEC.name, shape, flops, "PyTorch chunked", setup, tol, tol)

    return [make(n, decay) for n in lengths for decay in (False, True)]


__all__ = [
    "SPEC",
    "decay_matrix",
    "hot_path_cases",
    "linear_attention",
    "linear_attention_chunked",
    "linear_attention_reference",
    "linear_attention_tolerance",
    "smem_bytes",
]

"""Based (Arora et al., 2024): causal linear attention with a 2nd-order Taylor feature map.

Symbols (Based, Sec. 3; ThunderKittens' ``based`` kernel uses the same map):

- q, k: (B, H, N, d') projections of feature dim d' (16 in Based and in ThunderKittens);
  v: (B, H, N, DV).
- φ(x) = [1, x / d'^(1/4), vec(x xᵀ) / (√2 · √d')] of size F = 1 + d' + d'² (273 at d' = 16),
  so that φ(q)·φ(k) = 1 + s + s²/2 with s = q·k/√d' — the 2nd-order Taylor expansion of
  exp(s). It is never below 1/2, so the normaliser needs no ε.
- y_i = Σ_{j≤i} φ(q_i)·φ(k_j) v_j / Σ_{j≤i} φ(q_i)·φ(k_j).

How it runs on the GPU (our choice; ThunderKittens fuses the map into one kernel, we do
not): φ(q), φ(k) are padded with zero features to a multiple of 128 and split into
F_pad / 128 blocks that become extra heads, v gets a column of ones (the normaliser) padded
to a multiple of 8, and **one call of the linear-attention tile kernel** (DK = 128)
computes every block's numerator and normaliser; the blocks are summed in fp32 (fp64 for
fp64 inputs) and
divided. Linear attention is linear in the feature space, so the block sum is exact.
``linear=`` swaps the kernel for another implementation of the same
``(q, k, v) -> o`` contract (the plain PyTorch chunked algorithm is the peer gpu-bench
measures against, and the CPU tests' stand-in).
"""

from __future__ import annotations

import math

from iclr25.gpu.tolerance import Tolerance

BLOCK = 128  # feature columns per block: a key dim the linear-attention kernel takes
V_ALIGN = 8  # the kernel's DV granularity


def feature_size(d: int) -> int:
    """F = 1 + d' + d'²."""
    return 1 + d + d * d


def taylor_feature_map(x):
    """φ(x): (..., d') -> (..., 1 + d' + d'²), in x's dtype (products formed in at least
    fp32)."""
    import torch

    d = x.shape[-1]
    acc = torch.promote_types(x.dtype, torch.float32)
    xf = x.to(acc)
    first = xf / d**0.25
    second = (xf[..., :, None] * xf[..., None, :]).flatten(-2) / math.sqrt(2 * d)
    ones = torch.ones(*x.shape[:-1], 1, dtype=acc, device=x.device)
    return torch.cat([ones, first, second], dim=-1).to(x.dtype)


def _check(q, k, v) -> None:
    if q.ndim != 4 or q.shape != k.shape or v.ndim != 4 or v.shape[:3] != q.shape[:3]:
        raise ValueError(
            f"Based needs q, k (B, H, N, d') and v (B, H, N, DV); got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )


def based_reference(q, k, v, dtype=None):
    """The definition, an (N x N) product in ``dtype`` (default float64): (B, H, N, DV)."""
    import torch

    _check(q, k, v)
    dtype = dtype or torch.float64
    d, n = q.shape[-1], q.shape[2]
    s = (q.to(dtype) @ k.to(dtype).mT) / math.sqrt(d)  # (B, H, N, N)
    a = (1 + s + s * s / 2) * torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
    return (a @ v.to(dtype)) / a.sum(dim=-1, keepdim=True)


def blocked_inputs(q, k, v):
    """(φ(q), φ(k), [v, 1]) as (B, H·nb, N, 128) and (B, H·nb, N, DV'): feature block b of
    head h is head h·nb + b; v' is v with a ones column, zero-padded to a multiple of 8."""
    import torch

    b, h, n, d = q.shape
    dv = v.shape[-1]
    f = feature_size(d)
    nb = -(-f // BLOCK)

    def split(x):
        phi = torch.nn.functional.pad(taylor_feature_map(x), (0, nb * BLOCK - f))
        return phi.reshape(b, h, n, nb, BLOCK).transpose(2, 3).reshape(b, h * nb, n, BLOCK)

    dv_pad = -(-(dv + 1) // V_ALIGN) * V_ALIGN
    v1 = torch.cat([v, torch.ones(b, h, n, 1, dtype=v.dtype, device=v.device)], dim=-1)
    v1 = torch.nn.functional.pad(v1, (0, dv_pad - dv - 1))  # (B, H, N, DV')
    v1 = v1[:, :, None].expand(b, h, nb, n, dv_pad).reshape(b, h * nb, n, dv_pad)
    return split(q), split(k), v1, nb


def based_attention(q, k, v, linear=None):
    """y of the module docstring, in v's dtype: (B, H, N, DV). ``linear`` (default: the
    tile kernel) computes causal linear attention without normalisation."""
    import torch

    if linear is None:
        from iclr25.gpu.kernels import linear_attention as kernels

        linear = kernels.linear_attention
    _check(q, k, v)
    b, h, n, _ = q.shape
    dv = v.shape[-1]
    qb, kb, vb, nb = blocked_inputs(q, k, v)
    acc = torch.promote_types(v.dtype, torch.float32)  # the block sum and the division
    o = linear(qb, kb, vb).to(acc).reshape(b, h, nb, n, -1).sum(dim=2)  # (B, H, N, DV')
    return (o[..., :dv] / o[..., dv : dv + 1]).to(v.dtype)


def based_tolerance(dtype) -> Tolerance:
    """16-bit inputs: φ is rounded once, each block's numerator and normaliser come out of
    the kernel rounded once more (and carry its 8u x RMS), and the division adds 1u; the
    bound is 16u x the row RMS + 4u x |y| (checked against the bf16 chunked algorithm on
    the CPU in tests/gpu/test_based.py)."""
    from iclr25.gpu.kernels.gemm_bf16.reference import unit_roundoff

    eps = unit_roundoff(dtype)
    return Tolerance(rtol=4 * eps, atol_rms=16 * eps)

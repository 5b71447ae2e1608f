"""References for causal linear attention with an optional per-head decay (torch).

    o_i = sum_{j <= i} lambda_h^(i - j) (q_i . k_j) v_j,     lambda_h = exp(-slope_h)

(ThunderKittens' linear-attention test and Lightning Attention-2 use this form; slopes of
zero, or ``None``, give plain causal linear attention without normalisation.)

- :func:`linear_attention_reference`: the definition, an (N x N) masked product — O(N^2).
- :func:`linear_attention_chunked`: the plain PyTorch chunked algorithm (chunks of C
  positions: masked intra-chunk products plus a running DK x DV state carried across
  chunks in fp32, fp64 for fp64 inputs), the peer gpu-bench measures the kernel against;
  its matrix products run in the inputs' dtype.
"""

from __future__ import annotations

from iclr25.gpu.tolerance import Tolerance

CHUNK = 64


def _check(q, k, v, slopes) -> None:
    if q.ndim != 4 or q.shape != k.shape or v.shape[:3] != q.shape[:3]:
        raise ValueError(
            f"linear attention needs q, k (B, H, N, DK) and v (B, H, N, DV); got "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if slopes is not None and tuple(slopes.shape) != (q.shape[1],):
        raise ValueError(
            f"slopes must have shape (H,) = ({q.shape[1]},), got {tuple(slopes.shape)}"
        )


def decay_matrix(n: int, slopes, dtype=None, device=None):
    """(H, n, n) weights lambda_h^(i - j) for i >= j, else 0 (H = 1 of ones when no slopes)."""
    import torch

    dtype = dtype or torch.float32
    i = torch.arange(n, device=device)
    diff = (i[:, None] - i[None, :]).to(dtype)  # (n, n)
    causal = diff >= 0
    if slopes is None:
        return causal.to(dtype)[None]
    w = torch.exp(-slopes.to(dtype)[:, None, None] * diff.clamp(min=0))  # (H, n, n)
    return w * causal


def linear_attention_reference(q, k, v, slopes=None, dtype=None):
    """The definition in ``dtype`` (default float32): (B, H, N, DV)."""
    import torch

    _check(q, k, v, slopes)
    dtype = dtype or torch.float32
    scores = q.to(dtype) @ k.to(dtype).mT  # (B, H, N, N)
    return (scores * decay_matrix(q.shape[2], slopes, dtype, q.device)) @ v.to(dtype)


def linear_attention_chunked(q, k, v, slopes=None, chunk: int = CHUNK):
    """Chunked causal linear attention in the inputs' dtype (state in fp32): (B, H, N, DV)."""
    import torch

    _check(q, k, v, slopes)
    b, h, n, dk = q.shape
    dv = v.shape[-1]
    if n == 0:
        return v.new_zeros((b, h, 0, dv))
    pad = (-n) % chunk
    if pad:  # zero positions at the end change nothing before them
        q, k, v = (torch.nn.functional.pad(t, (0, 0, 0, pad)) for t in (q, k, v))
    nc = (n + pad) // chunk
    qc = q.reshape(b, h, nc, chunk, dk)  # (B, H, NC, C, DK)
    kc = k.reshape(b, h, nc, chunk, dk)
    vc = v.reshape(b, h, nc, chunk, dv)
    dt, dev = q.dtype, q.device
    acc = torch.promote_types(dt, torch.float32)  # decay factors and the state
    slope = (slopes if slopes is not None else torch.zeros(h, device=dev)).to(acc)  # (H,)
    pos = torch.arange(chunk, device=dev, dtype=acc)  # (C,)
    intra = decay_matrix(chunk, slope, acc, dev).to(dt)  # (H, C, C)
    k_decay = torch.exp(-slope[:, None] * (chunk - 1 - pos)).to(dt)  # (H, C)
    q_decay = torch.exp(-slope[:, None] * (pos + 1)).to(dt)  # (H, C)
    chunk_decay = torch.exp(-slope * chunk)[None, :, None, None]  # (1, H, 1, 1)

    out = ((qc @ kc.mT) * intra[None, :, None]) @ vc  # (B, H, NC, C, DV)
    kv = (kc * k_decay[None, :, None, :, None]).mT @ vc  # (B, H, NC, DK, DV)
    state = torch.zeros(b, h, dk, dv, device=dev, dtype=acc)
    qd = qc * q_decay[None, :, None, :, None]  # (B, H, NC, C, DK)
    inter = []
    for c in range(nc):
        inter.append(qd[:, :, c] @ state.to(dt))  # (B, H, C, DV)
        state = state * chunk_decay + kv[:, :, c].to(acc)
    out = out + torch.stack(inter, dim=2)
    return out.reshape(b, h, nc * chunk, dv)[:, :, :n]


def linear_attention_tolerance(dtype) -> float:
    """Relative tolerance, as a fraction of max |o|, of a 16-bit kernel against fp32: the
    inputs, the intra-chunk P and the 16-bit copy of the state are each rounded once."""
    from iclr25.gpu.kernels.gemm_bf16.reference import unit_roundoff

    return 8 * unit_roundoff(dtype)


def linear_attention_rms_tolerance(dtype) -> Tolerance:
    """The bound gpu-bench checks every linear-attention row with: 8u x the row's RMS + 2u
    x |o| (the CPU rounding model stays below 0.6 of it; a decay one step off lands > 25x
    outside: tests/gpu/test_rounding_model.py)."""
    from iclr25.gpu.kernels.gemm_bf16.reference import unit_roundoff

    eps = unit_roundoff(dtype)
    return Tolerance(rtol=2 * eps, atol_rms=8 * eps)

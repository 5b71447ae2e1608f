"""References for the attention forward kernel (torch; fp32 unless told otherwise).

- :func:`attention_reference`: the definition, softmax(scale Q K^T + mask) V, and the row
  log-sum-exp; query/key tensors are (..., N, D). Causal masking is top-left aligned
  (query i sees keys j <= i), as in ``torch.nn.functional.scaled_dot_product_attention``.
  ``batch_chunk`` bounds the (N_q x N_kv) score memory by looping over leading indices.
- :func:`attention_tiled_reference`: the kernel's algorithm in torch — 64-row query blocks,
  64-key tiles visited only as far as causality needs, online softmax in the log2 domain
  with the same -inf guards — so the algorithm itself is tested on the CPU.
"""

from __future__ import annotations

import math

from iclr25.gpu.tolerance import Tolerance

#: the row log-sum-exp comes from fp32 scores of exact 16-bit products: only fp32 sums and
#: exp2 approximations separate it from the reference (~1e-6); a wrong scale, mask or
#: rescale moves it by O(1)
LSE_TOLERANCE = Tolerance(rtol=2.0**-16, atol=2.0**-10)

BLOCK_Q = 64
BLOCK_KV = 64


def _check(q, k, v) -> None:
    if q.shape[-1] != k.shape[-1] or k.shape != v.shape or q.shape[:-2] != k.shape[:-2]:
        raise ValueError(
            f"attention needs q (..., Nq, D), k and v (..., Nkv, D); got {tuple(q.shape)}, "
            f"{tuple(k.shape)}, {tuple(v.shape)}"
        )


def check_shapes(q, k, v) -> int:
    """The group size Hq / Hkv; ValueError for shapes that are not (B, H, N, D) with
    matching batch and head dims (Hq a multiple of Hkv)."""
    if q.ndim != 4 or k.ndim != 4 or k.shape != v.shape:
        raise ValueError(
            f"attention needs q (B, Hq, Nq, D), k and v (B, Hkv, Nkv, D); got {tuple(q.shape)}, "
            f"{tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[0] != k.shape[0] or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"batch and head dim must match: {tuple(q.shape)} vs {tuple(k.shape)}")
    if k.shape[1] == 0 or q.shape[1] % k.shape[1]:
        raise ValueError(
            f"query heads ({q.shape[1]}) must be a multiple of kv heads ({k.shape[1]})"
        )
    return q.shape[1] // k.shape[1]


def expand_kv(t, group: int):
    """(B, Hkv, N, D) -> (B, Hkv * group, N, D): kv head h serves query heads h*group.."""
    return t if group == 1 else t.repeat_interleave(group, dim=1)


def kv_tile_count(q0: int, block_q: int, n_kv: int, block_kv: int, causal: bool) -> int:
    """Key tiles a query block [q0, q0 + block_q) visits (mirrors tk_tiles.cuh)."""
    keys = min(n_kv, q0 + block_q) if causal else n_kv
    return (keys + block_kv - 1) // block_kv


def attention_reference(
    q,
    k,
    v,
    causal: bool = False,
    scale: float | None = None,
    dtype=None,
    batch_chunk: int | None = None,
):
    """(O, LSE): O (..., Nq, D) and the natural-log LSE (..., Nq) of the scaled scores."""
    import torch

    _check(q, k, v)
    dtype = dtype or torch.float32
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    lead = q.shape[:-2]
    qf = q.reshape(-1, *q.shape[-2:])  # (BH, Nq, D)
    kf, vf = k.reshape(-1, *k.shape[-2:]), v.reshape(-1, *v.shape[-2:])  # (BH, Nkv, D)
    n_q, n_kv = q.shape[-2], k.shape[-2]
    mask = None
    if causal:
        mask = torch.ones(n_q, n_kv, dtype=torch.bool, device=q.device).tril()  # (Nq, Nkv)
    step = batch_chunk or max(1, qf.shape[0])
    outs, lses = [], []
    for start in range(0, qf.shape[0], step):
        s = scale * (qf[start : start + step].to(dtype) @ kf[start : start + step].to(dtype).mT)
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))  # (b, Nq, Nkv)
        lse = torch.logsumexp(s, dim=-1)  # (b, Nq)
        outs.append(torch.softmax(s, dim=-1) @ vf[start : start + step].to(dtype))
        lses.append(lse)
    o = torch.cat(outs) if outs else qf.new_zeros((0, n_q, q.shape[-1]), dtype=dtype)
    lse = torch.cat(lses) if lses else qf.new_zeros((0, n_q), dtype=dtype)
    return o.reshape(*lead, n_q, q.shape[-1]), lse.reshape(*lead, n_q)


def attention_tiled_reference(
    q,
    k,
    v,
    causal: bool = False,
    scale: float | None = None,
    block_q: int = BLOCK_Q,
    block_kv: int = BLOCK_KV,
):
    """The kernel's online-softmax algorithm, block by block, in fp32 torch."""
    import torch

    _check(q, k, v)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scale_log2 = scale * math.log2(math.e)
    n_q, n_kv, d = q.shape[-2], k.shape[-2], q.shape[-1]
    qf = q.reshape(-1, n_q, d).float()  # (BH, Nq, D)
    kf, vf = k.reshape(-1, n_kv, d).float(), v.reshape(-1, n_kv, d).float()
    o = torch.zeros_like(qf)
    lse = torch.full(qf.shape[:2], float("-inf"))
    for q0 in range(0, n_q, block_q):
        rows = torch.arange(q0, min(q0 + block_q, n_q))  # (bq,)
        m = torch.full((qf.shape[0], len(rows)), float("-inf"))  # running max, log2 domain
        row_sum = torch.zeros_like(m)  # running sum l
        acc = torch.zeros(qf.shape[0], len(rows), d)
        for t in range(kv_tile_count(q0, block_q, n_kv, block_kv, causal)):
            cols = torch.arange(t * block_kv, min((t + 1) * block_kv, n_kv))  # (bkv,)
            x = (qf[:, rows] @ kf[:, cols].mT) * scale_log2  # (BH, bq, bkv)
            if causal:
                x = x.masked_fill(cols[None, :] > rows[:, None], float("-inf"))
            m_new = torch.maximum(m, x.amax(dim=-1))
            m_use = torch.where(m_new == float("-inf"), torch.zeros_like(m_new), m_new)
            alpha = torch.exp2(m - m_use)
            p = torch.exp2(x - m_use[..., None])
            row_sum = row_sum * alpha + p.sum(dim=-1)
            acc = acc * alpha[..., None] + p @ vf[:, cols]
            m = m_new
        seen = row_sum > 0
        o[:, rows] = acc / torch.where(seen, row_sum, torch.ones_like(row_sum))[..., None]
        lse[:, rows] = torch.where(seen, (m + torch.log2(row_sum)) * math.log(2.0), lse[:, rows])
    return o.reshape(q.shape), lse.reshape(q.shape[:-1])


def attention_tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) of a 16-bit attention forward against the fp32 reference, for inputs of
    unit scale: P is rounded to 16 bits before P V (as in FlashAttention) and O once more."""
    from iclr25.gpu.kernels.gemm_bf16.reference import unit_roundoff

    eps = unit_roundoff(dtype)
    return 4 * eps, 4 * eps


def attention_rms_tolerance(dtype) -> Tolerance:
    """The bound gpu-bench checks O with: 6u x the row's RMS + 2u x |O|. P is rounded to 16
    bits before P V (relative u per term, averaging out over the keys) and O once more (u |O|);
    the CPU rounding model stays below 0.6 of this bound, a 5% row-normalisation error
    lands > 3x (bf16) to > 25x (fp16) outside it (tests/gpu/test_rounding_model.py)."""
    from iclr25.gpu.kernels.gemm_bf16.reference import unit_roundoff

    eps = unit_roundoff(dtype)
    return Tolerance(rtol=2 * eps, atol_rms=6 * eps)

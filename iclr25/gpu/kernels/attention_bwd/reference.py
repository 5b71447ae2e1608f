"""References for the attention backward kernels (torch, fp32 unless told otherwise).

- :func:`attention_backward_reference`: autograd through the definition
  softmax(scale Q K^T + mask) V (fp32 or fp64), with grouped-query attention expanded in
  the graph, so dK and dV sum over each key/value head's query heads;
- :func:`attention_backward_tiled_reference`: the kernels' algorithm in torch — the dK/dV
  pass per 64-key block walking every query head of its group and the query tiles causality
  lets it see, the dQ pass per 64-query block walking its key tiles, P recomputed from the
  log-sum-exp in the log2 domain, Delta = rowsum(dO * O) — so the algorithm, the causal
  tile skipping and the GQA head mapping are tested on the CPU against autograd.

Shapes: q, grad_out (B, Hq, N_q, D); k, v (B, Hkv, N_kv, D) with Hq a multiple of Hkv.
Causal masking is top-left aligned (query i sees keys j <= i), as in the forward.
"""

from __future__ import annotations

import math

from iclr25.gpu.kernels.attention_fwd.reference import check_shapes, expand_kv
from iclr25.gpu.tolerance import Tolerance

BLOCK = 64
__all__ = [
    "attention_backward_reference",
    "attention_backward_tiled_reference",
    "attention_grad_tolerance",
    "check_shapes",
    "expand_kv",
]


def attention_backward_reference(q, k, v, grad_out, causal=False, scale=None, dtype=None, o=None):
    """(dQ, dK, dV) in ``dtype`` (default float32): by autograd through the definition, or,
    given the forward's output ``o``, by the closed form at that output —
    dS = P (dO V^T - Delta), Delta = rowsum(dO * o) — which is what a flash backward
    computes from a 16-bit O (equal to autograd when ``o`` is exact; tested)."""
    import torch

    from iclr25.gpu.kernels.attention_fwd.reference import attention_reference

    group = check_shapes(q, k, v)
    dtype = dtype or torch.float32
    if o is not None:
        return _closed_form(q, k, v, grad_out, o, causal, scale, dtype, group)
    qf, kf, vf = (t.detach().to(dtype).requires_grad_() for t in (q, k, v))
    with torch.enable_grad():
        o = attention_reference(
            qf, expand_kv(kf, group), expand_kv(vf, group), causal, scale, dtype
        )[0]
        o.backward(grad_out.to(dtype))
    return qf.grad, kf.grad, vf.grad


def _closed_form(q, k, v, grad_out, o, causal, scale, dtype, group):
    """The gradients at ``o``, one kv head (and its group of query heads) at a time, so the
    (group x N_q x N_kv) score matrices stay small."""
    import torch

    (b, _hq, n_q, d), (hkv, n_kv) = q.shape, k.shape[1:3]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    mask = None
    if causal:
        mask = torch.ones(n_q, n_kv, dtype=torch.bool, device=q.device).tril()  # (Nq, Nkv)
    dq = torch.empty(q.shape, dtype=dtype, device=q.device)
    dk = torch.empty(k.shape, dtype=dtype, device=q.device)
    dv = torch.empty(v.shape, dtype=dtype, device=q.device)
    for i in range(b):
        for h in range(hkv):
            heads = slice(h * group, (h + 1) * group)
            qf, dof = q[i, heads].to(dtype), grad_out[i, heads].to(dtype)  # (G, Nq, D)
            kf, vf = k[i, h].to(dtype), v[i, h].to(dtype)  # (Nkv, D)
            s = scale * (qf @ kf.mT)  # (G, Nq, Nkv)
            if mask is not None:
                s = s.masked_fill(~mask, float("-inf"))
            p = torch.softmax(s, dim=-1)
            delta = (dof * o[i, heads].to(dtype)).sum(-1, keepdim=True)  # (G, Nq, 1)
            ds = p * (dof @ vf.mT - delta)
            dq[i, heads] = scale * (ds @ kf)
            dk[i, h] = scale * (ds.mT @ qf).sum(0)  # summed over the group's query heads
            dv[i, h] = (p.mT @ dof).sum(0)
    return dq, dk, dv


def _probabilities(qf, kf, lse2, scale_log2, rows, cols, causal):
    """P of query rows ``rows`` x key columns ``cols`` from the log2 LSE (masked: 0)."""
    import torch

    s = (qf[rows] @ kf[cols].mT) * scale_log2
    p = torch.exp2(s - lse2[rows][:, None])
    if causal:
        p = p.masked_fill(cols[None, :] > rows[:, None], 0.0)
    return p


def attention_backward_tiled_reference(
    q, k, v, o, lse, grad_out, causal=False, scale=None, block_q=BLOCK
):
    """The kernels' algorithm, block by block, in fp32: (dQ, dK, dV)."""
    import torch

    group = check_shapes(q, k, v)
    (b, hq, n_q, d), (hkv, n_kv) = q.shape, k.shape[1:3]
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    scale_log2 = scale * math.log2(math.e)
    qf, dof = q.float().reshape(b * hq, n_q, d), grad_out.float().reshape(b * hq, n_q, d)
    kf, vf = k.float().reshape(b * hkv, n_kv, d), v.float().reshape(b * hkv, n_kv, d)
    lse2 = lse.float().reshape(b * hq, n_q) * math.log2(math.e)
    delta = (grad_out.float() * o.float()).sum(-1).reshape(b * hq, n_q)  # (BHq, Nq)
    dq, dk, dv = torch.zeros_like(qf), torch.zeros_like(kf), torch.zeros_like(vf)
    # dK, dV: one pass per 64-key block of each kv head over its group's query tiles
    for bh_kv in range(b * hkv):
        for kv0 in range(0, n_kv, BLOCK):
            cols = torch.arange(kv0, min(kv0 + BLOCK, n_kv))
            first = kv0 // block_q if causal else 0
            for g in range(group):
                bh = (bh_kv // hkv) * hq + (bh_kv % hkv) * group + g
                for q0 in range(first * block_q, n_q, block_q):
                    rows = torch.arange(q0, min(q0 + block_q, n_q))
                    p = _probabilities(qf[bh], kf[bh_kv], lse2[bh], scale_log2, rows, cols, causal)
                    dv[bh_kv, cols] += p.mT @ dof[bh, rows]
                    ds = p * (dof[bh, rows] @ vf[bh_kv, cols].mT - delta[bh, rows][:, None])
                    dk[bh_kv, cols] += scale * (ds.mT @ qf[bh, rows])
    # dQ: one pass per 64-query block over the key tiles it can see
    for bh in range(b * hq):
        bh_kv = (bh // hq) * hkv + (bh % hq) // group
        for q0 in range(0, n_q, BLOCK):
            rows = torch.arange(q0, min(q0 + BLOCK, n_q))
            keys = min(n_kv, q0 + BLOCK) if causal else n_kv
            for kv0 in range(0, keys, BLOCK):
                cols = torch.arange(kv0, min(kv0 + BLOCK, n_kv))
                p = _probabilities(qf[bh], kf[bh_kv], lse2[bh], scale_log2, rows, cols, causal)
                ds = p * (dof[bh, rows] @ vf[bh_kv, cols].mT - delta[bh, rows][:, None])
                dq[bh, rows] += scale * (ds @ kf[bh_kv, cols])
    return dq.reshape(q.shape), dk.reshape(k.shape), dv.reshape(v.shape)


def attention_grad_tolerance(dtype) -> Tolerance:
    """The bound dQ, dK and dV are checked with against the fp32 gradients at the forward's
    output (:func:`attention_backward_reference` with ``o``): 12u x the row's RMS + 4u x
    |exact| + u x the tensor's RMS (a floor for rows that cancel to zero, e.g. causal dQ of
    query 0). P and dS are rounded to 16 bits as mma operands and the outputs once more.
    The CPU rounding model stays below 0.25 of this bound, while a 5% error in Delta or in
    the softmax scale falls 1.2-1.8x (bf16) to > 10x (fp16) outside it
    (tests/gpu/test_rounding_model.py).

    Why at the forward's output and not plain autograd: Delta = rowsum(dO * O) is computed
    from the 16-bit O, as in every flash backward (and SDPA's), and for query rows that see
    few keys dP - Delta cancels, so against exact-O autograd such rows differ by ~10% of
    their size in bf16 whatever the kernel does; the closed form at the same O isolates the
    kernel's own error."""
    from iclr25.gpu.kernels.gemm_bf16.reference import unit_roundoff

    eps = unit_roundoff(dtype)
    return Tolerance(rtol=4 * eps, atol_rms=12 * eps, atol_tensor_rms=eps)

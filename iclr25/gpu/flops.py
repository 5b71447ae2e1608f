"""Floating-point operation counts used to turn times into TFLOP/s.

Conventions (as in the ThunderKittens and FlashAttention papers):

- GEMM (M x K) @ (K x N): 2 M N K (one multiply and one add per term).
- Attention forward: 4 B H N_q N_kv D (Q K^T and P V, 2 N_q N_kv D each); causal halves it
  (the usual convention, exact only as N grows: the visited triangle is N (N + 1) / 2).
- Attention backward: 2.5 x the forward (5 matrix products against the forward's 2).
- Causal linear attention with chunks of C positions (the paper gives no formula; this is
  the work of the chunked algorithm): per position, the causal intra-chunk products cost
  (C + 1)(D_k + D_v) on average (C (C + 1) / 2 pairs of 2 D_k + 2 D_v per chunk of C), and
  the inter-chunk terms Q S and the state update K^T V cost 2 D_k D_v each:
  B H N [(C + 1)(D_k + D_v) + 4 D_k D_v].

The same count is used for our kernel and for its references, so ratios of TFLOP/s are
ratios of times.
"""

from __future__ import annotations


def gemm_flops(m: int, n: int, k: int) -> float:
    return 2.0 * m * n * k


def attention_forward_flops(
    batch: int, heads: int, n_q: int, n_kv: int, head_dim: int, causal: bool
) -> float:
    flops = 4.0 * batch * heads * n_q * n_kv * head_dim
    return flops / 2 if causal else flops


def attention_backward_flops(
    batch: int, heads: int, n_q: int, n_kv: int, head_dim: int, causal: bool
) -> float:
    return 2.5 * attention_forward_flops(batch, heads, n_q, n_kv, head_dim, causal)


def linear_attention_flops(
    batch: int, heads: int, n: int, dim_k: int, dim_v: int, chunk: int = 64
) -> float:
    per_position = (chunk + 1) * (dim_k + dim_v) + 4 * dim_k * dim_v
    return float(batch * heads * n * per_position)


def based_flops(batch: int, heads: int, n: int, dim_feature: int, dim_v: int) -> float:
    """Based: linear attention over F = 1 + d' + d'² Taylor features and D_v + 1 columns
    (the normaliser); the zero padding the kernel also multiplies is not counted."""
    features = 1 + dim_feature + dim_feature**2
    return linear_attention_flops(batch, heads, n, features, dim_v + 1)


def tflops(flops: float, seconds: float | None) -> float | None:
    """TFLOP/s for one call of ``seconds`` (None when there is no time)."""
    if seconds is None or seconds <= 0:
        return None
    return flops / seconds / 1e12

"""Top-k cosine search: the plain definition and the CPU fast path.

``topk_cosine_reference`` is the definition (float64, full score matrix, stable sort by
(-score, index)); ``topk_cosine_cpu`` is the CPU hot path: float32 blocked matmul of
unit-normalised queries against reference blocks, ``np.argpartition`` per block, a
merge with the running top-k, and one final sort. Both return ``(scores, indices)`` of
shape ``(q, min(k, n))``, best first, ties broken by the smaller index.

A zero vector has cosine 0 with everything (its norm is floored at ``EPS``); NaN scores
rank last.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-12


def _check(queries, refs, k: int) -> tuple[np.ndarray, np.ndarray, int]:
    queries = np.asarray(queries)
    refs = np.asarray(refs)
    if queries.ndim != 2 or refs.ndim != 2:
        raise ValueError(f"queries and refs must be 2-D, got {queries.shape} and {refs.shape}")
    if queries.shape[1] != refs.shape[1]:
        raise ValueError(f"embedding dimensions differ: {queries.shape[1]} vs {refs.shape[1]}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return queries, refs, min(int(k), refs.shape[0])


def _sort_rows(vals: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort each row by (-score, index); NaN scores last."""
    keyed = np.where(np.isnan(vals), -np.inf, vals)
    order = np.lexsort((idx, -keyed), axis=-1)  # (q, k)
    return np.take_along_axis(vals, order, axis=1), np.take_along_axis(idx, order, axis=1)


def topk_cosine_reference(queries, refs, k: int) -> tuple[np.ndarray, np.ndarray]:
    """By definition: every cosine in float64, then a stable sort per row."""
    queries, refs, k_eff = _check(queries, refs, k)
    q = queries.astype(np.float64)
    r = refs.astype(np.float64)
    qn = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), EPS)  # (q, d)
    rn = r / np.maximum(np.linalg.norm(r, axis=1, keepdims=True), EPS)  # (n, d)
    scores = qn @ rn.T  # (q, n)
    idx = np.broadcast_to(np.arange(r.shape[0]), scores.shape)
    vals, order = _sort_rows(scores, idx)
    return vals[:, :k_eff], order[:, :k_eff].astype(np.int64)


def _block_topk(scores: np.ndarray, offset: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k best columns of each row of one score block (unordered), global indices."""
    if scores.shape[1] <= k:
        cols = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
        return scores, cols + offset
    keyed = np.where(np.isnan(scores), -np.inf, scores)
    cols = np.argpartition(-keyed, k - 1, axis=1)[:, :k]  # (b, k)
    return np.take_along_axis(scores, cols, axis=1), cols + offset


def topk_cosine_cpu(
    queries, refs, k: int, block_queries: int = 512, block_refs: int = 16384
) -> tuple[np.ndarray, np.ndarray]:
    """CPU hot path: float32 blocked matmul + argpartition, merged block by block.

    Memory stays at about ``block_queries * block_refs`` floats plus the inputs; the
    references are never copied (their inverse norms scale each score block)."""
    queries, refs, k_eff = _check(queries, refs, k)
    nq, n = queries.shape[0], refs.shape[0]
    out_vals = np.empty((nq, k_eff), dtype=np.float32)
    out_idx = np.empty((nq, k_eff), dtype=np.int64)
    if nq == 0 or k_eff == 0:
        return out_vals, out_idx
    q = queries.astype(np.float32, copy=False)
    q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), EPS)  # (q, d)
    r = refs.astype(np.float32, copy=False)
    r_inv = 1.0 / np.maximum(np.sqrt(np.einsum("nd,nd->n", r, r)), EPS)  # (n,)
    for qs in range(0, nq, block_queries):
        qb = q[qs : qs + block_queries]  # (b, d)
        best_v = np.empty((qb.shape[0], 0), dtype=np.float32)
        best_i = np.empty((qb.shape[0], 0), dtype=np.int64)
        for rs in range(0, n, block_refs):
            scores = qb @ r[rs : rs + block_refs].T  # (b, c)
            scores *= r_inv[rs : rs + block_refs][None, :]
            cand_v, cand_i = _block_topk(scores, rs, k_eff)
            merged_v = np.concatenate([best_v, cand_v], axis=1)  # (b, <= 2k)
            merged_i = np.concatenate([best_i, cand_i], axis=1)
            best_v, best_i = _block_topk(merged_v, 0, k_eff)
            best_i = np.take_along_axis(merged_i, best_i, axis=1)
        vals, idx = _sort_rows(best_v, best_i)
        out_vals[qs : qs + qb.shape[0]] = vals
        out_idx[qs : qs + qb.shape[0]] = idx
    return out_vals, out_idx

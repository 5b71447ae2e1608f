"""Top-k cosine search: the plain definition and the CPU fast path.

``topk_cosine_reference`` is the definition (float64, full score matrix, stable sort by
(-score, index)); ``topk_cosine_cpu`` is the CPU hot path: float32 blocked matmul of
unit-normalised queries against reference blocks, a group-max pre-selection and
``np.argpartition`` per block, a merge with the running top-k, and one final sort.
Both return ``(scores, indices)`` of shape ``(q, min(k, n))``, best first, ties broken
by the smaller index.

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


GROUP = 32  # rows per group of the group-max pre-selection


def _top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """(k, b) row indices of the k largest entries of each column of ``scores`` (c, b),
    unordered. For tall blocks a group-max pre-selection first keeps the k groups of
    GROUP rows with the largest maxima: every top-k entry lies in one of them (a group
    holding none has a maximum below the k-th largest), so only k * GROUP candidates per
    column reach ``argpartition``."""
    c, b = scores.shape
    if c <= k:
        return np.broadcast_to(np.arange(c)[:, None], (c, b))
    main = c - c % GROUP
    if main < 4 * k * GROUP:
        return np.argpartition(scores, c - k, axis=0)[c - k :]
    maxima = scores[:main].reshape(main // GROUP, GROUP, b).max(axis=1)  # (groups, b)
    groups = np.argpartition(maxima, maxima.shape[0] - k, axis=0)[-k:]  # (k, b)
    rows = groups[:, None, :] * GROUP + np.arange(GROUP)[None, :, None]  # (k, GROUP, b)
    rows = rows.reshape(k * GROUP, b)  # candidate rows per column
    if main < c:  # the last partial group: every row is a candidate
        tail = np.broadcast_to(np.arange(main, c)[:, None], (c - main, b))
        rows = np.concatenate([rows, tail], axis=0)
    cand = np.take_along_axis(scores, rows, axis=0)  # (k * GROUP [+ tail], b)
    keep = np.argpartition(cand, cand.shape[0] - k, axis=0)[-k:]
    return np.take_along_axis(rows, keep, axis=0)


def topk_cosine_cpu(
    queries, refs, k: int, block_queries: int = 512, block_refs: int = 32768
) -> tuple[np.ndarray, np.ndarray]:
    """CPU hot path: float32 blocked matmul + (group-max) argpartition, block by block.

    Scores are computed transposed, (reference block, query block), so that the group
    maxima reduce over contiguous rows. Memory stays at about ``block_queries *
    block_refs`` floats plus the inputs; the references are never copied whole (each
    block is normalised on its own). Non-finite inputs take a NaN-safe path."""
    queries, refs, k_eff = _check(queries, refs, k)
    nq, n = queries.shape[0], refs.shape[0]
    out_vals = np.empty((nq, k_eff), dtype=np.float32)
    out_idx = np.empty((nq, k_eff), dtype=np.int64)
    if nq == 0 or k_eff == 0:
        return out_vals, out_idx
    q = queries.astype(np.float32, copy=False)
    q_norm = np.sqrt(np.einsum("qd,qd->q", q, q))
    r = refs.astype(np.float32, copy=False)
    r_norm = np.sqrt(np.einsum("nd,nd->n", r, r))  # (n,)
    finite = bool(np.isfinite(q_norm).all() and np.isfinite(r_norm).all())
    q = q / np.maximum(q_norm, EPS)[:, None]  # (q, d)
    r_inv = (1.0 / np.maximum(r_norm, EPS)).astype(np.float32)
    for qs in range(0, nq, block_queries):
        qb = q[qs : qs + block_queries]  # (b, d)
        best_v = np.empty((0, qb.shape[0]), dtype=np.float32)  # (<= k, b), transposed
        best_i = np.empty((0, qb.shape[0]), dtype=np.int64)
        for rs in range(0, n, block_refs):
            block = r[rs : rs + block_refs] * r_inv[rs : rs + block_refs, None]  # (c, d) unit
            scores = block @ qb.T  # (c, b)
            if not finite:
                scores = np.where(np.isnan(scores), -np.inf, scores)
            rows = _top_rows(scores, k_eff)
            merged_v = np.concatenate([best_v, np.take_along_axis(scores, rows, axis=0)])
            merged_i = np.concatenate([best_i, rows + rs])  # (<= 2k, b)
            keep = _top_rows(merged_v, k_eff)
            best_v = np.take_along_axis(merged_v, keep, axis=0)
            best_i = np.take_along_axis(merged_i, keep, axis=0)
        vals, idx = _sort_rows(best_v.T, best_i.T)
        out_vals[qs : qs + qb.shape[0]] = vals
        out_idx[qs : qs + qb.shape[0]] = idx
    return out_vals, out_idx

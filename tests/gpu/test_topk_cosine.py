"""Top-k cosine search: CPU path and a step-by-step emulation of the CUDA kernel against
the plain definition; the CUDA paths on a device (``gpu`` marker)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from iclr25.gpu.kernels.topk_cosine import (
    MAX_K,
    THREADS,
    topk_cosine,
    topk_cosine_cpu,
    topk_cosine_reference,
)
from iclr25.testing import assert_close

# (queries, references, dim, k): odd sizes, k > n, single rows, empty inputs
SHAPES = [
    (1, 1, 1, 1),
    (5, 7, 3, 3),
    (13, 100, 17, 10),
    (33, 1000, 8, 32),
    (4, 3, 5, 10),
    (0, 10, 4, 3),
    (6, 0, 4, 3),
    (70, 4097, 16, 40),
]


def _data(nq, n, d, seed=0):
    rng = np.random.default_rng(seed + nq * 7 + n)
    return rng.normal(size=(nq, d)), rng.normal(size=(n, d))


def test_reference_known_answer():
    refs = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [-3.0, 0.0]])
    vals, idx = topk_cosine_reference(np.array([[2.0, 0.0]]), refs, 3)
    assert idx.tolist() == [[0, 2, 1]]  # cosines 1, 1/sqrt(2), 0 (then -1)
    assert_close(vals, [[1.0, 1 / math.sqrt(2), 0.0]], atol=1e-12)


@pytest.mark.parametrize("blocks", [(8, 64), (512, 32768)])
@pytest.mark.parametrize("nq,n,d,k", SHAPES + [(5, 5003, 6, 3), (3, 40_000, 4, 12)])
def test_cpu_path_matches_reference(nq, n, d, k, blocks):
    """Small blocks exercise the merges; default blocks the group-max pre-selection."""
    q, r = _data(nq, n, d)
    vals, idx = topk_cosine_cpu(q, r, k, block_queries=blocks[0], block_refs=blocks[1])
    ref_vals, ref_idx = topk_cosine_reference(q, r, k)
    assert vals.shape == ref_vals.shape == (nq, min(k, n))
    assert_close(vals, ref_vals, rtol=1e-5, atol=1e-5)
    assert np.array_equal(idx, ref_idx)
    assert np.array_equal(topk_cosine(q, r, k, device="cpu")[1], ref_idx)


def test_zero_vectors_score_zero_and_nan_ranks_last():
    vals, idx = topk_cosine_cpu(np.zeros((1, 3)), np.eye(3), 2)
    assert_close(vals, [[0.0, 0.0]])
    assert len(set(idx[0].tolist())) == 2  # any two of the tied references
    refs = np.array([[1.0, 0.0], [np.nan, 1.0], [0.0, 1.0]])
    vals, idx = topk_cosine_cpu(np.array([[1.0, 1.0]]), refs, 3)
    assert idx.tolist() == [[0, 2, 1]] and not np.isfinite(vals[0, 2])


@given(
    arrays(np.float64, st.tuples(st.integers(1, 6), st.just(4)), elements=st.floats(-10, 10)),
    arrays(np.float64, st.tuples(st.integers(1, 40), st.just(4)), elements=st.floats(-10, 10)),
    st.integers(1, 8),
)
def test_properties_sorted_unique_and_true_cosines(q, r, k):
    vals, idx = topk_cosine_cpu(q, r, k, block_refs=7)
    assert (np.diff(vals, axis=1) <= 1e-6).all()  # best first
    for row_vals, row_idx, query in zip(vals, idx, q, strict=True):
        assert len(set(row_idx.tolist())) == len(row_idx)
        qn = query / max(np.linalg.norm(query), 1e-12)
        rn = r[row_idx] / np.maximum(np.linalg.norm(r[row_idx], axis=1, keepdims=True), 1e-12)
        assert_close(row_vals, rn @ qn, atol=1e-5)
    ref_vals, _ = topk_cosine_reference(q, r, k)
    assert_close(vals, ref_vals, atol=1e-5)  # the same scores, whatever the tie order


# -- the kernel's algorithm, emulated ------------------------------------------------------
def _better(v1, i1, v2, i2) -> bool:
    return v1 > v2 or (v1 == v2 and i1 >= 0 and (i2 < 0 or i1 < i2))


def _insert(lst, v, i, k):
    """kernel.cu insert(): sorted list of (v, i), best first, k slots."""
    if not _better(v, i, *lst[k - 1]):
        return
    slot = k - 1
    while slot > 0 and _better(v, i, *lst[slot - 1]):
        lst[slot] = lst[slot - 1]
        slot -= 1
    lst[slot] = (v, i)


def emulate_kernel_row(scores, k, col_offset, run, threads=THREADS):
    """One block of topk_rows_merge_f32: per-thread lists, then k arg-max rounds."""
    lists = [[(-math.inf, -1)] * k for _ in range(threads)]
    for j, (v, i) in enumerate(run):
        if i >= 0:
            _insert(lists[j % threads], v, i, k)
    for c, v in enumerate(scores):
        _insert(lists[c % threads], -math.inf if math.isnan(v) else v, col_offset + c, k)
    heads, out = [0] * threads, []
    for _ in range(k):
        cands = [
            lists[t][heads[t]] + (t,) if heads[t] < k else (-math.inf, -1, t)
            for t in range(threads)
        ]
        best = cands[0]
        for cand in cands[1:]:
            if _better(cand[0], cand[1], best[0], best[1]):
                best = cand
        out.append(best[:2])
        if best[1] >= 0:
            heads[best[2]] += 1
    return out


def emulate_topk(q, r, k, block_cols, threads):
    qn = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    rn = r / np.maximum(np.linalg.norm(r, axis=1, keepdims=True), 1e-12)
    k = min(k, len(r))
    runs = [[(-math.inf, -1)] * k for _ in range(len(q))]
    for start in range(0, len(r), block_cols):
        scores = qn @ rn[start : start + block_cols].T  # (q, c)
        runs = [
            emulate_kernel_row(s, k, start, run, threads)
            for s, run in zip(scores, runs, strict=True)
        ]
    return np.array([[v for v, _ in run] for run in runs]), np.array(
        [[i for _, i in run] for run in runs]
    )


@pytest.mark.parametrize("threads", [1, 4, THREADS])
@pytest.mark.parametrize(
    "nq,n,d,k,block", [(3, 50, 5, 4, 7), (2, 9, 3, 9, 4), (4, 300, 6, MAX_K, 64)]
)
def test_kernel_algorithm_emulation_matches_reference(threads, nq, n, d, k, block):
    q, r = _data(nq, n, d, seed=threads)
    vals, idx = emulate_topk(q, r, k, block, threads)
    ref_vals, ref_idx = topk_cosine_reference(q, r, k)
    assert_close(vals, ref_vals, atol=1e-12)
    assert np.array_equal(idx, ref_idx)


def test_kernel_emulation_ties_and_nan():
    # equal scores keep the smaller index; NaN ranks after every number
    out = emulate_kernel_row(
        np.array([0.5, np.nan, 0.5, 0.9]), 4, 10, [(0.5, 3), (-math.inf, -1)], 2
    )
    assert out == [(0.9, 13), (0.5, 3), (0.5, 10), (0.5, 12)]


# -- on a CUDA device -----------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("nq,n,d,k", SHAPES + [(500, 70_000, 64, 10), (7, 3000, 32, MAX_K + 5)])
def test_cuda_kernel_matches_reference(nq, n, d, k):
    from iclr25.gpu.kernels.topk_cosine import topk_cosine_cuda

    q, r = _data(nq, n, d)
    vals, idx = topk_cosine_cuda(q.astype(np.float32), r.astype(np.float32), k)
    ref_vals, ref_idx = topk_cosine_reference(q, r, k)
    assert_close(vals, ref_vals, rtol=1e-4, atol=1e-4)
    agree = (idx.get() == ref_idx).mean() if ref_idx.size else 1.0
    assert agree > 0.99  # float32 vs float64 may swap near-ties


@pytest.mark.gpu
def test_torch_cuda_path_matches_reference():
    from iclr25.gpu.kernels.topk_cosine import topk_cosine_torch

    q, r = _data(40, 5000, 24)
    vals, idx = topk_cosine_torch(q, r, 7)
    ref_vals, _ = topk_cosine_reference(q, r, 7)
    assert_close(vals, ref_vals, rtol=1e-4, atol=1e-4)
    assert idx.shape == (40, 7)

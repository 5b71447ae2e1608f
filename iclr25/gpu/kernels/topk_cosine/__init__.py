"""Top-k cosine search of many queries over many reference embeddings (up to ~10^6).

The hot path of ``style-check``: nearest reference works of generated images, k-NN
classification and its cross-validation. ``topk_cosine(queries, refs, k, device)``
returns ``(scores, indices)`` of shape ``(q, min(k, n))``, best first:

- CUDA with CuPy: unit-normalised queries times a block of references (cuBLAS GEMM),
  then the ``topk_rows_merge_f32`` kernel selects each row's top-k of the block and
  merges it with the running top-k (k <= ``MAX_K``; larger k uses ``cupy.argpartition``
  per block instead);
- CUDA without CuPy: the same blocks with ``torch.topk``;
- CPU: :func:`reference.topk_cosine_cpu` (float32 blocked matmul + argpartition).

All paths are tested against :func:`reference.topk_cosine_reference`.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.topk_cosine.reference import (
    EPS,
    topk_cosine_cpu,
    topk_cosine_reference,
)
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="topk_cosine",
    package=__name__,
    description="per-row top-k of cosine score blocks, merged with a running top-k (k <= 32)",
)
THREADS = 128  # must match kernel.cu
MAX_K = 32  # shared memory: THREADS * k * 8 bytes <= 32 KiB
SCORE_BLOCK_BYTES = 256 * 2**20  # size of one (queries x references) score block on the GPU


def _blocks(nq: int, n: int) -> tuple[int, int]:
    """(query rows, reference columns) per score block, about SCORE_BLOCK_BYTES each."""
    cols = max(1, min(n, 1 << 16))
    rows = max(1, min(nq, SCORE_BLOCK_BYTES // (4 * cols)))
    return rows, cols


def _select_block(cp, scores, k: int, offset: int, run_vals, run_idx) -> None:
    """Merge the top-k of each row of ``scores`` (b, c) into the running lists in place."""
    b, c = scores.shape
    if k <= MAX_K:
        kernel = load_module(SPEC.name).get_function("topk_rows_merge_f32")
        args = (scores, np.int32(b), np.int32(c), np.int32(k), np.int32(offset), run_vals, run_idx)
        kernel((b,), (THREADS,), args, shared_mem=THREADS * k * 8)
        return
    cols = cp.arange(c, dtype=cp.int32)[None, :] + offset  # (1, c)
    merged_v = cp.concatenate([run_vals, cp.nan_to_num(scores, nan=-cp.inf)], axis=1)
    merged_i = cp.concatenate([run_idx, cp.broadcast_to(cols, (b, c))], axis=1)
    merged_v = cp.where(merged_i < 0, -cp.inf, merged_v)
    keep = cp.argpartition(-merged_v, k - 1, axis=1)[:, :k] if merged_v.shape[1] > k else None
    if keep is not None:
        merged_v = cp.take_along_axis(merged_v, keep, axis=1)
        merged_i = cp.take_along_axis(merged_i, keep, axis=1)
    by_index = cp.argsort(merged_i, axis=1)  # two stable sorts: score, then index on ties
    merged_v = cp.take_along_axis(merged_v, by_index, axis=1)
    merged_i = cp.take_along_axis(merged_i, by_index, axis=1)
    order = cp.argsort(-merged_v, axis=1)
    run_vals[...] = cp.take_along_axis(merged_v, order, axis=1)
    run_idx[...] = cp.take_along_axis(merged_i, order, axis=1)


def topk_cosine_cuda(queries, refs, k: int):
    """Top-k cosine on the GPU with CuPy; returns CuPy (scores float32, indices int32)."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    q = cp.asarray(queries, dtype=cp.float32)  # (q, d)
    r = cp.asarray(refs, dtype=cp.float32)  # (n, d)
    if q.ndim != 2 or r.ndim != 2 or q.shape[1] != r.shape[1]:
        raise ValueError(f"bad shapes for top-k cosine: {q.shape} and {r.shape}")
    nq, n = q.shape[0], r.shape[0]
    k_eff = min(int(k), n)
    run_vals = cp.full((nq, k_eff), -cp.inf, dtype=cp.float32)
    run_idx = cp.full((nq, k_eff), -1, dtype=cp.int32)
    if nq == 0 or k_eff == 0:
        return run_vals, run_idx
    q = q / cp.maximum(cp.linalg.norm(q, axis=1, keepdims=True), EPS)
    r_inv = 1.0 / cp.maximum(cp.linalg.norm(r, axis=1), EPS)  # (n,)
    rows, cols = _blocks(nq, n)
    for qs in range(0, nq, rows):
        qb = q[qs : qs + rows]  # (b, d)
        for rs in range(0, n, cols):
            scores = qb @ r[rs : rs + cols].T  # (b, c) cuBLAS
            scores *= r_inv[None, rs : rs + cols]
            scores = cp.ascontiguousarray(scores, dtype=cp.float32)
            _select_block(cp, scores, k_eff, rs, run_vals[qs : qs + rows], run_idx[qs : qs + rows])
    return run_vals, run_idx


def topk_rows_cuda(scores, k: int):
    """Top-k of each row of a CUDA score matrix ``scores`` (q, n), best first, ties to the
    smaller column: the ``topk_rows_merge_f32`` kernel on one block, no GEMM.

    ``scores`` is any DLPack producer on the device (a torch CUDA tensor is read in place,
    no copy, through ``cupy.from_dlpack``); 1 <= k <= MAX_K. Returns CuPy arrays
    (values float32 (q, k'), column indices int32 (q, k')), k' = min(k, n). Used by the
    NNA queue look-up of ``mim-refine`` (scores already masked by the caller)."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    if cp is None:
        raise RuntimeError("topk_rows_cuda needs CuPy and a CUDA device")
    if not 1 <= int(k) <= MAX_K:
        raise ValueError(f"k must be in 1..{MAX_K}, got {k}")
    s = cp.ascontiguousarray(cp.from_dlpack(scores), dtype=cp.float32)  # (q, n)
    if s.ndim != 2:
        raise ValueError(f"scores must be 2-D, got shape {s.shape}")
    q, n = s.shape
    k_eff = min(int(k), n)
    run_vals = cp.full((q, k_eff), -cp.inf, dtype=cp.float32)
    run_idx = cp.full((q, k_eff), -1, dtype=cp.int32)
    if q and k_eff:
        _select_block(cp, s, k_eff, 0, run_vals, run_idx)
    return run_vals, run_idx


def topk_cosine_torch(queries, refs, k: int):
    """The same blocked search with torch on CUDA (when CuPy is not installed)."""
    import torch

    q = torch.as_tensor(np.asarray(queries, dtype=np.float32), device="cuda")
    r = torch.as_tensor(np.asarray(refs, dtype=np.float32), device="cuda")
    nq, n = q.shape[0], r.shape[0]
    k_eff = min(int(k), n)
    best_v = torch.full((nq, k_eff), float("-inf"), device="cuda")
    best_i = torch.full((nq, k_eff), -1, dtype=torch.int64, device="cuda")
    if nq == 0 or k_eff == 0:
        return best_v.cpu().numpy(), best_i.cpu().numpy()
    q = q / q.norm(dim=1, keepdim=True).clamp_min(EPS)
    r_inv = 1.0 / r.norm(dim=1).clamp_min(EPS)
    rows, cols = _blocks(nq, n)
    for qs in range(0, nq, rows):
        bv, bi = best_v[qs : qs + rows], best_i[qs : qs + rows]
        for rs in range(0, n, cols):
            scores = (q[qs : qs + rows] @ r[rs : rs + cols].T) * r_inv[None, rs : rs + cols]
            scores = torch.nan_to_num(scores, nan=float("-inf"))
            idx = torch.arange(rs, rs + scores.shape[1], device="cuda").expand_as(scores)
            mv, mi = torch.cat([bv, scores], 1), torch.cat([bi, idx], 1)
            top_v, pos = torch.topk(mv, k_eff, dim=1)
            bv[...], bi[...] = top_v, torch.gather(mi, 1, pos)
    return best_v.cpu().numpy(), best_i.cpu().numpy()


def topk_cosine(queries, refs, k: int, device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """Top-k cosine scores and indices as numpy arrays (float32, int64), best first.

    ``device="cuda"`` uses the CuPy kernel (or torch without CuPy); anything else the
    CPU path. Exact ties at the k-th place may keep either candidate."""
    if device == "cuda":
        from iclr25.gpu import get_cupy

        if get_cupy() is not None:
            vals, idx = topk_cosine_cuda(queries, refs, k)
            return vals.get(), idx.get().astype(np.int64)
        vals, idx = topk_cosine_torch(queries, refs, k)
        return vals, idx.astype(np.int64)
    return topk_cosine_cpu(queries, refs, k)


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: the kernel against ``torch.topk`` of the full cosine matrix."""
    from iclr25.gpu.hotpath import HotPathCase

    small, large = (1024, 100_000, 512, 10), (4096, 1_000_000, 256, 10)
    sizes = [small] if quick else [small, large]

    def make(nq: int, n: int, d: int, k: int):
        def setup():
            import cupy as cp
            import torch

            rng = np.random.default_rng(0)
            q_np = rng.normal(size=(nq, d)).astype(np.float32)
            r_np = rng.normal(size=(n, d)).astype(np.float32)
            q, r = cp.asarray(q_np), cp.asarray(r_np)
            qt = torch.nn.functional.normalize(torch.from_numpy(q_np).cuda(), dim=1)
            rt = torch.nn.functional.normalize(torch.from_numpy(r_np).cuda(), dim=1)

            def reference():
                return torch.topk(qt @ rt.T, k, dim=1).values

            return (lambda: topk_cosine_cuda(q, r, k)[0]), reference

        return HotPathCase(
            SPEC.name, f"q={nq} n={n} d={d} k={k}", 2.0 * nq * n * d, "torch.topk(q @ r.T)", setup
        )

    return [make(*size) for size in sizes]


__all__ = [
    "SPEC",
    "MAX_K",
    "topk_cosine",
    "topk_cosine_cuda",
    "topk_cosine_torch",
    "topk_rows_cuda",
    "topk_cosine_cpu",
    "topk_cosine_reference",
    "hot_path_cases",
]

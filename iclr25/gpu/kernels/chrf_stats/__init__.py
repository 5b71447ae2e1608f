"""chrF statistics of many pairs, and bootstrap resample sums: CPU paths and CUDA kernels.

The hot path of ``mufu`` scoring (corpus chrF of test sets, the copy analysis over
outputs × candidates × arms × seeds, bootstrap resamples). Two operations:

- ``match_counts(hyp, hyp_len, ref, ref_len, orders, covered, device)``: per pair and
  order, Σ_g min(H(g), R(g)) (and Σ_g H(g)·[R(g) > 0]) over n-grams of integer symbols;
  CUDA: the ``chrf_pair_counts`` kernel (one block per pair, sorted keys in shared
  memory; pairs over ``MAX_CAPACITY`` symbols or with >= 1024 distinct symbols go to the
  CPU path); CPU: :func:`reference.match_counts_cpu` (vectorised sort-and-group);
- ``bootstrap_sums(stats, indices, device)``: Σ_i stats[indices[r, i]] per resample r;
  CUDA: the ``bootstrap_sums`` kernel (one block per resample); CPU: draw counts @ stats.

Both are exact integer computations, tested against :mod:`reference`'s definitions
(and the kernels on a device, ``gpu`` marker).
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.chrf_stats.reference import (
    bootstrap_sums_cpu,
    bootstrap_sums_reference,
    emulate_block,
    match_counts_cpu,
    match_counts_reference,
)
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="chrf_stats",
    package=__name__,
    description="chrF n-gram match counts (one block per pair, bitonic sort in shared "
    "memory) and bootstrap resample sums",
)
THREADS = 256  # must match kernel.cu
MAX_CAPACITY = 2048  # must match kernel.cu: row symbols per pair held in shared memory
MAX_ORDERS = 6
MAX_STATS = 32
LOCAL_BITS = 10


def _capacity(row: int) -> int:
    return max(2, 1 << max(0, int(row - 1).bit_length()))


def match_counts_cuda(hyp, hyp_len, ref, ref_len, orders: int, covered: bool = False):
    """The kernel path; returns numpy arrays like :func:`match_counts_cpu`."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    hyp_len = np.asarray(hyp_len, dtype=np.int64)
    ref_len = np.asarray(ref_len, dtype=np.int64)
    n = len(hyp_len)
    match = np.zeros((n, orders), dtype=np.int64)
    cover = np.zeros((n, orders), dtype=np.int64)
    if n == 0 or orders == 0:
        return (match, cover) if covered else match
    if not 1 <= orders <= MAX_ORDERS:
        raise ValueError(f"the kernel counts orders 1..{MAX_ORDERS}, not {orders}")
    rows = hyp_len + ref_len + 2 * (orders - 1)
    hyp_start = np.concatenate([[0], np.cumsum(hyp_len)[:-1]])
    ref_start = np.concatenate([[0], np.cumsum(ref_len)[:-1]]) + int(hyp_len.sum())
    symbols = cp.asarray(np.concatenate([np.asarray(hyp), np.asarray(ref)]).astype(np.int32))
    kernel = load_module(SPEC.name).get_function("chrf_pair_counts")
    on_cpu = rows > MAX_CAPACITY
    caps = np.array([_capacity(r) for r in rows])
    for cap in np.unique(caps[~on_cpu]):
        pick = np.flatnonzero((caps == cap) & ~on_cpu)
        d_match = cp.zeros((len(pick), orders), dtype=cp.int64)
        d_cover = cp.zeros((len(pick), orders), dtype=cp.int64)
        d_over = cp.zeros(len(pick), dtype=cp.int32)
        args = (
            symbols,
            cp.asarray(hyp_start[pick]),
            cp.asarray(hyp_len[pick].astype(np.int32)),
            cp.asarray(ref_start[pick]),
            cp.asarray(ref_len[pick].astype(np.int32)),
            np.int32(len(pick)),
            np.int32(orders),
            np.int32(cap),
            d_match,
            d_cover,
            d_over,
        )
        kernel((len(pick),), (THREADS,), args, shared_mem=int(cap) * 12)
        match[pick], cover[pick] = d_match.get(), d_cover.get()
        on_cpu[pick[d_over.get() != 0]] = True
    if on_cpu.any():
        redo = np.flatnonzero(on_cpu)
        h_off = np.concatenate([[0], np.cumsum(hyp_len)])
        r_off = np.concatenate([[0], np.cumsum(ref_len)])
        h = np.concatenate([np.asarray(hyp)[h_off[i] : h_off[i + 1]] for i in redo])
        r = np.concatenate([np.asarray(ref)[r_off[i] : r_off[i + 1]] for i in redo])
        m, c = match_counts_cpu(h, hyp_len[redo], r, ref_len[redo], orders, covered=True)
        match[redo], cover[redo] = m, c
    return (match, cover) if covered else match


def match_counts(
    hyp, hyp_len, ref, ref_len, orders: int, covered: bool = False, device: str = "cpu"
):
    """Per-pair n-gram match (and covered) counts, (n, orders) int64, on ``device``."""
    if device == "cuda":
        return match_counts_cuda(hyp, hyp_len, ref, ref_len, orders, covered)
    return match_counts_cpu(hyp, hyp_len, ref, ref_len, orders, covered)


def bootstrap_sums_cuda(stats, indices) -> np.ndarray:
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    stats = np.asarray(stats, dtype=np.int64)
    n_res, n = np.shape(indices)
    if stats.shape[1] > MAX_STATS:
        return bootstrap_sums_cpu(stats, indices)
    d_sums = cp.zeros((n_res, stats.shape[1]), dtype=cp.int64)
    if n_res and n:
        kernel = load_module(SPEC.name).get_function("bootstrap_sums")
        args = (
            cp.asarray(stats),
            cp.asarray(np.asarray(indices, dtype=np.int32)),
            np.int32(n),
            np.int32(stats.shape[1]),
            np.int32(n_res),
            d_sums,
        )
        kernel((n_res,), (THREADS,), args)
    return d_sums.get()


def bootstrap_sums(stats, indices, device: str = "cpu") -> np.ndarray:
    """(R, S) int64 sums of the statistics of each resample's segments, on ``device``."""
    if device == "cuda":
        return bootstrap_sums_cuda(stats, indices)
    return bootstrap_sums_cpu(stats, indices)


__all__ = [
    "SPEC",
    "MAX_CAPACITY",
    "bootstrap_sums",
    "bootstrap_sums_cpu",
    "bootstrap_sums_cuda",
    "bootstrap_sums_reference",
    "emulate_block",
    "match_counts",
    "match_counts_cpu",
    "match_counts_cuda",
    "match_counts_reference",
]

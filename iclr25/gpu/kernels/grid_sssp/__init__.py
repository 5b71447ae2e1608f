"""Batched grid shortest paths (exicl's exact verifier): a CUDA kernel and its references.

``grid_sssp_cuda(blocked, sources, moves, diagonal_cost, targets)`` returns the (M, S, T)
— or (M, S, H·W) — shortest-path distances from every source cell under every mask of
``blocked`` (M, H, W), float32 on the device, +inf where unreachable. One thread block per
(mask, source), the grid in shared memory, relaxation sweeps to convergence (``kernel.cu``).
It is tested against :func:`reference.grid_sssp_reference` (heap Dijkstra) and
:func:`reference.grid_sssp_sweeps` (the same sweeps in numpy); the CPU path of the command
is scipy's multi-source Dijkstra (``iclr25/core/exicl/shortest_paths.py``). This package
imports nothing from ``iclr25.core``.
"""

from __future__ import annotations

import math

import numpy as np

from iclr25.gpu.kernels.grid_sssp.reference import grid_sssp_reference, grid_sssp_sweeps
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="grid_sssp",
    package=__name__,
    description="batched grid shortest paths: one block per (mask, source), shared-memory sweeps",
)
THREADS = 256  # must match kernel.cu
MAX_BLOCKS = 1 << 20
#: float distance + uint8 flag per cell must fit the default 48 KiB of dynamic shared memory
MAX_CELLS = 48 * 1024 // 5


def shared_bytes(cells: int) -> int:
    return 4 * cells + cells


def grid_sssp_cuda(blocked, sources, moves: int = 8, diagonal_cost: float = math.sqrt(2.0),
                   targets=None):  # fmt: skip
    """Run the kernel: ``blocked`` (M, H, W) (numpy or CuPy, cast to uint8), ``sources``
    (S,), ``targets`` (T,) or None. Returns a CuPy float32 array (M, S, T or H·W)."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    blocked = cp.ascontiguousarray(cp.asarray(blocked).astype(cp.uint8))
    if blocked.ndim != 3:
        raise ValueError(f"blocked must be (M, H, W), got shape {blocked.shape}")
    if moves not in (4, 8):
        raise ValueError(f"moves must be 4 or 8, got {moves}")
    m, h, w = blocked.shape
    cells = h * w
    if cells > MAX_CELLS:
        raise ValueError(f"{h}×{w} = {cells} cells exceed the kernel's {MAX_CELLS}")
    src = cp.ascontiguousarray(cp.asarray(sources, dtype=cp.int32).ravel())
    if src.size and (int(src.min()) < 0 or int(src.max()) >= cells):
        raise ValueError("a source cell index is off the grid")
    if targets is None:
        tgt, n_targets = cp.zeros(1, dtype=cp.int32), 0
    else:
        tgt = cp.ascontiguousarray(cp.asarray(targets, dtype=cp.int32).ravel())
        n_targets = int(tgt.size)
        if n_targets and (int(tgt.min()) < 0 or int(tgt.max()) >= cells):
            raise ValueError("a target cell index is off the grid")
    cols = cells if targets is None else n_targets
    out = cp.empty((m, int(src.size), cols), dtype=cp.float32)
    pairs = m * int(src.size)
    if pairs == 0 or cols == 0:
        return out
    kernel = load_module(SPEC.name).get_function("grid_sssp_f32")
    args = (blocked, np.int32(m), np.int32(h), np.int32(w), src, np.int32(src.size), tgt,
            np.int32(n_targets), np.int32(moves), np.float32(diagonal_cost), out)  # fmt: skip
    kernel((min(pairs, MAX_BLOCKS),), (THREADS,), args, shared_mem=shared_bytes(cells))
    return out


__all__ = ["SPEC", "grid_sssp_cuda", "grid_sssp_reference", "grid_sssp_sweeps", "MAX_CELLS"]

"""Batched grid shortest paths: many constraint masks × many sources.

The hot path of exact verification (:mod:`.verifier`) and calibration. For each mask m
the blocked cells are ``walls ∪ masks[m]``; a move is open when both its cells and (for a
diagonal) both corner cells are unblocked (:func:`.grid.open_edges`).

- CPU: per mask, one sparse graph of the open moves and scipy's multi-source Dijkstra
  (``scipy.sparse.csgraph.dijkstra(indices=sources)``), float64;
- CUDA: :mod:`iclr25.gpu.kernels.grid_sssp` (one thread block per (mask, source),
  distances in shared memory, relaxation sweeps to convergence), float32.

Unreachable cells get +inf on both paths. A blocked source keeps distance 0 to itself and
reaches nothing (no move leaves a blocked cell).
"""

from __future__ import annotations

import numpy as np

from iclr25.core.exicl.grid import edges, open_edges
from iclr25.core.exicl.spec import GridSpec


def distances_cpu(
    spec: GridSpec,
    masks: np.ndarray,  # (M, H, W) bool, True = blocked by the constraint
    sources: np.ndarray,  # (S,) cell indices
    targets: np.ndarray | None = None,  # (T,) cell indices, or None for every cell
    on_mask=None,
) -> np.ndarray:
    """(M, S, T) distances, or (M, S, H·W) without ``targets``; float64."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    masks = np.asarray(masks, dtype=bool).reshape(-1, spec.height, spec.width)
    sources = np.asarray(sources, dtype=np.int64)
    n = spec.cells
    width = n if targets is None else len(targets)
    out = np.full((len(masks), len(sources), width), np.inf)
    if len(sources) == 0:
        return out
    e = edges(spec)
    for m, mask in enumerate(masks):
        keep = open_edges(spec, spec.walls | mask)
        graph = csr_matrix((e.weight[keep], (e.src[keep], e.dst[keep])), shape=(n, n))
        dist = dijkstra(graph, directed=True, indices=sources)  # (S, N)
        out[m] = dist if targets is None else dist[:, targets]
        if on_mask is not None:
            on_mask(1)
    return out


def distances(
    spec: GridSpec,
    masks: np.ndarray,
    sources: np.ndarray,
    targets: np.ndarray | None = None,
    device: str = "cpu",
) -> np.ndarray:
    """Dispatch: the CUDA kernel on ``device == "cuda"`` (returned as float64 numpy), else
    the CPU path. Same shapes and the same +inf for unreachable cells."""
    if device != "cuda":
        return distances_cpu(spec, masks, sources, targets)
    from iclr25.gpu.kernels.grid_sssp import grid_sssp_cuda

    masks = np.asarray(masks, dtype=bool).reshape(-1, spec.height, spec.width)
    blocked = (masks | spec.walls[None]).astype(np.uint8)
    dist = grid_sssp_cuda(
        blocked, sources, moves=spec.moves, diagonal_cost=spec.diagonal_cost, targets=targets
    )
    return dist.get().astype(np.float64)

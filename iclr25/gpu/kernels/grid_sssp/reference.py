"""Reference implementations of the batched grid shortest paths (see ``kernel.cu``).

- :func:`grid_sssp_reference`: textbook Dijkstra with a binary heap, one (mask, source)
  pair at a time, in float64 Python — slow, obviously right;
- :func:`grid_sssp_sweeps`: the kernel's own algorithm (pull relaxation sweeps to a fixed
  point), vectorised in numpy over the whole grid (Jacobi order instead of the kernel's
  Gauss-Seidel order; both converge to the same field).

Inputs as for the kernel: ``blocked`` (M, H, W) bool/uint8 (walls ∪ constraint),
``sources`` (S,) cell indices y·W + x, ``targets`` (T,) or None. Output (M, S, T) or
(M, S, H·W), +inf where unreachable. A diagonal needs both corner cells open.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

SQRT2 = math.sqrt(2.0)


def _moves(moves: int, diagonal_cost: float) -> list[tuple[int, int, float]]:
    out = [(1, 0, 1.0), (-1, 0, 1.0), (0, 1, 1.0), (0, -1, 1.0)]
    if moves == 8:
        out += [(dx, dy, diagonal_cost) for dx in (-1, 1) for dy in (-1, 1)]
    return out


def _dijkstra(closed: np.ndarray, source: int, moves: int, diagonal_cost: float) -> np.ndarray:
    height, width = closed.shape
    dist = np.full(height * width, math.inf)
    dist[source] = 0.0
    heap = [(0.0, source)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > dist[u] or closed.flat[u]:
            continue
        ux, uy = u % width, u // width
        for dx, dy, w in _moves(moves, diagonal_cost):
            vx, vy = ux + dx, uy + dy
            if not (0 <= vx < width and 0 <= vy < height) or closed[vy, vx]:
                continue
            if dx and dy and (closed[uy, vx] or closed[vy, ux]):
                continue
            v = vy * width + vx
            if d + w < dist[v]:
                dist[v] = d + w
                heapq.heappush(heap, (d + w, v))
    return dist


def grid_sssp_reference(blocked, sources, moves=8, diagonal_cost=SQRT2, targets=None):
    blocked = np.asarray(blocked).astype(bool)
    sources = np.asarray(sources, dtype=np.int64)
    m, h, w = blocked.shape
    cols = h * w if targets is None else len(targets)
    out = np.full((m, len(sources), cols), math.inf)
    for i in range(m):
        for j, s in enumerate(sources):
            dist = _dijkstra(blocked[i], int(s), moves, diagonal_cost)
            out[i, j] = dist if targets is None else dist[np.asarray(targets, dtype=np.int64)]
    return out


def _shift(a: np.ndarray, dx: int, dy: int, fill) -> np.ndarray:
    """out[y, x] = a[y - dy, x - dx] (the value at the neighbour n = c − d), else fill."""
    h, w = a.shape
    out = np.full_like(a, fill)
    ys = slice(max(dy, 0), h + min(dy, 0))
    xs = slice(max(dx, 0), w + min(dx, 0))
    yn = slice(max(-dy, 0), h + min(-dy, 0))
    xn = slice(max(-dx, 0), w + min(-dx, 0))
    out[ys, xs] = a[yn, xn]
    return out


def grid_sssp_sweeps(blocked, sources, moves=8, diagonal_cost=SQRT2, targets=None):
    blocked = np.asarray(blocked).astype(bool)
    sources = np.asarray(sources, dtype=np.int64)
    m, h, w = blocked.shape
    cols = h * w if targets is None else len(targets)
    out = np.full((m, len(sources), cols), math.inf)
    for i in range(m):
        closed = blocked[i]
        legal = []  # (dx, dy, weight, (H, W) bool: the move n -> c is legal)
        for dx, dy, wt in _moves(moves, diagonal_cost):
            ok = ~closed & ~_shift(closed, dx, dy, True)
            if dx and dy:
                ok &= ~_shift(closed, 0, dy, True) & ~_shift(closed, dx, 0, True)
            legal.append((dx, dy, wt, ok))
        for j, s in enumerate(sources):
            dist = np.full((h, w), math.inf)
            dist.flat[s] = 0.0
            while True:
                best = dist.copy()
                for dx, dy, wt, ok in legal:
                    best = np.where(ok, np.minimum(best, _shift(dist, dx, dy, math.inf) + wt), best)
                best.flat[s] = 0.0
                if np.array_equal(best, dist):
                    break
                dist = best
            flat = dist.ravel()
            out[i, j] = flat if targets is None else flat[np.asarray(targets, dtype=np.int64)]
    return out

"""point2d: continuous navigation with polygon walls, checked on a 16-connected lattice.

States are points in [0, W−1] × [0, H−1]; constraints are cell masks (H, W), the cell of a
point p being floor(p + 1/2). The exact check replaces the continuous shortest path by a
shortest path on the lattice of spacing h = 1/``lattice`` with the 16 moves (±1, 0),
(0, ±1), (±1, ±1), (±1, ±2), (±2, ±1) (in lattice steps). A lattice node is open when it
lies outside every polygon and in an open cell; a lattice move is open when its segment
crosses no polygon edge and every point sampled along it (8 per move) lies in an open cell.
Demonstration ends are snapped to the nearest lattice node.

**Error bound.** A lattice path is a real path, so the continuous optimum L* ≤ L_lat +
2·snap (snap ≤ h/√2, the distance from a demo end to its node). In free space a straight
segment is approximated by the two 16-connected directions around it, so L_lat ≤ (1 +
0.0275)·(L* + 2·snap), where 0.0275 = 1/cos(θ/2) − 1 and θ = atan(1/2) = 26.57° is the
widest angle between neighbouring 16-connected directions. Near walls the lattice can miss a gap
narrower than h, so the lower side of the bound assumes corridors at least 2h wide. A
verdict is reported ``certain`` when it is the same at both ends of the bound.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from iclr25.core.exicl.demos import Demos
from iclr25.core.exicl.geometry import illegal_segments, inside_any
from iclr25.core.exicl.spec import PointSpec

MOVES_16 = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1),
            (1, 2), (1, -2), (-1, 2), (-1, -2), (2, 1), (2, -1), (-2, 1), (-2, -1))  # fmt: skip
RELATIVE_BOUND = 1.0 / math.cos(math.atan(0.5) / 2.0) - 1.0  # 0.0275
SAMPLES_PER_MOVE = 8


# ---------------------------------------------------------------------------------------
# Geometry
# ---------------------------------------------------------------------------------------
def cell_of(points: np.ndarray, spec: PointSpec) -> np.ndarray:
    """(…,) flat cell index y·W + x of points (…, 2)."""
    c = np.floor(np.asarray(points) + 0.5).astype(np.int64)
    cx = np.clip(c[..., 0], 0, spec.width - 1)
    cy = np.clip(c[..., 1], 0, spec.height - 1)
    return cy * spec.width + cx


def segment_cells(a: np.ndarray, b: np.ndarray, spec: PointSpec) -> np.ndarray:
    """(P, SAMPLES+1) cells of points sampled along each segment a[p]→b[p]."""
    t = np.linspace(0.0, 1.0, SAMPLES_PER_MOVE + 1)[None, :, None]  # (1, K, 1)
    pts = a[:, None, :] + t * (b - a)[:, None, :]  # (P, K, 2)
    return cell_of(pts, spec)


def legal_move_rate_point(spec: PointSpec, traj: np.ndarray) -> float:
    """Share of the moves between consecutive states of samples (…, T, 2) (stays included)
    that are legal in the continuous environment: both ends on the map [0, W−1] × [0, H−1],
    no longer than ``max_step``, crossing no polygon edge and not passing through one."""
    traj = np.asarray(traj, dtype=np.float64)
    a = traj[..., :-1, :].reshape(-1, 2)
    b = traj[..., 1:, :].reshape(-1, 2)
    hi = np.array([spec.width - 1, spec.height - 1], dtype=np.float64)
    on_map = ((a >= 0) & (a <= hi) & (b >= 0) & (b <= hi)).all(axis=1)
    short = np.linalg.norm(b - a, axis=1) <= spec.max_step + 1e-9
    legal = on_map & short & ~illegal_segments(a, b, spec.polygons)
    return float(legal.mean())


# ---------------------------------------------------------------------------------------
# The lattice
# ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _lattice(spec: PointSpec):
    r = spec.lattice
    nx, ny = r * (spec.width - 1) + 1, r * (spec.height - 1) + 1
    jj, ii = np.mgrid[0:ny, 0:nx]
    xy = np.stack([ii.ravel(), jj.ravel()], axis=1) / r  # (N, 2)
    node_ok = ~inside_any(xy, spec.polygons)
    src, dst, w = [], [], []
    for dx, dy in MOVES_16:
        ti, tj = ii.ravel() + dx, jj.ravel() + dy
        ok = (ti >= 0) & (ti < nx) & (tj >= 0) & (tj < ny)
        u = (jj.ravel() * nx + ii.ravel())[ok]
        v = tj[ok] * nx + ti[ok]
        src.append(u), dst.append(v), w.append(np.full(u.shape, math.hypot(dx, dy) / r))
    src, dst, w = np.concatenate(src), np.concatenate(dst), np.concatenate(w)
    ok = node_ok[src] & node_ok[dst] & ~illegal_segments(xy[src], xy[dst], spec.polygons)
    src, dst, w = src[ok], dst[ok], w[ok]
    cells = segment_cells(xy[src], xy[dst], spec)  # (E, K)
    return xy, src, dst, w, cells


def _snap(points: np.ndarray, spec: PointSpec) -> tuple[np.ndarray, np.ndarray]:
    r = spec.lattice
    nx = r * (spec.width - 1) + 1
    idx = np.round(np.asarray(points) * r).astype(np.int64)
    node = idx[:, 1] * nx + idx[:, 0]
    snap = np.linalg.norm(np.asarray(points) - idx / r, axis=1)
    return node, snap


def lattice_distances(spec: PointSpec, masks: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """(M, S, N) lattice distances from source nodes under each cell mask (M, H, W)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    xy, src, dst, w, cells = _lattice(spec)
    n = len(xy)
    node_cell = cell_of(xy, spec)
    out = np.full((len(masks), len(sources), n), np.inf)
    for m, mask in enumerate(np.asarray(masks, dtype=bool).reshape(len(masks), -1)):
        keep = ~mask[cells].any(axis=1) & ~mask[node_cell[src]] & ~mask[node_cell[dst]]
        graph = csr_matrix((w[keep], (src[keep], dst[keep])), shape=(n, n))
        out[m] = dijkstra(graph, directed=True, indices=sources)
    return out


# ---------------------------------------------------------------------------------------
# Verdicts
# ---------------------------------------------------------------------------------------
def _demo_cells(spec: PointSpec, e: np.ndarray) -> np.ndarray:
    return np.unique(np.concatenate([cell_of(e, spec), segment_cells(e[:-1], e[1:], spec).ravel()]))


def required_cells_point(spec: PointSpec, demos: Demos) -> np.ndarray:
    need = np.zeros(spec.cells, dtype=bool)
    for e in demos.episodes:
        need[_demo_cells(spec, e)] = True
    return need.reshape(spec.height, spec.width)


def verify_point(spec: PointSpec, demos: Demos, masks: np.ndarray, tolerance: float):
    from iclr25.core.exicl.verdicts import Verdicts, demo_lengths

    masks = np.asarray(masks, dtype=bool).reshape(-1, spec.height, spec.width)
    lengths = demo_lengths(spec, demos)
    s_node, s_snap = _snap(demos.starts, spec)
    g_node, g_snap = _snap(demos.goals, spec)
    sources, src_of = np.unique(s_node, return_inverse=True)
    dist = lattice_distances(spec, masks, sources)  # (M, S, N)
    lattice = dist[:, src_of, g_node]  # (M, N)
    snap = (s_snap + g_snap)[None]
    upper = lattice + snap  # L* ≤ L_lat + snaps
    lower = np.maximum(lattice / (1.0 + RELATIVE_BOUND) - snap, 1e-12)
    flat = masks.reshape(len(masks), -1)
    violations = np.zeros(len(masks), dtype=np.int64)
    for e in demos.episodes:
        violations += flat[:, _demo_cells(spec, e)].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = (lengths[None] - lattice).max(axis=1)
        rel = (lengths[None] / lattice - 1.0).max(axis=1)
        ok_mid = (lengths[None] <= (1 + tolerance) * lattice + 1e-9).all(axis=1)
        ok_hi = (lengths[None] <= (1 + tolerance) * upper + 1e-9).all(axis=1)
        ok_lo = (lengths[None] <= (1 + tolerance) * lower + 1e-9).all(axis=1)
    clean = violations == 0
    certain = ~clean | (ok_hi == ok_lo)
    return Verdicts(clean & ok_mid, gap, rel, violations, lattice, lengths, certain)


def relevant_region_point(spec: PointSpec, demos: Demos) -> np.ndarray:
    from iclr25.core.exicl.verdicts import demo_lengths

    lengths = demo_lengths(spec, demos)
    s_node, _ = _snap(demos.starts, spec)
    g_node, _ = _snap(demos.goals, spec)
    ends, inv = np.unique(np.concatenate([s_node, g_node]), return_inverse=True)
    dist = lattice_distances(spec, np.zeros((1, spec.height, spec.width), bool), ends)[0]
    xy = _lattice(spec)[0]
    region = np.zeros(spec.cells, dtype=bool)
    n = len(demos)
    for i in range(n):
        on_path = dist[inv[i]] + dist[inv[n + i]] <= lengths[i] + 1e-9
        region[cell_of(xy[on_path], spec)] = True
    return region.reshape(spec.height, spec.width)

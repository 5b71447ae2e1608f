"""Moves on a grid2d spec: the edge list, legality of a move, path lengths.

A move (dx, dy) from cell u to v = u + (dx, dy) is legal when both cells are on the grid
and free, |dx|, |dy| ≤ 1 (|dx| + |dy| ≤ 1 with 4 moves), and, for a diagonal, both
orthogonal neighbours (u.x + dx, u.y) and (u.x, u.y + dy) are free (no corner cutting).
"Free" means neither a known wall nor a blocked cell of the constraint being checked, so a
constraint can forbid a diagonal by blocking one of its corners.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from iclr25.core.exicl.spec import GridSpec

ORTHOGONAL = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAGONAL = ((1, 1), (1, -1), (-1, 1), (-1, -1))


def move_set(moves: int) -> tuple[tuple[int, int], ...]:
    return ORTHOGONAL + (DIAGONAL if moves == 8 else ())


@dataclass(frozen=True)
class Edges:
    """Every directed move of an empty ``width × height`` grid (walls are applied later)."""

    src: np.ndarray  # (E,) cell index y * width + x
    dst: np.ndarray  # (E,)
    weight: np.ndarray  # (E,) step cost
    corner_a: np.ndarray  # (E,) cell that must be free too (src itself for orthogonal moves)
    corner_b: np.ndarray  # (E,)


@functools.lru_cache(maxsize=32)
def _edges(width: int, height: int, moves: int, diagonal_cost: float) -> Edges:
    ys, xs = np.mgrid[0:height, 0:width]
    xs, ys = xs.ravel(), ys.ravel()
    parts = []
    for dx, dy in move_set(moves):
        nx, ny = xs + dx, ys + dy
        ok = (nx >= 0) & (nx < width) & (ny >= 0) & (ny < height)
        u = ys[ok] * width + xs[ok]
        v = ny[ok] * width + nx[ok]
        diagonal = dx != 0 and dy != 0
        ca = ys[ok] * width + nx[ok] if diagonal else u  # (u.x + dx, u.y)
        cb = ny[ok] * width + xs[ok] if diagonal else u  # (u.x, u.y + dy)
        w = np.full(u.shape, diagonal_cost if diagonal else 1.0)
        parts.append((u, v, w, ca, cb))
    cat = [np.concatenate(p) for p in zip(*parts, strict=True)]
    return Edges(*cat)


def edges(spec: GridSpec) -> Edges:
    return _edges(spec.width, spec.height, spec.moves, spec.diagonal_cost)


def open_edges(spec: GridSpec, blocked: np.ndarray) -> np.ndarray:
    """Boolean (E,) mask of legal moves when ``blocked`` (H, W) cells (walls ∪ constraint)
    are closed."""
    flat = blocked.ravel()
    e = edges(spec)
    return ~(flat[e.src] | flat[e.dst] | flat[e.corner_a] | flat[e.corner_b])


def step_length(spec: GridSpec, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    diagonal = (dx != 0) & (dy != 0)
    moved = (dx != 0) | (dy != 0)
    return np.where(diagonal, spec.diagonal_cost, np.where(moved, 1.0, 0.0))


def path_length(spec: GridSpec, states: np.ndarray) -> float:
    """Length of a legal path of cells ``states`` (T, 2) as (x, y); stays cost nothing."""
    d = np.diff(np.asarray(states), axis=0)
    return float(step_length(spec, d[:, 0], d[:, 1]).sum())


def illegal_moves(spec: GridSpec, states: np.ndarray, blocked: np.ndarray) -> np.ndarray:
    """Boolean (T−1,) — which moves of the path (T, 2) are illegal with ``blocked`` closed.

    Staying in place is legal on a free cell. States are assumed on the grid."""
    s = np.asarray(states, dtype=np.int64)
    if len(s) < 2:
        return np.zeros(0, dtype=bool)
    u, v = s[:-1], s[1:]
    d = v - u
    too_far = (np.abs(d) > 1).any(axis=1)
    if spec.moves == 4:
        too_far |= np.abs(d).sum(axis=1) > 1
    closed = blocked[u[:, 1], u[:, 0]] | blocked[v[:, 1], v[:, 0]]
    diagonal = (d[:, 0] != 0) & (d[:, 1] != 0) & ~too_far
    cx = np.clip(u[:, 0] + d[:, 0], 0, spec.width - 1)
    cy = np.clip(u[:, 1] + d[:, 1], 0, spec.height - 1)
    corners = blocked[u[:, 1], cx] | blocked[cy, u[:, 0]]
    return too_far | closed | (diagonal & corners)


def corner_cells(states: np.ndarray) -> np.ndarray:
    """The orthogonal corner cells (x, y) of every diagonal move of a path (T, 2): cells a
    legal diagonal needs free, so a constraint consistent with the path must allow them."""
    s = np.asarray(states, dtype=np.int64)
    if len(s) < 2:
        return np.zeros((0, 2), dtype=np.int64)
    u, v = s[:-1], s[1:]
    d = v - u
    diagonal = (d[:, 0] != 0) & (d[:, 1] != 0)
    a = np.stack([u[:, 0] + d[:, 0], u[:, 1]], axis=1)[diagonal]
    b = np.stack([u[:, 0], u[:, 1] + d[:, 1]], axis=1)[diagonal]
    return np.concatenate([a, b], axis=0)


def cell_index(spec: GridSpec, xy: np.ndarray) -> np.ndarray:
    xy = np.asarray(xy, dtype=np.int64)
    return xy[..., 1] * spec.width + xy[..., 0]


def cell_xy(spec: GridSpec, index: np.ndarray) -> np.ndarray:
    index = np.asarray(index, dtype=np.int64)
    return np.stack([index % spec.width, index // spec.width], axis=-1)


def octile(dx: float, dy: float, diagonal_cost: float = math.sqrt(2.0)) -> float:
    """Shortest 8-connected distance on an open grid (a closed form tests use)."""
    a, b = abs(dx), abs(dy)
    return diagonal_cost * min(a, b) + abs(a - b)

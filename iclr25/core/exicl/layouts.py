"""Built-in layouts with a hidden constraint, drawn fresh per seed, and their experts.

- ``wall``: 16×16 open grid, a hidden wall from the bottom (column 7 or 8, height 9–12);
  16 demonstrations from the left edge (x ≤ 2) to the right edge (x ≥ 13), both ends below
  the wall's top, so every expert detours over it. Many constraints explain them: walls
  anchored at the top of the expert paths that slant or bend below it.
- ``box``: 16×16, a hidden 4×4 block near the centre; 48 demonstrations from all four
  sides, each crossing the block's span from 1–3 cells away and detouring by more than the
  tolerance. The feasible set shrinks towards the block itself: almost identifiable.

Experts are shortest paths avoiding the hidden cells, ties broken at random (seeded).
``regions`` are the start and goal regions of the layout *family* (the same for every
seed), which the nominal data of the bundled priors are drawn from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iclr25.core.exicl import grid
from iclr25.core.exicl.demos import Demos
from iclr25.core.exicl.shortest_paths import distances_cpu
from iclr25.core.exicl.spec import GridSpec, open_grid
from iclr25.errors import UsageError

LAYOUTS = ("wall", "box")
SIZE = 16
BOX_WAYPOINT_MARGIN = 2  # nominal detours stay near the trip (module docstring of .nominal)


@dataclass
class Layout:
    name: str
    spec: GridSpec
    demos: Demos
    hidden: np.ndarray  # (H, W) bool: the true constraint
    regions: tuple[np.ndarray, np.ndarray]  # (H, W) bool start region, goal region (family)
    nominal: dict = field(default_factory=dict)  # options of the family's nominal data


def random_shortest_path(spec: GridSpec, blocked: np.ndarray, start, goal, rng) -> np.ndarray:
    """A shortest path (T, 2) from ``start`` to ``goal`` avoiding ``blocked`` (H, W); at
    each step a uniformly random next cell among those on some shortest path."""
    s, g = int(grid.cell_index(spec, start)), int(grid.cell_index(spec, goal))
    d = distances_cpu(spec, blocked[None], np.array([s, g]))[0]  # (2, N)
    total = d[0, g]
    if not np.isfinite(total):
        raise ValueError(f"{start} cannot reach {goal}")
    e = grid.edges(spec)
    keep = grid.open_edges(spec, spec.walls | blocked)
    src, dst, w = e.src[keep], e.dst[keep], e.weight[keep]
    path, u = [s], s
    while u != g:
        out = src == u
        on = np.abs(d[0, u] + w[out] + d[1, dst[out]] - total) < 1e-9
        choices = dst[out][on]
        u = int(choices[rng.integers(len(choices))])
        path.append(u)
    return grid.cell_xy(spec, np.array(path))


def _wall(rng: np.random.Generator) -> Layout:
    spec = open_grid(SIZE, SIZE)
    column, height = int(rng.integers(7, 9)), int(rng.integers(9, 13))
    hidden = np.zeros((SIZE, SIZE), dtype=bool)
    hidden[:height, column] = True
    pairs: set = set()
    while len(pairs) < 16:
        start = (int(rng.integers(0, 3)), int(rng.integers(0, height - 1)))
        goal = (int(rng.integers(SIZE - 3, SIZE)), int(rng.integers(0, height - 1)))
        pairs.add((start, goal))
    eps = [random_shortest_path(spec, hidden, s, g, rng) for s, g in sorted(pairs)]
    starts = np.zeros((SIZE, SIZE), dtype=bool)
    starts[:12, :3] = True
    goals = np.zeros((SIZE, SIZE), dtype=bool)
    goals[:12, SIZE - 3 :] = True
    return Layout("wall", spec, Demos(eps, "built-in: wall"), hidden, (starts, goals))


def _box_pair(rng, x0: int, y0: int, side: int):
    """Start and goal on opposite sides of the block [x0, x0+3] × [y0, y0+3]."""
    across = int(rng.integers(0, 4))  # which row / column of the block the line crosses
    near, far = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if side == 0:  # left to right
        return (x0 - near, y0 + across), (x0 + 3 + far, y0 + across)
    if side == 1:  # right to left
        return (x0 + 3 + near, y0 + across), (x0 - far, y0 + across)
    if side == 2:  # bottom to top
        return (x0 + across, y0 - near), (x0 + across, y0 + 3 + far)
    return (x0 + across, y0 + 3 + near), (x0 + across, y0 - far)


def _box(rng: np.random.Generator, tolerance: float = 0.10) -> Layout:
    spec = open_grid(SIZE, SIZE)
    x0, y0 = int(rng.integers(5, 8)), int(rng.integers(5, 8))
    hidden = np.zeros((SIZE, SIZE), dtype=bool)
    hidden[y0 : y0 + 4, x0 : x0 + 4] = True
    eps: list[np.ndarray] = []
    side = 0
    for _ in range(10_000):
        if len(eps) == 48:
            break
        start, goal = _box_pair(rng, x0, y0, side % 4)
        path = random_shortest_path(spec, hidden, start, goal, rng)
        straight = grid.octile(goal[0] - start[0], goal[1] - start[1])
        if grid.path_length(spec, path) > (1 + tolerance) * straight + 0.05:
            eps.append(path)
            side += 1
    region = np.zeros((SIZE, SIZE), dtype=bool)
    region[1 : SIZE - 1, 1 : SIZE - 1] = True  # ends lie 1–3 cells around a central block
    return Layout("box", spec, Demos(eps, "built-in: box"), hidden, (region, region),
                  {"waypoint_margin": BOX_WAYPOINT_MARGIN})  # fmt: skip


def make_layout(name: str, seed: int) -> Layout:
    """The layout ``name`` drawn with ``seed`` (a fresh hidden constraint and expert)."""
    rng = np.random.default_rng(seed)
    if name == "wall":
        return _wall(rng)
    if name == "box":
        return _box(rng)
    raise UsageError(f"unknown layout {name!r}", f"use one of: {', '.join(LAYOUTS)}")

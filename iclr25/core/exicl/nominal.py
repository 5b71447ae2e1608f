"""Non-expert (nominal) data for the prior: noisy shortest paths, constraints ignored.

Without ``--nominal FILE``, N trajectories are generated from the spec: a start drawn from
the start region, a goal from the goal region (by default the demonstrations' start and
goal cells, each grown by one cell), and a shortest path between them under noisy step
costs (each move's cost × U(1, 1.3)), which spreads the paths over the near-optimal ones.
With probability ``detour_share`` the path goes through a uniformly drawn waypoint, so the
prior also covers the long detours an expert makes around a constraint it does not know
(our choice: the issue says "noisy shortest paths"; without detours the guided sampler
has no support for the expert's behaviour). ``waypoint_margin`` keeps the waypoint within
the start–goal bounding box grown by that many cells: the ``box`` family uses 2, because
with waypoints anywhere its short trips (6–10 cells) got detours of 2–3× their length and
the prior's reward-guided paths stayed ~2× the shortest path (the ``wall`` family keeps
waypoints anywhere). Paths longer than the horizon are redrawn.
The known walls are respected; the hidden constraint is never used.

point2d: the same on the lattice of the spec, then thinned to steps ≤ ``max_step``.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.exicl import grid
from iclr25.core.exicl.spec import GridSpec, PointSpec, Spec
from iclr25.errors import InputError

DETOUR_SHARE = 0.5
COST_NOISE = 0.3


def regions_from_demos(spec: Spec, demos) -> tuple[np.ndarray, np.ndarray]:
    """(start region, goal region), (H, W) bool: demo ends grown by one cell, free only."""
    out = []
    for ends in (demos.starts, demos.goals):
        r = np.zeros((spec.height, spec.width), dtype=bool)
        c = np.floor(np.asarray(ends) + 0.5).astype(np.int64)
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                x = np.clip(c[:, 0] + dx, 0, spec.width - 1)
                y = np.clip(c[:, 1] + dy, 0, spec.height - 1)
                r[y, x] = True
        out.append(r & ~spec.walls)
    return out[0], out[1]


def _noisy_path(spec: GridSpec, a: int, b: int, rng) -> list[int] | None:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    e = grid.edges(spec)
    keep = grid.open_edges(spec, spec.walls)
    w = e.weight[keep] * rng.uniform(1.0, 1.0 + COST_NOISE, keep.sum())
    graph = csr_matrix((w, (e.src[keep], e.dst[keep])), shape=(spec.cells, spec.cells))
    _, pred = dijkstra(graph, directed=True, indices=a, return_predecessors=True)
    if b != a and pred[b] < 0:
        return None
    path = [b]
    while path[-1] != a:
        path.append(int(pred[path[-1]]))
    return path[::-1]


def near_waypoints(spec: GridSpec, a: int, b: int, margin: int) -> np.ndarray:
    """Free cells (flat indices) of the bounding box of cells ``a`` and ``b`` grown by
    ``margin`` cells on every side."""
    (ax, ay), (bx, by) = grid.cell_xy(spec, np.array([a, b]))
    ys, xs = np.mgrid[0 : spec.height, 0 : spec.width]
    box = ((xs >= min(ax, bx) - margin) & (xs <= max(ax, bx) + margin)
           & (ys >= min(ay, by) - margin) & (ys <= max(ay, by) + margin))  # fmt: skip
    return np.flatnonzero((box & ~spec.walls).ravel())


def nominal_grid(spec: GridSpec, regions, n: int, horizon: int, seed: int,
                 on_progress=None, detour_share: float = DETOUR_SHARE,
                 waypoint_margin: int | None = None) -> np.ndarray:  # fmt: skip
    """(n, horizon, 2) padded grid paths in cell coordinates. ``waypoint_margin``: detour
    waypoints only within the start–goal bounding box grown by that many cells (None: any
    free cell)."""
    rng = np.random.default_rng(seed)
    starts = np.flatnonzero(regions[0].ravel())
    goals = np.flatnonzero(regions[1].ravel())
    free = np.flatnonzero(~spec.walls.ravel())
    if len(starts) == 0 or len(goals) == 0:
        raise InputError("the start or goal region has no free cell", "check the demos")
    out = np.empty((n, horizon, 2))
    made, tries = 0, 0
    while made < n:
        tries += 1
        if tries > 50 * n:
            raise InputError(
                f"could not draw {n} nominal paths of ≤ {horizon} states",
                "raise --horizon or give --nominal",
            )
        a, b = int(rng.choice(starts)), int(rng.choice(goals))
        if rng.random() < detour_share:
            near = free if waypoint_margin is None else near_waypoints(spec, a, b, waypoint_margin)
            w = int(rng.choice(near))
            first, second = _noisy_path(spec, a, w, rng), _noisy_path(spec, w, b, rng)
            path = None if first is None or second is None else first + second[1:]
        else:
            path = _noisy_path(spec, a, b, rng)
        if path is None or len(path) > horizon or len(path) < 2:
            continue
        xy = grid.cell_xy(spec, np.array(path))
        out[made, : len(xy)] = xy
        out[made, len(xy) :] = xy[-1]
        made += 1
        if on_progress is not None:
            on_progress(1)
    return out


def nominal_point(spec: PointSpec, regions, n: int, horizon: int, seed: int,
                  on_progress=None) -> np.ndarray:  # fmt: skip
    """point2d: noisy lattice paths (lattice of spacing 1), thinned to ≤ max_step moves."""
    from iclr25.core.exicl.geometry import illegal_segments

    walls = spec.walls
    coarse = GridSpec(spec.width, spec.height, walls, 8)
    paths = nominal_grid(coarse, (regions[0] & ~walls, regions[1] & ~walls), n, horizon, seed)
    rng = np.random.default_rng(seed + 1)
    jitter = rng.uniform(-0.2, 0.2, paths.shape)
    jitter[:, 0] = jitter[:, -1] = 0.0
    moved = np.clip(paths + jitter, 0, [spec.width - 1, spec.height - 1])
    for k in range(n):  # keep jitter only where it stays legal
        bad = illegal_segments(moved[k, :-1], moved[k, 1:], spec.polygons)
        if bad.any() or (np.linalg.norm(np.diff(moved[k], axis=0), axis=1) > spec.max_step).any():
            moved[k] = paths[k]
    return moved


def nominal_trajectories(spec: Spec, regions, n: int, horizon: int, seed: int,
                         on_progress=None, **options) -> np.ndarray:  # fmt: skip
    """``options``: ``detour_share``, ``waypoint_margin`` of :func:`nominal_grid` (grid2d)."""
    if isinstance(spec, GridSpec):
        return nominal_grid(spec, regions, n, horizon, seed, on_progress, **options)
    return nominal_point(spec, regions, n, horizon, seed, on_progress)

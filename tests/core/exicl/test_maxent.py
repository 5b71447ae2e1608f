"""The max-entropy ICL baseline: exact visitation and likelihood fitting."""

from __future__ import annotations

import numpy as np

from iclr25.core.exicl import grid
from iclr25.core.exicl.maxent import MaxEntConfig, fit_maxent, visitation
from iclr25.core.exicl.spec import open_grid


def brute_force_visitation(spec, zeta, start, goal, horizon, beta):
    """Enumerate every path of ``horizon`` states (legal moves; stays only at the goal,
    which is absorbing) from start to goal; weight exp(−β·length)·Π_t ζ(s_t)."""
    moves = grid.move_set(spec.moves)
    blocked = spec.walls
    visits = np.zeros((spec.height, spec.width))
    total = 0.0

    def legal(u, d):
        v = (u[0] + d[0], u[1] + d[1])
        if not (0 <= v[0] < spec.width and 0 <= v[1] < spec.height) or blocked[v[1], v[0]]:
            return None
        if d[0] and d[1] and (blocked[u[1], u[0] + d[0]] or blocked[u[1] + d[1], u[0]]):
            return None
        return v

    def walk(path):
        nonlocal total
        if len(path) == horizon:
            if path[-1] != goal:
                return
            cells = np.array(path)
            w = np.exp(-beta * grid.path_length(spec, cells)) * np.prod(
                [zeta[y, x] for x, y in path]
            )
            total += w
            for x, y in path:
                visits[y, x] += w
            return
        u = path[-1]
        if u == goal:
            walk(path + [u])
            return
        for d in moves:
            v = legal(u, d)
            if v is not None:
                walk(path + [v])

    walk([start])
    return visits / total


def test_visitation_equals_brute_force_path_enumeration_4x4_h6():
    spec = open_grid(4, 4)
    spec.walls[1, 2] = True  # one wall cell, so corner cutting matters
    rng = np.random.default_rng(0)
    zeta = rng.uniform(0.2, 1.0, (4, 4))
    for start, goal in (((0, 0), (3, 3)), ((0, 3), (3, 0)), ((1, 0), (2, 2))):
        ours = visitation(spec, zeta, start, goal, horizon=6, beta=0.7)
        ref = brute_force_visitation(spec, zeta, start, goal, 6, 0.7)
        np.testing.assert_allclose(ours, ref, atol=1e-10)
        assert abs(ours.sum() - 6.0) < 1e-9  # six states per path


def test_fit_lowers_zeta_on_the_shortcut_the_expert_avoids():
    """5×5, expert from (0, 2) to (4, 2) detouring over row 4: the straight row-2 cells the
    expert never takes lose feasibility; the expert's cells keep it."""
    spec = open_grid(5, 5)
    path = np.array([(0, 2), (1, 3), (2, 4), (3, 3), (4, 2)])
    zeta = fit_maxent(spec, [path], MaxEntConfig(steps=60, horizon=6, beta=2.0), seed=0)
    assert zeta[2, 2] < 0.5  # the shortcut's middle
    assert (zeta[path[:, 1], path[:, 0]] > 0.5).all()
    assert zeta[2, 1] < zeta[4, 2]  # off the expert, below it: the shortcut side

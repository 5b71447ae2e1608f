"""The exact feasibility verdict of a constraint mask (where the environment allows it).

On a deterministic grid with reward −(path length) and a hard state constraint (ε = 0),
"the expert is optimal under c" is decidable (the paper note's section "Checking
feasibility exactly"). A mask (H, W) — True = infeasible cell — is **feasible** iff

1. no demonstration visits an infeasible cell or makes a move the mask forbids (a diagonal
   whose corner cell is infeasible: the no-corner-cutting rule applies to constraint cells
   as to walls), and
2. every demonstration i is no longer than (1 + tolerance) × L*_c(s_i, g_i), the shortest
   path from its start to its goal avoiding walls and the mask.

``return_gap`` = max_i (L_i − L*_c,i): how much return an optimal agent under the mask
gains over the worst demonstration (0 when each demonstration is optimal). Facts used for
the input checks: blocking only removes paths, so the most restrictive mask keeping the
experts legal is "every cell no demonstration needs"; if a demonstration is too long even
then, no state constraint explains it. If the empty mask is feasible the demonstrations
are optimal unconstrained and diversity is meaningless (``trivial``).

The **relevant region** is where a mask can change a verdict: cells on some path no longer
than a demonstration (walls kept, constraint ignored) — d(s_i, c) + d(c, g_i) ≤ L_i —
plus their orthogonal neighbours (a corner cell can forbid a diagonal on such a path).
Constraints are compared (IoU) only there.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.exicl import grid
from iclr25.core.exicl.demos import Demos
from iclr25.core.exicl.shortest_paths import distances
from iclr25.core.exicl.spec import GridSpec, PointSpec, Spec
from iclr25.core.exicl.verdicts import Verdicts, demo_lengths
from iclr25.errors import InputError

DEFAULT_TOLERANCE = 0.10  # forgives a one-cell error at the pinch point, nothing larger


def required_cells(spec: GridSpec, demos: Demos) -> np.ndarray:
    """(H, W) bool: cells a consistent mask must leave open (visited cells and the corner
    cells of the demonstrations' diagonal moves)."""
    need = np.zeros((spec.height, spec.width), dtype=bool)
    for e in demos.episodes:
        need[e[:, 1], e[:, 0]] = True
        c = grid.corner_cells(e)
        need[c[:, 1], c[:, 0]] = True
    return need


def _violations(spec: GridSpec, demos: Demos, masks: np.ndarray) -> np.ndarray:
    """(M,) number of demonstration states plus moves each mask forbids."""
    counts = np.zeros(len(masks), dtype=np.int64)
    for e in demos.episodes:
        on = masks[:, e[:, 1], e[:, 0]]  # (M, T)
        counts += on.sum(axis=1)
        u, v = e[:-1], e[1:]
        d = v - u
        diag = (d[:, 0] != 0) & (d[:, 1] != 0)
        if diag.any():
            u, d = u[diag], d[diag]
            corners = masks[:, u[:, 1], u[:, 0] + d[:, 0]] | masks[:, u[:, 1] + d[:, 1], u[:, 0]]
            counts += corners.sum(axis=1)
    return counts


def verify_grid(spec: GridSpec, demos: Demos, masks: np.ndarray, tolerance: float,
                device: str = "cpu") -> Verdicts:  # fmt: skip
    masks = np.asarray(masks, dtype=bool).reshape(-1, spec.height, spec.width)
    lengths = demo_lengths(spec, demos)
    starts = grid.cell_index(spec, demos.starts)
    goals = grid.cell_index(spec, demos.goals)
    sources, src_of = np.unique(starts, return_inverse=True)
    targets, tgt_of = np.unique(goals, return_inverse=True)
    dist = distances(spec, masks, sources, targets, device=device)  # (M, S, T)
    shortest = dist[:, src_of, tgt_of]  # (M, N)
    violations = _violations(spec, demos, masks)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = (lengths[None] - shortest).max(axis=1)
        rel = (lengths[None] / shortest - 1.0).max(axis=1)
        optimal = (lengths[None] <= (1.0 + tolerance) * shortest + 1e-9).all(axis=1)
    feasible = (violations == 0) & optimal
    return Verdicts(feasible, gap, rel, violations, shortest, lengths)


def verify(spec: Spec, demos: Demos, masks: np.ndarray, tolerance: float = DEFAULT_TOLERANCE,
           device: str = "cpu") -> Verdicts:  # fmt: skip
    """Exact verdicts of ``masks`` (M, H, W) — see the module docstring."""
    if isinstance(spec, PointSpec):
        from iclr25.core.exicl.point2d import verify_point

        return verify_point(spec, demos, masks, tolerance)
    return verify_grid(spec, demos, masks, tolerance, device)


def relevant_region(spec: Spec, demos: Demos) -> np.ndarray:
    """(H, W) bool — see the module docstring."""
    if isinstance(spec, PointSpec):
        from iclr25.core.exicl.point2d import relevant_region_point

        return relevant_region_point(spec, demos)
    lengths = demo_lengths(spec, demos)
    ends = np.unique(np.concatenate([grid.cell_index(spec, demos.starts),
                                     grid.cell_index(spec, demos.goals)]))  # fmt: skip
    dist = distances(spec, np.zeros((1, spec.height, spec.width), bool), ends)[0]  # (S, N)
    row = {int(c): k for k, c in enumerate(ends)}
    region = np.zeros(spec.cells, dtype=bool)
    for s, g, length in zip(grid.cell_index(spec, demos.starts),
                            grid.cell_index(spec, demos.goals), lengths, strict=True):  # fmt: skip
        region |= dist[row[int(s)]] + dist[row[int(g)]] <= length + 1e-9
    region = region.reshape(spec.height, spec.width)
    grown = region.copy()
    grown[1:] |= region[:-1]
    grown[:-1] |= region[1:]
    grown[:, 1:] |= region[:, :-1]
    grown[:, :-1] |= region[:, 1:]
    return grown & ~spec.walls


def most_restrictive_mask(spec: Spec, demos: Demos) -> np.ndarray:
    """Every free cell the demonstrations do not need (the tightest consistent mask)."""
    if isinstance(spec, PointSpec):
        from iclr25.core.exicl.point2d import required_cells_point

        return ~required_cells_point(spec, demos) & ~spec.walls
    return ~required_cells(spec, demos) & ~spec.walls


def check_explainable(spec: Spec, demos: Demos, tolerance: float, flag: str = "--demos") -> bool:
    """Raise InputError if no state constraint can explain the demonstrations; return
    ``trivial`` (True when they are already optimal without any constraint)."""
    tight = most_restrictive_mask(spec, demos)
    empty = np.zeros_like(tight)
    v = verify(spec, demos, np.stack([tight, empty]), tolerance)
    if not v.feasible[0]:
        ratio = v.lengths / v.shortest[0]
        i = int(np.argmax(ratio))
        raise InputError(
            f"{flag}: no state constraint explains episode {i}: it is {v.lengths[i]:.3f} long, "
            f"but {v.shortest[0, i]:.3f} even with every cell no demonstration visits blocked "
            f"(gap {v.lengths[i] - v.shortest[0, i]:.3f}, {ratio[i] - 1:.1%} over the "
            f"{tolerance:.0%} tolerance)",
            "check that the episode is optimal under some constraint, or raise --tolerance",
        )
    return bool(v.feasible[1])

"""The generative diffusion verifier's verdict (the paper's verification, our acceptance rule).

The paper verifies a candidate constraint "by comparing the decisions of the guided
sampler with those made by expert agents", with no forward RL. Our rule (the paper gives
none): sample ``samples_per_demo`` guided trajectories from p̃ under the candidate (its
φ and λ) for every demonstration's start and goal; a sample is a **witness** against the
candidate when the shortest legal path inside its tube (grid2d: the cells its states and
move midpoints round to up to its first visit of the goal,
:func:`~iclr25.core.exicl.sampler.tube_path`; known walls and the candidate's mask
blocked, no corner cutting) exists and is shorter than the demonstration by more than the
tolerance (length < L_i / (1 + tol)). The tube replaced plain rounding (jumps filled), whose
zig-zag between two cell rows added length the continuous sample does not have.
The candidate is GDV-feasible iff φ allows every demonstration state and no witness is
found. The GDV can only find the shortcuts its sampler proposes: its precision and recall
against the exact verdict are what ``exicl calibrate`` measures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.exicl import grid
from iclr25.core.exicl.sampler import to_cells, tube_path
from iclr25.core.exicl.spec import GridSpec, PointSpec


@dataclass
class GDVVerdict:
    feasible: np.ndarray  # (K,) bool
    witnesses: np.ndarray  # (K,) number of witness samples
    expert_blocked: np.ndarray  # (K,) demonstration states φ forbids


def _grid_witness(spec: GridSpec, traj: np.ndarray, blocked: np.ndarray, bound: float) -> bool:
    path = tube_path(spec, traj, blocked)
    return path is not None and grid.path_length(spec, path) < bound - 1e-9


def _point_witness(spec: PointSpec, traj: np.ndarray, mask: np.ndarray, bound: float) -> bool:
    from iclr25.core.exicl.geometry import illegal_segments
    from iclr25.core.exicl.point2d import segment_cells

    if illegal_segments(traj[:-1], traj[1:], spec.polygons).any():
        return False
    if mask.ravel()[segment_cells(traj[:-1], traj[1:], spec)].any():
        return False
    return float(np.linalg.norm(np.diff(traj, axis=0), axis=1).sum()) < bound - 1e-9


def expert_blocked(spec, demos, masks: np.ndarray) -> np.ndarray:
    counts = np.zeros(len(masks), dtype=np.int64)
    for e in demos.episodes:
        c = to_cells(e, spec.width, spec.height)
        counts += masks[:, c[:, 1], c[:, 0]].sum(axis=1)
    return counts


def gdv_verdicts(spec, demos, samples: np.ndarray, masks: np.ndarray, lengths: np.ndarray,
                 tolerance: float) -> GDVVerdict:  # fmt: skip
    """``samples`` (K, N, S, H, 2): S guided samples per demonstration i under constraint
    k (grid coordinates); ``masks`` (K, H, W) the candidates' φ < 0.5 cells."""
    k_n = len(masks)
    witnesses = np.zeros(k_n, dtype=np.int64)
    bounds = lengths / (1.0 + tolerance)
    for k in range(k_n):
        blocked = spec.walls | masks[k]
        for i, per_demo in enumerate(samples[k]):
            for traj in per_demo:
                if isinstance(spec, GridSpec):
                    witnesses[k] += _grid_witness(spec, traj, blocked, bounds[i])
                else:
                    witnesses[k] += _point_witness(spec, traj, masks[k], bounds[i])
    blocked_e = expert_blocked(spec, demos, masks)
    return GDVVerdict((witnesses == 0) & (blocked_e == 0), witnesses, blocked_e)

"""The exact verdicts of masks (:class:`Verdicts`) and demonstration lengths, shared by the
grid verifier (:mod:`.verifier`) and the point2d one (:mod:`.point2d`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.exicl import grid
from iclr25.core.exicl.demos import Demos
from iclr25.core.exicl.spec import GridSpec, Spec


@dataclass
class Verdicts:
    """Exact verdicts of M masks against N demonstrations."""

    feasible: np.ndarray  # (M,) bool
    return_gap: np.ndarray  # (M,) max_i (L_i − L*_i); −inf when a demo is cut off
    relative_gap: np.ndarray  # (M,) max_i (L_i / L*_i − 1)
    expert_violations: np.ndarray  # (M,) int: demo states / moves the mask forbids
    shortest: np.ndarray  # (M, N) L*_c,i
    lengths: np.ndarray  # (N,) L_i
    certain: np.ndarray | None = None  # (M,) point2d: the verdict holds within the lattice bound

    def row(self, m: int) -> dict:
        gap = float(self.return_gap[m])
        return {
            "exact_feasible": bool(self.feasible[m]),
            "return_gap": gap if np.isfinite(gap) else None,
            "relative_gap": float(self.relative_gap[m]) if np.isfinite(gap) else None,
            "expert_violations": int(self.expert_violations[m]),
            # point2d: whether the verdict is the same at both ends of the lattice's error
            # bound (:mod:`.point2d`); None on grid2d, where the check is exact
            "verdict_certain": None if self.certain is None else bool(self.certain[m]),
        }


def demo_lengths(spec: Spec, demos: Demos) -> np.ndarray:
    if isinstance(spec, GridSpec):
        return np.array([grid.path_length(spec, e) for e in demos.episodes])
    return np.array(
        [float(np.linalg.norm(np.diff(e, axis=0), axis=1).sum()) for e in demos.episodes]
    )

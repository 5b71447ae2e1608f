"""The grid_sssp kernel (exicl's exact verifier on CUDA) against the CPU path and references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr25.gpu.kernels.grid_sssp import MAX_CELLS, SPEC
from iclr25.gpu.kernels.grid_sssp.reference import grid_sssp_reference, grid_sssp_sweeps

CASES = [  # (masks, height, width, sources, moves, density)
    (1, 1, 2, 1, 8, 0.0),
    (3, 5, 7, 4, 8, 0.3),
    (17, 16, 16, 9, 8, 0.2),
    (5, 13, 31, 6, 4, 0.25),
    (40, 32, 32, 64, 8, 0.2),
]


def _case(m, h, w, s, density, seed=0):
    rng = np.random.default_rng(seed)
    blocked = rng.random((m, h, w)) < density
    sources = rng.choice(h * w, size=min(s, h * w), replace=False)
    return blocked, sources


def test_spec_and_limits():
    assert SPEC.name == "grid_sssp" and MAX_CELLS >= 90 * 90


@pytest.mark.parametrize("moves", [4, 8])
def test_references_agree_on_cpu(moves):
    blocked, sources = _case(4, 6, 9, 5, 0.3, seed=moves)
    heap = grid_sssp_reference(blocked, sources, moves, math.sqrt(2.0))
    sweeps = grid_sssp_sweeps(blocked, sources, moves, math.sqrt(2.0))
    np.testing.assert_allclose(heap, sweeps, rtol=1e-12)
    targets = np.array([0, 13, 53])
    some = grid_sssp_sweeps(blocked, sources, moves, math.sqrt(2.0), targets)
    np.testing.assert_array_equal(some, sweeps[:, :, targets])


@pytest.mark.gpu
@pytest.mark.parametrize("m,h,w,s,moves,density", CASES)
def test_kernel_matches_cpu_path(m, h, w, s, moves, density):
    from iclr25.core.exicl.shortest_paths import distances, distances_cpu
    from iclr25.core.exicl.spec import GridSpec

    blocked, sources = _case(m, h, w, s, density)
    spec = GridSpec(w, h, np.zeros((h, w), bool), moves)
    gpu = distances(spec, blocked, sources, device="cuda")
    cpu = distances_cpu(spec, blocked, sources)
    assert gpu.shape == cpu.shape
    np.testing.assert_array_equal(np.isinf(gpu), np.isinf(cpu))
    finite = np.isfinite(cpu)
    np.testing.assert_allclose(gpu[finite], cpu[finite], rtol=1e-5, atol=1e-4)
    targets = sources[:2]
    some = distances(spec, blocked, sources, targets, device="cuda")
    np.testing.assert_allclose(np.nan_to_num(some, posinf=-1),
                               np.nan_to_num(gpu[:, :, targets], posinf=-1))  # fmt: skip

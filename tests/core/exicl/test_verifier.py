"""The exact verdict: hand-computed 5×5 answers, and Dijkstra against two independent ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.core.exicl.demos import Demos
from iclr25.core.exicl.shortest_paths import distances_cpu
from iclr25.core.exicl.spec import GridSpec, open_grid
from iclr25.core.exicl.verifier import check_explainable, relevant_region, verify
from iclr25.errors import InputError
from iclr25.gpu.kernels.grid_sssp.reference import grid_sssp_reference, grid_sssp_sweeps

from .conftest import EXPERT_LENGTH, SQRT2, mask_of


def test_hidden_wall_is_feasible_with_zero_gap(small):
    spec, demos, hidden = small
    v = verify(spec, demos, hidden[None])
    assert v.feasible[0]
    assert v.lengths[0] == pytest.approx(EXPERT_LENGTH)
    assert v.return_gap[0] == pytest.approx(0.0, abs=1e-12)


def test_empty_mask_gap_is_two_plus_two_root_two(small):
    spec, demos, _ = small
    v = verify(spec, demos, np.zeros((1, 5, 5), bool))
    # unconstrained shortest (0,0)→(4,0) = 4; the expert is 6 + 2√2 long
    assert not v.feasible[0]
    assert v.shortest[0, 0] == pytest.approx(4.0)
    assert v.return_gap[0] == pytest.approx(2 + 2 * SQRT2)


def test_one_cell_lower_wall_leaves_a_shortcut_of_two(small):
    spec, demos, _ = small
    # wall at x = 2, y = 0…1: cross at y = 2: √2 + 1 + 1 + 1 + 1 + √2 = 4 + 2√2
    v = verify(spec, demos, mask_of([(2, 0), (2, 1)])[None])
    assert v.shortest[0, 0] == pytest.approx(4 + 2 * SQRT2)
    assert v.return_gap[0] == pytest.approx(2.0)
    assert not v.feasible[0]
    # 8.83 / 6.83 − 1 = 29 % — forgiven only by a tolerance above it
    assert verify(spec, demos, mask_of([(2, 0), (2, 1)])[None], tolerance=0.3).feasible[0]


def test_blocking_an_expert_state_or_corner_is_a_violation(small):
    spec, demos, hidden = small
    on_path = hidden | mask_of([(1, 3)])
    corner = hidden | mask_of([(1, 0)])  # the corner of the expert's first diagonal
    v = verify(spec, demos, np.stack([on_path, corner]))
    assert list(v.expert_violations) == [1, 1]
    assert not v.feasible.any()


def test_unexplainable_demo_is_named_with_its_gap():
    spec = open_grid(5, 5)
    loop = Demos([np.array([(0, 0), (1, 0), (1, 1), (0, 1), (0, 2)])])  # 4 long, 2 needed
    with pytest.raises(InputError, match=r"episode 0: it is 4\.000 long, but 2\.000.*gap 2\.000"):
        check_explainable(spec, loop, 0.1)


def test_straight_demo_is_trivial():
    spec = open_grid(5, 5)
    straight = Demos([np.array([(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)])])
    assert check_explainable(spec, straight, 0.1) is True


def test_relevant_region_holds_the_expert_and_excludes_far_cells(small):
    spec, demos, _ = small
    region = relevant_region(spec, demos)
    for x, y in demos.episodes[0]:
        assert region[y, x]
    big = open_grid(12, 12)
    far = relevant_region(big, Demos([np.array([(0, 0), (1, 0), (2, 0)])]))
    assert not far[11, 11] and far[0, 1]


def _networkx(spec: GridSpec, mask: np.ndarray, source: int) -> np.ndarray:
    import networkx as nx

    closed = spec.walls | mask
    g = nx.DiGraph()
    g.add_nodes_from(range(spec.cells))
    moves = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
    for y in range(spec.height):
        for x in range(spec.width):
            for dx, dy in moves[: spec.moves]:
                nx_, ny_ = x + dx, y + dy
                if not (0 <= nx_ < spec.width and 0 <= ny_ < spec.height):
                    continue
                if closed[y, x] or closed[ny_, nx_]:
                    continue
                if dx and dy and (closed[y, nx_] or closed[ny_, x]):
                    continue
                w = spec.diagonal_cost if dx and dy else 1.0
                g.add_edge(y * spec.width + x, ny_ * spec.width + nx_, weight=w)
    lengths = nx.single_source_dijkstra_path_length(g, source)
    out = np.full(spec.cells, math.inf)
    for node, d in lengths.items():
        out[node] = d
    return out


@settings(max_examples=25, deadline=None)
@given(
    width=st.integers(2, 7),
    height=st.integers(2, 7),
    moves=st.sampled_from([4, 8]),
    unit=st.booleans(),
    density=st.floats(0.0, 0.5),
    seed=st.integers(0, 2**31),
)
def test_scipy_equals_networkx_and_references(width, height, moves, unit, density, seed):
    rng = np.random.default_rng(seed)
    walls = rng.random((height, width)) < density / 2
    spec = GridSpec(width, height, walls, moves, "unit" if unit else "euclidean")
    masks = rng.random((3, height, width)) < density
    sources = rng.choice(width * height, size=min(3, width * height), replace=False)
    ours = distances_cpu(spec, masks, sources)  # (M, S, N)
    closed = masks | walls[None]
    heap = grid_sssp_reference(closed, sources, moves, spec.diagonal_cost)
    sweeps = grid_sssp_sweeps(closed, sources, moves, spec.diagonal_cost)
    for m in range(len(masks)):
        for j, s in enumerate(sources):
            nx_dist = _networkx(spec, masks[m], int(s))
            if closed[m].flat[s]:  # a blocked source: 0 to itself, nothing else
                nx_dist = np.full(spec.cells, math.inf)
                nx_dist[s] = 0.0
            np.testing.assert_allclose(ours[m, j], nx_dist, rtol=1e-12)
    np.testing.assert_allclose(heap, ours, rtol=1e-12)
    np.testing.assert_allclose(sweeps, ours, rtol=1e-12)


def test_targets_select_columns():
    spec = open_grid(6, 5)
    masks = np.zeros((2, 5, 6), bool)
    masks[1, :4, 3] = True
    full = distances_cpu(spec, masks, np.array([0, 7]))
    some = distances_cpu(spec, masks, np.array([0, 7]), np.array([5, 29]))
    np.testing.assert_array_equal(some, full[:, :, [5, 29]])

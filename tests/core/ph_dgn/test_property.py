"""The PNA graph-property generator and its labels, checked against networkx."""

from __future__ import annotations

import random
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from iclr25.core.ph_dgn import property_data as P


def nx_labels(adj: np.ndarray, source: int) -> dict:
    """SSSP (unreachable → 0), eccentricity within the component, diameter over reachable
    pairs: what the official all-pairs shortest paths give, via networkx."""
    g = nx.from_numpy_array(adj)
    sssp = np.zeros(len(adj))
    for v, d in nx.single_source_shortest_path_length(g, source).items():
        sssp[v] = d
    ecc = np.zeros(len(adj))
    for comp in nx.connected_components(g):
        for v, e in nx.eccentricity(g.subgraph(comp)).items():
            ecc[v] = e
    return {"sssp": sssp, "eccentricity": ecc, "diameter": np.array([ecc.max()])}


@pytest.mark.parametrize("seed", range(12))
def test_labels_equal_networkx_on_drawn_graphs(seed):
    adj, _ = P.draw_graph(seed)
    source = seed % len(adj)
    expected = nx_labels(adj, source)
    for task in P.TASKS:
        np.testing.assert_array_equal(P.labels(adj, task, source), expected[task])


def test_drawn_graphs_are_simple_symmetric_without_singletons_and_in_size_range():
    families = Counter()
    for seed in range(150):
        adj, family = P.draw_graph(seed)
        families[family] += 1
        assert P.SIZES[0] <= len(adj) <= P.SIZES[1]
        assert np.array_equal(adj, adj.T) and not adj.diagonal().any()
        assert adj.max(0).min() == 1  # no singleton (the official rejection)
    for family, p in P.MIXTURE:  # 150 draws: within ±0.1 (3 sd at p = 0.2)
        assert abs(families[family] / 150 - p) < 0.1, (family, families)


def test_family_constructions_match_the_official_shapes():
    py = random.Random(0)
    grid = P.family_graph("grid", 30, 0, py)
    assert nx.is_isomorphic(grid, nx.grid_2d_graph(5, 6))  # m × n/m, m ≤ √n largest divisor
    assert nx.is_isomorphic(P.family_graph("caveman", 30, 0, py), nx.caveman_graph(5, 6))
    ladder = P.family_graph("ladder", 27, 0, py)  # odd n: one extra node on node 0
    assert ladder.number_of_nodes() == 27 and ladder.degree(26) == 1
    assert P.family_graph("star", 25, 0, py).degree(0) == 24
    for family in ("caterpillar", "lobster", "tree"):
        g = P.family_graph(family, 30, 3, py)
        assert g.number_of_nodes() == 30 and nx.is_tree(g)


def test_randomize_keeps_the_expected_edge_count():
    adj = nx.to_numpy_array(nx.path_graph(30))  # 29 edges of 435 pairs
    rs = np.random.RandomState(0)
    counts = [P.randomize(adj, rs).sum() / 2 for _ in range(400)]
    assert abs(np.mean(counts) - 29) < 1.0  # std of the mean ≈ 0.2


def test_make_split_batches_graphs_with_a_one_hot_source_and_normalised_targets():
    splits = [P.make_split("eccentricity", 4, 1), P.make_split("eccentricity", 2, 2)]
    scale = P.normalise(splits)
    train = splits[0]
    assert train["x"][:, 0].sum() == 4  # one source per graph
    assert len(train["y"]) == len(train["x"]) and train["y"].max() == 1.0 and scale >= 1
    diam = P.make_split("diameter", 3, 1)
    assert diam["level"] == "graph" and diam["y"].shape == (3,)
    src, dst = diam["edge_index"]
    assert (diam["batch"][src] == diam["batch"][dst]).all()

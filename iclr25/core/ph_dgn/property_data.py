"""Graph property prediction data: the PNA multitask generator as A-DGN and PH-DGN use it.

Generator (Corso et al. 2020, ``lukecavabarrett/pna``, ``graph_generation.py``),
re-implemented with a local random state per graph instead of the global one:
  1. family from MIXTURE (Erdős–Rényi 0.2, Barabási–Albert 0.2, grid 0.05, caveman 0.05,
     power-law tree 0.15, ladder 0.05, line 0.05, star 0.05, caterpillar 0.1, lobster 0.1);
     n ~ U{25..35} here (the A-DGN/PH-DGN graph-property sizes);
  2. node order shuffled, dense adjacency;
  3. ``randomize``: each edge kept w.p. ep, each non-edge added w.p. rp, so that the
     expected edge count is unchanged (BASE_P = 0.9); graphs with a singleton are redrawn.
Features: [one-hot source node, value ~ U(0, 1)]. Targets (unweighted hop distances):
``sssp`` distance from the source (unreachable → 0, as ``all_pairs_shortest_paths(A, 0)``),
``eccentricity`` max distance to a reachable node, ``diameter`` max over reachable pairs
(graph level); each divided by its training-set maximum (:func:`normalise`).
"""

from __future__ import annotations

import math
import random
from collections import deque

import numpy as np
import torch

from iclr25.errors import UsageError

try:
    import networkx as nx
except ImportError:  # the `ph-dgn` extra; make_split says how to install it
    nx = None

TASKS = {"sssp": "node", "eccentricity": "node", "diameter": "graph"}
MIXTURE = (
    ("erdos_renyi", 0.2), ("barabasi_albert", 0.2), ("grid", 0.05), ("caveman", 0.05),
    ("tree", 0.15), ("ladder", 0.05), ("line", 0.05), ("star", 0.05),
    ("caterpillar", 0.1), ("lobster", 0.1),
)  # fmt: skip
SIZES = (25, 35)  # inclusive node-count range
BASE_P = 0.9


def _near_square(n: int) -> int:
    """The largest divisor m ≤ √n of n (m × n/m as close to square as possible)."""
    return max(i for i in range(1, int(math.sqrt(n)) + 1) if n % i == 0)


def family_graph(family: str, n: int, seed: int, py: random.Random) -> nx.Graph:
    """One graph of ``family`` before randomisation (the official constructions)."""
    rs = np.random.RandomState(seed % 2**32)
    if family == "erdos_renyi":
        return nx.fast_gnp_random_graph(n, py.random(), seed % 2**32)  # degree/N = U(0,1)
    if family == "barabasi_albert":
        return nx.barabasi_albert_graph(n, int(py.random() * (n - 1)) + 1, seed % 2**32)
    if family == "grid":
        m = _near_square(n)
        return nx.convert_node_labels_to_integers(nx.grid_2d_graph(m, n // m))
    if family == "caveman":
        m = _near_square(n)
        return nx.caveman_graph(m, n // m)
    if family == "tree":
        return nx.random_powerlaw_tree(n, seed=seed % 2**32, tries=10000)
    if family == "ladder":
        g = nx.ladder_graph(n // 2)
        if n % 2:
            g.add_edge(0, n - 1)
        return g
    if family == "line":
        return nx.path_graph(n)
    if family == "star":
        return nx.star_graph(n - 1)
    if family in ("caterpillar", "lobster"):
        return _backbone(n, rs, lobster=family == "lobster")
    raise UsageError(f"unknown family {family!r}", "use a MIXTURE family")


def _backbone(n: int, rs: np.random.RandomState, lobster: bool) -> nx.Graph:
    """Caterpillar: a path of b ~ U{1..n−1} nodes, the rest attached to it; lobster: a
    second layer of pendants attached to the first layer's nodes."""
    b = rs.randint(low=1, high=n)
    f = rs.randint(low=b + 1, high=n + 1) if lobster else n
    g = nx.empty_graph(n)
    g.add_edges_from((i - 1, i) for i in range(1, b))
    g.add_edges_from((i, rs.randint(b)) for i in range(b, f))
    g.add_edges_from((i, rs.randint(low=b, high=f)) for i in range(f, n))
    return g


def randomize(adj: np.ndarray, rs: np.random.RandomState) -> np.ndarray:
    """Keep each edge w.p. ep, add each non-edge w.p. rp; expected edge count unchanged."""
    n = adj.shape[0]
    e = adj.sum() / 2
    r = n * (n - 1) / 2 - e
    if e <= r:
        ep, rp = BASE_P, (1 - BASE_P) * e / r
    else:
        ep, rp = BASE_P + (1 - BASE_P) * (e - r) / e, 1 - BASE_P
    u = rs.uniform(size=(n, n), low=0.0, high=0.5)
    u = u + u.T  # symmetric
    keep = (u < ep) * adj
    add = (u < rp) * (1 - adj) * (1 - np.eye(n))
    return keep + add


def draw_graph(seed: int) -> tuple[np.ndarray, str]:
    """(adjacency (n, n) 0/1 symmetric, family) of one graph; redrawn while a node is
    isolated (the official rejection of singletons)."""
    while True:
        py, rs = random.Random(seed), np.random.RandomState(seed % 2**32)
        names, probs = zip(*MIXTURE, strict=True)
        family = names[rs.choice(len(names), p=probs)]
        n = rs.randint(SIZES[0], SIZES[1] + 1)
        try:
            g = family_graph(family, n, seed, py)
        except nx.NetworkXError:  # the power-law tree may fail to converge: next seed
            seed += 1
            continue
        nodes = list(g)
        py.shuffle(nodes)
        adj = randomize(nx.to_numpy_array(g, nodes), rs)
        if adj.max(0).min() > 0:
            return adj, family
        seed += 1


def hop_distances(adj: np.ndarray, source: int) -> np.ndarray:
    """BFS hop counts from ``source`` (n,), −1 where unreachable."""
    nbrs = [np.flatnonzero(row) for row in adj]
    dist = np.full(adj.shape[0], -1)
    dist[source], queue = 0, deque([source])
    while queue:
        v = queue.popleft()
        for u in nbrs[v]:
            if dist[u] < 0:
                dist[u] = dist[v] + 1
                queue.append(u)
    return dist


def labels(adj: np.ndarray, task: str, source: int) -> np.ndarray:
    """Raw targets: (n,) for sssp/eccentricity, (1,) for diameter (module docstring)."""
    if task == "sssp":
        return np.maximum(hop_distances(adj, source), 0).astype(np.float64)
    ecc = np.array([hop_distances(adj, v).max() for v in range(adj.shape[0])], dtype=np.float64)
    return ecc if task == "eccentricity" else ecc.max(keepdims=True)


def make_split(task: str, n_graphs: int, seed: int) -> dict:
    """One split as batched tensors: x (N, 2), edge_index (2, E), batch (N,), y (rows,)."""
    if task not in TASKS:
        raise UsageError(f"unknown --task {task!r}", f"use one of: {', '.join(TASKS)}")
    if nx is None:
        raise UsageError("the graph families need networkx", "pip install 'iclr25[ph-dgn]'")
    xs, edges, batch, ys, offset = [], [], [], [], 0
    for g in range(n_graphs):
        adj, _ = draw_graph(seed * 100_003 + g)
        n = adj.shape[0]
        rs = np.random.RandomState((seed * 7919 + g) % 2**32)
        source = rs.randint(n)
        onehot = np.zeros(n)
        onehot[source] = 1.0
        xs.append(np.stack([onehot, rs.uniform(size=n)], 1))  # (n, 2)
        src, dst = np.nonzero(adj)
        edges.append(np.stack([src, dst]) + offset)  # both directions (symmetric A)
        batch.append(np.full(n, g))
        ys.append(labels(adj, task, source))
        offset += n
    return {
        "x": torch.tensor(np.concatenate(xs), dtype=torch.float32),
        "edge_index": torch.tensor(np.concatenate(edges, 1), dtype=torch.long),
        "batch": torch.tensor(np.concatenate(batch), dtype=torch.long),
        "y": torch.tensor(np.concatenate(ys), dtype=torch.float32),
        "level": TASKS[task],
    }


def normalise(splits: list[dict]) -> float:
    """Divide every split's targets by the training maximum (in place); returns it."""
    scale = float(splits[0]["y"].max()) or 1.0
    for split in splits:
        split["y"] = split["y"] / scale
    return scale

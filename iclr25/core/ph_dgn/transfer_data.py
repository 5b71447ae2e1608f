"""The graph-transfer data sets: the ``copy`` variant and the official one.

Both return ``{"x": (G·n, f), "y": (rows,), "rows": (rows,), "aggs": {...}}``: node
features of G graphs batched block-diagonally, the labels and the output rows they score.

``copy`` (issue 28): features [value ~ U(0, 1), marker (+1 source, −1 target, 0 else)];
one row per graph, the target; the label is the source's value.

``official`` (gravins/SWAN ``graph_transfer``, as the paper's code uses it): one feature
~ U(0, 1) per node with x_source = 1 and x_target = 0; labels y = x except y_source = 0 and
y_target = 1 (the ``line_50`` file's form); every node is a scored row. Each node also
has a self-loop in the official edge list; here the models add their own self terms,
so no self-loop is listed. Predicting y = x scores exactly 2/n per graph (``identity``).
"""

from __future__ import annotations

import torch

from iclr25.core.ph_dgn.graphs import batch, topology
from iclr25.core.ph_dgn.models import graph_aggregations

VARIANTS = ("copy", "official")


def copy_data(topology_name: str, distance: int, n_graphs: int, seed: int) -> dict:
    edges, n, source, target = topology(topology_name, distance)
    g = torch.Generator().manual_seed(seed)
    value = torch.rand(n_graphs, n, generator=g)  # (G, n)
    marker = torch.zeros(n_graphs, n)
    marker[:, source], marker[:, target] = 1.0, -1.0
    x = torch.stack([value, marker], dim=-1).reshape(n_graphs * n, 2)  # (G·n, 2)
    return {
        "x": x,
        "y": value[:, source].clone(),  # (G,)
        "rows": torch.arange(n_graphs) * n + target,  # (G,)
        "aggs": graph_aggregations(batch(edges, n, n_graphs), n_graphs * n),
    }


def official_data(topology_name: str, distance: int, n_graphs: int, seed: int) -> dict:
    edges, n, source, target = topology(topology_name, distance)
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n_graphs, n, generator=g)  # (G, n)
    x[:, source], x[:, target] = 1.0, 0.0
    y = x.clone()
    y[:, source], y[:, target] = 0.0, 1.0
    return {
        "x": x.reshape(n_graphs * n, 1),  # (G·n, 1)
        "y": y.reshape(-1),  # (G·n,)
        "rows": torch.arange(n_graphs * n),
        "aggs": graph_aggregations(batch(edges, n, n_graphs), n_graphs * n),
    }


def make_data(variant: str, topology_name: str, distance: int, n_graphs: int, seed: int) -> dict:
    maker = {"copy": copy_data, "official": official_data}[variant]
    return maker(topology_name, distance, n_graphs, seed)


def to_arrays(data: dict, n_graphs: int) -> dict:
    """NumPy arrays of one split for an NPZ file: ``edge_index`` (2, E), ``x`` (N, f),
    ``y`` (rows,), ``rows`` (rows,) the scored nodes, ``batch`` (N,) each node's graph."""
    agg = data["aggs"]["sum"]
    n_total = data["x"].shape[0]
    return {
        "edge_index": torch.stack([agg.cols, agg.rows]).numpy(),  # (2, E): src, dst
        "x": data["x"].numpy(),
        "y": data["y"].numpy(),
        "rows": data["rows"].numpy(),
        "batch": torch.arange(n_graphs).repeat_interleave(n_total // n_graphs).numpy(),
    }

"""A user's graph data set for ``fit`` / ``predict``: CSV, NPZ or a tensor-only torch file.

Every reader returns a :class:`GraphData`; every problem is one :class:`InputError`
naming the file, what is wrong (with a count and the first rows) and the fix. Formats:

- CSV: ``--edges E.csv`` (``src,dst[,weight]``) and ``--nodes N.csv`` (``node_id``,
  optional ``graph_id`` and ``split`` (train/val/test, by graph), the ``--target``
  column at node level, every other column a numeric feature); at graph level
  ``--graph-targets G.csv`` (``graph_id``, the ``--target`` column, optional ``split``).
- NPZ: ``edge_index`` (2, E) integer, ``x`` (N, f), ``y`` (N,) node level or (G,) graph
  level, optional ``batch`` (N,) graph of each node (default: one graph), ``rows`` (the
  nodes ``y`` scores, as ``ph-dgn generate`` writes), ``edge_weight`` (E,), ``split``
  (G,) 0/1/2. Loaded with ``allow_pickle=False``.
- torch (``.pt``): a dict of tensors with the NPZ keys, or a PyG ``InMemoryDataset``
  file (``(data_dict, slices, ...)``), loaded with ``weights_only=True`` (nothing that
  needs code execution; PyG is imported only to register its own safe classes).
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr25.errors import InputError

SPLITS = ("train", "val", "test")
MAX_BYTES_FRACTION = 0.5  # a run may plan to use at most half of the available memory


@dataclass
class GraphData:
    """Graphs batched block-diagonally. ``y`` is None for unlabelled ``predict`` input."""

    x: torch.Tensor  # (N, f) float32
    edge_index: torch.Tensor  # (2, E) long, src → dst, both in the same graph
    batch: torch.Tensor  # (N,) long, graph of each node, 0..G−1
    level: str  # node or graph
    y: np.ndarray | None  # (rows,) node level or (G,) graph level; float or str labels
    rows: torch.Tensor  # (rows,) the scored nodes (node level); arange(G) at graph level
    edge_weight: torch.Tensor | None = None  # (E,)
    split: np.ndarray | None = None  # (G,) 0 train, 1 val, 2 test (given in the input)
    source: str = ""

    @property
    def n_graphs(self) -> int:
        return int(self.batch.max()) + 1 if self.batch.numel() else 0

    @property
    def n_nodes(self) -> int:
        return int(self.x.shape[0])


# ---------------------------------------------------------------------------------------
# Shared checks
# ---------------------------------------------------------------------------------------
def _first(indices, k: int = 5) -> str:
    shown = ", ".join(str(int(i)) for i in list(indices)[:k])
    return shown + (", …" if len(indices) > k else "")


def check_finite(values: np.ndarray, what: str, row_offset: int = 0) -> None:
    """NaN/∞ → one error with the count and the first rows (1-based file rows)."""
    bad = ~np.isfinite(values.reshape(len(values), -1)).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad) + row_offset
        raise InputError(
            f"{what}: {int(bad.sum())} row(s) with NaN or ∞ (rows {_first(rows)})",
            "remove or fill those rows",
        )


def check_graph(data: GraphData, where: str) -> GraphData:
    """Edges inside one graph, node ids in range, no empty graph, finite features."""
    n, ei = data.n_nodes, data.edge_index
    if n == 0:
        raise InputError(f"{where}: no nodes", "give at least one node")
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
        bad = torch.nonzero((ei < 0).any(0) | (ei >= n).any(0)).flatten()
        raise InputError(
            f"{where}: {bad.numel()} edge(s) name unknown node ids (edges {_first(bad)})",
            f"node ids must be 0..{n - 1}",
        )
    counts = torch.bincount(data.batch, minlength=data.n_graphs)
    if (counts == 0).any():
        empty = torch.nonzero(counts == 0).flatten()
        raise InputError(
            f"{where}: {empty.numel()} empty graph(s) (graphs {_first(empty)})",
            "every graph id 0..G−1 needs at least one node",
        )
    cross = torch.nonzero(data.batch[ei[0]] != data.batch[ei[1]]).flatten()
    if cross.numel():
        raise InputError(
            f"{where}: {cross.numel()} edge(s) join different graphs (edges {_first(cross)})",
            "an edge's two nodes must have the same graph_id",
        )
    check_finite(data.x.numpy(), f"{where} features")
    if data.edge_weight is not None:
        check_finite(data.edge_weight.numpy(), f"{where} edge weights")
        if (data.edge_weight <= 0).any():
            raise InputError(f"{where}: non-positive edge weights", "weights must be > 0")
    return data


def check_memory(n_nodes: int, n_edges: int, floats_per_node: int, what: str) -> None:
    """Refuse a plan whose float32 tensors would exceed half of the available memory."""
    need = 4 * (n_nodes * floats_per_node + 6 * n_edges)
    avail = _available_bytes()
    if need > MAX_BYTES_FRACTION * avail:
        raise InputError(
            f"{what} needs about {need / 2**30:.1f} GiB, more than half of the "
            f"{avail / 2**30:.1f} GiB available",
            "use a smaller --width or --depth, or fewer graphs",
        )


def _available_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


# ---------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------
def _read_csv(path: Path, required: tuple[str, ...], flag: str) -> tuple[list[str], list[dict]]:
    if not path.is_file():
        raise InputError(f"{flag} {path} does not exist", f"pass an existing CSV to {flag}")
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            fields = reader.fieldnames or []
            rows = list(reader)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(
            f"{flag} {path} is not a readable CSV ({exc})", "give a UTF-8 CSV"
        ) from None
    missing = [c for c in required if c not in fields]
    if missing:
        raise InputError(
            f"{flag} {path} has no column {', '.join(missing)} (columns: {', '.join(fields)})",
            f"add a header with {', '.join(required)}",
        )
    return fields, rows


def _ints(rows: list[dict], col: str, path: Path) -> np.ndarray:
    out = np.empty(len(rows), dtype=np.int64)
    for i, row in enumerate(rows):
        try:
            out[i] = int(row[col])
        except (TypeError, ValueError):
            raise InputError(
                f"{path}: row {i + 2} has a non-integer {col} {row[col]!r}",
                f"{col} must be an integer",
            ) from None
    return out


def _floats(rows: list[dict], cols: list[str], path: Path, what: str) -> np.ndarray:
    out = np.empty((len(rows), len(cols)), dtype=np.float64)
    for i, row in enumerate(rows):
        for j, col in enumerate(cols):
            try:
                out[i, j] = float(row[col]) if row[col] not in ("", None) else math.nan
            except ValueError:
                raise InputError(
                    f"{path}: row {i + 2}, {what} {col!r} = {row[col]!r} is not a number",
                    f"give numbers in {col}, or drop the column",
                ) from None
    return out


def _unique_ids(ids: np.ndarray, path: Path, col: str) -> None:
    values, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        dup = values[counts > 1]
        raise InputError(
            f"{path}: {len(dup)} duplicate {col}(s) ({_first(dup)})", f"each {col} once"
        )


def _labels(rows, target: str, path: Path, classification: bool):
    """Targets as floats (regression) or strings (classification); missing → error."""
    missing = [i + 2 for i, r in enumerate(rows) if r.get(target) in ("", None)]
    if missing:
        raise InputError(
            f"{path}: {len(missing)} row(s) without a {target!r} value (rows {_first(missing)})",
            "fill the target or drop those rows",
        )
    if classification:
        return np.array([r[target].strip() for r in rows])
    y = _floats(rows, [target], path, "target")[:, 0]
    check_finite(y, f"{path} target {target!r}", row_offset=2)
    return y


def _split_codes(values: list[str], path: Path) -> np.ndarray:
    bad = sorted({v for v in values if v not in SPLITS})
    if bad:
        raise InputError(f"{path}: unknown split value(s) {bad}", "use train, val or test")
    return np.array([SPLITS.index(v) for v in values])


def read_csv_data(
    edges: Path,
    nodes: Path,
    target: str | None,
    graph_targets: Path | None = None,
    classification: bool = False,
    undirected: bool = False,
) -> GraphData:
    """The CSV form (module docstring); ``target`` None reads no labels (``predict``)."""
    efields, erows = _read_csv(edges, ("src", "dst"), "--edges")
    nfields, nrows = _read_csv(nodes, ("node_id",), "--nodes")
    if not nrows:
        raise InputError(f"--nodes {nodes} has no rows", "give one row per node")
    node_level = graph_targets is None
    if target is not None and node_level and target not in nfields:
        raise InputError(
            f"--nodes {nodes} has no target column {target!r} (columns: {', '.join(nfields)})",
            "pass --target with one of its columns, or --graph-targets for graph level",
        )
    node_ids = _ints(nrows, "node_id", nodes)
    _unique_ids(node_ids, nodes, "node_id")
    graph_ids = (
        _ints(nrows, "graph_id", nodes) if "graph_id" in nfields else np.zeros_like(node_ids)
    )
    reserved = {"node_id", "graph_id", "split", target}
    feature_cols = [c for c in nfields if c not in reserved]
    if not feature_cols:
        raise InputError(f"--nodes {nodes} has no feature column", "add numeric feature columns")
    x = _floats(nrows, feature_cols, nodes, "feature")
    check_finite(x, f"--nodes {nodes} features", row_offset=2)
    # 1. node ids → 0..N−1 in file order; edges must name known nodes
    index = {int(v): i for i, v in enumerate(node_ids)}
    src, dst = _ints(erows, "src", edges), _ints(erows, "dst", edges)
    pairs = enumerate(zip(src.tolist(), dst.tolist(), strict=True))
    unknown = [i + 2 for i, (s, d) in pairs if s not in index or d not in index]
    if unknown:
        raise InputError(
            f"--edges {edges}: {len(unknown)} edge(s) name node ids not in --nodes "
            f"(rows {_first(unknown)})",
            "every src and dst must be a node_id of --nodes",
        )
    edge_index = torch.tensor([[index[int(s)] for s in src], [index[int(d)] for d in dst]])
    edge_index = edge_index.reshape(2, -1).long()
    weight = None
    if "weight" in efields:
        w = _floats(erows, ["weight"], edges, "weight")[:, 0]
        check_finite(w, f"--edges {edges} weights", row_offset=2)
        weight = torch.tensor(w, dtype=torch.float32)
    # 2. graph ids → 0..G−1 in sorted order
    gids = np.unique(graph_ids)
    batch = torch.tensor(np.searchsorted(gids, graph_ids), dtype=torch.long)
    data = GraphData(
        torch.tensor(x, dtype=torch.float32), edge_index, batch, "node" if node_level else "graph",
        None, torch.arange(len(nrows)), weight, source=f"{nodes.name} + {edges.name}",
    )  # fmt: skip
    if "split" in nfields:
        data.split = _graph_split(_split_codes([r["split"] for r in nrows], nodes), batch, nodes)
    if node_level:
        if target is not None:
            data.y = _labels(nrows, target, nodes, classification)
    else:
        _read_graph_targets(data, graph_targets, target, gids, classification)
    if undirected:
        data = with_reverse_edges(data)
    return check_graph(data, f"{nodes.name} + {edges.name}")


def _graph_split(codes: np.ndarray, batch: torch.Tensor, path: Path) -> np.ndarray:
    """One split per graph from a per-node column (all nodes of a graph must agree)."""
    g = batch.numpy()
    per_graph = np.full(int(g.max()) + 1, -1)
    per_graph[g] = codes
    if (per_graph[g] != codes).any():
        raise InputError(f"{path}: nodes of one graph in different splits", "split by graph")
    return per_graph


def _read_graph_targets(data, path: Path, target, gids, classification) -> None:
    fields, rows = _read_csv(path, ("graph_id",), "--graph-targets")
    ids = _ints(rows, "graph_id", path)
    _unique_ids(ids, path, "graph_id")
    extra = sorted(set(ids.tolist()) - set(gids.tolist()))
    if extra:
        raise InputError(
            f"--graph-targets {path}: {len(extra)} empty graph(s) with no node in --nodes "
            f"(graph_id {_first(extra)})",
            "every graph needs at least one node",
        )
    missing = sorted(set(gids.tolist()) - set(ids.tolist()))
    if missing and target is not None:
        raise InputError(
            f"--graph-targets {path}: no target for graph_id {_first(missing)}",
            "give one row per graph_id of --nodes",
        )
    order = np.argsort(ids)
    rows = [rows[i] for i in order]
    if target is not None:
        if target not in fields:
            raise InputError(
                f"--graph-targets {path} has no column {target!r} (columns: {', '.join(fields)})",
                "pass --target with one of its columns",
            )
        data.y = _labels(rows, target, path, classification)
    if "split" in fields:
        data.split = _split_codes([r["split"] for r in rows], path)
    data.rows = torch.arange(len(gids))


def with_reverse_edges(data: GraphData) -> GraphData:
    data.edge_index = torch.cat([data.edge_index, data.edge_index.flip(0)], 1)
    if data.edge_weight is not None:
        data.edge_weight = torch.cat([data.edge_weight, data.edge_weight])
    return data


# ---------------------------------------------------------------------------------------
# NPZ and torch files (arrays under the same keys)
# ---------------------------------------------------------------------------------------
def read_npz_data(path: Path, undirected: bool = False, classification: bool = False) -> GraphData:
    if not path.is_file():
        raise InputError(f"--data {path} does not exist", "pass an existing .npz file")
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except ValueError as exc:
        raise InputError(
            f"--data {path}: holds pickled objects ({exc})",
            "save plain numeric arrays (np.savez with numbers only)",
        ) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"--data {path} is not an NPZ file ({exc})", "give an .npz") from None
    return from_arrays(arrays, str(path), undirected, classification)


def read_torch_data(path: Path, undirected: bool = False, classification: bool = False):
    """A dict of tensors, or PyG's ``InMemoryDataset`` file, loaded tensor-only."""
    import pickle

    if not path.is_file():
        raise InputError(f"--data {path} does not exist", "pass an existing .pt file")
    try:
        obj = _load_tensors_only(path, with_pyg=False)
    except (pickle.UnpicklingError, RuntimeError, AttributeError, EOFError):
        obj = None  # retried below with PyG's classes registered as safe, if installed
    try:
        obj = obj if obj is not None else _load_tensors_only(path, with_pyg=True)
    except (pickle.UnpicklingError, RuntimeError, AttributeError, EOFError) as exc:
        first = str(exc).strip().splitlines()[0][:160]
        raise InputError(
            f"--data {path}: cannot be loaded without running code it contains ({first})",
            "save a dict of tensors (torch.save({'x': ..., 'edge_index': ...}))"
            " or a PyG InMemoryDataset with PyG installed",
        ) from None
    if isinstance(obj, tuple) and obj and isinstance(obj[0], dict):
        obj = _from_pyg_collated(obj[0], obj[1] if len(obj) > 1 else None)
    if not isinstance(obj, dict):
        raise InputError(f"--data {path}: holds a {type(obj).__name__}", "save a dict of tensors")
    arrays = {k: v.numpy() if torch.is_tensor(v) else np.asarray(v) for k, v in obj.items()}
    return from_arrays(arrays, str(path), undirected, classification)


def _load_tensors_only(path: Path, with_pyg: bool):
    """``torch.load(weights_only=True)``; ``with_pyg`` first imports PyG, which registers
    its own data classes as safe (only tried when the plain load refused the file)."""
    if with_pyg:
        import warnings

        with warnings.catch_warnings():  # PyG's own import-time deprecation notices
            warnings.simplefilter("ignore")
            try:
                import torch_geometric  # noqa: F401
            except ImportError:
                pass
    return torch.load(path, map_location="cpu", weights_only=True)


def _from_pyg_collated(data: dict, slices: dict | None) -> dict:
    """PyG collated storage (edge_index local to each graph) → batched global arrays."""
    out = {k: v for k, v in data.items() if torch.is_tensor(v)}
    if not slices or "x" not in slices:
        return out
    node_ptr, edge_ptr = slices["x"], slices.get("edge_index")
    sizes = (node_ptr[1:] - node_ptr[:-1]).long()  # (G,)
    out["batch"] = torch.repeat_interleave(torch.arange(len(sizes)), sizes)
    if edge_ptr is not None:
        per_edge = torch.repeat_interleave(node_ptr[:-1], (edge_ptr[1:] - edge_ptr[:-1]).long())
        out["edge_index"] = data["edge_index"] + per_edge  # (2, E) local → global ids
    return out


def from_arrays(arrays: dict, where: str, undirected: bool, classification: bool) -> GraphData:
    for key in ("edge_index", "x"):
        if key not in arrays:
            raise InputError(f"{where}: no array {key!r} (has {sorted(arrays)})", f"add {key}")
    ei, x = arrays["edge_index"], np.asarray(arrays["x"])
    if ei.ndim != 2 or ei.shape[0] != 2 or not np.issubdtype(ei.dtype, np.integer):
        raise InputError(
            f"{where}: edge_index has shape {ei.shape} and dtype {ei.dtype}",
            "give edge_index as (2, E) integer node ids",
        )
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or not np.issubdtype(x.dtype, np.number):
        raise InputError(f"{where}: x has shape {x.shape}, dtype {x.dtype}", "give x as (N, f)")
    n = x.shape[0]
    batch = np.asarray(arrays.get("batch", np.zeros(n, dtype=np.int64)))
    if batch.shape != (n,) or not np.issubdtype(batch.dtype, np.integer) or batch.min() < 0:
        raise InputError(f"{where}: batch must be (N,) = ({n},) graph ids ≥ 0", "fix batch")
    weight = arrays.get("edge_weight")
    data = GraphData(
        torch.tensor(x, dtype=torch.float32), torch.tensor(ei, dtype=torch.long),
        torch.tensor(batch, dtype=torch.long), "node", None, torch.arange(n),
        None if weight is None else torch.tensor(weight, dtype=torch.float32), source=where,
    )  # fmt: skip
    g = data.n_graphs
    if "rows" in arrays:
        data.rows = torch.tensor(arrays["rows"], dtype=torch.long)
    if "y" in arrays:
        y = np.asarray(arrays["y"]).reshape(-1)
        if "rows" not in arrays and len(y) == g and g != n:
            data.level, data.rows = "graph", torch.arange(g)
        elif len(y) != len(data.rows):
            raise InputError(
                f"{where}: y has {len(y)} values for {n} nodes and {g} graphs",
                "give one y per node (or per rows entry) or one per graph",
            )
        if not classification:
            y = y.astype(np.float64)
            check_finite(y, f"{where} y")
        data.y = y.astype(str) if classification else y
    if "split" in arrays:
        data.split = np.asarray(arrays["split"]).reshape(-1).astype(np.int64)
        if len(data.split) != g or not np.isin(data.split, (0, 1, 2)).all():
            raise InputError(f"{where}: split must be (G,) of 0/1/2", "0 train, 1 val, 2 test")
    if undirected:
        data = with_reverse_edges(data)
    return check_graph(data, where)


def load_data(
    *,
    data: Path | None = None,
    edges: Path | None = None,
    nodes: Path | None = None,
    target: str | None = None,
    graph_targets: Path | None = None,
    classification: bool = False,
    undirected: bool = False,
) -> GraphData:
    """Pick the reader: ``--data`` (NPZ or torch file) or ``--edges`` + ``--nodes`` (CSV)."""
    if data is not None:
        if edges or nodes or graph_targets or target:
            raise InputError(
                "--data with --edges/--nodes/--graph-targets/--target",
                "give either --data FILE (its y array is the target) or the CSV options",
            )
        reader = read_npz_data if data.suffix.lower() == ".npz" else read_torch_data
        return reader(data, undirected, classification)
    if edges is None or nodes is None:
        raise InputError("no input graphs", "pass --edges E.csv --nodes N.csv, or --data FILE")
    return read_csv_data(edges, nodes, target, graph_targets, classification, undirected)

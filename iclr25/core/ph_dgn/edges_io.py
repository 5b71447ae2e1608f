"""Reading a user's edge list (``src,dst`` CSV with a header) into an ``edge_index``.

Node ids must be integers; they are renumbered 0..n−1 in sorted order. Any problem is an
:class:`InputError` naming the file, the row and the fix; nothing is written.
"""

from __future__ import annotations

import csv
from pathlib import Path

import torch

from iclr25.errors import InputError

MAX_EDGES = 50_000_000  # beyond this the (2, E) index alone would not fit comfortably


def read_edges(path: Path, undirected: bool = False) -> tuple[torch.Tensor, int, list[int]]:
    """(edge_index (2, E), n_nodes, original ids) from ``path``."""
    rows = _rows(path)
    pairs = []
    for i, row in enumerate(rows, start=2):
        try:
            pairs.append((int(row["src"]), int(row["dst"])))
        except (TypeError, ValueError):
            raise InputError(
                f"{path}: row {i} has a non-integer node id "
                f"({row.get('src')!r}, {row.get('dst')!r})",
                "node ids must be integers",
            ) from None
    if not pairs:
        raise InputError(f"{path} has no edges", "give at least one src,dst row")
    if len(pairs) > MAX_EDGES:
        raise InputError(f"{path} has {len(pairs):,} edges", f"give at most {MAX_EDGES:,}")
    ids = sorted({v for pair in pairs for v in pair})
    index = {v: k for k, v in enumerate(ids)}
    edge_index = torch.tensor([[index[s] for s, _ in pairs], [index[d] for _, d in pairs]])
    if undirected:
        edge_index = torch.cat([edge_index, edge_index.flip(0)], dim=1)
    return edge_index, len(ids), ids


def _rows(path: Path) -> list[dict]:
    if not path.is_file():
        raise InputError(f"edge file {path} does not exist", "pass an existing CSV with src,dst")
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            fields = reader.fieldnames or []
            if "src" not in fields or "dst" not in fields:
                raise InputError(
                    f"{path} has columns {fields}, not src and dst",
                    "write a header line `src,dst` and one edge per row",
                )
            return list(reader)
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a UTF-8 text CSV", "give a CSV with src,dst") from None

"""Shared rendering: the JSON document every command prints, and rich tables.

The JSON document has the same top level for every command::

    {"schema_version", "command", "version", "config", "results",
     "timings", "warnings", "environment"}

``results`` is deterministic for a given seed and input; wall-clock figures go in
``timings``. Non-finite floats are written as ``null`` (NaN) or the strings ``"inf"`` /
``"-inf"``, so the output is always strict JSON.
"""

from __future__ import annotations

import dataclasses
import json
import math
import platform
import sys
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from iclr25 import __version__

SCHEMA_VERSION = 1
TOP_LEVEL_KEYS = (
    "schema_version",
    "command",
    "version",
    "config",
    "results",
    "timings",
    "warnings",
    "environment",
)


def to_jsonable(obj: Any) -> Any:
    """Convert numpy/torch scalars and arrays, dataclasses, paths and tuples to JSON types."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return "inf" if obj > 0 else "-inf"
        return obj
    if isinstance(obj, Path):
        return str(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj) if isinstance(obj, (set, frozenset)) else obj
        return [to_jsonable(v) for v in items]
    # numpy / torch / cupy scalars and arrays, without importing those libraries
    if hasattr(obj, "tolist") and callable(obj.tolist):
        return to_jsonable(obj.tolist())
    if hasattr(obj, "item") and callable(obj.item):
        return to_jsonable(obj.item())
    return str(obj)


def package_versions(names: tuple[str, ...] = ("numpy", "torch", "transformers", "cupy")) -> dict:
    """Installed versions, read from metadata (no import, so no start-up cost)."""
    versions: dict[str, str | None] = {}
    for name in names:
        found = None
        candidates = [name]
        if name == "cupy":
            candidates = ["cupy", "cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x"]
        for candidate in candidates:
            try:
                found = metadata.version(candidate)
                break
            except metadata.PackageNotFoundError:
                continue
        versions[name] = found
    return versions


def environment_block(device: Mapping[str, Any] | None) -> dict:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "iclr25": __version__,
        **package_versions(),
        "device": dict(device) if device else None,
    }


def build_document(
    command: str,
    config: Any,
    results: Any,
    timings: Mapping[str, float],
    warnings: list[str],
    environment: Mapping[str, Any],
) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "version": __version__,
        "config": to_jsonable(config),
        "results": to_jsonable(results),
        "timings": to_jsonable(dict(timings)),
        "warnings": list(warnings),
        "environment": to_jsonable(dict(environment)),
    }


def dumps(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=2, allow_nan=False)


def write_stdout(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------
# Human-readable rendering
# ---------------------------------------------------------------------------------------
Renderer = Callable[[Any, Any], None]  # (rich Console, results) -> None


def format_value(value: Any) -> str:
    if isinstance(value, float):
        if value == 0 or 1e-3 <= abs(value) < 1e6:
            return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
        return f"{value:.3e}"
    if isinstance(value, (list, tuple)):
        if len(value) > 6:
            return f"[{len(value)} items]"
        return ", ".join(format_value(v) for v in value)
    return str(value)


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            rows.extend(flatten(value, name + "."))
        else:
            rows.append((name, value))
    return rows


def render_mapping(console: Any, results: Any, title: str | None = None) -> None:
    """Default renderer: one two-column table of (dotted key, value)."""
    from rich.table import Table

    table = Table(title=title, show_header=True, header_style="bold")
    table.add_column("result")
    table.add_column("value", overflow="fold")
    data = to_jsonable(results)
    if not isinstance(data, Mapping):
        data = {"result": data}
    for key, value in flatten(data):
        table.add_row(key, format_value(value))
    console.print(table)


def rows_table(rows: list[Mapping[str, Any]], columns: list[str] | None = None, title=None):
    """A rich Table from a list of dicts (columns default to the first row's keys)."""
    from rich.table import Table

    table = Table(title=title, header_style="bold")
    columns = columns or (list(rows[0].keys()) if rows else [])
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(format_value(row.get(c, "")) for c in columns))
    return table

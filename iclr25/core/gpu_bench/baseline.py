"""``--save`` / ``--baseline``: keep a results table and flag regressions against it.

A saved file holds the rows and the compile table of one run::

    {"format": "iclr25-gpu-bench", "version": 1, "device": ..., "rows": [...], "kernels": [...]}

``--baseline`` also accepts a full ``--json`` document or a run directory's result.json.
Rows are matched on (op, shape, dtype, reference); the compared figure is our TFLOP/s, or
the reference's on a CPU-only run (where ours is not measured). A row regresses when the
figure falls below (1 - tolerance) times the baseline's. A kernel regresses when it
compiled before and fails now, or its spills grow.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iclr25 import atomic
from iclr25.errors import InputError

FORMAT = "iclr25-gpu-bench"


def row_key(row: dict) -> tuple:
    return (row.get("op"), row.get("shape"), row.get("dtype"), row.get("reference"))


def row_figure(row: dict) -> float | None:
    """Our TFLOP/s, else the reference's (CPU runs)."""
    value = row.get("ours_tflops")
    return value if value is not None else row.get("reference_tflops")


def save(
    path: Path, rows: list[dict], kernels: list[dict], device: str | None, overwrite: bool
) -> None:
    if path.exists() and not overwrite:
        raise InputError(f"{path} exists", "pick another --save file or pass --overwrite")
    document = {"format": FORMAT, "version": 1, "device": device, "rows": rows, "kernels": kernels}
    atomic.write_json(path, document)


def load(path: Path) -> dict[str, Any]:
    """{"device", "rows", "kernels"} from a saved file or a gpu-bench JSON document."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InputError(
            f"baseline {path} does not exist", "pass a file written by --save"
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(
            f"baseline {path} is not readable JSON ({exc})", "pass a file written by --save"
        ) from None
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return {
            "device": data.get("device"),
            "rows": data.get("rows") or [],
            "kernels": data.get("kernels") or [],
        }
    if isinstance(data, dict) and data.get("command") == "gpu-bench":
        results = data.get("results")
        device = ((data.get("environment") or {}).get("device") or {}).get("name")
        if isinstance(results, list):
            return {"device": device, "rows": results, "kernels": []}
        if isinstance(results, dict):
            return {
                "device": device,
                "rows": results.get("cpu_reference") or [],
                "kernels": results.get("kernels") or [],
            }
    raise InputError(
        f"{path} is not a gpu-bench baseline", "pass a file written by gpu-bench --save"
    )


def compare_rows(rows: list[dict], baseline_rows: list[dict], tolerance: float) -> list[str]:
    """Annotate ``rows`` in place with ``baseline_tflops``, ``change`` and ``regression``;
    return one message per regression."""
    old = {row_key(r): row_figure(r) for r in baseline_rows}
    messages = []
    for row in rows:
        before, now = old.get(row_key(row)), row_figure(row)
        row["baseline_tflops"] = before
        if before is None or now is None or before <= 0:
            row["change"], row["regression"] = None, False
            continue
        row["change"] = now / before - 1.0
        row["regression"] = now < (1.0 - tolerance) * before
        if row["regression"]:
            messages.append(
                f"{row['op']} {row['shape']} vs {row['reference']}: {now:.4g} TFLOP/s, "
                f"{-100 * row['change']:.1f}% below the baseline's {before:.4g}"
            )
    return messages


def compare_kernels(kernels: list[dict], baseline_kernels: list[dict]) -> list[str]:
    """Annotate kernel rows with ``regression``; a kernel that compiled before must still
    compile, with no more spill bytes than before."""
    old = {(k.get("name"), k.get("arch")): k for k in baseline_kernels}
    messages = []
    for k in kernels:
        before = old.get((k.get("name"), k.get("arch")))
        k["regression"] = False
        if before is None or before.get("skipped") or k.get("skipped") or not before.get("ok"):
            continue
        if k.get("ok") is False:
            k["regression"] = True
            messages.append(f"{k['name']} ({k['arch']}) compiled in the baseline and fails now")
        elif (k.get("spills") or 0) > (before.get("spills") or 0):
            k["regression"] = True
            was = before.get("spills") or 0
            messages.append(f"{k['name']} ({k['arch']}) spills {k['spills']} bytes, baseline {was}")
    return messages

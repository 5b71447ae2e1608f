"""Print what scripts/gpu-check.sh measured: the gpu-bench tables and the issue's targets.

Usage: ``python scripts/gpu_check_report.py RESULT.json [RESULT.json ...]`` (run from the
repository root, or with it on PYTHONPATH). Each file is a ``gpu-bench --json`` document;
a missing or unreadable one (a step that timed out or failed) is named and skipped, so the
report prints whatever was measured. Exit status 0 unless no file could be read.
"""

from __future__ import annotations

import json
import operator
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COMPARE = {">=": operator.ge, "<=": operator.le}


def _load(path: str) -> dict | None:
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        print(f"{path}: no results ({type(exc).__name__}: {exc})")
        return None
    if not isinstance(doc, dict) or "results" not in doc:
        print(f"{path}: not a gpu-bench --json document")
        return None
    return doc


def _correctness(rows: list[dict]) -> str:
    cases = {(r["op"], r["shape"]): r["within_tolerance"] for r in rows}
    checked = [ok for ok in cases.values() if ok is not None]
    bad = sorted(f"{op} {shape}" for (op, shape), ok in cases.items() if ok is False)
    text = f"{sum(checked)}/{len(checked)} measured cases within tolerance of the fp32 reference"
    return text + (f"; OUTSIDE: {', '.join(bad)}" if bad else "")


def main(paths: list[str]) -> int:
    from rich.console import Console

    from benchmarks.bench_gpu_bench import TARGETS, target_ratios
    from iclr25.commands.gpu_bench import _render

    console = Console(width=200)
    rows: list[dict] = []
    read = 0
    for path in paths:
        doc = _load(path)
        if doc is None:
            continue
        read += 1
        device = (doc.get("environment") or {}).get("device") or {}
        print(f"== {path}: device {device.get('name')}")
        for warning in doc.get("warnings") or []:
            print(f"   warning: {warning}")
        _render(console, doc["results"])
        if isinstance(doc["results"], list):
            rows += doc["results"]
    if rows:
        print(_correctness(rows))
    ratios = target_ratios(rows)
    for name, (op, target) in TARGETS.items():
        value = ratios.get(name)
        verdict = "met" if value is not None and COMPARE[op](value, target) else "NOT met"
        shown = "not measured" if value is None else f"{value:.3f} ({verdict})"
        print(f"target {name} {op} {target}: {shown}")
    return 0 if read else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

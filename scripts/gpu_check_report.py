"""Print what scripts/gpu-check.sh measured: the tables, the self-checks, one line per goal.

Usage: ``python scripts/gpu_check_report.py FILE [FILE ...]`` (run from the repository root,
or with it on PYTHONPATH). A FILE is a ``gpu-bench --json`` document, the benchmark's result
file (``benchmarks/results/gpu-bench.json``: its rows are in ``figures.rows``) or a
self-check verdict (``python -m iclr25.gpu.selfcheck`` output saved as JSON); a missing or
unreadable one (a step that timed out or failed) is named and skipped, so the report prints
whatever was measured. The goal lines come from :func:`iclr25.core.gpu_bench.goals.summary_lines`,
the same function the benchmark and the docs use. Exit status 0 unless no file could be read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _load(path: str) -> dict | None:
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        print(f"{path}: no results ({type(exc).__name__}: {exc})")
        return None
    if not isinstance(doc, dict):
        print(f"{path}: not a gpu-bench document")
        return None
    return doc


def _rows(doc: dict) -> list[dict] | None:
    """The GPU rows of a CLI document or of the benchmark's result file."""
    if isinstance(doc.get("results"), list):
        return doc["results"]
    rows = (doc.get("figures") or {}).get("rows")
    return rows if isinstance(rows, list) else None


def _correctness(rows: list[dict]) -> str:
    cases = {(r["op"], r["shape"]): r["within_tolerance"] for r in rows}
    checked = [ok for ok in cases.values() if ok is not None]
    bad = sorted(f"{op} {shape}" for (op, shape), ok in cases.items() if ok is False)
    text = f"{sum(checked)}/{len(checked)} measured cases within tolerance of the fp32 reference"
    return text + (f"; OUTSIDE: {', '.join(bad)}" if bad else "")


def _kernels_that_ran(rows: list[dict]) -> list[str]:
    ran = {}
    for r in rows:
        if r.get("kernel"):
            ran.setdefault((r["op"], r["shape"]), (r["kernel"], r.get("fallback") or ""))
    return [
        f"  {op} {shape}: {kernel}" + (f" (fallback: {why})" if why else "")
        for (op, shape), (kernel, why) in ran.items()
    ]


def main(paths: list[str]) -> int:
    from rich.console import Console

    from iclr25.commands.gpu_bench import _render
    from iclr25.core.gpu_bench.goals import summary_lines

    console = Console(width=200)
    rows: list[dict] = []
    read = 0
    for path in paths:
        doc = _load(path)
        if doc is None:
            continue
        read += 1
        if "kernel" in doc and "ok" in doc:  # a self-check verdict
            state = "passed" if doc["ok"] else f"FAILED: {doc.get('reason')}"
            print(f"self-check {doc['kernel']}: {state}")
            continue
        device = ((doc.get("environment") or {}).get("device") or {}).get("name")
        print(f"== {path}" + (f": device {device}" if device else ""))
        for warning in doc.get("warnings") or []:
            print(f"   warning: {warning}")
        for run in ((doc.get("figures") or {}).get("runs") or {}).values():
            for warning in (run or {}).get("warnings") or []:
                print(f"   warning: {warning}")
        found = _rows(doc)
        if found is None and isinstance(doc.get("results"), dict):
            _render(console, doc["results"])
        elif found:
            _render(console, found)
            rows += found
    if rows:
        print(_correctness(rows))
        print("kernels that ran:")
        print("\n".join(_kernels_that_ran(rows)))
    print("goals (ours / reference, same run):")
    for line in summary_lines(rows):
        print(f"  {line}")
    return 0 if read else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

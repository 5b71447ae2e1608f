"""Run the benchmarks: ``python -m benchmarks [--only NAME ...] [--quick] [--json]``.

A full run writes ``benchmarks/results/<NAME>.json`` (the files ``make docs`` renders);
``--quick`` (a smoke test at small sizes) writes to ``benchmarks/results/quick/`` instead,
which git ignores, so a quick run never replaces a measured figure.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.harness import Report
from iclr25 import atomic

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
_STYLE = {"met": "green", "not met": "red", "not comparable": "yellow", "not measured": "yellow"}


def discover() -> list:
    names = sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))
    return [importlib.import_module(f"benchmarks.{name}") for name in names]


def run_module(module, quick: bool, argv: list[str]) -> dict:
    """Run one benchmark module through a :class:`Report` and return its result document."""
    report = Report(module.NAME, module.TARGETS, quick=quick)
    t0 = time.perf_counter()
    module.run(report)
    report.finish()
    return report.as_dict(argv=argv, seconds=time.perf_counter() - t0)


def verdict_table(documents: dict[str, dict]) -> Table:
    table = Table(title="benchmarks: targets against peers measured in the same run")
    for column in ("benchmark", "target", "measured", "wanted", "verdict"):
        table.add_column(column)
    for name, doc in documents.items():
        for t in doc["targets"]:
            measured = "—" if t["measured"] is None else f"{t['measured']:.3g}"
            if t["interval"]:
                measured += f" [{t['interval'][0]:.3g}, {t['interval'][1]:.3g}]"
            verdict = t["verdict"]
            table.add_row(
                name,
                t["name"],
                measured,
                f"{t['op']} {t['target']:g}",
                f"[{_STYLE[verdict]}]{verdict}[/]",
            )
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", nargs="*", default=None, help="benchmark names to run")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke test)")
    parser.add_argument("--json", action="store_true", help="print all results as JSON")
    parser.add_argument("--results", type=Path, default=None, help="where to write results")
    args = parser.parse_args(argv)
    full_argv = ["python", "-m", "benchmarks", *(sys.argv[1:] if argv is None else argv)]
    modules = [m for m in discover() if not args.only or m.NAME in args.only]
    if args.only and len(modules) != len(set(args.only)):
        known = ", ".join(m.NAME for m in discover())
        print(f"Error: unknown benchmark in {args.only} — known: {known}", file=sys.stderr)
        return 2
    out_dir = args.results or (RESULTS / "quick" if args.quick else RESULTS)
    console = Console(stderr=True)
    documents = {}
    for module in modules:
        console.print(f"running {module.NAME} ...", style="dim")
        doc = run_module(module, args.quick, full_argv)
        atomic.write_json(out_dir / f"{module.NAME}.json", doc)
        documents[module.NAME] = doc
    Console(stderr=args.json).print(verdict_table(documents))
    if args.json:
        sys.stdout.write(json.dumps(documents, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

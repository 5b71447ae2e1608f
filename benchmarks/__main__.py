"""Run the benchmarks: ``python -m benchmarks [--only NAME ...] [--quick] [--json]``."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from iclr25 import atomic
from iclr25.output import to_jsonable

HERE = Path(__file__).resolve().parent


def discover() -> list:
    names = sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if m.name.startswith("bench_"))
    return [importlib.import_module(f"benchmarks.{name}") for name in names]


def met(measured: float, op: str, target: float) -> bool:
    return measured >= target if op == ">=" else measured <= target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", nargs="*", default=None, help="benchmark names to run")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke test)")
    parser.add_argument("--json", action="store_true", help="print all results as JSON")
    args = parser.parse_args(argv)
    modules = [m for m in discover() if not args.only or m.NAME in args.only]
    console = Console(stderr=args.json)
    table = Table(title="benchmarks: ratios against peers measured in the same run")
    for column in ("benchmark", "ratio", "measured", "target", "met"):
        table.add_column(column)
    everything = {}
    for module in modules:
        console.print(f"running {module.NAME} ...", style="dim")
        t0 = time.perf_counter()
        outcome = module.run(quick=args.quick)
        outcome["seconds"] = time.perf_counter() - t0
        outcome["machine"] = {"platform": platform.platform(), "python": platform.python_version()}
        outcome["quick"] = args.quick
        for ratio, value in outcome["ratios"].items():
            op, target = module.TARGETS.get(ratio, (None, None))
            ok = "" if op is None else ("yes" if met(value, op, target) else "NO")
            table.add_row(module.NAME, ratio, f"{value:.3g}", f"{op} {target}" if op else "", ok)
        atomic.write_json(HERE / "results" / f"{module.NAME}.json", to_jsonable(outcome))
        everything[module.NAME] = outcome
    console.print(table)
    if args.json:
        sys.stdout.write(json.dumps(to_jsonable(everything), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

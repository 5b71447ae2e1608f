"""Timing console commands against an issue's wall-clock targets (shared by the
``scripts/time_*_cli.py`` scripts).

Each round runs every command once, in an order rotated every round (so none always runs
first on a machine whose load drifts), as a subprocess of this checkout with
``OMP_NUM_THREADS=1``, so the time includes Python start-up and the imports a user pays.
CPU time is user + sys of the run and every process it started (the caller is a child
subreaper, :func:`time_pn_gail_quick.become_subreaper`). The 1-minute load average before
each run is recorded: on a shared machine wall times move with it, CPU times much less.
A command's ``fingerprint`` turns its JSON document into the facts that show it did the
full work; they must be the same in every round.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from time_pn_gail_quick import children_cpu_s, reap_orphans  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Command:
    args: tuple[str, ...]  # after `iclr25`; "{data}" is replaced by the data folder
    fingerprint: Callable[[dict, Path], dict]
    target_s: float


def argv(args, data: Path) -> list[str]:
    return [sys.executable, "-m", "iclr25", *(a.format(data=data) for a in args)]


def env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


def run_once(command: Command, data: Path) -> dict:
    line = argv(command.args, data)
    load = os.getloadavg()[0]
    cpu0, t0 = children_cpu_s(), time.perf_counter()
    proc = subprocess.run(line, capture_output=True, text=True, env=env(), cwd=ROOT)
    wall = time.perf_counter() - t0
    reap_orphans()
    cpu = children_cpu_s() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"Error: {' '.join(line)} exited {proc.returncode}: {proc.stderr[-500:]}")
    return {"wall_s": wall, "cpu_s": cpu, "load_before": load,
            "results": command.fingerprint(json.loads(proc.stdout), data)}  # fmt: skip


def run_rounds(commands: dict[str, Command], rounds: int, data: Path) -> dict[str, list[dict]]:
    names = list(commands)
    runs: dict = {name: [] for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            row = run_once(commands[name], data)
            runs[name].append(row)
            print(f"round {r} {name}: wall {row['wall_s']:.1f} s, CPU {row['cpu_s']:.1f} s, "
                  f"load {row['load_before']:.1f}", file=sys.stderr, flush=True)  # fmt: skip
    return runs


def summarize(commands: dict[str, Command], runs: dict[str, list[dict]]) -> dict:
    out = {}
    for name, rows in runs.items():
        command = commands[name]
        walls = [r["wall_s"] for r in rows]
        out[name] = {
            "command": ["iclr25", *(a.format(data="DATA") for a in command.args)],
            "wall_median_s": statistics.median(walls),
            "wall_max_s": max(walls),
            "cpu_median_s": statistics.median(r["cpu_s"] for r in rows),
            "wall_s": walls,
            "cpu_s": [r["cpu_s"] for r in rows],
            "load_before": [r["load_before"] for r in rows],
            "target_s": command.target_s,
            "target_met": max(walls) <= command.target_s,
            "same_results_every_run": all(r["results"] == rows[0]["results"] for r in rows),
            "results": rows[0]["results"],
        }
    return out


def write_document(
    out: Path,
    name: str,
    about: str,
    seeds: list[int],
    rounds: int,
    counted: bool,
    commands: dict[str, Command],
    runs: dict,
    **extra,
) -> None:
    """The result file: provenance, the per-command summary and the machine's state."""
    from iclr25 import atomic
    from iclr25.provenance import provenance

    doc = {
        "name": name,
        "about": about,
        "provenance": provenance(seeds=seeds),
        **extra,
        "rounds": rounds,
        "omp_num_threads": 1,
        "cpu_includes_workers": counted,
        "commands": summarize(commands, runs),
        "cpus": os.cpu_count(),
        "load_average_end": list(os.getloadavg()),
    }
    atomic.write_json(out, doc)
    print(f"wrote {out}", file=sys.stderr)

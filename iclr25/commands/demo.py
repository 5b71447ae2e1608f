"""`iclr25 demo`: every registered subcommand on its embedded default, in quick mode.

Each step runs through the real console entry point in a subprocess (so a crash in one
step cannot take the demo down) and writes its run directory under
``runs/demo-<timestamp>/<step>/`` (or under ``--out``). One summary table follows.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

from iclr25 import atomic
from iclr25.demo import HANG_FACTOR, DemoStep
from iclr25.errors import RunFailure
from iclr25.output import rows_table
from iclr25.runner import Run, with_common_options

NAME = "demo"
HELP = "Run every subcommand on its embedded default (quick mode) and summarise."


def demo_steps() -> list[DemoStep]:
    from iclr25.cli import load_command_modules

    return [step for module in load_command_modules() for step in getattr(module, "DEMO", ())]


def _run_step(step: DemoStep, folder: Path, seed: int, device: str) -> dict:
    argv = [sys.executable, "-m", "iclr25", *step.args]
    argv += ["--json", "--quiet", "--seed", str(seed), "--device", device, "--out", str(folder)]
    t0 = time.perf_counter()
    try:
        limit_s = HANG_FACTOR * step.timeout_s
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=limit_s)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "headline": f"stopped after {limit_s:.0f} s (hung?)"}
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        return {"status": f"exit {proc.returncode}", "headline": last, "seconds": seconds}
    try:
        headline = step.headline(json.loads(proc.stdout))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        return {"status": "bad output", "headline": repr(exc), "seconds": seconds}
    if seconds > step.timeout_s:
        headline += f" [took {seconds:.0f} s, over its {step.timeout_s:.0f} s budget]"
    return {"status": "ok", "headline": headline, "seconds": seconds}


def _run_all(steps: list[DemoStep], base: Path, run: Run) -> list[dict]:
    rows = []
    with run.progress("demo", total=len(steps)) as advance:
        for step in steps:
            outcome = _run_step(step, base / step.folder, run.seed, run.options.device)
            rows.append({"command": step.title, **outcome})
            advance(1, step=step.title)
    return rows


def demo(*, run: Run) -> None:
    """JSON results: ``steps`` (list of ``{"command", "status", "headline"}``),
    ``run_dir`` and ``failed`` (count). Per-step seconds are under ``timings``."""
    steps = demo_steps()
    if run.staging is not None:
        rows = _run_all(steps, run.staging, run)
        run_dir = run.options.out
    else:
        run_dir = Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")
        with atomic.staged_dir(run_dir) as staging:
            rows = _run_all(steps, staging, run)
    for row in rows:
        run.timings[f"{row['command']}_s"] = row.pop("seconds", float("nan"))
    failed = [r for r in rows if r["status"] != "ok"]
    results = {"steps": rows, "run_dir": str(run_dir), "failed": len(failed)}

    def render(console, res) -> None:
        table_rows = [
            {**r, "time_s": f"{run.timings.get(r['command'] + '_s', float('nan')):.1f}"}
            for r in res["steps"]
        ]
        cols = ["command", "status", "headline", "time_s"]
        console.print(rows_table(table_rows, cols, title="iclr25 demo"))
        console.print(f"Run directories: {res['run_dir']}")

    run.finish(results, {"steps": [s.title for s in steps]}, render)
    if failed:
        raise RunFailure(
            f"{len(failed)} demo step(s) failed: {', '.join(r['command'] for r in failed)}",
            "run the failing command alone with --verbose to see why",
        )


app = with_common_options(demo)

"""Measured sections of docs/distributed.md: the execution layer's benchmark."""

from __future__ import annotations

from docs.sections import md_table, num

RESULT = "benchmarks/results/parallel.json"
SIDES = {
    "in-process": "in-process (`--workers 1`)",
    "processes-2": "process pool (`--workers 2`)",
    "dask-local-2": "LocalCluster started per run (`--scheduler local --workers 2`)",
    "dask-running-2": "2-worker Dask cluster already running (`--scheduler ADDRESS`)",
}


def render_overhead(sources) -> str:
    doc = sources.load(RESULT)
    sweep = doc["timings"]["sweep"]
    base = sweep["in-process"]["median_s"]
    rows = [
        [label, num(sweep[side]["median_s"]), num(base / sweep[side]["median_s"])]
        for side, label in SIDES.items()
        if side in sweep
    ]
    table = md_table(rows, ["backend", "sweep, median s", "speed-up vs in-process"])
    overhead = doc["figures"]["per_task_overhead_ms"]
    small, large = sorted(int(k.rsplit("_", 1)[1]) for k in doc["timings"] if k.startswith("empty"))
    per_task = md_table(
        [[SIDES[side], num(ms)] for side, ms in overhead.items()],
        ["backend", "cost per extra task, ms"],
    )
    identical = "identical to" if doc["figures"]["sweep"]["identical_results"] else "NOT equal to"
    return (
        f"{table}\n\nEvery backend's results were {identical} the in-process ones. "
        f"Per-task overhead: the slope of the wall time of {small} and {large} empty tasks "
        f"(median of {doc['timing_protocol']['repeats']} interleaved rounds), so the fixed cost "
        f"of starting or connecting is left out:\n\n{per_task}\n"
    )


SECTIONS = {"overhead": render_overhead}

"""Measured sections of docs/distributed.md: the execution layer's benchmark."""

from __future__ import annotations

from docs.sections import md_table, num

RESULT = "benchmarks/results/parallel.json"
SIDES = {
    "in-process": "in-process (`--workers 1`)",
    "processes-2": "process pool (`--workers 2`)",
    "dask-local-2": "LocalCluster started per run (`--scheduler local --workers 2`)",
    "dask-running-2": "2-worker Dask cluster already running (`--scheduler ADDRESS`)",
    "bare-2": "control: 2 bare processes, no execution layer (every other cell each)",
}


def _setting(doc: dict) -> str:
    """The sweep's size and how busy the machine was (the figures depend on both)."""
    sweep = doc["figures"]["sweep"]
    load = doc["figures"].get("machine_load")
    cpu_s = doc["timings"]["sweep"]["in-process"].get("cpu_median_s")
    text = (
        f"The sweep: {num(sweep['cells'])} cells of {num(sweep['runs_per_cell'])} runs each, "
        f"{num(cpu_s)} s of CPU in one process (median); "
        f"{doc['timing_protocol']['repeats']} interleaved rounds, no warm-up round (each "
        "side's first call includes its start-up)."
    )
    if load:
        text += (
            f" The machine has {num(load['cores'])} cores; its 1-minute load average was "
            f"{num(load['load_avg_1min_start'])} when the run started and "
            f"{num(load['load_avg_1min_end'])} when it ended (other jobs shared it; see "
            "*Reading these figures* below)."
        )
    groups = (load or {}).get("busy_autogroups_during_sweep") or {}
    if groups.get("samples"):
        text += (
            f" This process could run on {num(load['affinity_cpus'])} CPUs "
            f"(`os.sched_getaffinity`); autogroup scheduling was "
            f"{'on' if load['autogroup_enabled'] else 'off'}, and sessions with a runnable "
            f"process numbered {num(groups['median'])} (median of {num(groups['samples'])} "
            f"samples every 2 s during the timed rounds; range {num(groups['min'])}–"
            f"{num(groups['max'])})."
        )
    return text


def _limits(doc: dict) -> str:
    """Granularity, fixed costs and the bare-process control (when the run has them)."""
    figures = doc["figures"]
    grain, fixed = figures.get("granularity"), figures.get("fixed_cost_s")
    if not grain or not fixed:
        return ""
    sweep = figures["sweep"]
    return (
        f"\n**What limits the speed-up.** Granularity: one cell takes "
        f"{num(grain['cell_cpu_s_min'])}–{num(grain['cell_cpu_s_max'])} s of CPU (median "
        f"{num(grain['cell_cpu_s_median'])} s, {num(grain['total_cpu_s'])} s in all), so on 2 "
        f"free cores the cells allow a speed-up of {num(grain['speedup_bound_2_workers'])} "
        f"(longest-first makespan {num(grain['makespan_2_workers_cpu_s'])} s). Fixed cost per "
        f"run (the empty-task lines' intercept): "
        + ", ".join(f"{SIDES[k].split(' (')[0]} {num(v)} s" for k, v in fixed.items())
        + f". The control of 2 bare processes ran {num(sweep['speedup_bare2_vs_in_process'])}× "
        f"as fast as in-process; the process pool ran at "
        f"{num(sweep['speed_processes2_vs_bare2'])}× the control's speed.\n"
    )


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
        f"{_setting(doc)}\n\n{table}\n\nEvery backend's results were {identical} the "
        f"in-process ones. Per-task overhead: the slope of the wall time of {small} and "
        f"{large} empty tasks (median of {doc['timing_protocol']['repeats']} interleaved "
        f"rounds), so the fixed cost of starting or connecting is left out:\n\n{per_task}\n"
        f"{_limits(doc)}"
    )


SECTIONS = {"overhead": render_overhead}

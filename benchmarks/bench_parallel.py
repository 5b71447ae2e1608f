"""The execution layer: a CPU-bound sweep on 2 processes and on a 2-worker Dask cluster.

The sweep is bandit-replicable's worst-case cell: an algorithm on the two-level instance
family (k = 5 arms, one better by the gap Δ) at a horizon T, ``runs`` independent
executions, through the bandit core's public ``run_experiment``. 24 cells (UCB1 and
Thompson sampling × :data:`HORIZONS` × 6 gaps, :data:`RUNS_PER_CELL` runs each), each a
task of :func:`bandit_cell` (the runs of a cell are vectorised, so a cell's cost grows
with its horizon far more than with its runs); the in-process side's CPU time is in the
results.
Reduced size: the machine these figures come from is 2 cores shared by up to 8
engineers' jobs, and the whole benchmark must finish in about 15 minutes there. The fixed
costs of a parallel run (starting processes or a cluster, each process's first imports)
therefore weigh more here than in a real sweep (10^4 runs), where they are amortised
over far more work.

Sides, timed interleaved (one call = the whole sweep through ``run_tasks``, cache off):

- ``in-process``: ``--workers 1``, the reference;
- ``processes-2``: ``--workers 2``, a local process pool (start-up included);
- ``dask-local-2``: ``--scheduler local --workers 2``: a LocalCluster started and closed
  inside every call (what a user gets, start-up included);
- ``dask-running-2``: a cluster already running, set up as on many machines (a ``dask
  scheduler`` process and two single-threaded ``dask worker`` processes), reached with
  ``--scheduler ADDRESS``: the steady state of a long-lived cluster (a figure).

Every call's results are compared with the first in-process call's (they must be
identical: the speed-up of a different computation would not be comparable).

Dask's per-task overhead: ``run_tasks`` of N empty tasks on the running cluster for two
values of N; the slope (seconds per extra task) excludes the fixed cost of connecting.
The same for the process pool and in-process, for scale. The scheduler runs in its own
process, so the benchmark process's CPU time is the client's share.

The machine these figures come from has 2 cores shared with other jobs: a speed-up of
2 needs both cores free for the whole run, so a busy machine distorts it (the load
average at the start and end of the run is recorded beside the figures).
"""

from __future__ import annotations

import numpy as np

from benchmarks.harness import Report, Target
from iclr25.core.bandit_replicable.environments import two_level
from iclr25.core.bandit_replicable.simulate import SimulationConfig, run_experiment
from iclr25.parallel import Execution, Task, derive_seed, run_tasks
from iclr25.timing import TimingConfig

NAME = "parallel"
TARGETS = {
    "speedup_processes2_vs_in_process": Target(
        ">=", 1.6, "issue 14: --workers 2 on a 2-core machine (2.0 is the ceiling)"
    ),
    "speedup_dask_local2_vs_in_process": Target(
        ">=", 1.6, "issue 14: a 2-worker LocalCluster, start-up included"
    ),
}
SEED = 0
HORIZONS = (5000, 2000)  # longest first: the last cells to finish are short (reduced size)
RUNS_PER_CELL = 20  # executions per cell
REPEATS = 5  # interleaved rounds (the harness minimum; each side's first call includes start-up)


def bandit_cell(config: dict, seed: int) -> dict:
    """One sweep cell: ``config`` {"algo", "horizon", "gap", "k", "runs"}."""
    env = two_level(config["k"], config["gap"])
    sim = SimulationConfig(config["algo"], config["horizon"], config["runs"], curve_points=0)
    result = run_experiment(env, sim, seed)
    return {key: result[key] for key in ("mean_regret", "regret_sd", "distinct_traces")}


def empty_task(config: dict, seed: int) -> int:
    """Nothing to compute: what is left is the layer's cost per task."""
    return seed


def sweep(quick: bool) -> list[Task]:
    horizons, gaps, runs = ((300,), (0.1, 0.4), 20) if quick else (HORIZONS, None, RUNS_PER_CELL)
    gaps = gaps or tuple(float(g) for g in np.geomspace(0.05, 0.8, 6))
    return [
        Task(
            bandit_cell,
            {"algo": algo, "horizon": horizon, "gap": gap, "k": 5, "runs": runs},
            derive_seed(SEED, algo, horizon, gap),
            label=f"{algo} T={horizon} gap={gap:.3g}",
        )
        for horizon in horizons  # the longest cells first: the last ones to finish are short
        for algo in ("thompson", "ucb1")
        for gap in gaps
    ]


def _runner(tasks: list[Task], execution: Execution, seen: dict, side: str):
    """One call of ``side``: the whole list through ``run_tasks``; its results are kept in
    ``seen["results"][side]`` (compared across sides after the run)."""

    def call() -> None:
        out = run_tasks(tasks, execution, command="bench parallel")
        seen.setdefault("results", {}).setdefault(side, []).append(out.results)
        seen.setdefault(side, out.workers)

    return call


def _differing(seen: dict) -> list[str]:
    """The sides any of whose calls gave other results than the first in-process call."""
    reference = seen["results"]["in-process"][0]
    return [side for side, calls in seen["results"].items() if any(r != reference for r in calls)]


def run(report: Report) -> None:
    import os
    import tempfile

    from iclr25.testing import DaskProcesses

    tasks = sweep(report.quick)
    load_start = os.getloadavg()[0]
    seen: dict = {}
    with tempfile.TemporaryDirectory() as folder, DaskProcesses(folder) as cluster:
        cluster.ensure_workers(2)
        sides = {
            name: _runner(tasks, execution, seen, name)
            for name, execution in {
                "in-process": Execution(cache=False),
                "processes-2": Execution(workers=2, cache=False),
                "dask-local-2": Execution(workers=2, scheduler="local", cache=False),
                "dask-running-2": Execution(scheduler=cluster.address, cache=False),
            }.items()
        }
        # no warm-up round: each side's first call (its start-up) is part of what a run costs
        timed = report.time("sweep", sides, config=TimingConfig(warmup=0, repeats=REPEATS))
        _overhead(report, cluster.address)
    different = _differing(seen)
    comparable = not different
    note = "" if comparable else f"results differ from in-process: {different}"
    for target, side in (
        ("speedup_processes2_vs_in_process", "processes-2"),
        ("speedup_dask_local2_vs_in_process", "dask-local-2"),
    ):
        report.check(target, timed.ratio("in-process", side), comparable=comparable, note=note)
    report.figure(
        "sweep",
        {
            "cells": len(tasks),
            "runs_per_cell": tasks[0].config["runs"],
            "speedup_dask_running2_vs_in_process": timed.ratio("in-process", "dask-running-2"),
            "identical_results": comparable,
        },
    )
    report.figure(
        "machine_load",
        {
            "cores": os.cpu_count(),
            "load_avg_1min_start": load_start,
            "load_avg_1min_end": os.getloadavg()[0],
        },
    )


def _overhead(report: Report, address: str) -> None:
    """Per-task seconds of each backend: the slope of wall time over N empty tasks."""
    small, large = (20, 100) if report.quick else (50, 250)
    executions = {
        "in-process": Execution(cache=False),
        "processes-2": Execution(workers=2, cache=False),
        "dask-running-2": Execution(scheduler=address, cache=False),
    }
    timed = {}
    for n in (small, large):
        tasks = [Task(empty_task, {}, i) for i in range(n)]
        timed[n] = report.time(
            f"empty_tasks_{n}",
            {name: _runner(tasks, ex, {}, name) for name, ex in executions.items()},
            config=TimingConfig(warmup=1, repeats=REPEATS),
        )
    report.figure(
        "per_task_overhead_ms",
        {
            name: 1e3 * (timed[large].seconds(name) - timed[small].seconds(name)) / (large - small)
            for name in executions
        },
    )

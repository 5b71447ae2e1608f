"""A small command on the real CLI contract, for the execution layer's end-to-end tests.

It is what a command with independent tasks looks like (the runner's common options,
``--workers/--scheduler/--no-cache``, ``run_with_progress``, ``--out``), without being one
of the toolkit's commands: ``python tests/parallel_app.py --tasks 8 --sleep-s 0.2 --json``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from iclr25 import atomic, parallel_options
from iclr25.parallel import Task, derive_seed
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt
from iclr25.runner import command
from iclr25.testing import sample_task

app = typer.Typer(add_completion=False)


@command(app, "sweep")
def sweep(
    tasks: Annotated[int, typer.Option("--tasks")] = 8,
    sleep_s: Annotated[float, typer.Option("--sleep-s")] = 0.0,
    started_dir: Annotated[str, typer.Option("--started-dir")] = "",
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run,
) -> None:
    execution = parallel_options.execution(workers, scheduler, no_cache)
    config = {"n": 4, "sleep_s": sleep_s, "started_dir": started_dir or None}
    jobs = [
        Task(sample_task, config, derive_seed(run.seed, "cell", i), label=f"cell {i}")
        for i in range(tasks)
    ]
    outcome = parallel_options.run_with_progress(run, jobs, execution, command="test-sweep")
    path = run.artifact_path("cells.json")
    if path is not None:
        atomic.write_json(path, outcome.results)
    run.finish({"cells": outcome.results}, {"tasks": tasks})


if __name__ == "__main__":
    app()

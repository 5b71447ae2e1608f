"""The execution options every command with independent tasks accepts, defined once.

``--workers N`` (local processes), ``--scheduler ADDRESS|local`` (Dask) and ``--no-cache``
(recompute every task) map to :class:`iclr25.parallel.Execution`; :func:`report` puts how
the tasks ran in the JSON ``environment.execution`` block (never in ``results``, which are
the same whatever the backend) and warns when tasks had to be retried.
:func:`run_with_progress` is the usual way to run a command's tasks: a progress bar fed
by tasks as they finish (stderr, terminal only), then :func:`report`::

    execution = parallel_options.execution(workers, scheduler, no_cache)
    outcome = parallel_options.run_with_progress(run, tasks, execution, command="x sweep")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from iclr25.parallel import Execution, Outcome, Task, run_tasks

PANEL = "Execution"

WorkersOpt = Annotated[
    int,
    typer.Option(
        "--workers",
        help="Local processes for independent tasks (1 = in-process). With --scheduler "
        "local: the number of Dask workers.",
        rich_help_panel=PANEL,
    ),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="Run tasks on a Dask cluster: its scheduler's address (tcp://HOST:8786), or "
        "`local` for a LocalCluster on this machine. Needs the `distributed` extra.",
        rich_help_panel=PANEL,
    ),
]
NoCacheOpt = Annotated[
    bool,
    typer.Option(
        "--no-cache",
        help="Recompute every task instead of reusing finished ones from the task cache "
        "(~/.cache/iclr25/tasks), which lets an interrupted run resume.",
        rich_help_panel=PANEL,
    ),
]


def execution(workers: int = 1, scheduler: str | None = None, no_cache: bool = False) -> Execution:
    return Execution(workers=workers, scheduler=scheduler, cache=not no_cache)


def run_with_progress(
    run, tasks: Sequence[Task], execution: Execution, *, command: str, description: str = "tasks"
) -> Outcome:
    """:func:`iclr25.parallel.run_tasks` with a progress bar (advanced as each task
    finishes, whatever the backend; retries shown beside it), then :func:`report`."""
    with run.progress(description, total=len(tasks)) as advance:
        outcome = run_tasks(
            tasks,
            execution,
            command=command,
            on_done=advance,
            on_retry=lambda total: advance(0, retries=total),
        )
    report(run, outcome)
    return outcome


def report(run, outcome: Outcome) -> None:
    """Record the backend, reuse and retries of ``outcome`` on the run (counts add up over
    several calls in one command; ``workers`` is the largest)."""
    info = run.environment_extra.setdefault("execution", {})
    for key, value in outcome.summary().items():
        if key == "workers":
            info[key] = max(info.get(key, 0), value)
        else:
            info[key] = info.get(key, 0) + value if isinstance(value, int) else value
    if outcome.reused:
        run.log(f"{outcome.reused} of {len(outcome.results)} tasks reused from the task cache")
    if outcome.retries:
        run.warn(f"{outcome.retries} task attempt(s) were retried (a worker died or a task raised)")

"""The execution options every command with independent tasks accepts, defined once.

``--workers N`` (local processes), ``--scheduler ADDRESS|local`` (Dask) and ``--no-cache``
(recompute every task) map to :class:`iclr25.parallel.Execution`; :func:`report` puts how
the tasks ran in the JSON ``environment.execution`` block (never in ``results``, which are
the same whatever the backend) and warns when tasks had to be retried.
"""

from __future__ import annotations

from typing import Annotated

import typer

from iclr25.parallel import Execution, Outcome

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


def report(run, outcome: Outcome) -> None:
    """Record the backend, reuse and retries of ``outcome`` on the run."""
    info = run.environment_extra.setdefault("execution", {})
    for key, value in outcome.summary().items():
        info[key] = info.get(key, 0) + value if isinstance(value, int) else value
    if outcome.reused:
        run.log(f"{outcome.reused} of {len(outcome.results)} tasks reused from the task cache")
    if outcome.retries:
        run.warn(f"{outcome.retries} task attempt(s) were retried (a worker died or a task raised)")

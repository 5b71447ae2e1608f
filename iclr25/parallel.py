"""One execution layer for independent tasks: in-process, local processes, or Dask.

A *task* is a pure function of (configuration, seed) returning a JSON-able result: a
bandit sweep cell, a coverage trial, one seed × variant of a comparison, a shard of
queries. :func:`run_tasks` runs a list of them on one of three backends and returns the
results in task order:

- in-process (``workers=1``, the default): a plain loop;
- ``workers=N``: a local pool of N spawned processes (no fork of a threaded parent);
- ``scheduler="tcp://HOST:8786"``: a running Dask distributed scheduler, or
  ``scheduler="local"``: a ``dask.distributed.LocalCluster`` sized to the machine (or to
  ``workers`` when given). Needs the ``distributed`` extra.

**Same results whatever the backend.** A task's seed is part of the task (derive it with
:func:`derive_seed` from the run's seed and the task's labels, never from worker order),
and every result goes through a JSON round trip, so a result computed in-process, in a
worker, or read back from the cache is the same JSON.

**Resume.** With ``cache=True`` each finished result is stored at once in
``<cache>/tasks/<key>.json``, the key hashing the command, the toolkit version, the task
function, its configuration and its seed. Re-running the same command after an
interruption recomputes only the missing tasks (``Outcome.reused`` says how many were
read back).

**Faults.** On Dask, a task whose worker dies is rescheduled by the scheduler and a task
that raises is retried up to ``retries`` times; ``Outcome.retries`` counts both. Ctrl-C
cancels the outstanding futures (or terminates the pool) and re-raises; results already
finished stay in the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from iclr25 import __version__, atomic
from iclr25.errors import RunFailure, UsageError
from iclr25.paths import cache_dir

DistributedHint = "install the extra: pip install 'iclr25[distributed]'"


@dataclass(frozen=True)
class Execution:
    """Where tasks run (the ``--workers`` / ``--scheduler`` / ``--no-cache`` options)."""

    workers: int = 1  # local processes; 1 = in-process (with a scheduler: LocalCluster size)
    scheduler: str | None = None  # None, "local", or a Dask address "tcp://HOST:PORT"
    cache: bool = True  # store and reuse finished task results
    retries: int = 2  # Dask: re-runs of a task that raised (worker deaths are rescheduled)
    connect_timeout_s: float = 10.0  # an unreachable scheduler is an error after this

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise UsageError(f"--workers {self.workers} must be at least 1", "use --workers 1")
        if self.scheduler is not None and not (
            self.scheduler == "local" or "://" in self.scheduler
        ):
            raise UsageError(
                f"--scheduler {self.scheduler!r} is not a Dask address",
                "give `local` or an address such as tcp://10.0.0.5:8786",
            )

    @property
    def backend(self) -> str:
        if self.scheduler == "local":
            return "dask:local"
        if self.scheduler:
            return f"dask:{self.scheduler}"
        return "in-process" if self.workers == 1 else f"processes:{self.workers}"


@dataclass(frozen=True)
class Task:
    """``fn(config, seed)``: ``fn`` a module-level function (it is pickled to workers)."""

    fn: Callable[[Any, int], Any]
    config: Any
    seed: int
    label: str = ""  # shown in errors, e.g. "ucb1 T=10000"


@dataclass
class Outcome:
    results: list[Any]  # in task order, each the JSON round trip of fn's return value
    backend: str
    reused: int = 0  # read back from the task cache
    computed: int = 0
    retries: int = 0  # Dask: reschedules after a worker died + retries after an exception
    seconds: float = 0.0
    keys: list[str] = field(default_factory=list, repr=False)

    def summary(self) -> dict:
        return {
            "backend": self.backend,
            "tasks": len(self.results),
            "reused": self.reused,
            "computed": self.computed,
            "retries": self.retries,
        }


# ---------------------------------------------------------------------------------------
# Seeds and keys
# ---------------------------------------------------------------------------------------
def derive_seed(seed: int, *labels: Any) -> int:
    """A 63-bit seed for the task named by ``labels`` under the run seed ``seed``: stable
    across processes and Python versions (no ``hash()``), independent of task order."""
    text = json.dumps([int(seed), *[str(x) for x in labels]])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def _jsonable(obj: Any) -> Any:
    from iclr25.output import to_jsonable

    return to_jsonable(obj)


def _canonical(obj: Any) -> Any:
    """The JSON round trip: what a result looks like after caching or a network hop."""
    return json.loads(json.dumps(_jsonable(obj), allow_nan=False, sort_keys=False))


def task_key(command: str, task: Task) -> str:
    name = f"{task.fn.__module__}.{task.fn.__qualname__}"
    payload = [command, __version__, name, _jsonable(task.config), int(task.seed)]
    text = json.dumps(payload, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def task_cache_dir():
    return cache_dir("tasks")


def _cache_read(key: str) -> tuple[bool, Any]:
    path = task_cache_dir() / f"{key}.json"
    try:
        return True, json.loads(path.read_text())["result"]
    except (OSError, ValueError, KeyError):
        return False, None


def _cache_write(key: str, result: Any) -> None:
    atomic.write_json(task_cache_dir() / f"{key}.json", {"result": result})


# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------
def _call(job: tuple[Callable, Any, int]) -> Any:
    fn, config, seed = job
    return _canonical(fn(config, seed))


def run_tasks(
    tasks: Sequence[Task],
    execution: Execution | None = None,
    *,
    command: str = "",
    on_done: Callable[[int], None] | None = None,
) -> Outcome:
    """Run ``tasks`` on ``execution``'s backend; results in task order (module docstring).

    ``command`` names the run for the cache key (e.g. ``"bandit-replicable sweep"``);
    ``on_done(n)`` is called as tasks finish (progress bars)."""
    execution = execution or Execution()
    t0 = time.perf_counter()
    keys = [task_key(command, t) for t in tasks]
    results: list[Any] = [None] * len(tasks)
    todo: list[int] = []
    reused = 0
    for i, key in enumerate(keys):
        hit, value = _cache_read(key) if execution.cache else (False, None)
        if hit:
            results[i] = value
            reused += 1
        else:
            todo.append(i)
    if reused and on_done is not None:
        on_done(reused)

    def finished(i: int, value: Any) -> None:
        results[i] = value
        if execution.cache:
            _cache_write(keys[i], value)
        if on_done is not None:
            on_done(1)

    retries = 0
    if todo:
        if execution.scheduler is not None:
            retries = _run_dask(tasks, todo, execution, finished)
        elif execution.workers > 1 and len(todo) > 1:
            _run_processes(tasks, todo, execution.workers, finished)
        else:
            for i in todo:
                finished(i, _run_one(tasks[i]))
    return Outcome(
        results=results,
        backend=execution.backend,
        reused=reused,
        computed=len(todo),
        retries=retries,
        seconds=time.perf_counter() - t0,
        keys=keys,
    )


def _run_one(task: Task) -> Any:
    return _call((task.fn, task.config, task.seed))


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _indexed_call(job: tuple[int, Callable, Any, int]) -> tuple[int, Any]:
    i, fn, config, seed = job
    return i, _call((fn, config, seed))


def _run_processes(tasks, todo, workers: int, finished) -> None:
    """A spawned pool; workers ignore SIGINT and are terminated when the parent stops
    (Ctrl-C, SIGTERM, an error), so an interrupted run does not wait for queued tasks."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    jobs = [(i, tasks[i].fn, tasks[i].config, tasks[i].seed) for i in todo]
    with context.Pool(min(workers, len(jobs)), initializer=_ignore_sigint) as pool:
        for i, value in pool.imap_unordered(_indexed_call, jobs):
            finished(i, value)


# ---------------------------------------------------------------------------------------
# Dask
# ---------------------------------------------------------------------------------------
def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise UsageError(
            "--scheduler needs dask.distributed, which is not installed", DistributedHint
        ) from None
    return distributed


def _connect(execution: Execution):
    """(client, cluster or None) for ``execution.scheduler``."""
    distributed = _import_distributed()
    if execution.scheduler == "local":
        n = execution.workers if execution.workers > 1 else (os.cpu_count() or 1)
        cluster = distributed.LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
        )
        return distributed.Client(cluster), cluster
    try:
        client = distributed.Client(
            execution.scheduler, timeout=f"{execution.connect_timeout_s}s", set_as_default=False
        )
    except (OSError, TimeoutError) as exc:
        raise UsageError(
            f"cannot reach the Dask scheduler at {execution.scheduler} within "
            f"{execution.connect_timeout_s:g} s ({type(exc).__name__})",
            "start one with `dask scheduler` (and `dask worker ADDRESS`), or check the address",
        ) from None
    return client, None


def _retry_counts(dask_scheduler=None, keys=(), allowed: int = 0) -> int:
    """Runs on the scheduler: reschedules after a worker died (``suspicious``) plus
    retries used after an exception (``allowed`` minus what is left)."""
    used = 0
    for key in keys:
        ts = dask_scheduler.tasks.get(key)
        if ts is not None:
            used += int(getattr(ts, "suspicious", 0) or 0)
            used += max(0, allowed - int(getattr(ts, "retries", allowed) or 0))
    return used


def _run_dask(tasks, todo, execution: Execution, finished) -> int:
    distributed = _import_distributed()
    client, cluster = _connect(execution)
    futures = {}
    try:
        for i in todo:
            t = tasks[i]
            future = client.submit(
                _call, (t.fn, t.config, t.seed), retries=execution.retries, pure=False
            )
            futures[future] = i
        for future in distributed.as_completed(futures):
            i = futures[future]
            try:
                value = future.result()
            except Exception as exc:  # noqa: BLE001 - a task failed after its retries
                label = tasks[i].label or f"task {i}"
                raise RunFailure(
                    f"{label} failed on the Dask cluster: {type(exc).__name__}: {exc}",
                    "rerun with --workers 1 (no --scheduler) to see the error locally",
                ) from exc
            finished(i, value)
        keys = [f.key for f in futures]
        return int(client.run_on_scheduler(_retry_counts, keys=keys, allowed=execution.retries))
    except BaseException:
        if futures:
            client.cancel(list(futures))
        raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

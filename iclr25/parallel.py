"""One execution layer for independent tasks: in-process, local processes, or Dask.

A *task* is a pure function of (configuration, seed) returning a JSON-able result: a
bandit sweep cell, a coverage trial, one seed × variant of a comparison, a shard of
queries. :func:`run_tasks` runs a list of them on one of three backends and returns the
results in task order:

- in-process (``workers=1``, the default): a plain loop;
- ``workers=N``: a local pool of N processes (forked from a clean fork server, never
  from this threaded process; spawned where there is no fork server);
- ``scheduler="tcp://HOST:8786"``: a running Dask distributed scheduler, or
  ``scheduler="local"``: a ``dask.distributed.LocalCluster`` sized to the machine (or to
  ``workers`` when given). Needs the ``distributed`` extra.

**Same results whatever the backend.** A task's seed is part of the task (derive it with
:func:`derive_seed` from the run's seed and the task's labels, never from worker order),
and every result goes through a JSON round trip, so a result computed in-process, in a
worker, or read back from the cache is the same JSON.

**Resume.** With ``cache=True`` each finished result is stored at once in
``<cache>/tasks/<key>.json``, the key hashing the command, the toolkit version, the task
function, its configuration, its seed and the code that computes it: a digest of every
file of the installed ``iclr25`` package (:func:`package_digest`, once per process) and
of the task function's own module file when it lives outside the package (a benchmark,
a test, a user's script). Re-running the same command after an interruption recomputes
only the missing tasks (``Outcome.reused`` says how many were read back); after any
change to the code, nothing is reused, so a cached result never outlives the code that
produced it.

The backends live in :mod:`iclr25.parallel_local` (the pool) and
:mod:`iclr25.parallel_dask`.

**Faults.** On Dask, a task whose worker dies is rescheduled by the scheduler and a task
that raises is retried up to ``retries`` times; ``Outcome.retries`` counts both, read from
the scheduler's own record of each task (``TaskState.suspicious``: the workers that died
while running it; ``TaskState.retries``: the retries left) before the finished task is
released, within ``parallel_dask.RETRY_POLL_S`` of its result arriving, so a worker that dies later
does not make the scheduler recompute results the client already holds.

**Ctrl-C.** Local worker processes (the pool's, a LocalCluster's) ignore SIGINT
(:func:`iclr25.parallel_local.worker_context`), so a Ctrl-C in the terminal reaches only
this process: it cancels the outstanding futures (or terminates the pool), closes the
cluster and re-raises :class:`KeyboardInterrupt` (the CLI exits 130); one pressed while
a cluster starts or closes takes effect right after. Every cache entry is written whole
or not at all, so an interrupted run leaves finished results only, and the next run
resumes from them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iclr25 import __version__
from iclr25.errors import UsageError
from iclr25.parallel_dask import DistributedHint
from iclr25.parallel_local import call_task, jsonable, run_processes
from iclr25.paths import cache_dir

#: more local processes than this per core only thrash (tasks are CPU-bound)
MAX_WORKERS_PER_CORE = 4


def distributed_installed() -> bool:
    """Whether ``dask.distributed`` can be imported (checked without importing it)."""
    try:
        return all(importlib.util.find_spec(m) is not None for m in ("dask", "distributed"))
    except (ImportError, ValueError):  # a parent package that is not importable
        return False


@dataclass(frozen=True)
class Execution:
    """Where tasks run (the ``--workers`` / ``--scheduler`` / ``--no-cache`` options)."""

    workers: int = 1  # local processes; 1 = in-process (with a scheduler: LocalCluster size)
    scheduler: str | None = None  # None, "local", or a Dask address "tcp://HOST:PORT"
    cache: bool = True  # store and reuse finished task results
    retries: int = 2  # Dask: re-runs of a task that raised (worker deaths are rescheduled)
    #: an unreachable scheduler is an error after this (plus start-up, within 10 s in all)
    connect_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise UsageError(f"--workers {self.workers} must be at least 1", "use --workers 1")
        cores = os.cpu_count() or 1
        if self.workers > MAX_WORKERS_PER_CORE * cores and self.scheduler in (None, "local"):
            raise UsageError(
                f"--workers {self.workers} starts more than {MAX_WORKERS_PER_CORE} processes "
                f"per core on this {cores}-core machine",
                f"use at most --workers {MAX_WORKERS_PER_CORE * cores}, or a Dask cluster "
                "(--scheduler ADDRESS) for more",
            )
        if self.scheduler is None:
            return
        if not (self.scheduler == "local" or "://" in self.scheduler):
            raise UsageError(
                f"--scheduler {self.scheduler!r} is not a Dask address",
                "give `local` or an address such as tcp://10.0.0.5:8786",
            )
        if self.scheduler != "local" and self.workers > 1:
            raise UsageError(
                f"--workers {self.workers} has no effect on the cluster at {self.scheduler} "
                "(its size is the number of `dask worker` processes started on it)",
                "drop --workers, or use it with --scheduler local",
            )
        if not distributed_installed():
            raise UsageError(
                "--scheduler needs dask.distributed, which is not installed", DistributedHint
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
    workers: int = 1  # processes that ran tasks (Dask: workers connected at the start)
    seconds: float = 0.0
    keys: list[str] = field(default_factory=list, repr=False)

    def summary(self) -> dict:
        return {
            "backend": self.backend,
            "tasks": len(self.results),
            "reused": self.reused,
            "computed": self.computed,
            "retries": self.retries,
            "workers": self.workers,
        }


# ---------------------------------------------------------------------------------------
# Seeds and keys
# ---------------------------------------------------------------------------------------
def derive_seed(seed: int, *labels: Any) -> int:
    """A 63-bit seed for the task named by ``labels`` under the run seed ``seed``: stable
    across processes and Python versions (no ``hash()``), independent of task order."""
    text = json.dumps([int(seed), *[str(x) for x in labels]])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def task_key(command: str, task: Task) -> str:
    """The task's cache key: command, version, function, code digests, config, seed."""
    name = f"{task.fn.__module__}.{task.fn.__qualname__}"
    code = [package_digest(), module_digest(task.fn.__module__)]
    payload = [command, __version__, name, code, jsonable(task.config), int(task.seed)]
    text = json.dumps(payload, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:40]


PACKAGE_DIR = Path(__file__).resolve().parent


def _digest_files(root: Path, files) -> str:
    """SHA-256 over (path relative to ``root``, contents) of ``files`` in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@functools.cache
def package_digest() -> str:
    """A digest of every file of the ``iclr25`` package this process imported (its
    sources, kernels and bundled data; not ``__pycache__``): computed once per process
    (a few MB, milliseconds), it changes with any edit, so a task cached by other code
    is never reused."""
    files = (
        p
        for p in PACKAGE_DIR.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.relative_to(PACKAGE_DIR).parts
        and p.suffix not in (".pyc", ".pyo")
    )
    return _digest_files(PACKAGE_DIR, files)


@functools.cache
def module_digest(module: str) -> str:
    """A digest of a task function's module file when it lies outside the package (in
    the package, :func:`package_digest` covers it); ``""`` when it has no file."""
    path = getattr(sys.modules.get(module), "__file__", None)
    if not path:
        return ""
    path = Path(path).resolve()
    if path.is_relative_to(PACKAGE_DIR) or not path.is_file():
        return ""
    return _digest_files(path.parent, [path])


def task_cache_dir():
    return cache_dir("tasks")


def _cache_read(key: str) -> tuple[bool, Any]:
    path = task_cache_dir() / f"{key}.json"
    try:
        return True, json.loads(path.read_text())["result"]
    except (OSError, ValueError, KeyError):
        return False, None


def _cache_write(key: str, result: Any) -> None:
    """Whole or absent (temp file + rename), without ``fsync``: an entry lost to a power
    cut is recomputed, and an fsync per task would cost more than a small task."""
    path = task_cache_dir() / f"{key}.json"
    fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"result": result}, fh, allow_nan=False)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------
def run_tasks(
    tasks: Sequence[Task],
    execution: Execution | None = None,
    *,
    command: str = "",
    on_done: Callable[[int], None] | None = None,
    on_retry: Callable[[int], None] | None = None,
) -> Outcome:
    """Run ``tasks`` on ``execution``'s backend; results in task order (module docstring).

    ``command`` names the run for the cache key (e.g. ``"bandit-replicable sweep"``);
    ``on_done(n)`` is called as tasks finish (progress bars), first once with the number
    of results read back from the cache; ``on_retry(total)`` when the Dask scheduler
    reports more retries (a worker died, or a task raised and was re-run)."""
    execution = execution or Execution()
    t0 = time.perf_counter()
    keys = [task_key(command, t) for t in tasks]
    results: list[Any] = [None] * len(tasks)
    todo: list[int] = []
    for i, key in enumerate(keys):
        hit, value = _cache_read(key) if execution.cache else (False, None)
        if hit:
            results[i] = value
        else:
            todo.append(i)
    reused = len(tasks) - len(todo)
    if reused and on_done is not None:
        on_done(reused)

    def finished(i: int, value: Any) -> None:
        results[i] = value
        if execution.cache:
            _cache_write(keys[i], value)
        if on_done is not None:
            on_done(1)

    retries, workers = 0, 1
    if todo and execution.scheduler is not None:
        from iclr25.parallel_dask import run_dask

        retries, workers = run_dask(tasks, todo, execution, finished, on_retry)
    elif todo and execution.workers > 1 and len(todo) > 1:
        workers = run_processes(tasks, todo, execution.workers, finished)
    else:
        for i in todo:
            finished(i, _run_one(tasks[i]))
    return Outcome(
        results=results,
        backend=execution.backend,
        reused=reused,
        computed=len(todo),
        retries=retries,
        workers=workers,
        seconds=time.perf_counter() - t0,
        keys=keys,
    )


def _run_one(task: Task) -> Any:
    return call_task((task.fn, task.config, task.seed))

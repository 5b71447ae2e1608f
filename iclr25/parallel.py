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
that raises is retried up to ``retries`` times; ``Outcome.retries`` counts both, read from
the scheduler's own record of each task (``TaskState.suspicious``: the workers that died
while running it; ``TaskState.retries``: the retries left) just before the finished task
is released. Finished futures are released at once, so a worker that dies later does not
make the scheduler recompute results the client already holds.

**Ctrl-C.** Local worker processes (the pool's, a LocalCluster's) ignore SIGINT
(:func:`worker_context`), so a Ctrl-C in the terminal reaches only this process: it
cancels the outstanding futures (or terminates the pool), closes the cluster and
re-raises :class:`KeyboardInterrupt` (the CLI exits 130); one pressed while a cluster
starts or closes takes effect right after. Every cache entry is written atomically, so
an interrupted run leaves whole results or none, and the next run resumes from them.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from iclr25 import __version__
from iclr25.errors import RunFailure, UsageError
from iclr25.paths import cache_dir

DistributedHint = "install the extra: pip install 'iclr25[distributed]'"
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
def _call(job: tuple[Callable, Any, int]) -> Any:
    fn, config, seed = job
    return _canonical(fn(config, seed))


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
        retries, workers = _run_dask(tasks, todo, execution, finished, on_retry)
    elif todo and execution.workers > 1 and len(todo) > 1:
        workers = _run_processes(tasks, todo, execution.workers, finished)
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
    return _call((task.fn, task.config, task.seed))


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C (and SIGTERM) back while a cluster starts or closes, so it is never
    left half-built; one that arrived meanwhile is acted on (KeyboardInterrupt, or the
    CLI's SIGTERM handler) as soon as the block ends."""
    if not _in_main_thread():
        yield
        return
    arrived: list[int] = []
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous = {
        sig: signal.signal(sig, lambda signum, frame: arrived.append(signum)) for sig in wanted
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(arrived):
            if callable(previous[sig]):
                previous[sig](sig, None)
            elif previous[sig] == signal.SIG_DFL:
                raise KeyboardInterrupt


def worker_context():
    """A multiprocessing context whose processes ignore the terminal's Ctrl-C, so pool and
    LocalCluster workers print no traceback and stop only when this process stops them.

    The fork server is started (once) while SIGINT is ignored; every process it forks
    keeps that disposition (a blocked signal mask would not survive ``spawn``'s exec, an
    ignored signal does). Where there is no fork server (Windows), ``spawn``."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods() or not _in_main_thread():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()  # a few ms: starting the server, not the workers
    finally:
        signal.signal(signal.SIGINT, handler)
    return multiprocessing.get_context("forkserver")


#: what a worker process's BLAS and torch get, as Dask's nanny does for its workers: the
#: pool already runs one task per core (an explicit setting from the user wins)
WORKER_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _worker_init() -> None:
    """A pool process: no Ctrl-C (the parent stops it) and one BLAS / torch thread."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for var in WORKER_THREAD_VARS:
        os.environ.setdefault(var, "1")
    with contextlib.suppress(ImportError, ValueError):
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=int(os.environ["OMP_NUM_THREADS"]))


def _run_processes(tasks, todo, workers: int, finished) -> int:
    """A pool of processes from :func:`worker_context` (never a fork of this threaded
    process); returns how many. A worker that dies (killed, out of memory) fails the run
    at once instead of leaving it waiting for a result that will never come; on Ctrl-C,
    SIGTERM or an error the workers are terminated, so nothing waits for queued tasks."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    n = min(workers, len(todo))
    pool = ProcessPoolExecutor(n, mp_context=worker_context(), initializer=_worker_init)
    try:
        futures = {
            pool.submit(_call, (tasks[i].fn, tasks[i].config, tasks[i].seed)): i for i in todo
        }
        for future in as_completed(futures):
            i = futures[future]
            try:
                value = future.result()
            except BrokenProcessPool:
                raise RunFailure(
                    f"a worker process died while running {tasks[i].label or f'task {i}'} "
                    "(killed, or out of memory?)",
                    "rerun the command: finished tasks are reused from the task cache; use "
                    "fewer --workers if memory is short",
                ) from None
            finished(i, value)
    except BaseException:
        _terminate(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return n


def _terminate(pool) -> None:
    """Stop a ProcessPoolExecutor's workers now (``shutdown`` would let running tasks
    finish); ``_processes`` is the executor's own table of them."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            process.terminate()


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


def _unreachable(execution: Execution, why: str) -> UsageError:
    return UsageError(
        f"cannot reach the Dask scheduler at {execution.scheduler} within "
        f"{execution.connect_timeout_s:g} s ({why})",
        "start one with `dask scheduler` (and `dask worker ADDRESS`), or check the address",
    )


def _connect(execution: Execution):
    """(client, cluster or None) for ``execution.scheduler``; a cluster address must
    answer, and have a worker, within ``connect_timeout_s``."""
    distributed = _import_distributed()
    if execution.scheduler == "local":
        n = execution.workers if execution.workers > 1 else (os.cpu_count() or 1)
        cluster = distributed.LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: never a clash with a running cluster
            silence_logs=logging.CRITICAL,  # the run reports failures and retries itself
        )
        return distributed.Client(cluster, set_as_default=False), cluster
    try:
        client = distributed.Client(
            execution.scheduler, timeout=f"{execution.connect_timeout_s}s", set_as_default=False
        )
    except (OSError, TimeoutError, ValueError) as exc:
        raise _unreachable(execution, type(exc).__name__) from None
    try:
        client.wait_for_workers(1, timeout=execution.connect_timeout_s)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise UsageError(
            f"the Dask scheduler at {execution.scheduler} has no workers "
            f"({type(exc).__name__} after {execution.connect_timeout_s:g} s)",
            f"start some with `dask worker {execution.scheduler}`",
        ) from None
    return client, None


def _scheduler_retry_counter() -> Callable:
    """A function for ``Client.run_on_scheduler``: the retries of ``keys`` so far —
    reschedules after a worker died while running the task (``suspicious``) plus retries
    used after an exception (``allowed`` minus those left). Built as a closure so it is
    sent by value and a scheduler without iclr25 installed can run it."""

    def count(dask_scheduler=None, keys=(), allowed=0):
        used = 0
        for key in keys:
            ts = dask_scheduler.tasks.get(key)
            if ts is not None:
                used += int(getattr(ts, "suspicious", 0) or 0)
                used += max(0, allowed - int(getattr(ts, "retries", allowed) or 0))
        return used

    return count


def _task_failure(task: Task, i: int, exc: BaseException) -> RunFailure:
    label = task.label or f"task {i}"
    if type(exc).__name__ == "KilledWorker":
        return RunFailure(
            f"{label}: the Dask workers running it died {exc}",
            "check the workers' memory limit and logs (a task that crashes its process "
            "is not retried forever)",
        )
    return RunFailure(
        f"{label} failed on the Dask cluster: {type(exc).__name__}: {exc}",
        "rerun with --workers 1 (no --scheduler) to see the error locally; every worker "
        "needs the same iclr25 install",
    )


def _run_dask(tasks, todo, execution: Execution, finished, on_retry) -> tuple[int, int]:
    """(retries, workers) after running ``todo`` on the cluster of ``execution``."""
    import dask

    _import_distributed()  # its config defaults first: dask.config.set would drop them
    config = {}
    if execution.scheduler == "local":  # also for the workers the nanny restarts
        config["distributed.worker.multiprocessing-method"] = worker_context().get_start_method()
    with _quiet_logs(), dask.config.set(config):
        with _signals_deferred():
            client, cluster = _connect(execution)
        outstanding: dict = {}  # key -> future not yet finished
        try:
            return _submit_and_collect(
                client, tasks, todo, execution, finished, on_retry, outstanding
            )
        finally:
            with _signals_deferred():
                _shut_down(client, cluster, list(outstanding.values()))


#: how often the retry counts of finished tasks are read from the scheduler (one round
#: trip each time, after which those tasks are released)
RETRY_POLL_S = 0.5


def _submit_and_collect(client, tasks, todo, execution, finished, on_retry, outstanding: dict):
    """Submit ``todo`` and hand each result to ``finished`` as it arrives. Every
    ``RETRY_POLL_S`` (and at the end) the scheduler's retry record of the tasks finished
    since is read and those futures are released, so a worker that dies later makes the
    scheduler recompute nothing. ``outstanding`` keeps the futures not finished yet."""
    distributed = _import_distributed()
    workers = _worker_count(client)
    jobs = [(tasks[i].fn, tasks[i].config, tasks[i].seed) for i in todo]
    names = [f"{tasks[i].fn.__name__}-{uuid.uuid4().hex}" for i in todo]
    submitted = client.map(
        _call, jobs, key=names, retries=execution.retries, pure=False, batch_size=512
    )
    outstanding.update(zip(names, submitted, strict=True))
    index = dict(zip(names, todo, strict=True))
    count, retries, unread = _scheduler_retry_counter(), 0, []
    polled = time.monotonic()
    done = distributed.as_completed(
        submitted, loop=client.loop, with_results=True, raise_errors=False
    )
    for batch in done.batches():
        for future, value in batch:
            i = index[future.key]
            if future.status != "finished":
                raise _task_failure(tasks[i], i, _exception(future, value))
            unread.append(outstanding.pop(future.key))
            finished(i, value)
        if time.monotonic() - polled >= RETRY_POLL_S or not outstanding:
            more = client.run_on_scheduler(
                count, keys=[f.key for f in unread], allowed=execution.retries
            )
            for future in unread:
                future.release()
            unread, polled = [], time.monotonic()
            if more:
                retries += int(more)
                if on_retry is not None:
                    on_retry(retries)
    return retries, workers


def _worker_count(client) -> int:
    try:
        info = client.scheduler_info(n_workers=-1)  # all of them (newer Dask lists 5)
    except TypeError:  # Dask before 2025: always all of them
        info = client.scheduler_info()
    return len(info.get("workers", {}))


@contextlib.contextmanager
def _quiet_logs() -> Iterator[None]:
    """Dask's own log lines (INFO from an in-process scheduler, warnings when closing)
    stay off stderr: the run reports failures and retries itself, one line each."""
    logger = logging.getLogger("distributed")
    before = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(before)


def _exception(future, value) -> BaseException:
    """The exception of a failed future (``as_completed`` hands over (type, exc, tb))."""
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[1], BaseException):
        return value[1]
    try:
        return future.exception(timeout=5) or RuntimeError(f"the task ended {future.status}")
    except Exception as exc:  # noqa: BLE001 - cancelled, or the scheduler is gone
        return exc


def _shut_down(client, cluster, outstanding: list) -> None:
    """Cancel what is still queued or running, close the client and the LocalCluster;
    a cluster that does not answer does not hold the run up for more than a few seconds."""
    with contextlib.suppress(Exception):
        if outstanding:
            client.cancel(outstanding)
    with contextlib.suppress(Exception):
        client.close(timeout=5)
    if cluster is not None:
        with contextlib.suppress(Exception):
            cluster.close(timeout=10)

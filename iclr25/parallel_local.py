"""Local worker processes for :mod:`iclr25.parallel`: the call every backend makes, a
process pool whose workers ignore the terminal's Ctrl-C, and signal handling while
workers start or stop.

A task runs as :func:`call_task` wherever it runs (this process, a pool process, a Dask
worker), so its result is always the same JSON (:func:`canonical`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from iclr25.errors import RunFailure


def jsonable(obj: Any) -> Any:
    """JSON types for numpy / torch values, dataclasses, paths and tuples."""
    from iclr25.output import to_jsonable

    return to_jsonable(obj)


def canonical(obj: Any) -> Any:
    """The JSON round trip: what a result looks like after caching or a network hop."""
    return json.loads(json.dumps(jsonable(obj), allow_nan=False, sort_keys=False))


def call_task(job: tuple[Callable, Any, int]) -> Any:
    """``fn(config, seed)`` as JSON: what every backend runs for a task."""
    fn, config, seed = job
    return canonical(fn(config, seed))


def in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C (and SIGTERM) back while a cluster starts or closes, so it is never
    left half-built; one that arrived meanwhile is acted on (KeyboardInterrupt, or the
    CLI's SIGTERM handler) as soon as the block ends."""
    if not in_main_thread():
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
                previous[sig](sig, None)  # Python's KeyboardInterrupt, the CLI's SIGTERM
            elif previous[sig] == signal.SIG_DFL:
                signal.raise_signal(sig)


#: execution-stack modules the fork server preloads when this process has imported them
STACK_MODULES = ("distributed",)


def worker_context(preload: Sequence[str] = ()):
    """A multiprocessing context whose processes ignore the terminal's Ctrl-C, so pool and
    LocalCluster workers print no traceback and stop only when this process stops them.

    The fork server is started (once) while SIGINT is ignored; every process it forks
    keeps that disposition (a blocked signal mask would not survive ``spawn``'s exec, an
    ignored signal does). The server imports ``preload`` (e.g. the modules of the task
    functions) before it forks anything, so each worker starts with them imported instead
    of importing numpy & co. itself. Where there is no fork server (Windows), ``spawn``.

    There is one fork server per process, started by the first backend that needs it, and
    its preload list is fixed then. So it also preloads the parts of the execution stack
    that this process has already imported (:data:`STACK_MODULES`): a LocalCluster started
    after a process pool in the same process (a notebook, a study script, the benchmark)
    then forks workers with Dask already imported, instead of each worker importing it
    again on every cluster start (the benchmark's ``dask-local-2`` side is such a case)."""
    import multiprocessing
    import sys

    if "forkserver" not in multiprocessing.get_all_start_methods() or not in_main_thread():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    stack = [name for name in STACK_MODULES if name in sys.modules]
    forkserver.set_forkserver_preload(["__main__", __name__, *stack, *preload])  # at its start
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()  # a few ms: the server starts, it imports on its own
    finally:
        signal.signal(signal.SIGINT, handler)
    return multiprocessing.get_context("forkserver")


#: a task module's optional list of modules its tasks import lazily (inside functions):
#: the fork server imports them once, so no worker pays for them on its first task
PRELOAD_ATTRIBUTE = "WORKER_PRELOAD"


def task_modules(tasks) -> list[str]:
    """What a worker will import to run the tasks: their functions' modules, and what
    each of those modules lists in ``WORKER_PRELOAD`` (e.g. ``("scipy.stats",)``, which
    costs about a CPU-second to import: once in the fork server instead of once in every
    worker of every run)."""
    import sys

    modules = {task.fn.__module__ for task in tasks}
    declared = {
        name
        for module in modules
        for name in getattr(sys.modules.get(module), PRELOAD_ATTRIBUTE, ())
    }
    return sorted(modules | declared)


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


def run_processes(tasks, todo, workers: int, finished) -> int:
    """A pool of processes from :func:`worker_context` (never a fork of this threaded
    process); returns how many. A worker that dies (killed, out of memory) fails the run
    at once instead of leaving it waiting for a result that will never come; on Ctrl-C,
    SIGTERM or an error the workers are terminated, so nothing waits for queued tasks."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    n = min(workers, len(todo))
    context = worker_context(task_modules(tasks[i] for i in todo))
    pool = ProcessPoolExecutor(n, mp_context=context, initializer=_worker_init)
    try:
        futures = {
            pool.submit(call_task, (tasks[i].fn, tasks[i].config, tasks[i].seed)): i for i in todo
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

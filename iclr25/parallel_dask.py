"""The Dask backend of :mod:`iclr25.parallel` (``--scheduler ADDRESS|local``).

Connects to a scheduler (or starts a LocalCluster whose workers ignore Ctrl-C), submits
the tasks, hands each result over as it arrives, reads the scheduler's retry record of
finished tasks and releases them, and on any exit cancels what is outstanding and closes
the client and cluster. Dask's own log lines stay off stderr.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator

from iclr25 import parallel_local
from iclr25.errors import RunFailure, UsageError

DistributedHint = "install the extra: pip install 'iclr25[distributed]'"


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise UsageError(
            "--scheduler needs dask.distributed, which is not installed", DistributedHint
        ) from None
    return distributed


def _unreachable(execution, why: str) -> UsageError:
    return UsageError(
        f"cannot reach the Dask scheduler at {execution.scheduler} within "
        f"{execution.connect_timeout_s:g} s ({why})",
        "start one with `dask scheduler` (and `dask worker ADDRESS`), or check the address",
    )


def _connect(execution):
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
    _check_scheduler(execution)
    try:
        client = distributed.Client(
            execution.scheduler, timeout=f"{execution.connect_timeout_s}s", set_as_default=False
        )
    except Exception as exc:  # noqa: BLE001 - whatever the connection raised
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


def _check_scheduler(execution) -> None:
    """A Dask scheduler answers at the address, or a UsageError. Asked before a Client is
    built: a Client whose connection failed blocks for seconds at exit and prints a
    traceback. Whatever answers must also be a scheduler (not a worker, not another
    service: reading its bytes as a Dask message can raise anything, e.g. MemoryError)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.core import rpc

    timeout_s = execution.connect_timeout_s

    async def identity() -> dict:
        async with rpc(execution.scheduler, timeout=timeout_s) as server:
            return await server.identity()

    def ask() -> dict:  # its own event loop, in its own thread (a notebook has one running)
        return asyncio.run(asyncio.wait_for(identity(), timeout_s))

    try:
        with ThreadPoolExecutor(1) as thread:
            info = thread.submit(ask).result()
    except Exception as exc:  # noqa: BLE001 - refused, timed out, not Dask, bad address
        raise _unreachable(execution, type(exc).__name__) from None
    kind = info.get("type") if isinstance(info, dict) else type(info).__name__
    if kind != "Scheduler":
        raise UsageError(
            f"{execution.scheduler} is a Dask {kind}, not a scheduler",
            "pass the scheduler's address (`dask scheduler` prints it: Scheduler at ...)",
        )


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


def _task_failure(task, i: int, exc: BaseException) -> RunFailure:
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


#: settings of the LocalCluster this module starts (``--scheduler local``), which serves one
#: batch of tasks and has no dashboard anyone watches: no statistical profiler (it takes
#: the GIL every 10 ms in every worker to sample stacks) and slower monitors (Dask checks
#: each worker's memory every 100 ms, collects system metrics every 500 ms and its event
#: loops tick every 20 ms). Measured on 2 cores: the cluster's processes burnt 0.135
#: CPU-s per second while idle with Dask's defaults, 0.030 with these, and 24 % instead
#: of 10 % over the tasks' own CPU time on 8 short tasks. A memory limit is still enforced,
#: within a second instead of a tenth. A cluster at ``--scheduler ADDRESS`` keeps its own
#: settings.
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.tick.interval": "200ms",
}


def run_dask(tasks, todo, execution, finished, on_retry) -> tuple[int, int]:
    """(retries, workers) after running ``todo`` on the cluster of ``execution``."""
    import dask

    _import_distributed()  # its config defaults first: dask.config.set would drop them
    config = {}
    if execution.scheduler == "local":  # also for the workers the nanny restarts
        config["distributed.worker.multiprocessing-method"] = parallel_local.worker_context(
            ["distributed", *parallel_local.task_modules(tasks[i] for i in todo)]
        ).get_start_method()
        config.update(LOCAL_CLUSTER_CONFIG)
    with _quiet_logs(), dask.config.set(config):
        with parallel_local.signals_deferred():
            client, cluster = _connect(execution)
        outstanding: dict = {}  # key -> future not yet finished
        try:
            return _submit_and_collect(
                client, tasks, todo, execution, finished, on_retry, outstanding
            )
        finally:
            with parallel_local.signals_deferred():
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
        parallel_local.call_task,
        jobs,
        key=names,
        retries=execution.retries,
        pure=False,
        batch_size=512,
    )
    outstanding.update(zip(names, submitted, strict=True))
    index = dict(zip(names, todo, strict=True))
    count, retries, unread = _scheduler_retry_counter(), 0, []
    polled = time.monotonic()
    done = distributed.as_completed(submitted, loop=client.loop)
    for batch in done.batches():
        for future in batch:
            if future.status in ("error", "cancelled"):  # not "pending": a lost result
                i = index[future.key]  # is being recomputed, and gather waits for it
                raise _task_failure(tasks[i], i, _exception(future))
        try:
            values = client.gather(batch)  # one round trip for the batch
        except Exception as exc:  # noqa: BLE001 - e.g. recomputing a lost result failed
            raise RunFailure(
                f"collecting results from the Dask cluster failed: {type(exc).__name__}: {exc}",
                "rerun the command: finished tasks are reused from the task cache",
            ) from exc
        for future, value in zip(batch, values, strict=True):
            unread.append(outstanding.pop(future.key))
            finished(index[future.key], value)
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


def _exception(future) -> BaseException:
    """The exception of a failed (or cancelled) future."""
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

"""The execution layer against a real Dask cluster on this machine.

A ``dask scheduler`` and two ``dask worker`` processes (one thread each, no nanny, so the
worker *is* the process a test can kill) are started on 127.0.0.1 with ephemeral ports,
and stopped at the end; a test fails if any of them is still alive after that.

- a sweep on the cluster gives exactly the in-process results (and no retries);
- SIGKILL of a worker while the scheduler has tasks on it: the run still completes with
  the same results, and the retry is counted from the scheduler's own record;
- Ctrl-C of the real CLI (a small command on the runner, ``parallel_app.py``): exit 130,
  one error line, no run directory, the queued tasks cancelled, and the next run reuses
  the finished tasks from the cache ("N of M tasks reused") with identical results.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from iclr25.output import to_jsonable
from iclr25.parallel import Execution, Task, derive_seed, run_tasks
from iclr25.testing import DaskProcesses, error_line, sample_task, sigint_default, wait_until

distributed = pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parent.parent
APP = Path(__file__).resolve().parent / "parallel_app.py"


def _env(**extra: str) -> dict:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", **extra}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = DaskProcesses(tmp_path_factory.mktemp("dask-cluster"))
    try:
        c.ensure_workers(2)
        yield c
    finally:
        c.stop()
    assert all(p.poll() is not None for p in c.processes), "a cluster process leaked"


def _tasks(n: int, **config) -> list[Task]:
    return [
        Task(sample_task, {"n": 4, **config}, derive_seed(3, "cell", i), label=f"cell {i}")
        for i in range(n)
    ]


def _reference(n: int) -> list:
    """In-process results: the same seeds; sleeping and markers do not change a result."""
    return run_tasks(_tasks(n), Execution(cache=False), command="reference").results


def test_a_sweep_on_the_cluster_matches_in_process(cluster):
    cluster.ensure_workers(2)
    done: list[int] = []
    out = run_tasks(
        _tasks(16),
        Execution(scheduler=cluster.address, cache=False),
        command="t",
        on_done=done.append,
    )
    assert out.results == _reference(16)
    assert (out.backend, out.workers, out.retries) == (f"dask:{cluster.address}", 2, 0)
    assert sum(done) == 16  # the progress callback saw every task
    wait_until(lambda: cluster.task_count() == 0, 10, "the scheduler to release the tasks")


def test_a_worker_killed_mid_run_is_retried_with_identical_results(cluster, tmp_path):
    """SIGKILL one worker while the scheduler has tasks on it (after a first result came
    back): the scheduler reschedules them on the other worker; the run reports it."""
    cluster.ensure_workers(2)
    victim_address, victim_pid = sorted(cluster.worker_pids().items())[0]
    first_result = threading.Event()
    killed: list[list[str]] = []

    def kill_when_busy() -> None:
        first_result.wait(60)
        held = wait_until(
            lambda: cluster.client.processing(workers=[victim_address]).get(victim_address),
            30,
            "the victim worker to hold a task",
            every_s=0.01,
        )
        os.kill(victim_pid, signal.SIGKILL)
        killed.append(list(held))

    killer = threading.Thread(target=kill_when_busy, daemon=True)
    killer.start()
    out = run_tasks(
        _tasks(12, sleep_s=0.3),
        Execution(scheduler=cluster.address, cache=False),
        command="t",
        on_done=lambda n: first_result.set(),
    )
    killer.join(5)
    assert killed, "the worker was not killed during the run"
    assert cluster.workers[victim_pid].wait(10) == -signal.SIGKILL
    assert out.results == _reference(12)
    assert out.retries >= 1, f"tasks {killed[0]} were on the killed worker: a retry was due"


def test_ctrl_c_on_the_cli_then_resume_from_the_cache(cluster, tmp_path):
    n = 24  # 24 × 0.4 s on 2 workers: Ctrl-C lands well before the sweep could finish
    cluster.ensure_workers(2)
    cache, started, run_dir = tmp_path / "cache", tmp_path / "started", tmp_path / "run"
    started.mkdir()
    argv = [sys.executable, str(APP), "--tasks", str(n), "--sleep-s", "0.4"]
    argv += ["--started-dir", str(started), "--scheduler", cluster.address, "--json"]
    env = _env(ICLR25_CACHE_DIR=str(cache))
    proc = subprocess.Popen(
        [*argv, "--out", str(run_dir)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_default,
    )
    tasks_dir = cache / "tasks"
    wait_until(lambda: tasks_dir.is_dir() and any(tasks_dir.glob("*.json")), 90, "a result")
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    stdout, stderr = proc.communicate(timeout=60)

    assert proc.returncode == 130, stderr
    assert "interrupted" in error_line(stderr)  # one error line, no Dask noise
    assert stdout == "" and not run_dir.exists()  # nothing half-written, nothing printed
    entries = sorted(tasks_dir.iterdir())
    assert all(p.suffix == ".json" for p in entries), "a temporary file was left behind"
    assert all("result" in json.loads(p.read_text()) for p in entries)
    reused = len(entries)
    assert 0 < reused < n
    # the cancel reaches the workers: once the scheduler holds no task, nothing more starts
    # (how many started between Ctrl-C and the cancel depends on the machine's load, so it
    # is not counted: on a loaded CI machine a fixed allowance was exceeded)
    wait_until(lambda: cluster.task_count() == 0, 60, "the cancelled tasks to be released")
    settled = len(list(started.iterdir()))
    time.sleep(1.0)  # queued tasks would have started by now on the idle workers
    assert len(list(started.iterdir())) == settled < n

    second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    doc = json.loads(second.stdout)
    execution = doc["environment"]["execution"]
    assert (execution["reused"], execution["computed"], execution["tasks"]) == (
        reused,
        n - reused,
        n,
    )
    reference = [sample_task({"n": 4}, derive_seed(0, "cell", i)) for i in range(n)]
    assert doc["results"]["cells"] == to_jsonable(reference)


def test_a_worker_address_is_not_taken_for_the_scheduler(cluster):
    from iclr25.errors import UsageError

    cluster.ensure_workers(2)
    worker = sorted(cluster.worker_pids())[0]
    with pytest.raises(UsageError, match=f"{worker} is a Dask Worker, not a scheduler"):
        run_tasks(_tasks(1), Execution(scheduler=worker, cache=False), command="t")

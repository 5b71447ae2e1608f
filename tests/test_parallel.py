"""The execution layer: the same results on every backend, resume from the task cache,
retries, and clear errors for bad options."""

from __future__ import annotations

import json
import os

import pytest

from iclr25.errors import UsageError
from iclr25.parallel import Execution, Task, derive_seed, run_tasks
from iclr25.testing import sample_task, worker_state


def _tasks(n: int = 6, **config) -> list[Task]:
    return [Task(sample_task, {"n": 4, **config}, derive_seed(7, "cell", i)) for i in range(n)]


def test_derive_seed_is_stable_and_distinct():
    assert derive_seed(7, "cell", 1) == derive_seed(7, "cell", 1)
    assert derive_seed(7, "cell", 1) != derive_seed(7, "cell", 2) != derive_seed(8, "cell", 1)
    assert derive_seed(0, "a") == 2671967653362453091  # pinned: never depends on hash()


def test_in_process_results_are_json_and_in_task_order():
    out = run_tasks(_tasks(), Execution(cache=False), command="t")
    assert out.backend == "in-process" and out.computed == 6 and out.reused == 0
    assert [r["seed"] for r in out.results] == [t.seed for t in _tasks()]
    assert json.loads(json.dumps(out.results)) == out.results  # plain JSON, no numpy


def _states(n: int) -> list[Task]:
    return [Task(worker_state, {}, i) for i in range(n)]


def test_processes_give_the_same_results():
    ref = run_tasks(_tasks(), Execution(cache=False), command="t").results
    out = run_tasks(_tasks() + _states(4), Execution(workers=2, cache=False), command="t")
    assert out.backend == "processes:2" and out.results[:6] == ref and out.workers == 2
    states = out.results[6:]
    assert all(s["ignores_sigint"] for s in states)  # Ctrl-C is the parent's business
    assert {s["omp_num_threads"] for s in states} <= {"1", os.environ.get("OMP_NUM_THREADS")}
    assert os.getpid() not in {s["pid"] for s in states}


def test_local_dask_cluster_gives_the_same_results():
    pytest.importorskip("distributed")
    ref = run_tasks(_tasks(), Execution(cache=False), command="t").results
    local = Execution(workers=2, scheduler="local", cache=False)
    out = run_tasks(_tasks() + _states(4), local, command="t")
    assert out.backend == "dask:local" and out.results[:6] == ref and out.retries == 0
    assert out.workers == 2
    assert all(s["ignores_sigint"] for s in out.results[6:])  # no worker tracebacks on Ctrl-C
    assert os.getpid() not in {s["pid"] for s in out.results[6:]}


def test_an_interrupted_run_resumes_from_the_cache():
    tasks = _tasks(5)
    first = run_tasks(tasks[:3], Execution(), command="resume-test")  # "interrupted" here
    assert first.computed == 3
    done = []
    second = run_tasks(tasks, Execution(), command="resume-test", on_done=done.append)
    assert (second.reused, second.computed) == (3, 2) and sum(done) == 5
    assert second.results == run_tasks(tasks, Execution(cache=False), command="x").results
    other = run_tasks(tasks, Execution(), command="another-command")
    assert other.reused == 0  # the key includes the command


def test_a_flaky_task_is_retried_on_dask(tmp_path):
    pytest.importorskip("distributed")
    tasks = _tasks(2, fail_once_file=str(tmp_path / "failed"))
    out = run_tasks(tasks, Execution(workers=1, scheduler="local", cache=False), command="t")
    assert out.retries == 1
    assert out.results == run_tasks(_tasks(2), Execution(cache=False), command="t").results


def test_bad_options_are_usage_errors():
    with pytest.raises(UsageError, match="--workers 0"):
        Execution(workers=0)
    with pytest.raises(UsageError, match="not a Dask address"):
        Execution(scheduler="my-laptop")


def test_an_unreachable_scheduler_is_a_clear_error_within_the_timeout():
    pytest.importorskip("distributed")
    import time

    t0 = time.perf_counter()
    with pytest.raises(UsageError, match="cannot reach the Dask scheduler"):
        run_tasks(
            _tasks(1),
            Execution(scheduler="tcp://127.0.0.1:9", cache=False, connect_timeout_s=2),
            command="t",
        )
    assert time.perf_counter() - t0 < 15

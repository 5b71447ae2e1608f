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
    # the cluster this run started has no profiler (parallel_dask.LOCAL_CLUSTER_CONFIG)
    assert {s["dask_profiler"] for s in out.results[6:]} == {False}


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


def _module_task(tmp_path, name: str, scale: int):
    """(module, fn) of a task module written to ``tmp_path`` (a user's script)."""
    import importlib
    import sys

    (tmp_path / f"{name}.py").write_text(
        f"def task(config, seed):\n    return {{'value': {scale} * seed}}\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.invalidate_caches()
        sys.modules.pop(name, None)
        module = importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
    return module


def test_a_changed_task_module_never_returns_a_stale_cached_result(tmp_path):
    from iclr25 import parallel

    parallel.module_digest.cache_clear()
    first = _module_task(tmp_path, "iclr25_cache_probe", 2)
    out = run_tasks([Task(first.task, {}, 5)], Execution(), command="code-change")
    assert out.results == [{"value": 10}] and out.computed == 1
    again = run_tasks([Task(first.task, {}, 5)], Execution(), command="code-change")
    assert again.reused == 1  # same code: reused

    parallel.module_digest.cache_clear()  # a new process would read the edited file
    edited = _module_task(tmp_path, "iclr25_cache_probe", 3)  # same name, same config
    out = run_tasks([Task(edited.task, {}, 5)], Execution(), command="code-change")
    assert (out.reused, out.computed) == (0, 1) and out.results == [{"value": 15}]
    parallel.module_digest.cache_clear()


def test_a_change_anywhere_in_the_package_changes_every_task_key(tmp_path, monkeypatch):
    import shutil

    from iclr25 import parallel

    package = tmp_path / "iclr25"
    (package / "core").mkdir(parents=True)
    (package / "core" / "algo.py").write_text("STEP = 1\n")
    (package / "data.json").write_text("{}")
    (package / "__pycache__").mkdir()
    monkeypatch.setattr(parallel, "PACKAGE_DIR", package)
    task = _tasks(1)[0]

    def key() -> str:
        parallel.package_digest.cache_clear()
        return parallel.task_key("c", task)

    base = key()
    assert key() == base  # stable
    (package / "__pycache__" / "algo.cpython-312.pyc").write_bytes(b"\0")
    assert key() == base  # compiled files are not the source
    (package / "core" / "algo.py").write_text("STEP = 2\n")  # a module the task imports
    changed = key()
    assert changed != base
    (package / "data.json").write_text('{"a": 1}')  # bundled data
    assert key() != changed
    shutil.rmtree(package / "core")
    assert key() not in (base, changed)
    monkeypatch.undo()
    parallel.package_digest.cache_clear()
    real = parallel.package_digest()
    assert len(real) == 64 and parallel.package_digest() is real  # computed once per process


def test_a_silent_address_is_a_clear_error_not_a_hang():
    """Something accepts the connection and never answers (a firewall, a stuck process):
    the identity request times out after ``connect_timeout_s`` and the run says so."""
    pytest.importorskip("distributed")
    import socket
    import time

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()  # the kernel completes the handshake; nobody ever reads or writes
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    t0 = time.perf_counter()
    try:
        with pytest.raises(UsageError, match=r"cannot reach .* within 2 s \(TimeoutError\)"):
            run_tasks(
                _tasks(1),
                Execution(scheduler=address, cache=False, connect_timeout_s=2),
                command="t",
            )
    finally:
        server.close()
    assert time.perf_counter() - t0 < 120  # a hang guard, not a speed check


PRELOAD_PROBE = """
import sys

WORKER_PRELOAD = ("wave",)  # a stdlib module nothing else imports


def task(config, seed):
    return "wave" in sys.modules  # at the task's start: imported before it ran?
"""
PRELOAD_DRIVER = """
import json, sys
import preload_probe
from iclr25.parallel import Execution, Task, run_tasks

if __name__ == "__main__":  # the fork server imports __main__
    tasks = [Task(preload_probe.task, {}, i) for i in range(4)]
    out = run_tasks(tasks, Execution(workers=2, cache=False))
    print(json.dumps({"parent_has_it": "wave" in sys.modules, "workers": out.results}))
"""


def test_a_task_modules_declared_lazy_imports_are_preloaded_for_pool_workers(tmp_path):
    """``WORKER_PRELOAD`` of a task's module: the pool's fork server imports it once, so a
    worker has it before its first task (the parent never imported it)."""
    import subprocess
    import sys
    from pathlib import Path

    from iclr25.parallel_local import task_modules

    (tmp_path / "preload_probe.py").write_text(PRELOAD_PROBE)
    (tmp_path / "driver.py").write_text(PRELOAD_DRIVER)
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(repo)])}
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "driver.py")],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == {"parent_has_it": False, "workers": [True] * 4}
    assert task_modules(_tasks(1)) == ["iclr25.testing"]  # nothing declared: the module only


STACK_PROBE = """
import json, sys


def has_distributed():
    return "distributed" in sys.modules  # in a pool worker, before anything imports it


if __name__ == "__main__":  # the fork server imports __main__
    if sys.argv[1] == "imported":
        import distributed  # noqa: F401
    from iclr25.parallel_local import worker_context

    with worker_context().Pool(1) as pool:
        print(json.dumps(pool.apply(has_distributed)))
"""


@pytest.mark.parametrize("parent", ["imported", "not-imported"])
def test_the_fork_server_preloads_dask_only_when_this_process_has_imported_it(tmp_path, parent):
    """One fork server per process, its preload fixed when the first backend starts it: if
    this process has imported Dask (it may start a LocalCluster later), the server preloads
    it, so later cluster workers do not import it on every start; a process that never
    imported it does not make its pool workers pay for it."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "probe.py").write_text(STACK_PROBE)
    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(repo)}
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "probe.py"), parent],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) is (parent == "imported")

"""The execution options on the real CLI contract (``parallel_app.py``, a small command on
the runner): bad options exit 2 with one line naming the fix, Ctrl-C of a process pool
exits 130 leaving no run directory and no worker processes, results are the same on
every backend, and the progress / retry callbacks reach the command."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iclr25 import parallel, parallel_dask
from iclr25.errors import UsageError
from iclr25.parallel import Execution, Task, derive_seed
from iclr25.testing import error_line, sample_task, sigint_default

REPO = Path(__file__).resolve().parent.parent
APP = Path(__file__).resolve().parent / "parallel_app.py"


def _env(**extra: str) -> dict:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, **extra}


def _app(*args: str, prelude: str = "", timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the app; ``prelude`` is Python run first in the same interpreter."""
    code = f"{prelude}\nimport runpy, sys\nsys.argv = {[str(APP), *args]!r}\n"
    code += f"runpy.run_path({str(APP)!r}, run_name='__main__')\n"
    return subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=timeout
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens


@pytest.mark.parametrize(
    ("args", "what", "fix"),
    [
        (["--workers", "0"], "--workers 0 must be at least 1", "use --workers 1"),
        (["--workers", "100000"], "more than 4 processes per core", "--scheduler ADDRESS"),
        (["--scheduler", "my-laptop"], "is not a Dask address", "tcp://"),
        (["--scheduler", "tcp://127.0.0.1:8786", "--workers", "3"], "has no effect", "drop"),
    ],
)
def test_bad_execution_options_exit_2_with_the_fix(args, what, fix):
    result = _app(*args, "--json")
    assert result.returncode == 2, result.stderr
    line = error_line(result.stderr)
    assert what in line and fix in line and result.stdout == ""


def test_an_unreachable_scheduler_exits_2_naming_the_address():
    pytest.importorskip("distributed")
    address = f"tcp://127.0.0.1:{_closed_port()}"
    result = _app("--scheduler", address, "--json")
    assert result.returncode == 2, result.stderr
    line = error_line(result.stderr)
    assert f"cannot reach the Dask scheduler at {address} within 5 s" in line
    assert "dask scheduler" in line  # the fix names how to start one


def test_an_address_that_answers_but_is_not_dask_exits_2_with_one_line():
    """E.g. a web server: its bytes read as a Dask message claim a length of exabytes."""
    pytest.importorskip("distributed")
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def answer() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = server.accept()
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4)
                conn.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        result = _app("--scheduler", address, "--json")
    finally:
        server.close()
    assert result.returncode == 2, result.stderr
    assert f"cannot reach the Dask scheduler at {address}" in error_line(result.stderr)


def test_scheduler_without_the_distributed_extra_names_the_extra():
    hide = "import sys\nsys.modules['distributed'] = None  # as if not installed"
    result = _app("--scheduler", "local", "--json", prelude=hide)
    assert result.returncode == 2, result.stderr
    assert "pip install 'iclr25[distributed]'" in error_line(result.stderr)


def test_the_extra_check_does_not_import_dask(monkeypatch):
    monkeypatch.setattr(parallel.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UsageError, match=r"iclr25\[distributed\]"):
        Execution(scheduler="tcp://10.0.0.5:8786")
    assert Execution(workers=2).backend == "processes:2"  # no scheduler: no check


def test_the_same_results_in_process_and_with_two_processes():
    one = _app("--tasks", "6", "--json", "--no-cache")
    two = _app("--tasks", "6", "--json", "--no-cache", "--workers", "2")
    assert one.returncode == two.returncode == 0, (one.stderr, two.stderr)
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert a["results"] == b["results"]
    assert a["environment"]["execution"]["backend"] == "in-process"
    assert (
        b["environment"]["execution"] | {"backend": "processes:2", "workers": 2}
        == (b["environment"]["execution"])
    )


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (Linux /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z":
                alive.add(pid)
    return alive


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_ctrl_c_stops_a_process_pool_and_leaves_nothing_behind(tmp_path):
    started, run_dir, cache = tmp_path / "started", tmp_path / "run", tmp_path / "cache"
    started.mkdir()
    args = [sys.executable, str(APP), "--tasks", "40", "--sleep-s", "0.3", "--workers", "2"]
    args += ["--started-dir", str(started), "--out", str(run_dir), "--json"]
    proc = subprocess.Popen(
        args,
        env=_env(ICLR25_CACHE_DIR=str(cache)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_default,
    )
    deadline = time.monotonic() + 90
    while len(list(started.iterdir())) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert workers, "the pool had no processes"
    os.killpg(proc.pid, signal.SIGINT)  # the whole group, as a terminal does
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in error_line(stderr)  # no worker traceback on stderr
    assert stdout == "" and not run_dir.exists()
    deadline = time.monotonic() + 10
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _alive(workers) == set(), "pool processes outlived the command"
    assert len(list(started.iterdir())) < 40  # the queued tasks never ran


def test_progress_sees_every_task_and_reused_ones_at_once():
    class FakeRun:
        def __init__(self):
            self.advanced, self.environment_extra, self.logged = [], {}, []

        @contextlib.contextmanager
        def progress(self, description, total=None):
            yield lambda n=1, **fields: self.advanced.append((n, fields))

        def log(self, message):
            self.logged.append(message)

        def warn(self, message):
            raise AssertionError(message)

    from iclr25.parallel_options import run_with_progress

    tasks = [Task(sample_task, {"n": 2}, derive_seed(1, i)) for i in range(5)]
    run = FakeRun()
    run_with_progress(run, tasks[:2], Execution(), command="progress-test")
    run = FakeRun()
    out = run_with_progress(run, tasks, Execution(), command="progress-test")
    assert run.advanced == [(2, {}), (1, {}), (1, {}), (1, {})]  # 2 reused, then 3 computed
    assert run.logged == ["2 of 5 tasks reused from the task cache"]
    assert (
        run.environment_extra["execution"] | {"tasks": 5, "reused": 2, "computed": 3}
        == (run.environment_extra["execution"])
    )
    fresh = parallel.run_tasks(tasks, Execution(cache=False), command="progress-test")
    assert out.results == fresh.results  # what came back from the cache is the same JSON


def test_the_retry_counter_reads_the_schedulers_record():
    class TS:
        def __init__(self, suspicious, retries):
            self.suspicious, self.retries = suspicious, retries

    class Scheduler:
        tasks = {"died-once": TS(1, 2), "raised-once": TS(0, 1), "clean": TS(0, 2)}

    count = parallel_dask._scheduler_retry_counter()
    keys = ["died-once", "raised-once", "clean", "forgotten"]
    assert count(dask_scheduler=Scheduler(), keys=keys, allowed=2) == 2
    assert count(dask_scheduler=Scheduler(), keys=["clean"], allowed=2) == 0
    assert count.__module__ == parallel_dask.__name__ and "<locals>" in count.__qualname__

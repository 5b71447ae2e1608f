"""Test helpers shared by the test suite (kept in the package so any test can import it)."""

from __future__ import annotations

import numpy as np


def _to_numpy(x) -> np.ndarray:
    if hasattr(x, "detach"):  # torch
        x = x.detach().cpu().numpy()
    elif hasattr(x, "get") and type(x).__module__.startswith("cupy"):
        x = x.get()
    return np.asarray(x)


def assert_close(actual, expected, rtol: float = 1e-6, atol: float = 1e-9, what: str = "") -> None:
    """Assert |actual - expected| <= atol + rtol |expected| elementwise.

    Works for numpy, torch and cupy arrays and scalars. On failure it reports a shape
    mismatch, or the count of mismatches and the largest difference with its index."""
    a, e = _to_numpy(actual), _to_numpy(expected)
    label = f"{what}: " if what else ""
    if a.shape != e.shape:
        raise AssertionError(f"{label}shape mismatch: actual {a.shape} vs expected {e.shape}")
    if a.size == 0:
        return
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    nan_mismatch = np.isnan(a64) != np.isnan(e64)
    both_inf_equal = np.isinf(a64) & np.isinf(e64) & (a64 == e64)
    with np.errstate(invalid="ignore"):
        diff = np.abs(a64 - e64)
        bad = (diff > atol + rtol * np.abs(e64)) & ~both_inf_equal
    bad |= nan_mismatch
    bad &= ~(np.isnan(a64) & np.isnan(e64))
    if bad.any():
        diff = np.where(np.isnan(diff), np.inf, diff)
        diff = np.where(both_inf_equal, 0.0, diff)
        worst = np.unravel_index(int(np.argmax(np.where(bad, diff, -1.0))), a.shape)
        raise AssertionError(
            f"{label}{int(bad.sum())} of {a.size} elements differ (rtol={rtol}, atol={atol}); "
            f"largest |diff| = {diff[worst]:.3e} at index {tuple(int(i) for i in worst)}: "
            f"actual {a64[worst]!r} vs expected {e64[worst]!r}"
        )


def sample_task(config: dict, seed: int) -> dict:
    """A pure task for the execution-layer tests: a few seeded draws and a sleep.

    ``config``: ``{"n": draws, "sleep_s": seconds, "fail_once_file": path or None,
    "started_dir": path or None}``; with ``fail_once_file``, the one call that creates
    that file (atomically, O_EXCL) raises (a flaky task); with ``started_dir``, each call
    first leaves a file ``<seed>.<pid>`` there (which process ran what, and when)."""
    import os
    import time

    if config.get("started_dir"):
        open(os.path.join(config["started_dir"], f"{seed}.{os.getpid()}"), "w").close()
    if config.get("sleep_s"):
        time.sleep(config["sleep_s"])
    marker = config.get("fail_once_file")
    if marker:
        try:  # atomic: of two calls racing on two workers, exactly one creates it and fails
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.write(fd, b"failed once")
            os.close(fd)
            raise RuntimeError("flaky task fails on its first attempt")
    draws = np.random.default_rng(seed).normal(size=config.get("n", 3))
    return {"seed": seed, "mean": float(draws.mean()), "draws": draws}


def error_line(stderr: str) -> str:
    """The one ``Error: ...`` line of a failed command's stderr, checking the contract:
    exactly one error line, and every other line a ``Warning: ...`` printed before it."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error: ")]
    assert len(errors) == 1, f"expected one 'Error: ' line, got {len(errors)}: {stderr!r}"
    others = [line for line in lines if not line.startswith(("Error: ", "Warning: "))]
    assert not others, f"stderr has lines that are neither errors nor warnings: {others!r}"
    assert lines[-1] == errors[0], f"the error line must come last: {stderr!r}"
    return errors[0]


def worker_state(config: dict, seed: int) -> dict:
    """A task reporting the process it ran in: its pid, whether it ignores Ctrl-C, and
    its thread settings and, in a Dask worker, whether its statistical profiler is on
    (what the execution layer promises about its workers)."""
    import os
    import signal
    import sys

    dask = sys.modules.get("dask")
    return {
        "pid": os.getpid(),
        "ignores_sigint": signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "dask_profiler": None
        if dask is None
        else dask.config.get("distributed.worker.profile.enabled", None),
    }


def sigint_default() -> None:
    """``preexec_fn`` for a CLI a test interrupts: SIGINT back to its default, so the
    child turns it into KeyboardInterrupt even when the test run itself was started in the
    background by a shell (which leaves SIGINT ignored, and children inherit that)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until(condition, timeout_s: float, what: str, every_s: float = 0.05):
    """Poll ``condition()`` until it returns something truthy (returned), or fail."""
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def _die_with_parent() -> None:
    """In a child about to exec (Linux): SIGTERM when the process that started it ends,
    even by SIGKILL or an unhandled SIGTERM (no ``stop()``), so a killed test run or
    benchmark leaves no scheduler or worker behind. Elsewhere, nothing."""
    import ctypes
    import signal
    import sys

    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM))


class DaskProcesses:
    """A Dask cluster on this machine as a real one is: a ``dask scheduler`` and
    ``dask worker`` processes (one thread each, no nanny: a worker *is* its process, so
    it can be killed) on 127.0.0.1 with ephemeral ports, started in their own sessions
    (a Ctrl-C sent to a test's process group misses them), logs in ``folder``.

    For tests and benchmarks; :meth:`stop` ends every process it started, and on Linux
    they also end when this process does (create it in a thread that outlives them)."""

    def __init__(self, folder, env: dict | None = None) -> None:
        import json
        import os
        from pathlib import Path

        import distributed

        import iclr25

        self.folder = Path(folder)
        root = str(Path(iclr25.__file__).resolve().parent.parent)  # workers import iclr25
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        self.env = {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", **(env or {})}
        self.processes: list = []
        self.workers: dict = {}  # pid -> worker process
        scheduler_file = self.folder / "scheduler.json"
        self._spawn("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(scheduler_file))  # fmt: skip
        self.address = wait_until(
            lambda: scheduler_file.exists() and json.loads(scheduler_file.read_text())["address"],
            60,
            "the scheduler to write its address",
        )
        self.client = distributed.Client(self.address, timeout="30s", set_as_default=False)

    def _spawn(self, kind: str, *args: str):
        import subprocess
        import sys

        log = open(self.folder / f"{kind}-{len(self.processes)}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(
            [sys.executable, "-m", "dask", kind, *args],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self.processes.append(proc)
        return proc

    def ensure_workers(self, n: int = 2) -> None:
        """Start workers until ``n`` are alive and connected."""
        alive = [p for p in self.workers.values() if p.poll() is None]
        for k in range(n - len(alive)):
            proc = self._spawn("worker", self.address, "--nthreads", "1", "--no-nanny",
                               "--no-dashboard", "--host", "127.0.0.1",
                               "--name", f"w{len(self.processes)}-{k}")  # fmt: skip
            self.workers[proc.pid] = proc
        self.client.wait_for_workers(n, timeout=60)

    def worker_pids(self) -> dict:
        """address -> pid of each connected worker."""
        import os

        return self.client.run(os.getpid)

    def task_count(self) -> int:
        """Tasks the scheduler still knows about."""
        return self.client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))

    def stop(self) -> None:
        """SIGTERM to the workers, then to the scheduler; SIGKILL for one still alive
        after its wait. Workers go first: a worker whose scheduler has gone keeps trying
        to reconnect, and took about a minute each to end on SIGTERM that way."""
        import subprocess

        self.client.close()
        workers = [p for p in self.processes if p.pid in self.workers]
        others = [p for p in self.processes if p.pid not in self.workers]
        for group in (workers, others):
            for proc in group:
                if proc.poll() is None:
                    proc.terminate()
            for proc in group:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=15)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

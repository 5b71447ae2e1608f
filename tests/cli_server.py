"""A fork server for the ``cli`` fixture: import torch once per pytest process, not per call.

Starting the console script costs ~4 CPU-seconds here, nearly all of it ``import torch``;
the suite runs the console script a few hundred times, and `make test` has a 20-minute
limit on 2 cores. This server (one per pytest process, started on first use) imports
:data:`PRELOAD` once, then forks one child per command. The child is set up as the console
script's process would be: its own process group, stdin from ``/dev/null``, stdout and
stderr to files, the caller's working directory, environment and ``sys.argv``; it runs
``iclr25.cli.main`` and exits with the code the console script would (``SystemExit``
codes, 1 with a traceback for an uncaught exception, ``atexit`` handlers run).

What it cannot reproduce, and how the fixture keeps it faithful:
- anything a preloaded module reads from the environment at import time (torch reads
  ``OMP_*``, ``CUDA_*``, ...): the fixture runs a real subprocess whenever the call's
  environment differs from the server's in a variable outside :data:`SAFE_ENV_PREFIXES`;
- what importing :data:`PRELOAD` writes to stderr (a warning a user would see): recorded
  once and written at the start of every child's stderr;
- a command that works only because a module was already imported: only third-party
  modules and ``iclr25.cli`` (which imports no command body) are preloaded.
``ICLR25_TEST_FORK=0`` turns the server off (every call a real subprocess).

Protocol (one request at a time): a JSON line per request on the server's stdin; the
server answers ``{"pid": ...}`` as soon as it has forked (so the caller can kill the
child's process group on a timeout) and ``{"rc": ...}`` when the child has exited.
"""

from __future__ import annotations

import atexit
import importlib
import io
import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

PRELOAD = ("numpy", "torch", "typer", "rich.console", "iclr25.cli")
SAFE_ENV_PREFIXES = (
    "ICLR25_", "SACREBLEU", "NO_COLOR", "COLUMNS", "HF_", "TRANSFORMERS_", "PYTEST_",
)  # fmt: skip


def _exit_code(code) -> int:
    """The process exit status Python gives ``SystemExit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _child(request: dict, preload_stderr: bytes) -> None:
    code = 1
    try:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        os.write(2, preload_stderr)
        encoding = request["encoding"]
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding=encoding
        )
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False),
            encoding=encoding,
            errors="backslashreplace",
            line_buffering=True,
        )
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        from iclr25.cli import main

        try:
            main()
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve() -> None:
    """Run the server: preload, then fork a child per request line on stdin."""
    here = str(Path(__file__).parent)
    sys.path[:] = [p for p in sys.path if p not in ("", here)]  # as a console script's
    sys.path.insert(0, str(Path(sys.executable).parent))
    reply = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing but replies on the pipe
    with tempfile.TemporaryFile() as captured:
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            for name in PRELOAD:
                try:
                    importlib.import_module(name)
                except ImportError:  # a bare machine: the child imports what it can
                    pass
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
        captured.seek(0)
        preload_stderr = captured.read()
    for line in sys.stdin.buffer:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, preload_stderr)
        os.write(reply, (json.dumps({"pid": pid}) + "\n").encode())
        _, status = os.waitpid(pid, 0)
        os.write(reply, (json.dumps({"rc": os.waitstatus_to_exitcode(status)}) + "\n").encode())


class CliServer:
    """The caller's side: ``run(argv, cwd, env, timeout)`` → a CompletedProcess."""

    def __init__(self) -> None:
        self.env = dict(os.environ)
        here = str(Path(__file__).parent)
        self.proc = subprocess.Popen(
            [sys.executable, "-c",
             f"import sys; sys.path.insert(0, {here!r}); import cli_server; cli_server.serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.env,
        )  # fmt: skip

    def accepts(self, env: dict) -> bool:
        """Whether a child of this server sees what a fresh process with ``env`` would."""
        keys = set(env) | set(self.env)
        return all(env.get(k) == self.env.get(k) or k.startswith(SAFE_ENV_PREFIXES) for k in keys)

    def _reply(self, timeout: float | None) -> dict:
        import select

        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the cli fork server died; run with ICLR25_TEST_FORK=0 to see why")
        return json.loads(line)

    def run(self, argv: list[str], cwd, env: dict, timeout: float) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory() as tmp:
            out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
            request = {
                "argv": argv,
                "cwd": str(cwd or os.getcwd()),
                "env": env,
                "stdout": str(out),
                "stderr": str(err),
                "encoding": io.TextIOWrapper(io.BytesIO()).encoding,
            }
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
            pid = self._reply(30)["pid"]
            try:
                rc = self._reply(timeout)["rc"]
            except TimeoutError:
                os.killpg(pid, 9)
                self._reply(30)
                raise subprocess.TimeoutExpired(argv, timeout) from None
            return subprocess.CompletedProcess(
                argv, rc, _decode(out.read_bytes()), _decode(err.read_bytes())
            )

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _decode(data: bytes) -> str:
    """As ``subprocess.run(text=True)`` decodes (locale encoding, universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(data)).read()

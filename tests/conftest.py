"""Shared fixtures: the real console script, an isolated cache, GPU skipping, hypothesis."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # a bare machine (e.g. scripts/gpu-check.sh on a lent GPU): files that
    settings = None  # import hypothesis fail to collect on their own, the rest still run

if settings is not None:
    settings.register_profile(
        "ci",
        max_examples=60,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile("dev", max_examples=200, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory):
    """Every test run gets its own cache folder, so compile checks really compile."""
    path = tmp_path_factory.mktemp("iclr25-cache")
    old = os.environ.get("ICLR25_CACHE_DIR")
    os.environ["ICLR25_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("ICLR25_CACHE_DIR", None)
    else:
        os.environ["ICLR25_CACHE_DIR"] = old


def pytest_collection_modifyitems(config, items):
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    from iclr25.gpu import _probe_cuda, get_cupy

    available, reason, _, _ = _probe_cuda()
    if available and get_cupy() is None:
        available, reason = False, "CuPy is not installed (pip install -e '.[gpu]')"
    if available:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA device with CuPy: {reason}")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


def console_script() -> list[str]:
    """The installed `iclr25` script next to this interpreter (else `python -m iclr25`)."""
    script = Path(sys.executable).parent / "iclr25"
    if script.exists():
        return [str(script)]
    found = shutil.which("iclr25")
    return [found] if found else [sys.executable, "-m", "iclr25"]


class CliResult:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    def json(self) -> dict:
        return json.loads(self.stdout)

    def __repr__(self) -> str:
        out, err = self.stdout[-800:], self.stderr[-800:]
        return f"<exit {self.returncode}; stdout={out!r}; stderr={err!r}>"


@pytest.fixture
def console_command() -> list[str]:
    """The argv prefix that starts the real console script."""
    return console_script()


@pytest.fixture(scope="session")
def _cli_server():
    """One fork server per pytest process (tests/cli_server.py), unless ICLR25_TEST_FORK=0."""
    if os.environ.get("ICLR25_TEST_FORK", "1") == "0" or not hasattr(os, "fork"):
        yield None
        return
    import importlib.util

    path = Path(__file__).parent / "cli_server.py"
    spec = importlib.util.spec_from_file_location("cli_server", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.CliServer()
    yield server
    server.close()


@pytest.fixture
def cli(_cli_server):
    """Run the console script: ``cli("info", "--json")`` -> CliResult.

    The call runs in a child of the fork server (torch imported once), which is set up as
    the console script's own process; it is a real subprocess when the fork server is off
    or the call's environment changes what an import reads (tests/cli_server.py).
    """

    def invoke(*args: str, timeout: float = 300, cwd=None, env=None, fresh=False) -> CliResult:
        full_env = {**os.environ, **(env or {})}
        script = console_script()
        if not fresh and _cli_server is not None and _cli_server.accepts(full_env):
            argv = [script[0] if len(script) == 1 else "iclr25", *map(str, args)]
            return CliResult(_cli_server.run(argv, cwd, full_env, timeout))
        proc = subprocess.run(
            [*script, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env=full_env,
        )
        return CliResult(proc)

    return invoke

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


@pytest.fixture
def cli():
    """Run the real console script: ``cli("info", "--json")`` -> CliResult."""

    def invoke(*args: str, timeout: float = 300, cwd=None, env=None) -> CliResult:
        full_env = {**os.environ, **(env or {})}
        proc = subprocess.run(
            [*console_script(), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env=full_env,
        )
        return CliResult(proc)

    return invoke

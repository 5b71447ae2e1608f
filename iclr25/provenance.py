"""Where a measured figure came from: command line, commit, date, machine, versions, seeds.

Every result file a benchmark or study writes carries :func:`provenance` under the key
``provenance``, and ``make docs`` prints its commit and machine under every figure it
renders. Reading it costs a few subprocess calls (git, nvidia-smi) and no heavy import.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

#: packages whose versions every result file records (absent ones are recorded as None)
PACKAGES = (
    "numpy",
    "scipy",
    "torch",
    "transformers",
    "scikit-learn",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "dask",
    "distributed",
)

_REPO = Path(__file__).resolve().parent.parent


def _run(argv: Sequence[str], cwd: Path | None = None, timeout: float = 10.0) -> str | None:
    try:
        out = subprocess.run(
            list(argv), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def git_state(repo: Path = _REPO) -> dict:
    """``{"commit", "dirty"}`` of the checkout the package runs from (None outside git)."""
    if shutil.which("git") is None or not (repo / ".git").exists():
        return {"commit": None, "dirty": None}
    commit = _run(["git", "rev-parse", "HEAD"], cwd=repo)
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo)
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def cpu_model() -> str:
    """The CPU's marketing name (``/proc/cpuinfo`` on Linux, ``platform`` elsewhere)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def gpus() -> list[dict]:
    """``[{"name", "driver", "memory_mib"}]`` from nvidia-smi (empty without a GPU)."""
    if shutil.which("nvidia-smi") is None:
        return []
    query = "name,driver_version,memory.total"
    out = _run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"])
    found = []
    for line in (out or "").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            found.append({"name": parts[0], "driver": parts[1], "memory_mib": parts[2]})
    return found


def machine() -> dict:
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "gpus": gpus(),
    }


def package_versions(names: Sequence[str] = PACKAGES) -> dict:
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def provenance(
    argv: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    extra_packages: Sequence[str] = (),
) -> dict:
    """The provenance block of a result file (``argv`` defaults to this process's)."""
    from iclr25 import __version__

    return {
        "command_line": list(sys.argv if argv is None else argv),
        "git": git_state(),
        "iclr25": __version__,
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "packages": package_versions((*PACKAGES, *extra_packages)),
        "seeds": None if seeds is None else [int(s) for s in seeds],
    }


def describe(block: dict) -> str:
    """One line for docs: ``commit abc1234, 2026-12-01, 2× Intel Xeon …, no GPU``."""
    git = block.get("git") or {}
    commit = (git.get("commit") or "unknown")[:7] + ("+dirty" if git.get("dirty") else "")
    end = block.get("git_at_finish")  # a study during which HEAD moved (experiments runner)
    if end:
        commit += f" (HEAD at finish {(end.get('commit') or 'unknown')[:7]})"
    date = (block.get("date") or "?")[:10]
    m = block.get("machine") or {}
    gpu = ", ".join(g["name"] for g in m.get("gpus") or []) or "no GPU"
    return f"commit {commit}, {date}, {m.get('cores', '?')}× {m.get('cpu', '?')}, {gpu}"

"""Self-check: a kernel new to a device is used by the public path only after it has been
verified there.

Some kernels (the persistent Hopper GEMM, the wgmma attention) were written and
compile-checked on machines without a GPU. A mistake in such a kernel gives wrong numbers,
an illegal memory access that poisons the CUDA context, or a deadlock on an mbarrier — none
of which a user should meet. So before :func:`verify` lets a caller use kernel ``name`` on
device ``index`` it runs the kernel package's ``self_check(index)`` (small problems chosen
to reach every code path: edge tiles, several tiles per persistent block, every operand
layout, causal masks, ...) against the fp32 reference **in a subprocess with a time
limit**, so a hang or a crash costs a timeout, not the caller's process.

The verdict is cached on disk by the kernel's source hash (headers and options included),
the self-check code, the device (name, compute capability) and the driver and compiler
versions: a new build or another GPU is checked again, everything else is checked once.
Failures are cached too (a kernel that hangs should not cost a timeout on every run);
``ICLR25_SELFCHECK=refresh`` re-runs the checks. The caller falls back to the proven
kernel and says so with a warning (:func:`fallback_warning`).

Run by hand: ``python -m iclr25.gpu.selfcheck KERNEL [DEVICE_INDEX]`` prints the verdict
as JSON (exit status 0 when the kernel passed).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
import time
import warnings
from dataclasses import asdict, dataclass

from iclr25 import atomic
from iclr25.gpu.registry import get_kernel
from iclr25.paths import cache_dir, package_file

#: seconds a self-check may take, compile included (nvcc of a Hopper kernel: ~30 s)
DEFAULT_TIMEOUT_S = 300.0
#: the last line a self-check subprocess prints starts with this
RESULT_PREFIX = "ICLR25-SELFCHECK "


class SelfCheckFailed(AssertionError):
    """A kernel's output disagreed with its reference during the self-check."""


@dataclass(frozen=True)
class Verdict:
    kernel: str
    ok: bool
    reason: str = ""  # why not, when not ok
    checks: tuple[str, ...] = ()  # what was verified, when ok
    seconds: float = 0.0
    cached: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


# --- the identity of a verdict ---------------------------------------------------------
def _check_code_hash(name: str) -> str:
    """The self-check code and reference of kernel ``name``: a changed test re-checks."""
    spec = get_kernel(name)
    digest = hashlib.sha256()
    for part in ("__init__.py", "reference.py"):
        path = package_file(spec.package, part)
        if path.exists():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def device_identity(index: int) -> dict:
    """What a verdict depends on besides the source: the GPU, its driver, the compiler."""
    import torch

    from iclr25.gpu.compile import nvcc_version

    props = torch.cuda.get_device_properties(index)
    return {
        "device": props.name,
        "capability": f"{props.major}.{props.minor}",
        "driver": _driver_version(),
        "nvcc": nvcc_version(),
        "torch": torch.__version__,
    }


def _driver_version() -> int | None:
    import ctypes

    from iclr25.gpu.driver import DriverError, library

    try:
        version = ctypes.c_int()
        library().cuDriverGetVersion(ctypes.byref(version))
        return version.value
    except DriverError:
        return None


def cache_key(name: str, identity: dict) -> str:
    payload = json.dumps(
        {"source": get_kernel(name).source_hash(), "check": _check_code_hash(name), **identity},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _cache_path(name: str, key: str):
    return cache_dir("selfcheck") / f"{name}-{key}.json"


def _read_cached(path) -> Verdict | None:
    try:
        data = json.loads(path.read_text())
        data["checks"] = tuple(data.get("checks") or ())
        return Verdict(**{**data, "cached": True})
    except (OSError, ValueError, TypeError):
        return None


# --- running the check ----------------------------------------------------------------
def run_in_subprocess(
    name: str, index: int, timeout_s: float, cmd: list[str] | None = None
) -> Verdict:
    """``python -m iclr25.gpu.selfcheck name index`` (or ``cmd``) with a time limit; the
    verdict it prints, or a failed one saying why there is none."""
    cmd = cmd or [sys.executable, "-m", "iclr25.gpu.selfcheck", name, str(index)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        why = f"the self-check did not finish within {timeout_s:.0f} s (a deadlock?)"
        return Verdict(name, False, why, seconds=time.perf_counter() - t0)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            data = json.loads(line[len(RESULT_PREFIX) :])
            data["checks"] = tuple(data.get("checks") or ())
            return Verdict(**data)
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    why = f"the self-check exited {proc.returncode} without a verdict: {' | '.join(tail)[:400]}"
    return Verdict(name, False, why, seconds=time.perf_counter() - t0)


def run_here(name: str, index: int) -> Verdict:
    """Run kernel ``name``'s ``self_check(index)`` in this process (what the subprocess does)."""
    t0 = time.perf_counter()
    module = importlib.import_module(get_kernel(name).package)
    try:
        checks = tuple(module.self_check(index))
    except Exception as exc:  # any failure is a verdict, reported with its first line
        first = (str(exc).strip().splitlines() or [""])[0][:400]
        return Verdict(name, False, f"{type(exc).__name__}: {first}", seconds=_since(t0))
    return Verdict(name, True, checks=checks, seconds=_since(t0))


def _since(t0: float) -> float:
    return round(time.perf_counter() - t0, 3)


_verdicts: dict[tuple[str, int], Verdict] = {}


def verify(name: str, index: int, runner=run_in_subprocess) -> Verdict:
    """The verdict on kernel ``name`` for device ``index``: from memory, from the disk
    cache, or by running the self-check (``runner``) and caching the result."""
    if (name, index) in _verdicts:
        return _verdicts[(name, index)]
    path = _cache_path(name, cache_key(name, device_identity(index)))
    verdict = None if os.environ.get("ICLR25_SELFCHECK") == "refresh" else _read_cached(path)
    if verdict is None:
        timeout_s = float(os.environ.get("ICLR25_SELFCHECK_TIMEOUT_S", DEFAULT_TIMEOUT_S))
        verdict = runner(name, index, timeout_s)
        atomic.write_json(path, {k: v for k, v in verdict.as_dict().items() if k != "cached"})
    _verdicts[(name, index)] = verdict
    return verdict


def forget() -> None:
    """Drop the in-memory verdicts (tests; the disk cache stays)."""
    _verdicts.clear()
    _warned.clear()


_warned: set[tuple[str, str]] = set()


def fallback_message(name: str, why: str, instead: str) -> str:
    return f"{name} failed its self-check on this GPU ({why}); {instead} runs instead"


def fallback_warning(name: str, why: str, instead: str) -> None:
    """One ``warnings.warn`` per (kernel, replacement) and process."""
    if (name, instead) in _warned:
        return
    _warned.add((name, instead))
    warnings.warn(fallback_message(name, why, instead), stacklevel=3)


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print("usage: python -m iclr25.gpu.selfcheck KERNEL [DEVICE_INDEX]", file=sys.stderr)
        return 2
    verdict = run_here(argv[0], int(argv[1]) if len(argv) > 1 else 0)
    print(RESULT_PREFIX + json.dumps(verdict.as_dict()), flush=True)
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Compile-check every registered kernel with ``nvcc`` — no GPU needed.

``compile_all`` runs ``nvcc -cubin -arch=<arch> -Xptxas -v`` on each kernel source for
each requested arch and parses ptxas' report (registers, spills, shared memory per
function). Results are cached in the user cache folder under a key made of the source
hash (headers included), the arch, the options and the compiler version, so a second
run costs nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from iclr25 import atomic
from iclr25.gpu.registry import DEFAULT_ARCHS, KernelSpec, all_kernels, include_dir
from iclr25.paths import cache_dir

NVCC_FLAGS = ("-std=c++17", "-Xptxas", "-v", "-lineinfo")


@dataclass
class FunctionUsage:
    """ptxas' resource report for one entry function."""

    function: str
    registers: int = 0
    spill_stores_bytes: int = 0
    spill_loads_bytes: int = 0
    stack_bytes: int = 0
    smem_bytes: int = 0


@dataclass
class CompileResult:
    name: str
    arch: str
    ok: bool
    skipped: bool = False
    reason: str = ""
    registers: int | None = None  # max over the kernel's entry functions
    spills: int | None = None  # spill stores + loads, bytes, summed over functions
    seconds: float = 0.0  # compile time when it was compiled (cache hits keep it)
    cached: bool = False
    functions: list[FunctionUsage] = field(default_factory=list)
    log: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas(log: str) -> list[FunctionUsage]:
    """Parse ``-Xptxas -v`` output into one :class:`FunctionUsage` per entry function."""
    usages: dict[str, FunctionUsage] = {}
    current: FunctionUsage | None = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = usages.setdefault(m.group(1), FunctionUsage(m.group(1)))
        elif m := _PROPS.search(line):
            current = usages.setdefault(m.group(1), FunctionUsage(m.group(1)))
        if current is None:
            continue
        if m := _STACK.search(line):
            current.stack_bytes = int(m.group(1))
            current.spill_stores_bytes = int(m.group(2))
            current.spill_loads_bytes = int(m.group(3))
        if m := _USED.search(line):
            current.registers = int(m.group(1))
            if s := _SMEM.search(line):
                current.smem_bytes = int(s.group(1))
    return list(usages.values())


@functools.lru_cache(maxsize=1)
def nvcc_path() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and Path(root, "bin", "nvcc").exists():
            return str(Path(root, "bin", "nvcc"))
    return None


@functools.lru_cache(maxsize=1)
def nvcc_version() -> str | None:
    nvcc = nvcc_path()
    if nvcc is None:
        return None
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    return lines[-1].strip() if lines else None


def _cache_key(spec: KernelSpec, arch: str, version: str) -> str:
    payload = "|".join((spec.name, spec.source_hash(), arch, version, repr(NVCC_FLAGS)))
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _cache_file(spec: KernelSpec, arch: str, version: str) -> Path:
    return cache_dir("compile") / f"{spec.name}-{arch}-{_cache_key(spec, arch, version)}.json"


def _result_from_cache(path: Path) -> CompileResult | None:
    try:
        data = json.loads(path.read_text())
        functions = [FunctionUsage(**f) for f in data.pop("functions", [])]
        return CompileResult(**data, functions=functions)
    except (OSError, ValueError, TypeError):
        return None


def _cubin_path(spec: KernelSpec, arch: str, version: str) -> Path:
    return cache_dir("cubin") / f"{spec.name}-{arch}-{_cache_key(spec, arch, version)}.cubin"


def _run_nvcc(spec: KernelSpec, arch: str, nvcc: str, version: str) -> CompileResult:
    """Compile with ptxas' report; a successful build's cubin is kept in the cache (it is
    what :func:`build_cubin` loads for arch-specific targets)."""
    cubin = _cubin_path(spec, arch, version)
    with tempfile.TemporaryDirectory(prefix="iclr25-nvcc-", dir=cubin.parent) as tmp:
        out = Path(tmp) / cubin.name
        cmd = [nvcc, "-cubin", f"-arch={arch}", *NVCC_FLAGS, f"-I{include_dir()}", *spec.options]
        cmd += ["-o", str(out), str(spec.source_path())]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return CompileResult(spec.name, arch, ok=False, reason="nvcc timed out after 600 s")
        seconds = time.perf_counter() - t0
        if proc.returncode == 0 and out.exists():
            os.replace(out, cubin)
    log = (proc.stdout + proc.stderr).strip()
    functions = parse_ptxas(log)
    ok = proc.returncode == 0
    errors = [line for line in log.splitlines() if "error" in line.lower()]
    return CompileResult(
        name=spec.name,
        arch=arch,
        ok=ok,
        reason="" if ok else (errors[0] if errors else f"nvcc exited {proc.returncode}"),
        registers=max((f.registers for f in functions), default=None) if ok else None,
        spills=sum(f.spill_stores_bytes + f.spill_loads_bytes for f in functions) if ok else None,
        seconds=round(seconds, 3),
        functions=functions,
        log=log,
    )


def compile_kernel(spec: KernelSpec, arch: str, use_cache: bool = True) -> CompileResult:
    """Compile one kernel for one arch (or return the cached result)."""
    if arch not in spec.archs:
        return CompileResult(spec.name, arch, ok=True, skipped=True, reason=spec.skip_reason)
    nvcc, version = nvcc_path(), nvcc_version()
    if nvcc is None or version is None:
        return CompileResult(spec.name, arch, ok=False, skipped=True, reason="nvcc not found")
    cache_file = _cache_file(spec, arch, version)
    if use_cache and (hit := _result_from_cache(cache_file)) is not None:
        hit.cached = True
        return hit
    result = _run_nvcc(spec, arch, nvcc, version)
    if result.ok:  # failures are not cached: the next run shows the error again
        atomic.write_json(cache_file, result.as_dict())
    return result


def compile_all(
    archs: tuple[str, ...] = DEFAULT_ARCHS,
    kernels: tuple[KernelSpec, ...] | None = None,
    use_cache: bool = True,
    workers: int | None = None,
) -> list[CompileResult]:
    """Compile every registered kernel for every arch; one result per (kernel, arch)."""
    jobs = [(spec, arch) for spec in (kernels or all_kernels()) for arch in archs]
    workers = workers or max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: compile_kernel(*job, use_cache=use_cache), jobs))


def lookup_cached(spec: KernelSpec, arch: str) -> CompileResult | None:
    """The cached compile result of ``spec`` for ``arch``, without compiling (None if absent)."""
    version = nvcc_version()
    if version is None or arch not in spec.archs:
        return None
    hit = _result_from_cache(_cache_file(spec, arch, version))
    if hit is not None:
        hit.cached = True
    return hit


def build_cubin(spec: KernelSpec, arch: str) -> Path:
    """The cubin of ``spec`` for ``arch``, built with nvcc once and kept in the cache (for
    targets CuPy's NVRTC path cannot request, such as sm_90a). Raises RuntimeError when
    nvcc is missing or the compile fails."""
    nvcc, version = nvcc_path(), nvcc_version()
    if nvcc is None or version is None:
        raise RuntimeError(f"{spec.name} needs nvcc to be built for {arch}: put nvcc on PATH")
    path = _cubin_path(spec, arch, version)
    if not path.exists():
        result = _run_nvcc(spec, arch, nvcc, version)
        if not result.ok:
            raise RuntimeError(f"nvcc failed for {spec.name} ({arch}): {result.log[-2000:]}")
        atomic.write_json(_cache_file(spec, arch, version), result.as_dict())
    return path


@functools.cache
def cubin_path(name: str, arch: str) -> Path:
    """:func:`build_cubin` of registered kernel ``name``, once per process: a launch then
    costs a dict lookup instead of hashing the source and its headers."""
    from iclr25.gpu.registry import get_kernel

    return build_cubin(get_kernel(name), arch)


def cached_status(archs: tuple[str, ...] = DEFAULT_ARCHS) -> list[dict]:
    """What the compile cache knows, without compiling: one row per (kernel, arch)."""
    version = nvcc_version()
    rows = []
    for spec in all_kernels():
        for arch in archs:
            row = {"name": spec.name, "arch": arch, "status": "not compiled yet"}
            if arch not in spec.archs:
                row["status"] = f"skipped: {spec.skip_reason}"
            elif version is not None and (
                hit := _result_from_cache(_cache_file(spec, arch, version))
            ):
                row.update(status="ok", registers=hit.registers, spills=hit.spills)
            rows.append(row)
    return rows

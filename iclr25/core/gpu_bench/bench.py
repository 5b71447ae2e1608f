"""One gpu-bench run: the compile report, then GPU timings or CPU reference timings.

For every case (ops.py) our kernel and every reference are first run once on input set 0
and checked: each of our outputs (C; O and the log-sum-exp; dQ, dK, dV) against the fp32
(fp64 on a CPU) exact output, under a bound relative to the output's row RMS
(:mod:`iclr25.gpu.tolerance`), and each reference's main output against the same exact
value. Then every side that ran is timed by **one method**
(:func:`iclr25.timing.compare_interleaved`): ours and the references interleaved round
by round, each sample one clock interval around ``launches`` back-to-back calls that walk
through the rotated input sets (sets chosen to span twice the L2, so no call finds its
inputs cached), CUDA events on the GPU, the same warm-up, repeats and statistic (median
per call) for every side.

Row fields: ``op``, ``shape``, ``dtype``, ``kernel`` (the kernel that actually ran),
``fallback`` (why not a faster kernel: also a warning), ``ours_tflops``, ``ours_ms``,
``reference``, ``reference_tflops``, ``reference_ms``, ``ratio`` (ours / reference TFLOP/s),
``peak_tflops``, ``pct_of_peak``, ``max_abs_err`` and ``error_ratio`` (ours, worst output:
error / bound, <= 1 within tolerance), ``checks`` (one per output), ``within_tolerance``,
``reference_max_abs_err``, ``sets``, ``launches``, ``repeats``, ``note``. On a CPU the
kernels cannot run: ``ours_*`` are null and the references are timed in fp32. A case,
kernel or reference that raises becomes a row whose ``note`` says ``failed: ...`` /
``ours failed: ...`` / ``reference failed: ...`` and a warning; the rest is still measured.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from iclr25 import timing as harness
from iclr25.core.gpu_bench import ops, peaks
from iclr25.core.gpu_bench.ops import OpOptions
from iclr25.errors import InputError, UsageError
from iclr25.gpu import flops as flops_mod
from iclr25.gpu import tolerance

GIB = 2**30
CPU_CACHE_FALLBACK = 32 * 2**20


@dataclass(frozen=True)
class GpuBenchConfig:
    ops: tuple[str, ...] = ()  # empty: every op
    sizes: tuple[str, ...] = ()  # empty: each op's defaults
    options: OpOptions = field(default_factory=OpOptions)
    repeats: int | None = None  # None: 20 (GPU), 10 (GPU --quick), 5 (CPU)
    warmup: int | None = None  # None: 5 (GPU), 1 (CPU)
    #: back-to-back calls inside one timed sample; None: 10 on a GPU (host launch overhead
    #: between calls is then hidden as it is in real use), 1 on a CPU
    launches: int | None = None
    peak_tflops: float | None = None  # overrides the peaks table

    def launches_per_sample(self, device: str) -> int:
        return self.launches or (10 if device == "cuda" else 1)

    def timing(self, device: str) -> harness.TimingConfig:
        if device == "cuda":
            repeats = self.repeats or (10 if self.options.quick else 20)
            return harness.TimingConfig(
                warmup=5 if self.warmup is None else self.warmup, repeats=repeats
            )
        return harness.TimingConfig(
            warmup=1 if self.warmup is None else self.warmup, repeats=self.repeats or 5
        )


# --- compile report ---------------------------------------------------------------------
def kernel_row(result) -> dict:
    row = {k: getattr(result, k) for k in ("name", "arch", "ok", "registers", "spills", "seconds")}
    row.update(skipped=result.skipped, cached=result.cached)
    if result.reason:
        row["reason"] = result.reason
    return row


def compile_report(no_compile: bool) -> list[dict]:
    """Every kernel x arch: compiled now (cached by source hash), or only looked up."""
    from iclr25.gpu import compile as gpu_compile
    from iclr25.gpu.registry import DEFAULT_ARCHS, all_kernels

    if not no_compile:
        return [kernel_row(r) for r in gpu_compile.compile_all(DEFAULT_ARCHS)]
    rows = []
    for spec in all_kernels():
        for arch in DEFAULT_ARCHS:
            if arch not in spec.archs:
                rows.append(kernel_row(gpu_compile.compile_kernel(spec, arch)))  # a skip, no nvcc
                continue
            hit = gpu_compile.lookup_cached(spec, arch)
            if hit is not None:
                rows.append(kernel_row(hit))
            else:
                rows.append(
                    {
                        "name": spec.name,
                        "arch": arch,
                        "ok": None,
                        "registers": None,
                        "spills": None,
                        "seconds": None,
                        "skipped": False,
                        "cached": False,
                        "reason": "not compiled yet (run gpu-bench --compile-only)",
                    }
                )
    return rows


# --- device facts -----------------------------------------------------------------------
@dataclass(frozen=True)
class DeviceFacts:
    kind: str  # "cuda" or "cpu"
    name: str | None
    capability: tuple[int, int] | None
    free_bytes: int
    cache_bytes: int  # L2 (GPU) or last-level cache (CPU)


def cuda_facts() -> DeviceFacts:
    import torch

    props = torch.cuda.get_device_properties(0)
    free, _ = torch.cuda.mem_get_info(0)
    l2 = int(getattr(props, "L2_cache_size", 0) or 50 * 2**20)
    return DeviceFacts("cuda", props.name, (props.major, props.minor), int(free), l2)


def cpu_facts() -> DeviceFacts:
    free = 4 * GIB
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
    except OSError:
        pass
    cache = CPU_CACHE_FALLBACK
    for index in (3, 2):
        try:
            with open(f"/sys/devices/system/cpu/cpu0/cache/index{index}/size") as fh:
                text = fh.read().strip().upper()
            cache = int(text.rstrip("KMG")) * {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1], 1)
            break
        except (OSError, ValueError):
            continue
    return DeviceFacts("cpu", None, None, free, cache)


def check_device_support(dtype: str, capability: tuple[int, int], requested_ops: list[str]) -> None:
    """The tile kernels need sm_80+ (mma.sync m16n8k16, cp.async, bf16): refuse earlier GPUs."""
    tile_ops = [op for op in requested_ops if op in ops.FIRST_CLASS]
    if not tile_ops or capability >= (8, 0):
        return
    cc = f"{capability[0]}.{capability[1]}"
    if dtype == "bf16":
        raise UsageError(
            f"bf16 tensor cores need compute capability 8.0 or newer; this GPU is {cc}",
            "run on an Ampere or newer GPU (fp16 needs sm_80 too for these kernels: mma m16n8k16, "
            "cp.async), or restrict --ops to hot-path kernels",
        )
    raise UsageError(
        f"the tile kernels ({', '.join(tile_ops)}) need compute capability 8.0 or newer; "
        f"this GPU is {cc}",
        "run on an Ampere or newer GPU, or restrict --ops to hot-path kernels",
    )


def plan_sets(case: ops.BenchCase, facts: DeviceFacts) -> int:
    """Input sets for ``case``; InputError when even one does not fit in memory."""
    usable = facts.free_bytes * (0.9 if facts.kind == "cuda" else 0.5)
    needed = case.set_bytes + case.extra_bytes
    if needed > usable:
        where = "device" if facts.kind == "cuda" else "host"
        raise InputError(
            f"{case.op} {case.shape} needs about {needed / GIB:.1f} GiB of {where} memory; "
            f"{usable / GIB:.1f} GiB is usable",
            "pass smaller --sizes (or --batch / --heads)",
        )
    if not case.rotate:
        return 1
    budget = min(usable * 0.6 - case.extra_bytes, 16 * GIB if facts.kind == "cuda" else 2 * GIB)
    return harness.rotation_count(case.set_bytes, facts.cache_bytes, int(max(budget, 0)))


# --- measuring ----------------------------------------------------------------------------
def to_torch(x):
    import torch

    if isinstance(x, torch.Tensor):
        return x
    if hasattr(x, "__dlpack__"):
        return torch.from_dlpack(x)
    import numpy as np

    return torch.as_tensor(np.asarray(x))


def batched(fn: Callable[[int], Any], sets: int, launches: int) -> Callable[[], None]:
    """One timed sample: ``launches`` calls of ``fn``, each on the next input set."""
    state = {"next": 0}

    def sample() -> None:
        for _ in range(launches):
            fn(state["next"] % sets)
            state["next"] += 1

    return sample


def time_sides(
    sides: dict[str, Callable[[int], Any]], sets: int, launches: int, timing, clock
) -> dict[str, float]:
    """Median seconds per call of every side, timed interleaved by one method."""
    samples = {name: batched(fn, sets, launches) for name, fn in sides.items()}
    timed = harness.compare_interleaved(samples, timing, clock)
    return {name: t.median_s / launches for name, t in timed.items()}


def failure(exc: BaseException) -> str:
    """One line naming an exception, for a row's note and a warning."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


NO_OURS: dict[str, Any] = {
    "ours_tflops": None,
    "ours_ms": None,
    "max_abs_err": None,
    "error_ratio": None,
    "checks": [],
    "within_tolerance": None,
}


def check_ours(built, exact: dict) -> dict[str, Any]:
    """Our outputs on set 0 against the exact ones: the error fields of a row."""
    ours = built.ours_outputs()
    reports = [
        tolerance.compare(name, ours[name], exact[name], built.tolerances[name])
        for name in built.tolerances
    ]
    worst = max(reports, key=lambda r: r.error_ratio)
    return {
        "max_abs_err": reports[0].max_abs_err,
        "error_ratio": worst.error_ratio,
        "checks": [r.as_dict() for r in reports],
        "within_tolerance": all(r.ok for r in reports),
    }


def _reference_error(out, exact: dict | None) -> float | None:
    """A reference's error on the main output (its first, when it returns several)."""
    if not exact:
        return None
    if isinstance(out, tuple | list):
        out = out[0]
    main = next(iter(exact.values()))
    return tolerance.compare("out", to_torch(out), main, tolerance.Tolerance()).max_abs_err


def measure_case(
    case: ops.BenchCase, sets: int, with_ours: bool, timing, clock, peak, launches: int = 1
) -> list[dict]:
    """The rows of one case (one per reference). A case, kernel or reference that raises is
    reported in its row's ``note`` instead of ending the run."""
    base = {"op": case.op, "shape": case.shape, "dtype": case.dtype, "kernel": None}
    base.update(fallback="", sets=sets, launches=launches, repeats=timing.repeats)
    try:
        built = case.build(sets=sets, with_ours=with_ours)
        exact = built.exact() if built.exact is not None else None
    except Exception as exc:
        return [_row(base, NO_OURS, None, None, peak, f"failed: {failure(exc)}")]
    ours, sides, notes, ref_errors = dict(NO_OURS), {}, {}, {}
    if built.ours is not None:
        base.update(kernel=built.kernel, fallback=built.fallback)
        try:
            ours.update(check_ours(built, exact) if exact is not None else {})
            sides["ours"] = built.ours
        except Exception as exc:  # one broken kernel must not hide the rest of the table
            ours["failed"] = f"ours failed: {failure(exc)}"
    for name, fn in built.references.items():
        try:
            ref_errors[name] = _reference_error(fn(0), exact)
            sides[name] = fn
        except Exception as exc:
            notes[name] = f"reference failed: {failure(exc)}"
    seconds = _time_or_fail(sides, sets, launches, timing, clock, ours, notes)
    if "ours" in seconds:
        ours.update(
            ours_tflops=flops_mod.tflops(case.flops, seconds["ours"]),
            ours_ms=1e3 * seconds["ours"],
        )
    rows = []
    for name in built.references:
        t = seconds.get(name)
        ref = (flops_mod.tflops(case.flops, t), None if t is None else 1e3 * t)
        rows.append(_row(base, ours, name, (*ref, ref_errors.get(name)), peak, notes.get(name, "")))
    for name, why in built.unavailable.items():
        rows.append(_row(base, ours, name, None, peak, f"unavailable: {why}"))
    return rows


def _time_or_fail(sides, sets, launches, timing, clock, ours, notes) -> dict[str, float]:
    """Seconds per call of every side; a side that raises while timed fails the whole
    comparison (the others' timings would not be interleaved with it), noted on each row."""
    if not sides:
        return {}
    try:
        return time_sides(sides, sets, launches, timing, clock)
    except Exception as exc:
        why = f"timing failed: {failure(exc)}"
        ours.setdefault("failed", why)
        for name in sides:
            notes.setdefault(name, why)
        return {}


def _row(base, ours, reference, ref, peak, note) -> dict:
    """A table row; ``ref`` is (TFLOP/s, ms, max |error|) of the reference, or None."""
    ref_tflops, ref_ms, ref_err = ref if ref is not None else (None, None, None)
    ratio = None
    if ours["ours_tflops"] is not None and ref_tflops:
        ratio = ours["ours_tflops"] / ref_tflops
    note = "; ".join(n for n in (ours.get("failed", ""), note) if n)
    row = {**base}
    row.update(
        ours_tflops=ours["ours_tflops"],
        ours_ms=ours["ours_ms"],
        reference=reference,
        reference_tflops=ref_tflops,
        reference_ms=ref_ms,
        ratio=ratio,
        peak_tflops=peak,
        pct_of_peak=peaks.percent_of_peak(ours["ours_tflops"], peak),
        max_abs_err=ours["max_abs_err"],
        error_ratio=ours["error_ratio"],
        checks=ours["checks"],
        within_tolerance=ours["within_tolerance"],
        reference_max_abs_err=ref_err,
        note=note,
    )
    return row


def problems(rows: list[dict]) -> list[str]:
    """One warning per case whose kernel failed or missed its tolerance, that failed, or
    whose dispatcher fell back from a faster kernel (the row names the one that ran)."""
    found: dict[tuple, list[str]] = {}
    for r in rows:
        key, where = (r["op"], r["shape"]), f"{r['op']} {r['shape']}"
        messages = found.setdefault(key, [])
        if r.get("fallback") and not messages:
            messages.append(f"{where}: ran {r['kernel']}, not a faster kernel: {r['fallback']}")
        if r["within_tolerance"] is False:
            bad = ", ".join(
                f"{c['name']} error {c['max_abs_err']:.3g} is {c['error_ratio']:.3g}x its bound"
                for c in r["checks"]
                if not c["ok"]
            )
            text = f"{where}: {r['kernel']} is outside its tolerance ({bad})"
        elif r["note"].startswith(("failed", "ours failed", "reference failed", "timing failed")):
            text = f"{where}: {r['note']}"
        else:
            continue
        if text not in messages:
            messages.append(text)
    return [m for messages in found.values() for m in messages]


# --- the two runs -----------------------------------------------------------------------
def requested_ops(config: GpuBenchConfig) -> list[str]:
    """``--ops`` validated; with ``--sizes`` and no ``--ops``, only the sized ops."""
    if not config.ops and config.sizes:
        return list(ops.FIRST_CLASS)
    return ops.resolve_ops(list(config.ops) or None)


def run_gpu(config: GpuBenchConfig, warn: Callable[[str], None], on_progress=None) -> list[dict]:
    """Time our kernels and the references on the CUDA device: the rows."""
    import torch

    from iclr25.gpu import get_cupy

    facts = cuda_facts()
    names = requested_ops(config)
    check_device_support(config.options.dtype, facts.capability, names)
    with_ours = get_cupy() is not None
    if not with_ours:
        warn("CuPy is not installed, so only the references are timed (pip install -e '.[gpu]')")
    peak = config.peak_tflops or peaks.dense_peak_tflops(facts.name, config.options.dtype)
    if peak is None:
        warn(f"no dense peak known for {facts.name}: pass --peak-tflops for % of peak")
    cases = ops.expand_cases(names, list(config.sizes) or None, config.options, "cuda")
    plans = [plan_sets(case, facts) for case in cases]  # refuse oversized runs up front
    timing, clock, rows = config.timing("cuda"), harness.CudaEventClock(), []
    launches = config.launches_per_sample("cuda")
    for case, sets in zip(cases, plans, strict=True):
        new_rows = measure_case(case, sets, with_ours, timing, clock, peak, launches)
        for message in problems(new_rows):
            warn(message)
        rows.extend(new_rows)
        torch.cuda.empty_cache()
        if on_progress:
            on_progress(1, case=f"{case.op} {case.shape}")
    return rows


def run_cpu_reference(config: GpuBenchConfig, on_progress=None) -> tuple[list[dict], list[str]]:
    """Time the CPU references of the first-class ops: (rows, ops that need a GPU)."""
    names = requested_ops(config)
    facts = cpu_facts()
    cases = ops.expand_cases(names, list(config.sizes) or None, config.options, "cpu")
    plans = [plan_sets(case, facts) for case in cases]
    timing, clock, rows = config.timing("cpu"), harness.PerfCounterClock(), []
    launches = config.launches_per_sample("cpu")
    for case, sets in zip(cases, plans, strict=True):
        rows.extend(measure_case(case, sets, False, timing, clock, None, launches))
        if on_progress:
            on_progress(1, case=f"{case.op} {case.shape}")
    return rows, [op for op in names if op not in ops.FIRST_CLASS]


def count_cases(config: GpuBenchConfig, device: str) -> int:
    """How many cases a run has; on the CPU also refuses sizes that do not fit in memory,
    so a bad request fails before the compile check."""
    names = requested_ops(config)
    cases = ops.expand_cases(names, list(config.sizes) or None, config.options, device)
    if device == "cpu":
        facts = cpu_facts()
        for case in cases:
            plan_sets(case, facts)
    return len(cases)

"""The one timing harness of the project: every benchmark, study and ``gpu-bench`` row.

Two entry points:

- :func:`time_calls` times one side (a kernel and its input sets) on a clock;
- :func:`compare_interleaved` times several sides *interleaved* — ours, peer, ours, peer,
  ... with the order rotated every round — so that load from other processes on a shared
  machine hits every side alike, and reports the same statistics for each (median and
  min of the wall time, median process CPU time). Benchmarks in ``benchmarks/`` time both
  sides of every ratio with it (``benchmarks/harness.py``).

Protocol (the ThunderKittens measuring notes):

1. ``warmup`` untimed calls (compilation, autotuning, allocator and clock ramp-up);
2. ``repeats`` timed calls, each bracketed by two clock marks. On a GPU the marks are CUDA
   events recorded on the stream, read after one final synchronisation, so host overhead
   between launches is not counted; on a CPU they are ``time.perf_counter`` readings;
3. call ``i`` uses input set ``i mod sets``: consecutive calls never touch the same inputs,
   and with enough sets (:func:`rotation_count`: the sets visited between two uses of one
   set span twice the last-level cache) every call starts from a cold cache;
4. the result is the median of the timed calls (robust to the odd preempted call), with
   the min and the spread kept for inspection.

``calls`` are zero-argument callables, one per input set; the harness never looks inside.
"""

from __future__ import annotations

import math
import resource
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class TimingConfig:
    warmup: int = 5  # untimed calls first
    repeats: int = 20  # timed calls; the median is reported

    def __post_init__(self) -> None:
        if self.warmup < 0 or self.repeats < 1:
            raise ValueError(
                f"need warmup >= 0 and repeats >= 1, got {self.warmup}, {self.repeats}"
            )


@dataclass(frozen=True)
class Timing:
    median_s: float
    min_s: float
    max_s: float
    samples: int
    sets: int  # input sets rotated through

    @classmethod
    def from_samples(cls, samples_s: Sequence[float], sets: int) -> Timing:
        return cls(
            median_s=statistics.median(samples_s),
            min_s=min(samples_s),
            max_s=max(samples_s),
            samples=len(samples_s),
            sets=sets,
        )


class Clock(Protocol):
    """Marks around each timed call; ``elapsed_s`` is read after ``synchronize``."""

    def mark(self) -> Any: ...

    def elapsed_s(self, start: Any, end: Any) -> float: ...

    def synchronize(self) -> None: ...


class PerfCounterClock:
    """Host wall clock, for CPU work (every call has finished when it returns)."""

    def mark(self) -> float:
        return time.perf_counter()

    def elapsed_s(self, start: float, end: float) -> float:
        return end - start

    def synchronize(self) -> None:
        return None


class CudaEventClock:
    """CUDA events on torch's current stream (GPU time between the two marks)."""

    def __init__(self) -> None:
        import torch

        self._torch = torch

    def mark(self):
        event = self._torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def elapsed_s(self, start, end) -> float:
        return start.elapsed_time(end) / 1e3  # elapsed_time is in milliseconds

    def synchronize(self) -> None:
        self._torch.cuda.synchronize()


def time_calls(calls: Sequence[Callable[[], Any]], config: TimingConfig, clock: Clock) -> Timing:
    """Time ``calls`` (one per input set) under the protocol in the module docstring."""
    if not calls:
        raise ValueError("time_calls needs at least one call")
    n = len(calls)
    for i in range(config.warmup):
        calls[i % n]()
    clock.synchronize()
    marks = []
    for r in range(config.repeats):
        fn = calls[(config.warmup + r) % n]
        start = clock.mark()
        fn()
        marks.append((start, clock.mark()))
    clock.synchronize()
    return Timing.from_samples([clock.elapsed_s(s, e) for s, e in marks], sets=n)


def rotation_count(set_bytes: int, cache_bytes: int, budget_bytes: int, max_sets: int = 64) -> int:
    """Input sets to rotate so that, between two uses of one set, the others touch at least
    twice ``cache_bytes`` — capped by the memory ``budget_bytes`` and ``max_sets``.

    Returns at least 1 (a single set when even two do not fit: the cache may then be warm,
    which :func:`caches_are_cold` reports)."""
    if set_bytes <= 0:
        return 1
    wanted = 1 + math.ceil(2 * cache_bytes / set_bytes)  # the set itself + the flushers
    fit = budget_bytes // set_bytes
    return int(max(1, min(wanted, fit, max_sets)))


def caches_are_cold(sets: int, set_bytes: int, cache_bytes: int) -> bool:
    """Whether rotating ``sets`` input sets flushes a cache of ``cache_bytes`` between uses."""
    return sets >= 2 and (sets - 1) * set_bytes >= 2 * cache_bytes


# ---------------------------------------------------------------------------------------
# Interleaved comparison of several sides (ours against peers)
# ---------------------------------------------------------------------------------------
def cpu_seconds() -> float:
    """Process CPU time (user + system) of this process and its finished children, so a
    peer run as a subprocess is charged like one run in-process."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@dataclass(frozen=True)
class SideTiming:
    """One side of an interleaved comparison: the same statistics for every side."""

    wall: Timing  # per-call wall seconds (clock marks): median, min, max
    cpu_median_s: float  # per-call process CPU seconds (host), median
    wall_samples_s: tuple[float, ...] = field(repr=False)
    cpu_samples_s: tuple[float, ...] = field(repr=False)

    @property
    def median_s(self) -> float:
        return self.wall.median_s

    @property
    def min_s(self) -> float:
        return self.wall.min_s

    def as_dict(self) -> dict:
        return {
            "median_s": self.wall.median_s,
            "min_s": self.wall.min_s,
            "max_s": self.wall.max_s,
            "cpu_median_s": self.cpu_median_s,
            "repeats": self.wall.samples,
            "input_sets": self.wall.sets,
            "samples_s": list(self.wall_samples_s),
        }


Side = Callable[[], Any] | Sequence[Callable[[], Any]]


def compare_interleaved(
    sides: Mapping[str, Side],
    config: TimingConfig | None = None,
    clock: Clock | None = None,
    *,
    min_time_s: float = 0.0,
    max_repeats: int = 1000,
) -> dict[str, SideTiming]:
    """Time every side of ``sides`` (a call, or one call per input set) interleaved.

    1. ``config.warmup`` untimed rounds, every side once per round;
    2. timed rounds until at least ``config.repeats`` rounds and ``min_time_s`` seconds
       have passed (at most ``max_repeats`` rounds); in round ``r`` the sides run in the
       order of ``sides`` rotated by ``r``, so no side always runs first (after an idle
       moment) or last;
    3. each call is bracketed by two clock marks and two :func:`cpu_seconds` readings; the
       CPU time is host time (on a GPU it measures launch overhead, not kernel time).

    The statistic is the same for every side: median and min of the per-call times.
    """
    config = config or TimingConfig(warmup=1, repeats=5)
    clock = clock or PerfCounterClock()
    names = list(sides)
    if not names:
        raise ValueError("compare_interleaved needs at least one side")
    calls = {n: list(sides[n]) if isinstance(sides[n], Sequence) else [sides[n]] for n in names}
    if any(not c for c in calls.values()):
        raise ValueError("every side needs at least one call")
    counter = dict.fromkeys(names, 0)

    def call(name: str) -> None:
        fns = calls[name]
        fns[counter[name] % len(fns)]()
        counter[name] += 1

    for _ in range(config.warmup):
        for name in names:
            call(name)
    clock.synchronize()
    marks: dict[str, list] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    t0, rounds = time.perf_counter(), 0
    while rounds < max_repeats and (
        rounds < config.repeats or time.perf_counter() - t0 < min_time_s
    ):
        shift = rounds % len(names)
        for name in names[shift:] + names[:shift]:
            c0 = cpu_seconds()
            start = clock.mark()
            call(name)
            end = clock.mark()
            cpu[name].append(cpu_seconds() - c0)
            marks[name].append((start, end))
        rounds += 1
    clock.synchronize()
    out = {}
    for name in names:
        wall = [clock.elapsed_s(s, e) for s, e in marks[name]]
        out[name] = SideTiming(
            wall=Timing.from_samples(wall, sets=len(calls[name])),
            cpu_median_s=statistics.median(cpu[name]),
            wall_samples_s=tuple(wall),
            cpu_samples_s=tuple(cpu[name]),
        )
    return out

"""The timing harness: warm-ups, cold caches by input rotation, median of repeats.

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
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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

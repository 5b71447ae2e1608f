"""The timing harness: warm-ups are not timed, inputs rotate, the median is reported —
checked with a scripted clock, and with the real perf_counter clock on CPU reference ops."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from iclr25 import timing as harness


class ScriptedClock:
    """A clock whose time advances only inside calls, by a scripted amount per call."""

    def __init__(self):
        self.now = 0.0
        self.syncs = 0

    def mark(self):
        return self.now

    def elapsed_s(self, start, end):
        return end - start

    def synchronize(self):
        self.syncs += 1


def scripted_calls(clock: ScriptedClock, durations: list[float], sets: int, log: list[int]):
    """``sets`` calls; call number n (over all calls) takes durations[n] seconds."""

    def make(i):
        def call():
            clock.now += durations[len(log)]
            log.append(i)

        return call

    return [make(i) for i in range(sets)]


def test_warmups_are_not_timed_and_the_median_is_reported():
    clock, log = ScriptedClock(), []
    # 2 warm-ups of 100 s (compilation, say), then 5 timed calls
    durations = [100.0, 100.0, 3.0, 1.0, 2.0, 50.0, 4.0]
    timing = harness.time_calls(
        scripted_calls(clock, durations, 1, log), harness.TimingConfig(warmup=2, repeats=5), clock
    )
    assert timing.median_s == 3.0  # median of 3, 1, 2, 50, 4 — the outlier does not move it
    assert (timing.min_s, timing.max_s, timing.samples) == (1.0, 50.0, 5)
    assert len(log) == 7 and clock.syncs == 2


def test_calls_rotate_through_the_input_sets():
    clock, log = ScriptedClock(), []
    calls = scripted_calls(clock, [1.0] * 20, 3, log)
    timing = harness.time_calls(calls, harness.TimingConfig(warmup=2, repeats=7), clock)
    assert log == [0, 1, 2, 0, 1, 2, 0, 1, 2]  # warm-ups continue the rotation
    assert all(a != b for a, b in zip(log, log[1:], strict=False))  # never the same set twice
    assert timing.sets == 3


def test_config_rejects_nonsense():
    with pytest.raises(ValueError, match="repeats >= 1"):
        harness.TimingConfig(warmup=0, repeats=0)
    with pytest.raises(ValueError, match="warmup >= 0"):
        harness.TimingConfig(warmup=-1, repeats=3)
    with pytest.raises(ValueError, match="at least one call"):
        harness.time_calls([], harness.TimingConfig(), ScriptedClock())


@pytest.mark.parametrize(
    ("set_bytes", "cache", "budget", "expected"),
    [
        (64 * 2**20, 50 * 2**20, 10 * 2**30, 3),  # 4096^3 bf16 GEMM inputs vs a 50 MiB L2
        (200 * 2**20, 50 * 2**20, 10 * 2**30, 2),  # bigger than twice the cache: 2 sets
        (2**20, 50 * 2**20, 10 * 2**30, 64),  # small sets: capped at max_sets
        (2**20, 50 * 2**20, 10 * 2**20, 10),  # capped by the memory budget
        (2**30, 50 * 2**20, 2**29, 1),  # not even one more fits: one set
        (0, 50 * 2**20, 2**30, 1),
    ],
)
def test_rotation_count(set_bytes, cache, budget, expected):
    assert harness.rotation_count(set_bytes, cache, budget) == expected


@given(st.integers(1, 2**32), st.integers(1, 2**28), st.integers(0, 2**36))
def test_property_rotation_flushes_the_cache_whenever_memory_allows(set_bytes, cache, budget):
    sets = harness.rotation_count(set_bytes, cache, budget)
    assert 1 <= sets <= 64
    assert sets == 1 or sets * set_bytes <= budget
    full = harness.rotation_count(set_bytes, cache, 2**62, max_sets=10**9)
    assert harness.caches_are_cold(full, set_bytes, cache)
    if full > 2:  # the smallest count that flushes: one fewer would not
        assert not harness.caches_are_cold(full - 1, set_bytes, cache)


def test_perf_counter_clock_times_a_cpu_reference_op():
    a = [torch.randn(128, 128) for _ in range(3)]
    calls = [lambda x=x: x @ x for x in a]
    timing = harness.time_calls(
        calls, harness.TimingConfig(warmup=1, repeats=5), harness.PerfCounterClock()
    )
    assert timing.samples == 5 and timing.sets == 3
    assert 0 < timing.min_s <= timing.median_s <= timing.max_s


# -- interleaved comparison (benchmarks: ours against a peer) --------------------------
def test_interleaved_rounds_rotate_the_order_and_warmups_are_untimed():
    clock, order = ScriptedClock(), []

    def side(name, seconds):
        def call():
            clock.now += seconds
            order.append(name)

        return call

    timings = harness.compare_interleaved(
        {"ours": side("ours", 1.0), "peer": side("peer", 4.0)},
        harness.TimingConfig(warmup=1, repeats=4),
        clock,
    )
    # one warm-up round, then rounds alternate who goes first
    assert order == ["ours", "peer"] + ["ours", "peer", "peer", "ours"] * 2
    assert timings["ours"].median_s == 1.0 and timings["peer"].median_s == 4.0
    assert timings["ours"].wall.samples == timings["peer"].wall.samples == 4
    assert clock.syncs == 2


def test_interleaved_load_hits_both_sides_alike():
    """A burst of load during two rounds slows both sides; the medians keep the ratio."""
    clock, calls = ScriptedClock(), []
    slow_rounds = {2, 3}

    def side(seconds):
        def call():
            rnd = len(calls) // 2
            clock.now += seconds * (10 if rnd in slow_rounds else 1)
            calls.append(seconds)

        return call

    t = harness.compare_interleaved(
        {"a": side(1.0), "b": side(3.0)}, harness.TimingConfig(warmup=0, repeats=7), clock
    )
    assert t["b"].median_s / t["a"].median_s == pytest.approx(3.0)
    assert t["a"].wall.max_s == 10.0


def test_interleaved_min_time_extends_the_rounds(monkeypatch):
    """Rounds continue until ``min_time_s`` has passed (a fake clock: 1 ms per reading)."""
    import types

    ticks = iter(range(10**6))
    fake = types.SimpleNamespace(perf_counter=lambda: next(ticks) * 1e-3, process_time=lambda: 0.0)
    monkeypatch.setattr(harness, "time", fake)
    timings = harness.compare_interleaved(
        {"x": lambda: None}, harness.TimingConfig(warmup=0, repeats=2), min_time_s=0.05
    )
    assert timings["x"].wall.samples > 2
    ticks = iter(range(10**6))
    timings = harness.compare_interleaved(
        {"x": lambda: None}, harness.TimingConfig(warmup=0, repeats=2), min_time_s=0.0
    )
    assert timings["x"].wall.samples == 2


def test_interleaved_cpu_time_counts_child_processes():
    import subprocess
    import sys

    busy = [sys.executable, "-c", "s=0\nfor i in range(3_000_000): s+=i"]
    t = harness.compare_interleaved(
        {"child": lambda: subprocess.run(busy, check=True)},
        harness.TimingConfig(warmup=0, repeats=1),
    )
    assert t["child"].cpu_median_s > 0.05  # the child's work, not the parent's waiting

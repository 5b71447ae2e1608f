"""benchmarks/harness.py: the bootstrap interval of a per-round ratio."""

from __future__ import annotations

from benchmarks.harness import Timed
from iclr25.timing import SideTiming, Timing


def _side(wall, cpu) -> SideTiming:
    return SideTiming(Timing.from_samples(wall, 1), sorted(cpu)[len(cpu) // 2], tuple(wall),
                      tuple(cpu))  # fmt: skip


def test_ratio_interval_pairs_rounds_and_reads_the_chosen_clock():
    # the peer is exactly 4× slower in wall time and 2× in CPU time in every round, while
    # the rounds themselves vary 3×: a paired interval is a point, an unpaired one is not
    peer = _side([4.0, 8.0, 12.0, 4.0, 8.0], [2.0, 4.0, 6.0, 2.0, 4.0])
    ours = _side([1.0, 2.0, 3.0, 1.0, 2.0], [1.0, 2.0, 3.0, 1.0, 2.0])
    timed = Timed({"peer": peer, "ours": ours})
    assert timed.ratio_interval("peer", "ours") == (4.0, 4.0)
    assert timed.ratio_interval("peer", "ours", clock="cpu") == (2.0, 2.0)
    noisy = _side([4.0, 8.0, 12.0, 40.0, 8.0], [2.0] * 5)
    low, high = Timed({"peer": noisy, "ours": ours}).ratio_interval("peer", "ours")
    assert low == 4.0 and high > 4.0  # one round 40×: the interval widens upward only

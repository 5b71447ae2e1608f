from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.bandit_replicable.traces import (
    TraceHasher,
    fewest_covering,
    list_statistics,
    partition,
)


def test_fewest_covering_known_answers():
    counts = np.array([50, 30, 15, 5])  # 100 executions
    assert fewest_covering(counts, 0.5) == 1
    assert fewest_covering(counts, 0.8) == 2
    assert fewest_covering(counts, 0.95) == 3  # 50+30+15 = 95 exactly
    assert fewest_covering(counts, 0.96) == 4
    assert fewest_covering(counts, 1.0) == 4
    assert fewest_covering(np.zeros(0, np.int64), 0.9) == 0


@given(st.lists(st.integers(1, 50), min_size=1, max_size=30), st.floats(0.01, 1.0))
def test_fewest_covering_properties(raw, share):
    counts = np.sort(np.array(raw))[::-1]
    n = fewest_covering(counts, share)
    assert 1 <= n <= counts.size
    assert counts[:n].sum() >= share * counts.sum() - 1e-6 * counts.sum()
    if n > 1:  # one fewer would not cover
        assert counts[: n - 1].sum() < share * counts.sum()


def test_list_statistics_from_keys():
    keys = np.array([[1, 2]] * 6 + [[3, 4]] * 3 + [[5, 6]], dtype=np.uint64)
    stats = list_statistics(keys, delta=0.1)
    assert stats.distinct_traces == 3
    assert stats.traces_covering == 2  # 9 of 10 executions
    assert stats.top_shares == [0.6, 0.3, 0.1]


def test_hasher_equal_sequences_equal_keys_and_zero_rounds_ignored():
    h = TraceHasher(3, 2)
    h.fold(np.array([[1, 1], [1, 1], [1, 0]]), np.array([4, 4, 4]))
    h.fold(np.array([[0, 0], [9, 9], [0, 0]]), np.array([0, 0, 0]))  # plays nothing
    h.fold(np.array([[1, 0], [1, 0], [1, 0]]), np.array([2, 2, 2]))
    keys = h.finish()
    assert (keys[0] == keys[1]).all()
    assert not (keys[0] == keys[2]).all()


def test_hasher_run_length_counts_repeats():
    a, b = TraceHasher(1, 1), TraceHasher(1, 1)
    for _ in range(3):
        a.fold(np.array([[1]]), np.array([1]))
    for _ in range(2):
        b.fold(np.array([[1]]), np.array([1]))
    assert not (a.finish() == b.finish()).all()


def test_partition_relabels_in_first_appearance_order():
    assert partition(np.array([7, 3, 7, 9, 3])).tolist() == [0, 1, 0, 2, 1]
    keys = np.array([[5, 1], [2, 2], [5, 1]], dtype=np.uint64)
    assert partition(keys).tolist() == [0, 1, 0]

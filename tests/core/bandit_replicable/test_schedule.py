"""Segments of the phase engine: what a (possibly cut) segment plays and reveals."""

from __future__ import annotations

import numpy as np

from iclr25.core.bandit_replicable.schedule import Blocks, RoundRobin


def test_round_robin_cut_short_plays_and_reveals_only_its_prefix():
    # active {0, 2, 3} and {1, 3}, cut after 2 and 5 rounds: plays 0,2 and 1,3,1,3,1
    segment = RoundRobin(np.array([[1, 0, 1, 1], [0, 1, 0, 1]], bool), np.array([6, 6]))
    rounds = np.array([2, 5])
    assert segment.prefix_counts(rounds).tolist() == [[1, 0, 1, 0], [0, 3, 0, 2]]
    assert [segment.arms_at(t).tolist() for t in range(3)] == [[0, 1], [2, 3], [3, 1]]
    # the first execution revealed {0, 2} only: {0, 2, 3} and {0, 2, 1} cut after 2
    # rounds are the same trace, so they must reveal the same vector
    assert segment.visible(rounds).tolist() == [[1, 0, 1, 0], [0, 1, 0, 1]]
    other = RoundRobin(np.array([[1, 1, 1, 0], [0, 1, 0, 1]], bool), np.array([6, 6]))
    assert other.visible(rounds)[0].tolist() == [1, 1, 0, 0]  # played 0, 1: a different trace
    whole = segment.visible(np.array([6, 6]))
    assert whole.tolist() == [[1, 0, 1, 1], [0, 1, 0, 1]]


def test_blocks_prefix_counts_and_arms():
    segment = Blocks(np.array([[2, 0, 3], [1, 1, 1]]))
    assert segment.length.tolist() == [5, 3]
    assert segment.prefix_counts(np.array([3, 2])).tolist() == [[2, 0, 1], [1, 1, 0]]
    assert [segment.arms_at(t).tolist() for t in range(3)] == [[0, 0], [0, 1], [2, 2]]

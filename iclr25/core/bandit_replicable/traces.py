"""Traces without T-long sequences: compact canonical encodings, hashed, and list sizes.

A *trace* is the sequence of arms an execution plays (paper, Definition 1). Storing it
costs T entries per execution; we store a 128-bit key instead (two uint64 lanes):

- phase-based algorithms (:mod:`.schedule`) play *segments*: round-robin cycles over an
  active set, or blocks of per-arm counts. The trace is a function of what each started
  segment makes visible — the active set (only its first ``rounds`` members when the
  segment is cut short) or the per-arm prefix counts — so :class:`TraceHasher` folds the
  sequence of ``(visible vector, rounds)`` over started segments into the key. Segment
  lengths are functions of what was visible before, so two different visible sequences
  give different traces (the first differing segment starts at the same round, and a
  cycle over a set lists the set in index order): equal keys ⇔ equal traces, up to a
  2^-128-scale collision chance. Tests check the partition against full sequences.
- sequential algorithms (UCB1, Thompson) fold every played arm into a rolling polynomial
  hash (:func:`roll_hash`), one multiply-add per round and lane.

:func:`list_statistics` turns keys into the numbers the paper's definition is about: how
many distinct traces occurred, and the fewest traces that cover a 1-δ share of executions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.counter_rng import HASH_P1, HASH_P2, mix64

_U64 = np.uint64


def _lane_multipliers(width: int, seed: int) -> np.ndarray:
    """Fixed odd 64-bit multipliers (width + 2, 2): a constant of the encoding, not a seed."""
    rng = np.random.default_rng(seed)
    return rng.integers(1, 2**63, size=(width + 2, 2), dtype=np.uint64) * _U64(2) + _U64(1)


class TraceHasher:
    """Fold per-segment visible vectors into a per-execution 128-bit key.

    The key encodes the run-length form of the sequence of (visible vector, rounds) over
    the segments an execution started: each change is folded with its position in that
    sequence, and :meth:`finish` folds the number of started segments. Equal run-length
    forms ⇔ equal sequences, and repeated segments (successive elimination's cycles)
    cost one comparison instead of a hash. Positions count *started* segments only, so
    a segment of zero rounds, which plays nothing, cannot split equal traces."""

    def __init__(self, runs: int, width: int):
        self.keys = np.zeros((runs, 2), dtype=np.uint64)
        self.multipliers = _lane_multipliers(width, seed=0x5EED)  # (width + 2, 2)
        self.previous = np.full((runs, width + 1), -1, dtype=np.int64)  # last (visible, rounds)
        self.started = np.zeros(runs, dtype=np.int64)

    def fold(self, visible: np.ndarray, rounds: np.ndarray) -> None:
        """Fold one segment for the executions that played ≥ 1 round of it.

        visible: (runs, width) ints (negative ones wrap modulo 2^64, which keeps the
        encoding one-to-one); rounds: (runs,) rounds played."""
        started = rounds > 0
        if not started.any():
            return
        self.started += started
        current = np.concatenate([visible, rounds[:, None]], axis=1).astype(np.int64)
        changed = started & (current != self.previous).any(axis=1)
        rows = np.flatnonzero(changed)
        if rows.size:
            self.previous[rows] = current[rows]
            self._mix(rows, current[rows], self.started[rows])

    def finish(self) -> np.ndarray:
        rows = np.arange(self.keys.shape[0])
        width = self.previous.shape[1]
        count = np.zeros((rows.size, width), np.int64)
        count[:, -1] = self.started
        self._mix(rows, count, np.zeros(rows.size, np.int64))
        return self.keys

    def _mix(self, rows: np.ndarray, values: np.ndarray, tags: np.ndarray) -> None:
        tags = tags.reshape(-1, 1).astype(np.int64)
        data = np.concatenate([values, tags], axis=1).astype(np.uint64)  # (n, width + 2)
        with np.errstate(over="ignore"):
            linear = data @ self.multipliers  # (n, 2), wrapping uint64 arithmetic
            lanes = self.keys[rows] * np.array([HASH_P1, HASH_P2], dtype=np.uint64) + linear
        self.keys[rows] = mix64(lanes)


def roll_hash(h1, h2, arms, xp=np):
    """One round of the sequential rolling hash: h ← h·P + (arm + 1) in each lane."""
    step = arms.astype(xp.uint64) + xp.uint64(1)
    return h1 * xp.uint64(HASH_P1) + step, h2 * xp.uint64(HASH_P2) + step


def finish_roll_hash(h1, h2, xp=np):
    """(runs, 2) keys from the two lanes (mixed, so nearby sequences spread out)."""
    return xp.stack([mix64(h1, xp), mix64(h2, xp)], axis=1)


def sequence_keys(arms: np.ndarray) -> np.ndarray:
    """Exact keys of full sequences (runs, T): the row index of each distinct row."""
    _, inverse = np.unique(arms, axis=0, return_inverse=True)
    return inverse.reshape(-1)


def partition(keys: np.ndarray) -> np.ndarray:
    """Canonical labels 0, 1, 2, ... in order of first appearance (to compare partitions)."""
    keys = np.asarray(keys)
    flat = keys if keys.ndim == 1 else keys.view([("", keys.dtype)] * keys.shape[1]).reshape(-1)
    _, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
    order = np.argsort(first)
    relabel = np.empty_like(order)
    relabel[order] = np.arange(order.size)
    return relabel[inverse.reshape(-1)]


@dataclass(frozen=True)
class ListStatistics:
    distinct_traces: int
    traces_covering: int  # fewest traces whose executions make up ≥ 1-δ of all
    top_shares: list[float]  # shares of the most frequent traces, descending
    counts: np.ndarray  # (distinct,) execution counts, descending


def trace_counts(keys: np.ndarray) -> np.ndarray:
    """Execution count of every distinct trace, descending."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.int64)
    flat = keys.view([("", keys.dtype)] * keys.shape[1]).reshape(-1) if keys.ndim == 2 else keys
    _, counts = np.unique(flat, return_counts=True)
    return np.sort(counts)[::-1]


def fewest_covering(counts: np.ndarray, share: float) -> int:
    """The fewest traces covering at least ``share`` of the executions (an integer)."""
    total = int(counts.sum())
    if total == 0:
        return 0
    need = share * total - 1e-9 * total  # tolerate float rounding of e.g. 0.95 * 1000
    return int(np.searchsorted(np.cumsum(counts), need, side="left") + 1)


def list_statistics(keys: np.ndarray, delta: float, top: int = 20) -> ListStatistics:
    counts = trace_counts(keys)
    total = max(1, int(counts.sum()))
    return ListStatistics(
        distinct_traces=int(counts.size),
        traces_covering=fewest_covering(counts, 1.0 - delta),
        top_shares=[round(float(c) / total, 6) for c in counts[:top]],
        counts=counts,
    )

"""The phase engine: phase-based algorithms as segments, simulated in aggregate or per round.

A phase-based algorithm (ETC, Alg. 1-3, the linear batched algorithm on a finite action
set, successive elimination) plays a sequence of *segments*, and only decides between
them. A segment is either

- :class:`RoundRobin`: cycles over an active set in index order (``length`` rounds), or
- :class:`Blocks`: ``counts[i]`` pulls of arm i, arms in index order.

The algorithm object implements ``init(env, horizon, runs, rng) -> state``,
``segment(state, index) -> segment`` (planned, before the horizon cuts it) and
``decide(state, index, sums, counts, completed)`` (after a segment, from cumulative
per-arm reward sums and pull counts). Everything is vectorised over executions.

Two simulators run the *same* algorithm object:

- :func:`simulate_aggregated` draws each segment's rewards as per-arm sums (binomial or
  normal), so its cost grows with the number of segments, not with T;
- :func:`simulate_per_round` draws one reward per round (the plain vectorised simulation,
  the benchmark's peer and the reference of the equivalence tests).
Both return pseudo-regret, pull counts, compact trace keys and a mean regret curve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.traces import TraceHasher

#: a phase-based algorithm has at most this many segments (guards against a planning bug)
MAX_SEGMENTS = 50_000_000


@dataclass
class RoundRobin:
    active: np.ndarray  # (runs, K) bool
    length: np.ndarray  # (runs,) int64 planned rounds

    def __post_init__(self) -> None:
        self.size = self.active.sum(axis=1)  # (runs,) active arms per execution

    def _rank(self) -> np.ndarray:
        return np.cumsum(self.active, axis=1) - 1  # (runs, K) position among active arms

    def prefix_counts(self, rounds: np.ndarray) -> np.ndarray:
        """Pulls per arm in the first ``rounds`` rounds: (runs, K) int64."""
        safe = np.maximum(self.size, 1)
        full, rem = rounds // safe, rounds % safe
        counts = self.active * full[:, None]
        if rem.any():  # a partial last cycle: its first `rem` active arms
            counts += self.active & (self._rank() < rem[:, None])
        return counts

    def visible(self, rounds: np.ndarray) -> np.ndarray:
        """What the played prefix reveals: the active set, or its first ``rounds`` members."""
        if (rounds >= self.size).all():
            return self.active.astype(np.int64)
        return (self.active & (self._rank() < rounds[:, None])).astype(np.int64)

    def arms_at(self, offset: int) -> np.ndarray:
        """The arm each execution plays at round ``offset`` of the segment (runs,)."""
        if not hasattr(self, "_order"):  # active arms first, in index order
            self._order = np.argsort(~self.active, axis=1, kind="stable")
        size = np.maximum(self.size, 1)
        return self._order[np.arange(self._order.shape[0]), offset % size]


@dataclass
class Blocks:
    counts: np.ndarray  # (runs, K) int64 planned pulls, arm-major blocks in index order

    @property
    def length(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def prefix_counts(self, rounds: np.ndarray) -> np.ndarray:
        before = np.cumsum(self.counts, axis=1) - self.counts  # (runs, K) start of each block
        return np.clip(rounds[:, None] - before, 0, self.counts)

    def visible(self, rounds: np.ndarray) -> np.ndarray:
        return self.prefix_counts(rounds)

    def arms_at(self, offset: int) -> np.ndarray:
        if not hasattr(self, "_ends"):
            self._ends = np.cumsum(self.counts, axis=1)  # (runs, K) end of each block
        return (self._ends <= offset).sum(axis=1)


@dataclass
class PhasedOutcome:
    pulls: np.ndarray  # (runs, K) pulls per arm over the horizon
    regret: np.ndarray  # (runs,) pseudo-regret
    keys: np.ndarray  # (runs, 2) uint64 trace keys
    curve: np.ndarray  # (C,) summed (not averaged) regret at the checkpoints
    arms: np.ndarray | None = None  # (runs, T) full sequences (per-round simulation only)
    state: object = None  # the algorithm's final state (decisions, for diagnostics)


class _Curve:
    """Sum over executions of the regret at checkpoint rounds (1-based round counts)."""

    def __init__(self, checkpoints: np.ndarray | None):
        self.t = np.zeros(0, np.int64) if checkpoints is None else np.asarray(checkpoints)
        self.sums = np.zeros(self.t.size)

    def add(self, segment, used, rounds, regret_before, gaps) -> None:
        if not self.t.size:
            return
        lo = np.searchsorted(self.t, used.min(), side="right")
        hi = np.searchsorted(self.t, (used + rounds).max(), side="right")
        for ci in range(lo, hi):
            inside = (used < self.t[ci]) & (self.t[ci] <= used + rounds)
            if inside.any():
                part = segment.prefix_counts(np.where(inside, self.t[ci] - used, 0))
                self.sums[ci] += (regret_before[inside] + part[inside] @ gaps).sum()


def simulate_aggregated(
    algo,
    env,
    horizon: int,
    runs: int,
    rng: np.random.Generator,
    checkpoints: np.ndarray | None = None,
    on_segment: Callable[[int, int], None] | None = None,
) -> PhasedOutcome:
    """Simulate ``runs`` executions, drawing each segment's rewards as per-arm sums."""

    def play(segment, rounds, sums, pulls_now, used):
        sums += env.draw_sums(rng, pulls_now)

    return _simulate(algo, env, horizon, runs, rng, checkpoints, play, on_segment)


def simulate_per_round(
    algo,
    env,
    horizon: int,
    runs: int,
    rng: np.random.Generator,
    checkpoints: np.ndarray | None = None,
    record_arms: bool = False,
) -> PhasedOutcome:
    """Simulate the same algorithm drawing one reward per round (the plain reference)."""
    played = np.zeros((runs, horizon), np.int32) if record_arms else None
    rows = np.arange(runs)

    def play(segment, rounds, sums, pulls_now, used):
        for offset in range(int(rounds.max(initial=0))):
            live = rounds > offset
            arms = segment.arms_at(offset)
            rewards = env.draw_rewards(rng, arms)
            sums[rows[live], arms[live]] += rewards[live]  # one arm per row: no repeats
            if played is not None:
                played[rows[live], used[live] + offset] = arms[live]

    outcome = _simulate(algo, env, horizon, runs, rng, checkpoints, play, None)
    outcome.arms = played
    return outcome


def _simulate(algo, env, horizon, runs, rng, checkpoints, play, on_segment):
    state = algo.init(env, horizon, runs, rng)
    k = env.k
    gaps = env.gaps
    sums = np.zeros((runs, k))
    pulls = np.zeros((runs, k), np.int64)
    used = np.zeros(runs, np.int64)
    regret = np.zeros(runs)
    hasher = TraceHasher(runs, k)
    curve = _Curve(checkpoints)
    index = idle = 0
    while (used < horizon).any():
        if index >= MAX_SEGMENTS or idle > 1000:
            raise RuntimeError(f"{type(algo).__name__} stopped making progress at segment {index}")
        segment = algo.segment(state, index)
        planned = np.asarray(segment.length, np.int64)
        rounds = np.minimum(planned, horizon - used)
        idle = idle + 1 if not rounds.any() else 0
        pulls_now = segment.prefix_counts(rounds)
        hasher.fold(segment.visible(rounds), rounds)
        curve.add(segment, used, rounds, regret, gaps)
        play(segment, rounds, sums, pulls_now, used)
        pulls += pulls_now
        regret += pulls_now @ gaps
        used += rounds
        algo.decide(state, index, sums, pulls, (rounds == planned) & (used < horizon))
        if on_segment is not None:
            on_segment(index, int(used.min()))
        index += 1
    return PhasedOutcome(pulls, regret, hasher.finish(), curve.sums, state=state)

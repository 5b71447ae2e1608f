"""The aggregated simulation equals the per-round one; compact keys equal full sequences.

For every phase-based algorithm, on small horizons:
- the per-round simulation (one reward per round) records the full arm sequences; the
  partition of executions by compact trace key equals the partition by full sequence;
- the aggregated simulation (one binomial / normal sum per arm and segment) and the
  per-round one, with fixed seeds, produce the same set of (frequent) traces, trace
  frequencies that pass a chi-square homogeneity test, and regret distributions that
  pass a two-sample Kolmogorov–Smirnov test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from iclr25.core.bandit_replicable import registry
from iclr25.core.bandit_replicable.environments import (
    ArmsEnvironment,
    BallEnvironment,
    linear_finite,
)
from iclr25.core.bandit_replicable.linear_batched import simulate_ball
from iclr25.core.bandit_replicable.schedule import simulate_aggregated, simulate_per_round
from iclr25.core.bandit_replicable.traces import partition, sequence_keys

RUNS = 1500


def gaussian(means, sigma):
    return ArmsEnvironment(np.asarray(means, float), "gaussian", sigma)


def bernoulli(means):
    return ArmsEnvironment(np.asarray(means, float), "bernoulli")


P_MIN = 1e-3  # fixed seeds: the tests are deterministic; this is the significance level

CASES = {
    # name: (algorithm, environment, horizon); chosen so several traces are frequent
    "etc": ("etc", bernoulli([0.5, 0.45, 0.4]), 600),
    "list-2k": ("list-2k", gaussian([0.5, 0.375, 0.25], 0.05), 3000),
    "list-k-delta": ("list-k-delta", gaussian([0.5, 0.2, 0.1], 0.01), 3000),
    "list-batched": ("list-batched", gaussian([0.5, 0.45, 0.3], 0.1), 3000),
    "linear-batched": ("linear-batched", gaussian([0.5, 0.46, 0.125], 0.1), 3000),
    "replicable-elimination": ("replicable-elimination", gaussian([0.75, 0.0, 0.375], 0.01), 3000),
    # eliminations at spread-out cycles (≈ 900 traces in 1500 executions); every segment
    # is one cycle, so the aggregated side draws single Bernoulli pulls
    "successive-elimination": ("successive-elimination", bernoulli([0.9, 0.5, 0.4]), 600),
}
DELTA = {"list-k-delta": 0.5, "replicable-elimination": 0.5}


def _build(name):
    algo, env, horizon = CASES[name]
    return registry.build(algo, DELTA.get(name, 0.05), 3), env, horizon


def _key_counts(keys):
    labels, counts = np.unique(keys, axis=0, return_counts=True)
    return {tuple(int(x) for x in row): int(c) for row, c in zip(labels, counts, strict=True)}


@pytest.mark.parametrize("name", list(CASES))
def test_compact_keys_partition_equals_full_sequences(name):
    algo, env, horizon = _build(name)
    out = simulate_per_round(algo, env, horizon, 600, np.random.default_rng(1), record_arms=True)
    by_sequence = partition(sequence_keys(out.arms))
    by_key = partition(np.ascontiguousarray(out.keys))
    assert (by_sequence == by_key).all()
    # pulls and regret agree with the recorded sequences
    pulls = np.stack([np.bincount(row, minlength=env.k) for row in out.arms])
    assert (pulls == out.pulls).all()
    np.testing.assert_allclose(out.regret, env.gaps[out.arms].sum(axis=1), rtol=1e-9)


@pytest.mark.parametrize("name", list(CASES))
def test_aggregated_equals_per_round_in_distribution(name):
    algo, env, horizon = _build(name)
    fast = simulate_aggregated(algo, env, horizon, RUNS, np.random.default_rng(2))
    algo, env, horizon = _build(name)
    slow = simulate_per_round(algo, env, horizon, RUNS, np.random.default_rng(3))
    assert stats.ks_2samp(fast.regret, slow.regret).pvalue > P_MIN
    a, b = _key_counts(fast.keys), _key_counts(slow.keys)
    if name == "successive-elimination":  # traces are mostly distinct: compare counts
        assert 0.5 * RUNS < len(a) and abs(len(a) - len(b)) < 0.05 * RUNS
        return
    frequent = {key for key, c in {**a, **b}.items() if a.get(key, 0) + b.get(key, 0) > 30}
    assert frequent <= set(a) and frequent <= set(b)
    assert len(frequent) >= 2, "the case should exercise several traces"
    table = np.array([[a.get(key, 0), b.get(key, 0)] for key in frequent])
    assert stats.chi2_contingency(table).pvalue > P_MIN


def test_linear_finite_aggregated_equals_per_round():
    env = linear_finite(
        dim=2, arms=6, horizon=3000, theta_norm=1.0, sigma=0.3, rng=np.random.default_rng(4)
    )
    algo = registry.build("linear-batched", 0.05, 3)
    fast = simulate_aggregated(algo, env, 3000, RUNS, np.random.default_rng(5))
    algo = registry.build("linear-batched", 0.05, 3)
    slow = simulate_per_round(algo, env, 3000, RUNS, np.random.default_rng(6), record_arms=True)
    assert stats.ks_2samp(fast.regret, slow.regret).pvalue > P_MIN
    assert (partition(sequence_keys(slow.arms)) == partition(np.ascontiguousarray(slow.keys))).all()


def test_ball_aggregated_equals_per_round_and_keys_match_directions():
    env = BallEnvironment(np.array([0.6, -0.3, 0.2]), 0.5)
    fast = simulate_ball(env, 20_000, RUNS, np.random.default_rng(7), 0.05, 3)
    slow = simulate_ball(env, 20_000, RUNS, np.random.default_rng(8), 0.05, 3, per_round=True)
    assert stats.ks_2samp(fast.regret, slow.regret).pvalue > P_MIN
    for out in (fast, slow):
        by_direction = partition(sequence_keys(out.directions.reshape(RUNS, -1)))
        assert (by_direction == partition(np.ascontiguousarray(out.keys))).all()

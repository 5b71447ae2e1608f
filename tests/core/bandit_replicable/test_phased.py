"""Alg. 1-3 and successive elimination: decision rules and list sizes."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.list_2k import List2k
from iclr25.core.bandit_replicable.list_batched import ListBatched, batch_ends, choose_threshold
from iclr25.core.bandit_replicable.list_k_delta import ListKDelta, grid_size
from iclr25.core.bandit_replicable.schedule import simulate_aggregated
from iclr25.core.bandit_replicable.successive_elimination import SuccessiveElimination
from iclr25.core.bandit_replicable.traces import fewest_covering, trace_counts


def gaussian(means, sigma=0.05):
    return ArmsEnvironment(np.asarray(means, float), "gaussian", sigma)


# gaps at the centres of the zones Z_1, Z_2, Z_3 (τ_p = 2^-p): every suboptimal arm is
# uncertain at exactly one phase, the worst case for Alg. 1's list size
ZONE_CENTRES = [0.5, 0.375, 0.25, 0.0]


def test_alg1_decision_rule_known_answer():
    algo = List2k(0.05)
    state = algo.init(gaussian([0.5, 0.4, 0.2]), 10_000, 2, np.random.default_rng(0))
    counts = np.full((2, 3), 100)
    # empirical means (0.9, 0.6, 0.35) and (0.9, 0.85, 0.2); τ_1 = 0.5
    sums = np.array([[90.0, 60.0, 35.0], [90.0, 85.0, 20.0]])
    algo.decide(state, 0, sums, counts, np.array([True, True]))
    assert state.active.tolist() == [[True, True, False], [True, True, False]]
    assert state.eliminated_at.tolist() == [[0, 0, 1], [0, 0, 1]]
    algo.decide(state, 1, sums, counts, np.array([True, False]))  # τ_2 = 0.25; row 1 skipped
    assert state.active.tolist() == [[True, False, False], [True, True, False]]


@pytest.mark.parametrize("seed", [0, 1])
def test_alg1_each_arm_has_at_most_two_adjacent_fates(seed):
    env = gaussian(ZONE_CENTRES)
    out = simulate_aggregated(List2k(0.05), env, 20_000, 3000, np.random.default_rng(seed))
    fates = out.state.eliminated_at  # (runs, k)
    for arm in range(env.k):
        values = np.unique(fates[:, arm])
        assert values.size <= 2
        if values.size == 2 and values.min() > 0:
            assert values[1] - values[0] == 1
    assert (fates[:, 0] == 0).all()  # the best arm is never eliminated
    counts = trace_counts(out.keys)
    assert counts.size >= 4  # the instance really exercises several fates
    assert fewest_covering(counts, 0.95) <= 2 ** (env.k - 1)  # margin: 2^(k-1) < 2^k


def test_alg2_thresholds_lie_on_the_offset_grid():
    algo = ListKDelta(0.2)
    state = algo.init(gaussian([0.5, 0.3]), 1000, 500, np.random.default_rng(0))
    grid = grid_size(2, 0.2)
    assert grid == 120  # ⌈12 k / δ⌉
    ratio = state.thresholds / 2.0 ** -np.arange(1, state.thresholds.shape[1] + 1)
    assert (ratio >= 1).all() and (ratio < 2).all()
    offsets = (ratio[:, 0] - 1) * grid
    np.testing.assert_allclose(offsets, np.round(offsets), atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alg2_covering_traces_at_most_k(seed):
    # δ = 0.5 keeps the phases short enough to reach several decisions at T = 5000
    env = ArmsEnvironment(np.array([0.5, 0.2, 0.1]), "gaussian", 0.01)
    out = simulate_aggregated(ListKDelta(0.5), env, 5000, 2000, np.random.default_rng(seed))
    counts = trace_counts(out.keys)
    assert counts.size >= 2
    assert fewest_covering(counts, 0.5) <= env.k <= grid_size(env.k, 0.5)


def test_batch_ends_minimax_grid_known_answers():
    assert batch_ends(10**6, 2).tolist() == [10_000, 10**6]  # a = T^(2/3)
    ends = batch_ends(10**6, 3)  # a = T^(4/7); t_2 = a^(3/2)
    assert ends[0] == int(10 ** (24 / 7)) and abs(ends[1] - 10 ** (36 / 7)) <= 1
    tiny = batch_ends(6, 4, k=3)
    assert (np.diff(tiny) > 0).all() and tiny[0] >= 3 and tiny[-1] == 6


def test_choose_threshold_known_answer():
    # η = 1: candidates γ_j = 4, 9, 14, ...; ĝ = 4.5 blocks γ_0, ĝ = 13 blocks γ_2
    gaps = np.array([[0.0, 4.5, 13.0]])
    choice, gamma = choose_threshold(gaps, np.ones((1, 3), bool), np.array([1.0]), 3)
    assert choice.tolist() == [1] and gamma.tolist() == [9.0]


@pytest.mark.parametrize("means", [[0.5, 0.45, 0.3], [0.5, 0.48, 0.46, 0.2, 0.1]])
def test_alg3_trace_is_a_function_of_the_choices(means):
    env = ArmsEnvironment(np.array(means), "gaussian", 0.1)
    algo = ListBatched(0.05, 3)
    out = simulate_aggregated(algo, env, 5000, 3000, np.random.default_rng(0))
    choices = out.state.choices  # (runs, B-1)
    assert ((choices >= 0) & (choices <= env.k)).all()
    groups = {}
    for row, key in zip(map(tuple, choices), map(tuple, out.keys), strict=True):
        groups.setdefault(row, set()).add(key)
    ambiguous = sum(len(keys) > 1 for keys in groups.values())
    assert ambiguous == 0
    assert trace_counts(out.keys).size <= (env.k + 1) ** 2


def test_successive_elimination_rule_and_many_traces():
    algo = SuccessiveElimination(0.05)
    env = ArmsEnvironment(np.array([0.7, 0.5, 0.45]), "bernoulli")
    state = algo.init(env, 1000, 1, np.random.default_rng(0))
    counts = np.array([[100, 100, 100]])
    radius = state.radius[100]
    sums = np.array([[70.0, 70.0 - 100 * (2 * radius + 0.01), 69.0]])
    algo.decide(state, 0, sums, counts, np.array([True]))
    assert state.active.tolist() == [[True, False, True]]
    out = simulate_aggregated(SuccessiveElimination(0.05), env, 3000, 500, np.random.default_rng(1))
    assert trace_counts(out.keys).size > 400  # traces explode without replicability

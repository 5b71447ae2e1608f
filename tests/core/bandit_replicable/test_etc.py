from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.etc import (
    ExploreThenCommit,
    commit_probabilities,
    expected_regret,
    explore_per_arm,
)
from iclr25.core.bandit_replicable.schedule import simulate_aggregated
from iclr25.core.bandit_replicable.traces import trace_counts


def test_explore_per_arm_known_answers():
    assert explore_per_arm(8000, 2) == 252  # ⌈4000^(2/3)⌉ = ⌈251.98⌉
    assert explore_per_arm(10, 5) == 2  # capped at ⌊T/k⌋
    assert explore_per_arm(5, 5) == 1


def test_commit_probabilities_with_ties_known_answer():
    # two equal Bernoulli arms: ties go to arm 0, so P(0) = (1 + P(S0 = S1)) / 2
    m = 7
    pmf = stats.binom.pmf(np.arange(m + 1), m, 0.3)
    p_tie = float((pmf**2).sum())
    probs = commit_probabilities(np.array([0.3, 0.3]), m, "bernoulli", 1.0)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    assert probs[0] == pytest.approx((1 + p_tie) / 2, abs=1e-12)


def test_gaussian_commit_probabilities_two_arms_closed_form():
    # P(commit to the worse arm) = Φ(-Δ / (σ √(2/m)))
    probs = commit_probabilities(np.array([0.5, 0.4]), 50, "gaussian", 1.0)
    assert probs[1] == pytest.approx(stats.norm.cdf(-0.1 / np.sqrt(2 / 50)), abs=1e-6)


@pytest.mark.parametrize(
    "means,noise",
    [([0.6, 0.5, 0.45], "bernoulli"), ([0.5, 0.5, 0.2], "bernoulli"), ([0.3, 0.2], "gaussian")],
)
def test_regret_matches_analytic_expectation(means, noise):
    env = ArmsEnvironment(np.array(means), noise, 0.5)
    horizon, runs = 2000, 20_000
    out = simulate_aggregated(ExploreThenCommit(), env, horizon, runs, np.random.default_rng(0))
    expected = expected_regret(env.means, horizon, noise, 0.5)
    stderr = out.regret.std() / np.sqrt(runs)
    assert abs(out.regret.mean() - expected) < 4 * stderr + 1e-3


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "means", [[0.5, 0.5, 0.5, 0.5], [0.9, 0.1, 0.5], [0.5, 0.49, 0.48, 0.47, 0.46, 0.45]]
)
def test_never_more_than_k_traces(means, seed):
    env = ArmsEnvironment(np.array(means), "bernoulli")
    out = simulate_aggregated(ExploreThenCommit(), env, 3000, 2000, np.random.default_rng(seed))
    assert trace_counts(out.keys).size <= env.k


def test_capped_etc_never_commits_to_the_last_arm():
    env = ArmsEnvironment(np.array([0.2, 0.3, 0.9]), "bernoulli")
    capped = ExploreThenCommit(allowed=2)
    out = simulate_aggregated(capped, env, 5000, 300, np.random.default_rng(0))
    assert (out.state.committed < 2).all()
    assert trace_counts(out.keys).size <= 2
    assert out.regret.mean() / 5000 > 0.5  # linear: the best arm is never exploited

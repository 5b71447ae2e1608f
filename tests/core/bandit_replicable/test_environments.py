from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.bandit_replicable import environments as envs
from iclr25.errors import UsageError


def test_generated_instances_known_answers():
    eq = envs.k_armed(k=5, horizon=100, instance="equal-gaps", gap=0.2)
    np.testing.assert_allclose(eq.means, [0.9, 0.7, 0.5, 0.3, 0.1])
    hard = envs.k_armed(k=4, horizon=10_000, instance="hard")
    np.testing.assert_allclose(hard.means, [0.5, 0.5, 0.5, 0.52])  # gap √(k/T) = 0.02
    assert hard.best_arm == 3
    rnd = envs.k_armed(k=6, horizon=100, rng=np.random.default_rng(0))
    assert ((rnd.means >= 0.1) & (rnd.means <= 0.9)).all()
    two = envs.two_level(3, 0.4)
    np.testing.assert_allclose(two.gaps, [0.4, 0.4, 0.0])


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"k": 1, "horizon": 10}, "at least 2 arms"),
        ({"k": 5, "horizon": 3}, "shorter than the number of arms"),
        ({"k": 3, "horizon": 10, "means": np.array([0.5, 1.2])}, r"\[0, 1\]"),
        ({"k": 3, "horizon": 10, "instance": "weird"}, "unknown instance"),
        ({"k": 11, "horizon": 100, "instance": "equal-gaps", "gap": 0.2}, "below 0"),
        ({"k": 3, "horizon": 10, "noise": "gaussian", "sigma": 0.0}, "sigma"),
    ],
)
def test_bad_instances_are_usage_errors(kwargs, match):
    with pytest.raises(UsageError, match=match):
        envs.k_armed(**kwargs)


def test_parse_means():
    np.testing.assert_allclose(envs.parse_means("0.9, 0.5,0.1"), [0.9, 0.5, 0.1])
    with pytest.raises(UsageError, match="comma-separated"):
        envs.parse_means("0.9;x")


def test_aggregated_draws_have_the_right_moments():
    rng = np.random.default_rng(0)
    bern = envs.ArmsEnvironment(np.array([0.2, 0.7]), "bernoulli")
    pulls = np.full((20_000, 2), 10)
    sums = bern.draw_sums(rng, pulls)
    np.testing.assert_allclose(sums.mean(axis=0), [2.0, 7.0], atol=0.05)
    np.testing.assert_allclose(sums.var(axis=0), [1.6, 2.1], rtol=0.05)  # n μ (1-μ)
    gauss = envs.ArmsEnvironment(np.array([0.0, 1.0]), "gaussian", 2.0)
    g = gauss.draw_sums(rng, pulls)
    np.testing.assert_allclose(g.var(axis=0), [40.0, 40.0], rtol=0.05)  # n σ²


def test_linear_instances():
    env = envs.linear_finite(
        dim=3, arms=7, horizon=100, theta_norm=2.0, sigma=1.0, rng=np.random.default_rng(0)
    )
    np.testing.assert_allclose(np.linalg.norm(env.features, axis=1), 1.0)
    np.testing.assert_allclose(env.means, env.features @ env.theta)
    assert np.linalg.norm(env.theta) == pytest.approx(2.0)
    with pytest.raises(UsageError, match="--arms"):
        envs.linear_finite(
            dim=3, arms=1, horizon=100, theta_norm=1, sigma=1, rng=np.random.default_rng(0)
        )

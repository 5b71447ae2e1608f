from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.bandit_replicable import registry
from iclr25.core.bandit_replicable.environments import BallEnvironment, linear_finite
from iclr25.core.bandit_replicable.linear_batched import ball_plan, list_bound, simulate_ball
from iclr25.core.bandit_replicable.linear_design import (
    design_counts,
    g_optimal_design,
    offsets,
    pigeonhole_round,
)
from iclr25.core.bandit_replicable.schedule import simulate_aggregated
from iclr25.core.bandit_replicable.traces import trace_counts


def test_g_optimal_design_kiefer_wolfowitz_value():
    # Kiefer–Wolfowitz: at the optimum max_a a^T V^-1 a equals d
    x = np.array([[1.0, 0.0], [0.0, 1.0], [np.sqrt(0.5), np.sqrt(0.5)], [0.1, 0.2]])
    pi = g_optimal_design(x)
    v = x.T @ (pi[:, None] * x)
    g = np.einsum("ij,jk,ik->i", x, np.linalg.inv(v), x)
    assert pi.sum() == pytest.approx(1.0) and (pi >= 0).all()
    assert g.max() <= 2 * (1 + 1e-3)
    assert g_optimal_design(np.eye(3)) == pytest.approx(np.full(3, 1 / 3))


def test_design_counts_known_answer():
    assert design_counts(np.array([0.5, 0.3, 0.2]), 7).tolist() == [4, 2, 1]
    assert design_counts(np.array([0.25] * 4), 6).tolist() == [2, 2, 1, 1]  # ties: low index


@given(
    st.integers(1, 6),
    st.integers(0, 2**31 - 1),
)
def test_pigeonhole_rounding_is_replicable(dim, seed):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(1, dim)) * rng.uniform(0.01, 10)
    eta = rng.uniform(0.001, 1.0, size=(1, dim))
    # two estimates within η of θ: they must round to the same point with the same offset
    a = theta + eta * rng.uniform(-1, 1, size=(1, dim))
    b = theta + eta * rng.uniform(-1, 1, size=(1, dim))
    ta, ja, _, spacing = pigeonhole_round(a, eta)
    tb, jb, _, _ = pigeonhole_round(b, eta)
    if ja[0] == jb[0]:
        np.testing.assert_allclose(ta, tb, rtol=0, atol=1e-9 * (1 + np.abs(ta).max()))
    # and the rounding error is at most half a grid step
    assert (np.abs(ta - a) <= spacing / 2 + 1e-12).all()
    assert 0 <= ja[0] < offsets(dim).size


@given(st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_pigeonhole_rounding_equals_rounding_the_truth(dim, seed):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(1, dim))
    eta = rng.uniform(0.01, 0.5, size=(1, dim))
    estimate = theta + eta * rng.uniform(-1, 1, size=(1, dim))
    rounded, choice, _, spacing = pigeonhole_round(estimate, eta)
    shift = offsets(dim)[choice[0]]
    truth = spacing * (np.round(theta / spacing - shift) + shift)
    np.testing.assert_allclose(rounded, truth, rtol=0, atol=1e-9)


def test_finite_linear_trace_is_a_function_of_the_offsets():
    env = linear_finite(
        dim=3, arms=12, horizon=20_000, theta_norm=1.0, sigma=0.5, rng=np.random.default_rng(0)
    )
    algo = registry.build("linear-batched", 0.05, 3)
    out = simulate_aggregated(algo, env, 20_000, 2000, np.random.default_rng(1))
    groups = {}
    for row, key in zip(map(tuple, out.state.choices), map(tuple, out.keys), strict=True):
        groups.setdefault(row, set()).add(key)
    assert all(len(keys) == 1 for keys in groups.values())
    assert trace_counts(out.keys).size <= list_bound(3, 3) == 49
    assert out.regret.mean() < 0.5 * 20_000 * env.gaps.mean()  # better than uniform play


def test_ball_plan_is_feasible_and_list_bounded():
    plan = ball_plan(100_000, 4, 3, 0.05, 1.0)
    assert plan.ends[-1] == 100_000 and (np.diff(plan.ends) > 0).all()
    lengths = np.diff(np.concatenate([[0], plan.ends]))
    assert (plan.explore <= lengths).all() and plan.explore[-1] == 0
    env = BallEnvironment(np.array([0.8, -0.4, 0.1, 0.3]), 1.0)
    out = simulate_ball(env, 100_000, 1000, np.random.default_rng(0), 0.05, 3)
    assert trace_counts(out.keys).size <= list_bound(4, 3)
    # regret well below always playing a fixed coordinate direction
    assert out.regret.mean() < 0.3 * 100_000 * env.best_value

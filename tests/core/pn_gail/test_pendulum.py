"""The batched numpy Pendulum equals gymnasium's Pendulum-v1 step for step."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.pn_gail import pendulum
from iclr25.testing import assert_close

gym = pytest.importorskip("gymnasium")


def test_batched_pendulum_matches_gymnasium_step_for_step():
    rng = np.random.default_rng(3)
    n, steps = 5, 200
    envs = [gym.make("Pendulum-v1").unwrapped for _ in range(n)]
    states = []
    for i, env in enumerate(envs):
        env.reset(seed=100 + i)
        states.append(np.array(env.state, dtype=np.float64))
    state = np.stack(states)
    actions = rng.uniform(-2.5, 2.5, size=(steps, n, 1)).astype(np.float32)  # some clipped
    for t in range(steps):
        ours_state, ours_reward = pendulum.step_states(state, actions[t])
        ref = [env.step(actions[t, i]) for i, env in enumerate(envs)]
        ref_obs = np.stack([r[0] for r in ref])
        ref_reward = np.array([r[1] for r in ref])
        assert_close(pendulum.observe(ours_state), ref_obs, atol=1e-5, rtol=0, what=f"obs t={t}")
        assert_close(ours_reward, ref_reward, atol=1e-5, rtol=0, what=f"reward t={t}")
        state = ours_state


def test_vec_env_truncates_at_200_with_terminal_observation_and_zero_reward_mode():
    env = pendulum.make_vec_env(3, seed=0, env_reward=False)
    env.reset()
    for t in range(pendulum.HORIZON):
        env.step_async(np.zeros((3, 1), dtype=np.float32))
        obs, reward, done, infos = env.step_wait()
        assert (reward == 0).all()
        if t < pendulum.HORIZON - 1:
            assert not done.any()
    assert done.all()
    assert all(info["TimeLimit.truncated"] for info in infos)
    assert all(info["terminal_observation"].shape == (3,) for info in infos)
    assert len(env.finished_returns) == 3 and all(r < 0 for r in env.finished_returns)
    assert not np.allclose(obs, np.stack([i["terminal_observation"] for i in infos]))


def test_vec_env_is_the_reference_step_bit_for_bit_across_a_reset():
    """The VecEnv's unrolled step (shared step counter, cached sin θ, min/max clips) gives
    the bits of step_states + observe, and the reset draws gymnasium's per-env starts."""
    n, steps = 4, pendulum.HORIZON + 30  # crosses one truncation
    env = pendulum.make_vec_env(n, seed=11)
    rng = np.random.default_rng(11)
    pendulum.initial_states(n, rng)  # the constructor's draw
    state = pendulum.initial_states(n, rng)  # reset's
    assert_close(env.reset(), pendulum.observe(state), atol=0, rtol=0, what="reset obs")
    actions = np.random.default_rng(5).uniform(-2.5, 2.5, size=(steps, n, 1)).astype(np.float32)
    total = np.zeros(n)
    for t in range(steps):
        state, reward = pendulum.step_states(state, actions[t])
        total += reward
        obs, given, done, infos = env.step(actions[t])
        assert given.dtype == np.float32 and (given == reward.astype(np.float32)).all()
        if t == pendulum.HORIZON - 1:
            assert done.all()
            terminal = np.stack([i["terminal_observation"] for i in infos])
            assert (terminal == pendulum.observe(state)).all()
            assert env.finished_returns == total.tolist()
            state = np.stack([pendulum.initial_states(1, rng)[0] for _ in range(n)])
        else:
            assert not done.any()
        assert (obs == pendulum.observe(state)).all(), f"obs differ at t={t}"

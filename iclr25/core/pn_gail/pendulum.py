"""Pendulum-v1 in numpy, batched over environments, and its SB3 vector-env adaptor.

The dynamics are gymnasium's ``Pendulum-v1`` (classic_control/pendulum.py) written for a
batch of E pendulums at once: state (θ, θ̇) in float64, action u clipped to ±2,

    cost   = norm(θ)² + 0.1·θ̇² + 0.001·u²            (reward = −cost)
    θ̇'    = clip(θ̇ + (3g/2l·sin θ + 3/(m l²)·u)·dt, ±8)
    θ'     = θ + θ̇'·dt,        obs = (cos θ, sin θ, θ̇) as float32

with g = 10, m = l = 1, dt = 0.05, and episodes truncated after 200 steps (the task never
terminates). Resets draw θ ~ U(−π, π), θ̇ ~ U(−1, 1). One batched step costs about as much
as one gymnasium step, so a batch of 16 is about 10× cheaper per environment step than
gymnasium's ``SyncVectorEnv`` (``benchmarks/bench_pn_gail.py`` measures it).

:class:`PendulumVecEnv` exposes the batch to stable-baselines3 as a ``VecEnv`` with the
usual auto-reset (``terminal_observation`` and ``TimeLimit.truncated`` in the infos).
"""

from __future__ import annotations

import numpy as np

MAX_SPEED = 8.0
MAX_TORQUE = 2.0
DT = 0.05
G = 10.0
MASS = 1.0
LENGTH = 1.0
HORIZON = 200
OBS_HIGH = np.array([1.0, 1.0, MAX_SPEED], dtype=np.float32)


def angle_normalize(theta: np.ndarray) -> np.ndarray:
    return ((theta + np.pi) % (2 * np.pi)) - np.pi


def observe(state: np.ndarray) -> np.ndarray:
    """(E, 2) states -> (E, 3) float32 observations."""
    theta, theta_dot = state[:, 0], state[:, 1]
    return np.stack([np.cos(theta), np.sin(theta), theta_dot], axis=1).astype(np.float32)


def initial_states(n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 2) start states, θ ~ U(−π, π), θ̇ ~ U(−1, 1) (gymnasium's reset)."""
    return rng.uniform(low=[-np.pi, -1.0], high=[np.pi, 1.0], size=(n, 2))


def step_states(state: np.ndarray, action: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One step of E pendulums: (E, 2) states, (E, 1) or (E,) torques -> (new states, rewards)."""
    u = np.clip(np.asarray(action, dtype=np.float32).reshape(len(state)), -MAX_TORQUE, MAX_TORQUE)
    theta, theta_dot = state[:, 0], state[:, 1]
    cost = angle_normalize(theta) ** 2 + 0.1 * theta_dot**2 + 0.001 * u.astype(np.float64) ** 2
    accel = 3 * G / (2 * LENGTH) * np.sin(theta) + 3.0 / (MASS * LENGTH**2) * u
    new_theta_dot = np.clip(theta_dot + accel * DT, -MAX_SPEED, MAX_SPEED)
    new_theta = theta + new_theta_dot * DT
    return np.stack([new_theta, new_theta_dot], axis=1), -cost


def rollout_returns(policy, starts: np.ndarray, horizon: int = HORIZON) -> np.ndarray:
    """Undiscounted returns (E,) of ``policy`` ((E, 3) obs -> (E, 1) actions) from ``starts``."""
    state = np.array(starts, dtype=np.float64)
    total = np.zeros(len(state))
    for _ in range(horizon):
        state, reward = step_states(state, policy(observe(state)))
        total += reward
    return total


def make_vec_env(n_envs: int, seed: int, env_reward: bool = True):
    """A :class:`PendulumVecEnv` (imports stable-baselines3 on first use). With
    ``env_reward=False`` it hands SB3 zero rewards (an imitation learner relabels them)
    and keeps the true returns of finished episodes in ``finished_returns``."""
    return _vec_env_class()(n_envs, seed, env_reward)


_VEC_ENV_CLASS = None


def _vec_env_class():
    global _VEC_ENV_CLASS
    if _VEC_ENV_CLASS is None:
        _VEC_ENV_CLASS = _build_vec_env_class()
    return _VEC_ENV_CLASS


def _build_vec_env_class():
    from gymnasium import spaces
    from stable_baselines3.common.vec_env import VecEnv

    class PendulumVecEnv(VecEnv):
        """E numpy pendulums as one SB3 VecEnv (auto-reset after 200 steps).

        The step is :func:`step_states` and :func:`observe` unrolled on the (E,) arrays
        θ and θ̇ with the same float operations in the same order (so the same bits),
        minus what a batch can share: every pendulum starts and ends its episode together
        (one step counter), sin θ of the last observation is the next step's, and clips
        are ``minimum(maximum(·))`` (the same values, without ``np.clip``'s dispatch).
        """

        render_mode = None

        def __init__(self, n_envs: int, seed: int, env_reward: bool = True) -> None:
            obs_space = spaces.Box(-OBS_HIGH, OBS_HIGH, dtype=np.float32)
            act_space = spaces.Box(-MAX_TORQUE, MAX_TORQUE, shape=(1,), dtype=np.float32)
            super().__init__(n_envs, obs_space, act_space)
            self.rng = np.random.default_rng(seed)
            self.env_reward = env_reward
            self.state = initial_states(n_envs, self.rng)
            self.t = 0  # steps into the episode, shared by the batch
            self.episode_return = np.zeros(n_envs)
            self.finished_returns: list[float] = []  # true returns of finished episodes
            self._actions = np.zeros((n_envs, 1), dtype=np.float32)

        @property
        def state(self) -> np.ndarray:
            """(E, 2) states (θ, θ̇); setting it starts the batch from those states."""
            return np.stack([self._theta, self._theta_dot], axis=1)

        @state.setter
        def state(self, value: np.ndarray) -> None:
            value = np.asarray(value, dtype=np.float64)
            self._theta, self._theta_dot = value[:, 0].copy(), value[:, 1].copy()
            self._sin = np.sin(self._theta)

        def _observe(self) -> np.ndarray:
            obs = np.empty((self.num_envs, 3), dtype=np.float32)  # (E, 3)
            obs[:, 0] = np.cos(self._theta)
            obs[:, 1] = self._sin
            obs[:, 2] = self._theta_dot
            return obs

        def reset(self):
            self.state = initial_states(self.num_envs, self.rng)
            self.t = 0
            self.episode_return[:] = 0.0
            return self._observe()

        def step_async(self, actions) -> None:
            self._actions = np.asarray(actions, dtype=np.float32)

        def step_wait(self):
            theta, theta_dot = self._theta, self._theta_dot
            u = np.minimum(
                np.maximum(self._actions.reshape(self.num_envs), -MAX_TORQUE), MAX_TORQUE
            )
            cost = (
                angle_normalize(theta) ** 2 + 0.1 * theta_dot**2 + 0.001 * u.astype(np.float64) ** 2
            )
            accel = 3 * G / (2 * LENGTH) * self._sin + 3.0 / (MASS * LENGTH**2) * u
            self._theta_dot = np.minimum(np.maximum(theta_dot + accel * DT, -MAX_SPEED), MAX_SPEED)
            self._theta = theta + self._theta_dot * DT
            self._sin = np.sin(self._theta)
            self.episode_return -= cost  # += reward, reward = −cost: the same bits
            self.t += 1
            obs = self._observe()
            given = (
                -cost.astype(np.float32) if self.env_reward else np.zeros(self.num_envs, np.float32)
            )
            if self.t < HORIZON:
                return (
                    obs,
                    given,
                    np.zeros(self.num_envs, dtype=bool),
                    [{} for _ in range(self.num_envs)],
                )
            return self._end_episodes(obs, given)

        def _end_episodes(self, obs: np.ndarray, given: np.ndarray):
            """Every pendulum hit the time limit: record, truncate, restart (gymnasium's
            order: one start state per environment, drawn in index order)."""
            infos = [{"terminal_observation": o.copy(), "TimeLimit.truncated": True} for o in obs]
            self.finished_returns.extend(self.episode_return.tolist())
            starts = np.stack([initial_states(1, self.rng)[0] for _ in range(self.num_envs)])
            self.state = starts
            self.t = 0
            self.episode_return[:] = 0.0
            return self._observe(), given, np.ones(self.num_envs, dtype=bool), infos

        def close(self) -> None:
            return None

        def get_attr(self, attr_name, indices=None):
            return [getattr(self, attr_name)] * len(self._indices(indices))

        def set_attr(self, attr_name, value, indices=None) -> None:
            setattr(self, attr_name, value)

        def env_method(self, method_name, *args, indices=None, **kwargs):
            return [None] * len(self._indices(indices))

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * len(self._indices(indices))

        def _indices(self, indices):
            if indices is None:
                return range(self.num_envs)
            return [indices] if isinstance(indices, int) else indices

        def seed(self, seed=None):
            if seed is not None:
                self.rng = np.random.default_rng(seed)
            return [seed] * self.num_envs

    return PendulumVecEnv

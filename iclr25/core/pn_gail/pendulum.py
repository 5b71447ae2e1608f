"""Pendulum-v1 in numpy, batched over environments, and its SB3 vector-env adaptor.

The dynamics are gymnasium's ``Pendulum-v1`` (classic_control/pendulum.py) written for a
batch of E pendulums at once: state (θ, θ̇) in float64, action u clipped to ±2,

    cost   = norm(θ)² + 0.1·θ̇² + 0.001·u²            (reward = −cost)
    θ̇'    = clip(θ̇ + (3g/2l·sin θ + 3/(m l²)·u)·dt, ±8)
    θ'     = θ + θ̇'·dt,        obs = (cos θ, sin θ, θ̇) as float32

with g = 10, m = l = 1, dt = 0.05, and episodes truncated after 200 steps (the task never
terminates). Resets draw θ ~ U(−π, π), θ̇ ~ U(−1, 1). One batched step costs less than
two gymnasium steps, so a batch of 16 is about 10× cheaper per environment step than
gymnasium's ``SyncVectorEnv`` (``benchmarks/bench_pn_gail.py`` measures it).

:class:`PendulumVecEnv` exposes the batch to stable-baselines3 as a ``VecEnv`` with the
usual auto-reset (``terminal_observation`` and ``TimeLimit.truncated`` in the infos).
"""

from __future__ import annotations

import functools

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


@functools.cache
def _vec_env_class():
    """PendulumVecEnv, built once on first use (gymnasium and SB3 are imported lazily)."""
    from gymnasium import spaces
    from stable_baselines3.common.vec_env import VecEnv

    class PendulumVecEnv(VecEnv):
        """E numpy pendulums as one SB3 VecEnv (auto-reset after 200 steps).

        The step is :func:`step_states` and :func:`observe` unrolled on (E,) arrays with
        the same float operations in the same order (so the same bits), minus what a batch
        can share: every pendulum starts and ends its episode together (one step counter),
        and sin θ of the last observation is the next step's. It is about 25 numpy calls
        on 16 numbers, so the call overhead is the cost, and each call is made cheap:

        - every operand is an array: the constants (π, 2π, 0.1, 0.001, 3g/2l, 3/ml², dt,
          the speed and torque limits) are (E,) arrays made once (with numpy 2's promotion
          rules a Python float operand costs about as much again as the operation);
        - every result goes to a preallocated buffer (``out``), in place where it can;
        - the observation is built in place: θ̇ and sin θ live in the columns of one
          (E, 3) float64 buffer (cos θ, sin θ, θ̇), and the float32 observation is one cast
          of it; clips are ``minimum(maximum(·))`` (the same values as ``np.clip``).
        """

        render_mode = None

        def __init__(self, n_envs: int, seed: int, env_reward: bool = True) -> None:
            obs_space = spaces.Box(-OBS_HIGH, OBS_HIGH, dtype=np.float32)
            act_space = spaces.Box(-MAX_TORQUE, MAX_TORQUE, shape=(1,), dtype=np.float32)
            super().__init__(n_envs, obs_space, act_space)
            self.rng = np.random.default_rng(seed)
            self.env_reward = env_reward
            self._constants(n_envs)
            self._buffers(n_envs)
            self.state = initial_states(n_envs, self.rng)
            self.t = 0  # steps into the episode, shared by the batch
            self.episode_return = np.zeros(n_envs)
            self.finished_returns: list[float] = []  # true returns of finished episodes
            self._actions = np.zeros((n_envs, 1), dtype=np.float32)

        def _constants(self, n: int) -> None:
            """The step's constants as (E,) arrays, each in the dtype the scalar had."""
            self._pi, self._two_pi = np.full(n, np.pi), np.full(n, 2 * np.pi)
            self._speed_weight, self._torque_weight = np.full(n, 0.1), np.full(n, 0.001)
            self._gravity = np.full(n, 3 * G / (2 * LENGTH))  # float64: it multiplies sin θ
            # float32: 3/(m l²)·u is a float32 product in step_states (u is float32)
            self._torque_gain = np.full(n, 3.0 / (MASS * LENGTH**2), dtype=np.float32)
            self._dt = np.full(n, DT)
            self._speed_low, self._speed_high = np.full(n, -MAX_SPEED), np.full(n, MAX_SPEED)
            self._torque_low = np.full(n, -MAX_TORQUE, dtype=np.float32)
            self._torque_high = np.full(n, MAX_TORQUE, dtype=np.float32)

        def _buffers(self, n: int) -> None:
            self._obs = np.empty((n, 3))  # (E, 3) float64: cos θ, sin θ, θ̇
            self._cos, self._sin, self._theta_dot = self._obs.T  # (E,) column views
            self._theta = np.empty(n)
            self._u = np.empty(n, dtype=np.float32)  # clipped torque
            self._torque = np.empty(n, dtype=np.float32)  # 3/(m l²)·u
            self._u64 = np.empty(n)  # u as float64, then 0.001·u²
            self._cost = np.empty(n)  # angle_normalize(θ)², then the whole cost
            self._speed_cost = np.empty(n)  # 0.1·θ̇²
            self._delta = np.empty(n)  # accel·dt, then θ̇'·dt

        @property
        def state(self) -> np.ndarray:
            """(E, 2) states (θ, θ̇); setting it starts the batch from those states."""
            return np.stack([self._theta, self._theta_dot], axis=1)

        @state.setter
        def state(self, value: np.ndarray) -> None:
            value = np.asarray(value, dtype=np.float64)
            self._theta[:], self._theta_dot[:] = value[:, 0], value[:, 1]
            np.sin(self._theta, self._sin)
            np.cos(self._theta, self._cos)

        def _observe(self) -> np.ndarray:
            return self._obs.astype(np.float32)  # (E, 3), a fresh array

        def reset(self):
            self.state = initial_states(self.num_envs, self.rng)
            self.t = 0
            self.episode_return[:] = 0.0
            return self._observe()

        def step_async(self, actions) -> None:
            self._actions = np.asarray(actions, dtype=np.float32)

        def step_wait(self):
            cost = self._step_cost()
            self._step_dynamics()
            np.subtract(self.episode_return, cost, self.episode_return)  # += reward
            self.t += 1
            obs = self._observe()
            if self.env_reward:
                given = cost.astype(np.float32)
                np.negative(given, given)  # −cost as float32, as in step_states
            else:
                given = np.zeros(self.num_envs, np.float32)
            if self.t < HORIZON:
                done = np.zeros(self.num_envs, dtype=bool)
                return obs, given, done, [{} for _ in range(self.num_envs)]
            return self._end_episodes(obs, given)

        def _step_cost(self) -> np.ndarray:
            """1. clip u; 2. cost = angle_normalize(θ)² + 0.1·θ̇² + 0.001·u² (float64)."""
            u, cost, speed_cost, u64 = self._u, self._cost, self._speed_cost, self._u64
            np.maximum(self._actions.reshape(self.num_envs), self._torque_low, out=u)
            np.minimum(u, self._torque_high, out=u)
            np.add(self._theta, self._pi, cost)
            np.remainder(cost, self._two_pi, cost)
            np.subtract(cost, self._pi, cost)  # angle_normalize(θ)
            np.multiply(cost, cost, cost)
            np.multiply(self._theta_dot, self._theta_dot, speed_cost)
            np.multiply(self._speed_weight, speed_cost, speed_cost)
            u64[...] = u
            np.multiply(u64, u64, u64)
            np.multiply(self._torque_weight, u64, u64)
            np.add(cost, speed_cost, cost)
            np.add(cost, u64, cost)
            return cost

        def _step_dynamics(self) -> None:
            """3. θ̇' = clip(θ̇ + (3g/2l·sin θ + 3/ml²·u)·dt, ±8); θ' = θ + θ̇'·dt; cos, sin."""
            theta, theta_dot, delta = self._theta, self._theta_dot, self._delta
            np.multiply(self._gravity, self._sin, delta)
            np.multiply(self._torque_gain, self._u, self._torque)
            np.add(delta, self._torque, delta)
            np.multiply(delta, self._dt, delta)
            np.add(theta_dot, delta, theta_dot)
            np.maximum(theta_dot, self._speed_low, out=theta_dot)
            np.minimum(theta_dot, self._speed_high, out=theta_dot)
            np.multiply(theta_dot, self._dt, delta)
            np.add(theta, delta, theta)
            np.sin(theta, self._sin)
            np.cos(theta, self._cos)

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

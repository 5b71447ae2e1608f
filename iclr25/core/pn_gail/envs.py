"""Training environments: the batched numpy Pendulum, or any installed gymnasium id.

``pendulum`` (default) is :mod:`.pendulum`'s batched ``Pendulum-v1``. Another id is built
with stable-baselines3's ``make_vec_env`` (a ``DummyVecEnv``) behind two wrappers:

- :class:`ZeroReward` hands the learner reward 0 (rewards are relabelled by the
  discriminator) and remembers the true return of each finished episode;
- :class:`FixedHorizon` (``--fixed-horizon``): when the task ends early, the episode goes
  on to its time limit from the final observation with reward 0. Without it, GAIL's
  reward −log D > 0 is a survival bonus on such tasks; :func:`ends_early` detects them.

Only continuous (Box) action spaces are supported: the discriminator reads raw actions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.errors import UsageError

PENDULUM = "pendulum"


@dataclass(frozen=True)
class EnvSpec:
    name: str  # "pendulum" or a gymnasium id
    obs_dim: int
    act_dim: int
    act_low: np.ndarray
    act_high: np.ndarray
    scale: np.ndarray  # (ds + da,) bounds used to scale discriminator inputs
    horizon: int


RL_HINT = (
    "install the extra: pip install 'iclr25[pn-gail]' (gymnasium, stable-baselines3, sb3-contrib)"
)


def require_rl_stack() -> None:
    """A usage error naming the extra when gymnasium / stable-baselines3 / sb3-contrib
    (environments, TRPO and the bundled SAC expert) are not installed."""
    import importlib.util

    missing = [
        name
        for name in ("gymnasium", "stable_baselines3", "sb3_contrib")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        raise UsageError(f"pn-gail needs {', '.join(missing)}, which is not installed", RL_HINT)


def _finite_scale(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    bound = np.maximum(np.abs(low), np.abs(high)).astype(np.float64)
    return np.where(np.isfinite(bound) & (bound > 0) & (bound < 1e6), bound, 1.0)


def env_spec(name: str) -> EnvSpec:
    if name == PENDULUM:
        from iclr25.core.pn_gail import pendulum

        low, high = np.array([-pendulum.MAX_TORQUE]), np.array([pendulum.MAX_TORQUE])
        scale = np.concatenate([pendulum.OBS_HIGH, high])
        return EnvSpec(name, 3, 1, low, high, scale, pendulum.HORIZON)
    env = _make_gym(name)
    try:
        obs_space, act_space = env.observation_space, env.action_space
        horizon = env.spec.max_episode_steps if env.spec else None
    finally:
        env.close()
    if act_space.__class__.__name__ != "Box" or len(obs_space.shape) != 1:
        raise UsageError(
            f"{name}: pn-gail needs a flat observation and a continuous (Box) action space",
            "use a task such as Pendulum-v1 or MountainCarContinuous-v0",
        )
    scale = np.concatenate(
        [_finite_scale(obs_space.low, obs_space.high), _finite_scale(act_space.low, act_space.high)]
    )
    return EnvSpec(
        name,
        obs_space.shape[0],
        act_space.shape[0],
        act_space.low.astype(np.float64),
        act_space.high.astype(np.float64),
        scale,
        int(horizon or 1000),
    )


def _make_gym(name: str):
    import gymnasium as gym

    try:
        return gym.make(name)
    except Exception as exc:  # noqa: BLE001 - gymnasium raises several types here
        known = sorted(k for k in gym.registry if "-v" in k)
        examples = ", ".join(k for k in known if k.split("-")[0] in _CLASSIC)
        raise UsageError(
            f"unknown or unusable --env {name!r} ({type(exc).__name__}: {exc})",
            f"use `pendulum` (default) or an installed gymnasium id, e.g. {examples}",
        ) from None


_CLASSIC = ("Pendulum", "MountainCarContinuous", "CartPole", "Acrobot", "MountainCar")


def ends_early(name: str, episodes: int = 5, seed: int = 0) -> bool:
    """Whether random play ends an episode of ``name`` before its time limit."""
    if name == PENDULUM:
        return False
    env = _make_gym(name)
    try:
        env.action_space.seed(seed)
        for i in range(episodes):
            env.reset(seed=seed + i)
            while True:
                _, _, terminated, truncated, _ = env.step(env.action_space.sample())
                if terminated:
                    return True
                if truncated:
                    break
    finally:
        env.close()
    return False


def _wrappers():
    import gymnasium as gym

    class ZeroReward(gym.Wrapper):
        """Reward 0 to the learner; ``true_returns`` keeps the finished episodes' returns."""

        def __init__(self, env):
            super().__init__(env)
            self.true_returns: list[float] = []
            self._total = 0.0

        def reset(self, **kwargs):
            self._total = 0.0
            return self.env.reset(**kwargs)

        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            self._total += float(reward)
            if terminated or truncated:
                self.true_returns.append(self._total)
            return obs, 0.0, terminated, truncated, info

    class FixedHorizon(gym.Wrapper):
        """After an early end, repeat the final observation with reward 0 until the limit."""

        def __init__(self, env):
            super().__init__(env)
            spec = env.spec
            self._limit = spec.max_episode_steps if spec and spec.max_episode_steps else 1000
            self._ended, self._last, self._t = False, None, 0

        def reset(self, **kwargs):
            self._ended, self._t = False, 0
            return self.env.reset(**kwargs)

        def step(self, action):
            self._t += 1
            if self._ended:
                return self._last, 0.0, False, self._t >= self._limit, {}
            obs, reward, terminated, truncated, info = self.env.step(action)
            if terminated and not truncated:
                self._ended, self._last = True, obs
                return obs, reward, False, self._t >= self._limit, info
            return obs, reward, terminated, truncated, info

    return ZeroReward, FixedHorizon


def make_training_env(spec: EnvSpec, n_envs: int, seed: int, fixed_horizon: bool):
    """The VecEnv the learner trains on (rewards zeroed: the discriminator sets them)."""
    if spec.name == PENDULUM:
        from iclr25.core.pn_gail import pendulum

        return pendulum.make_vec_env(n_envs, seed, env_reward=False)
    from stable_baselines3.common.env_util import make_vec_env

    zero_reward, fixed = _wrappers()

    def wrap(env):
        return zero_reward(fixed(env) if fixed_horizon else env)

    return make_vec_env(spec.name, n_envs=n_envs, seed=seed, wrapper_class=wrap)


def true_returns(vec_env) -> list[float]:
    """True returns of the finished training episodes so far."""
    if hasattr(vec_env, "finished_returns"):
        return list(vec_env.finished_returns)
    return [r for env in vec_env.envs for r in env.true_returns]


def gym_return(name: str, policy, episodes: int = 32, seed: int = 7_700_001) -> float:
    """Mean return of ``policy`` ((1, ds) -> (1, da)) on ``episodes`` seeded episodes."""
    env = _make_gym(name)
    total = 0.0
    try:
        for i in range(episodes):
            obs, _ = env.reset(seed=seed + i)
            done = False
            while not done:
                action = policy(np.asarray(obs, dtype=np.float32)[None])[0]
                obs, reward, terminated, truncated, _ = env.step(action)
                total += float(reward)
                done = terminated or truncated
    finally:
        env.close()
    return total / episodes


def gym_random_return(name: str, episodes: int = 32, seed: int = 7_700_001) -> float:
    """The uniform random policy's mean return on the same seeded episodes."""
    env = _make_gym(name)
    space = env.action_space
    env.close()
    space.seed(seed)
    return gym_return(name, lambda obs: space.sample()[None], episodes, seed)

"""Imperfect demonstrations: generated from the bundled expert, or read from a file.

**Generator.** Demonstrator ε is the expert with its action replaced, independently at
each step, by a uniform one in [−2, 2] with probability ε (``noise="uniform"``), or with
Gaussian noise of standard deviation σ = level added and clipped (``noise="gaussian"``).
Each non-optimal level contributes ``episodes`` episodes of 200 steps; the expert (ε = 0)
contributes so that it holds ``optimal_share`` of all episodes (0.2: 5 of 25 episodes with
the default four levels; 1.0: every episode from the expert). A demonstrator's confidence
is its normalised return (R − R_random)/(R_expert − R_random) on the 32 fixed evaluation
episodes, clipped to [0, 1] (ε = 1 is the random policy: confidence 0). A random
``labeled_fraction`` of the pairs keeps its confidence, the rest is NaN (unlabelled).

**Files.** NPZ with ``obs`` [N, ds], ``actions`` [N, da], ``confidence`` [N] (NaN =
unlabelled), optional ``episode`` [N], ``true_confidence`` [N], ``demonstrator`` [N]; or
the official repositories' ``X_mixture.npy`` [N, ds + da] with a confidence file
``X_mixture_conf.npy`` [N] (every pair labelled there: ``--labeled-fraction`` hides the
rest). Every check failure is an :class:`~iclr25.errors.InputError` naming the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iclr25.core.pn_gail import evaluation, pendulum
from iclr25.errors import UsageError

NOISES = ("uniform", "gaussian")


@dataclass
class Demos:
    obs: np.ndarray  # (N, ds) float32
    actions: np.ndarray  # (N, da) float32
    confidence: np.ndarray  # (N,) float64, NaN where unlabelled
    episode: np.ndarray | None = None  # (N,) int64
    true_confidence: np.ndarray | None = None  # (N,) float64
    demonstrator: np.ndarray | None = None  # (N,) int64 index into ``demonstrators``
    demonstrators: list[dict] = field(default_factory=list)
    source: str = "generated"

    @property
    def labeled(self) -> np.ndarray:
        return ~np.isnan(self.confidence)

    @property
    def pairs(self) -> np.ndarray:
        return np.hstack([self.obs, self.actions])  # (N, ds + da)

    def __len__(self) -> int:
        return len(self.obs)


@dataclass(frozen=True)
class DemoConfig:
    levels: tuple[float, ...] = (0.4, 0.6, 0.8, 1.0)  # ε of the non-optimal demonstrators
    noise: str = "uniform"  # "uniform" (ε-random) or "gaussian" (σ = level)
    episodes: int = 5  # per non-optimal demonstrator
    optimal_share: float = 0.2  # share of episodes from the expert
    labeled_fraction: float = 0.2  # share of pairs whose confidence is kept

    def validate(self) -> None:
        if self.noise not in NOISES:
            raise UsageError(f"unknown --noise {self.noise!r}", f"use one of {', '.join(NOISES)}")
        if not 0 < self.labeled_fraction <= 1:
            raise UsageError(
                f"--labeled-fraction {self.labeled_fraction} is outside (0, 1]",
                "give a share such as 0.2 (1 = every confidence known)",
            )
        if not 0 <= self.optimal_share <= 1:
            raise UsageError(f"--optimal-share {self.optimal_share} is outside [0, 1]", "use 0.2")
        if self.episodes < 1:
            raise UsageError(f"--episodes {self.episodes} must be at least 1", "use 5")
        bad = [v for v in self.levels if v < 0 or (self.noise == "uniform" and v > 1)]
        if bad or not self.levels:
            raise UsageError(
                f"--levels {self.levels} are not valid noise levels",
                "give ε in [0, 1] (uniform) or σ ≥ 0 (gaussian), e.g. 0.4,0.6,0.8,1.0",
            )

    def episode_counts(self) -> tuple[int, list[int]]:
        """(expert episodes, episodes per non-optimal level)."""
        total = self.episodes * (len(self.levels) + 1)
        n_opt = round(self.optimal_share * total)
        n_non = total - n_opt
        per = [n_non // len(self.levels)] * len(self.levels)
        for i in range(n_non - sum(per)):
            per[i] += 1
        return n_opt, per


def demonstrator_policy(expert, level: float, noise: str, rng: np.random.Generator):
    """The expert degraded by ``noise`` at ``level`` (ε or σ); (E, 3) -> (E, 1)."""

    def act(obs: np.ndarray) -> np.ndarray:
        a = expert(obs)
        if noise == "gaussian":
            return np.clip(a + level * rng.standard_normal(a.shape), -2.0, 2.0)
        coin = rng.random(len(obs))  # both draws every step: streams stay aligned
        uniform = rng.uniform(-2.0, 2.0, size=a.shape)
        return np.where((coin < level)[:, None], uniform, a)

    return act


def demonstrator_confidence(expert, level: float, noise: str) -> float:
    """The normalised return of demonstrator ``level`` on the fixed evaluation episodes."""
    refs = evaluation.pendulum_references()
    rng = np.random.default_rng(evaluation.RANDOM_SEED)
    if noise == "uniform" and level >= 1.0:
        value = refs.return_random  # ε = 1 is the uniform policy itself
    elif level == 0.0:
        value = refs.return_expert
    else:
        policy = demonstrator_policy(expert, level, noise, rng)
        value = evaluation.evaluate_pendulum(policy)
    return float(np.clip(refs.normalize(value), 0.0, 1.0))


def _record(policy, n_episodes: int, rng: np.random.Generator):
    """(obs (n·200, 3), actions (n·200, 1), returns (n,)) of ``n_episodes`` episodes."""
    state = pendulum.initial_states(n_episodes, rng)
    obs_steps, act_steps = [], []
    total = np.zeros(n_episodes)
    for _ in range(pendulum.HORIZON):
        obs = pendulum.observe(state)
        action = np.clip(policy(obs), -2.0, 2.0).astype(np.float32)
        obs_steps.append(obs)
        act_steps.append(action)
        state, reward = pendulum.step_states(state, action)
        total += reward
    obs = np.stack(obs_steps, axis=1).reshape(-1, 3)  # (E, T, 3) -> (E·T, 3), episode-major
    actions = np.stack(act_steps, axis=1).reshape(-1, 1)
    return obs, actions, total


def generate(config: DemoConfig, seed: int, expert=None) -> Demos:
    """Demonstrations from the expert and its degraded versions (module docstring)."""
    from iclr25.core.pn_gail.expert import load_expert

    config.validate()
    expert = expert or load_expert()
    rng = np.random.default_rng(seed)
    n_opt, per_level = config.episode_counts()
    plan = [(0.0, n_opt)] + list(zip(config.levels, per_level, strict=True))
    obs, actions, truth, who, episode, demonstrators = [], [], [], [], [], []
    first_episode = 0
    for level, count in plan:
        if count == 0:
            continue
        policy = demonstrator_policy(expert, level, config.noise, rng)
        o, a, returns = _record(policy, count, rng)
        conf = 1.0 if level == 0.0 else demonstrator_confidence(expert, level, config.noise)
        obs.append(o)
        actions.append(a)
        truth.append(np.full(len(o), conf))
        who.append(np.full(len(o), len(demonstrators)))
        episode.append(first_episode + np.repeat(np.arange(count), pendulum.HORIZON))
        first_episode += count
        demonstrators.append(
            {
                "level": level,
                "return_mean": float(returns.mean()),
                "confidence": conf,
                "pairs": len(o),
                "episodes": count,
            }
        )
    true_conf = np.concatenate(truth)
    demos = Demos(
        obs=np.concatenate(obs),
        actions=np.concatenate(actions),
        confidence=hide_confidences(true_conf, config.labeled_fraction, rng),
        episode=np.concatenate(episode),
        true_confidence=true_conf,
        demonstrator=np.concatenate(who),
        demonstrators=demonstrators,
    )
    return demos


def hide_confidences(truth: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """``truth`` with all but a random ``fraction`` of the entries set to NaN (≥ 1 kept)."""
    n_keep = max(1, round(fraction * len(truth)))
    keep = rng.choice(len(truth), size=n_keep, replace=False)
    out = np.full(len(truth), np.nan)
    out[keep] = truth[keep]
    return out

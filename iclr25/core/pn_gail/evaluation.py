"""The metric: normalised return of a policy's mean action on 32 fixed Pendulum episodes.

    normalized_return = (R − R_random) / (R_expert − R_random)

R is the mean undiscounted return over 32 episodes whose start states are fixed
(``EVAL_SEED``), the policy acting with its mean (deterministic) action; R_random is the
uniform random policy on the same starts (its draws fixed too) and R_expert the bundled
expert's. So 0 is random, 1 is the expert. A training curve evaluates every 5 % of the
budget; the reported figure is the mean of the evaluations in the last quarter (80–100 %),
steadier than the last point alone because adversarial imitation oscillates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from iclr25.core.pn_gail import pendulum

EVAL_EPISODES = 32
EVAL_SEED = 7_700_001  # start states of the 32 evaluation episodes
RANDOM_SEED = 7_700_002  # the uniform policy's draws on them
CURVE_POINTS = 20  # every 5 % of the budget
LAST_QUARTER = 5  # evaluations averaged: 80, 85, 90, 95 and 100 %

Policy = Callable[[np.ndarray], np.ndarray]


def eval_starts(n: int = EVAL_EPISODES) -> np.ndarray:
    return pendulum.initial_states(n, np.random.default_rng(EVAL_SEED))


def uniform_policy(rng: np.random.Generator, low: float = -2.0, high: float = 2.0) -> Policy:
    return lambda obs: rng.uniform(low, high, size=(len(obs), 1))


@dataclass(frozen=True)
class References:
    return_expert: float
    return_random: float

    def normalize(self, value: float) -> float:
        return (value - self.return_random) / (self.return_expert - self.return_random)


@lru_cache(maxsize=4)
def pendulum_references(expert_path: str | None = None) -> References:
    """R_expert and R_random on the fixed evaluation episodes (cached per expert file)."""
    from iclr25.core.pn_gail.expert import load_expert

    starts = eval_starts()
    expert = load_expert(expert_path)
    r_expert = float(pendulum.rollout_returns(expert, starts).mean())
    rng = np.random.default_rng(RANDOM_SEED)
    r_random = float(pendulum.rollout_returns(uniform_policy(rng), starts).mean())
    return References(r_expert, r_random)


def evaluate_pendulum(policy: Policy) -> float:
    """Mean return of ``policy`` on the 32 fixed episodes."""
    return float(pendulum.rollout_returns(policy, eval_starts()).mean())


def curve_steps(total_steps: int, rollout_steps: int) -> list[int]:
    """Rollouts after which the policy is evaluated: every 5 % of the budget (the last
    one at the end), in whole rollouts."""
    rollouts = -(-total_steps // rollout_steps)
    points = {max(1, -(-k * rollouts // CURVE_POINTS)) for k in range(1, CURVE_POINTS + 1)}
    return sorted(points)


def last_quarter_mean(values: list[float]) -> float:
    tail = values[-LAST_QUARTER:] if len(values) >= LAST_QUARTER else values
    return float(np.mean(tail))

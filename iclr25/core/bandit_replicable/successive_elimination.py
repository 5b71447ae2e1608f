"""Successive elimination (Even-Dar, Mannor & Mansour, JMLR 2006): a non-replicable baseline.

Algorithm: play the active arms round-robin, one pull each per cycle; after every cycle,
with n pulls per active arm and the anytime radius r(n) = σ √(2 ln(4 k n² / δ) / n),
eliminate every arm whose upper bound μ̂_i + r falls below the best lower bound
max_j μ̂_j - r. Regret O(Σ_i σ² log(kT/δ) / Δ_i), worst case Õ(√(kT)).

List size: none. An arm is eliminated at the first cycle where its confidence intervals
separate, a random time spread over many cycles, so the number of traces grows with T
(roughly like the product over arms of the spread of their elimination times). This is
the contrast the tool shows against Alg. 1-3, which decide only at a few fixed phase ends.

Simulated by the phase engine with one cycle per segment (exact, not an approximation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.schedule import RoundRobin


@dataclass
class EliminationState:
    k: int
    sigma: float  # σ of the confidence radius
    active: np.ndarray  # (runs, k) bool


class SuccessiveElimination:
    name = "successive-elimination"

    def __init__(self, delta: float):
        self.delta = float(delta)

    def init(self, env, horizon, runs, rng) -> EliminationState:
        return EliminationState(env.k, env.subgaussian, np.ones((runs, env.k), bool))

    def radius(self, state: EliminationState, counts: np.ndarray) -> np.ndarray:
        """r(n) = σ √(2 ln(4 k n² / δ) / n) for pull counts n ≥ 1."""
        n = np.maximum(counts, 1).astype(np.float64)
        return state.sigma * np.sqrt(2.0 * np.log(4.0 * state.k * n**2 / self.delta) / n)

    def segment(self, state: EliminationState, index: int) -> RoundRobin:
        return RoundRobin(state.active.copy(), state.active.sum(axis=1).astype(np.int64))

    def decide(self, state: EliminationState, index, sums, counts, completed) -> None:
        n = np.maximum(counts, 1)
        radius = self.radius(state, counts)
        means = sums / n
        lower = np.where(state.active, means - radius, -np.inf).max(axis=1, keepdims=True)
        drop = state.active & (means + radius < lower) & completed[:, None]
        state.active &= ~drop

"""Alg. 1 of Chen et al. (ICLR 2025): a (2^k, δ)-list replicable algorithm, Õ(√(kT)) regret.

The paper's pseudocode was not available to us; this is the phased-elimination design of
the project note (``shared/papers/bandit-replicable.md``), with the list-size argument
below. Measured list sizes and regret are reported by ``iclr25 bandit-replicable run``.

Algorithm (phases p = 1, 2, ...; symbols as in the paper's analysis style):
- τ_p = 2^-p: the elimination threshold of phase p; η_p = τ_p / 8: the accuracy every
  empirical mean has at the end of phase p on the good event.
- N_p = ⌈2σ² L / η_p²⌉ cumulative pulls per active arm by the end of phase p, with
  L = ln(2 k P / δ) and P = ⌈log₂ T⌉ + 1 planned phases (σ = 1/2 for Bernoulli rewards).
  Phase p plays the active set A_p in round-robin (index order) for N_p - N_{p-1} cycles.
- End of phase p: eliminate every active i with max_{j∈A_p} μ̂_j - μ̂_i > τ_p.
- After P phases (only reachable for tiny σ), play A_{P+1} round-robin to the horizon.

List size 2^k (Hoeffding + union bound, δ): on the good event G = {|μ̂_i - μ_i| ≤ η_p for
all arms and phases}, P(G) ≥ 1 - δ, the statistic D_i = max_j μ̂_j - μ̂_i lies in
[Δ_i - 2η_p, Δ_i + 2η_p] while the best arm is active, and the best arm is never
eliminated (its D ≤ 2η_p < τ_p). So arm i's fate at phase p is certain unless Δ_i lies in
the zone Z_p = [τ_p - 2η_p, τ_p + 2η_p] = [0.75, 1.25]·2^-p. The zones are disjoint
(Z_{p+1} ⊂ [0.375, 0.625]·2^-p), so each Δ_i meets at most one zone; and if Δ_i ∈ Z_p and
arm i survives phase p, then Δ_i ≥ 0.75·2^-p > τ_{p+1} + 2η_{p+1} and it is eliminated at
phase p+1. Each suboptimal arm therefore has at most two fates, the best arm one, and the
trace is a function of the fates: at most 2^(k-1) ≤ 2^k traces with probability ≥ 1 - δ.

Regret: arm i is gone by the first phase with τ_p + 2η_p < Δ_i, after
N_p = O(σ² L / Δ_i²) pulls, so the regret is O(Σ_i σ² L / Δ_i) and O(σ √(k T L)) in the
worst case (Lattimore & Szepesvári, Thm 6.2 style): Õ(√(kT)).
:meth:`PhasedElimination.regret_bound` evaluates that bound with its constants for the
whole family (Alg. 1, Alg. 2, the ρ-replicable baseline): with thresholds
τ_p(r) ≤ s 2^-p (s = 1 here, 2 with a random offset r ∈ [0, 1)) and η_p = c 2^-p, on G arm
i is eliminated at the first p with 2^-p (s + 2c) < Δ_i, so 2^-p ≥ Δ_i / (2(s + 2c)) and
its pulls are at most N_p ≤ 8σ²L(s + 2c)² / (c² Δ_i²) + 1 =: C'/Δ_i² + 1 (the ceiling).
Splitting arms at Δ_0 = √((k-1)C'/T): regret ≤ Δ_0 T + (k-1)C'/Δ_0 + (k-1)Δ_max
= 2√((k-1)C'T) + (k-1)Δ_max with probability ≥ 1 - δ_G (and never more than T max_i Δ_i).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.schedule import RoundRobin


@dataclass
class PhasedState:
    horizon: int
    targets: np.ndarray  # (P,) N_p: cumulative pulls per active arm at the end of phase p
    thresholds: np.ndarray  # (runs, P) τ_p for each execution
    active: np.ndarray  # (runs, k) bool, A_p
    eliminated_at: np.ndarray  # (runs, k) phase (1-based) that removed the arm; 0 = never


def planned_phases(horizon: int) -> int:
    return int(np.ceil(np.log2(max(horizon, 2)))) + 1


class PhasedElimination:
    """Phased elimination with a fixed phase schedule; subclasses set τ_p and η_p."""

    name = "phased-elimination"
    threshold_span = 1.0  # s: every τ_p(r) ≤ s 2^-p (2 with a random offset r ∈ [0, 1))

    def __init__(self, delta: float, paired: bool = False):
        self.delta = float(delta)
        self.paired = paired  # executions 2i and 2i+1 share their internal random bits

    def internal_uniforms(self, rng, runs: int, width: int) -> np.ndarray:
        """U[0, 1) internal random bits (runs, width): fresh per execution, or shared by
        the pairs (2i, 2i+1) when ``paired`` (to measure ρ-replicability)."""
        if not self.paired:
            return rng.random((runs, width))
        return np.repeat(rng.random(((runs + 1) // 2, width)), 2, axis=0)[:runs]

    # -- the two knobs of the family ---------------------------------------------------
    def accuracies(self, k: int, phases: np.ndarray) -> np.ndarray:
        """η_p for p in ``phases`` (1-based)."""
        return 2.0 ** -phases.astype(np.float64) / 8.0

    def log_term(self, k: int, planned: int) -> float:
        return float(np.log(2.0 * k * planned / self.delta))

    def draw_thresholds(self, k: int, phases: np.ndarray, runs: int, rng) -> np.ndarray:
        """τ_p per execution (runs, P); Alg. 1's are deterministic."""
        return np.broadcast_to(2.0 ** -phases.astype(np.float64), (runs, phases.size)).copy()

    # -- what the constants promise ----------------------------------------------------
    def accuracy_ratio(self, k: int) -> float:
        """c of η_p = c 2^-p."""
        return float(self.accuracies(k, np.array([1]))[0] * 2.0)

    def regret_bound(self, env, horizon: int) -> dict:
        """The high-probability regret bound of the module docstring at these constants."""
        k, planned = env.k, planned_phases(horizon)
        c, sigma = self.accuracy_ratio(k), env.subgaussian
        log_term = self.log_term(k, planned)
        delta_g = float(2.0 * k * planned * np.exp(-log_term))  # L = ln(2kP/δ_G)
        per_arm = 8.0 * sigma**2 * log_term * (self.threshold_span + 2.0 * c) ** 2 / c**2
        ceiling = float(horizon * env.gaps.max())
        bound = 2.0 * np.sqrt((k - 1) * per_arm * horizon) + (k - 1) * float(env.gaps.max())
        first = 2.0 * sigma**2 * log_term / (c / 2.0) ** 2  # N_1 pulls per arm
        return {
            "bound": float(bound),
            "trivial_bound": ceiling,  # T max_i Δ_i: no algorithm does worse
            "bound_formula": "2√((k-1)C'T) + (k-1)Δ_max, C' = 8σ²L(s+2c)²/c²",
            "probability": round(1.0 - delta_g, 12),
            "accuracy_ratio": c,
            "log_term": log_term,
            "vacuous": bool(bound >= ceiling),
            "first_decision_round": int(min(np.ceil(first) * k, horizon + 1)),
        }

    # -- the engine protocol -------------------------------------------------------------
    def init(self, env, horizon, runs, rng) -> PhasedState:
        k = env.k
        planned = planned_phases(horizon)
        phases = np.arange(1, planned + 1)
        eta = self.accuracies(k, phases)
        sigma = env.subgaussian
        targets = np.ceil(2.0 * sigma**2 * self.log_term(k, planned) / eta**2)
        # a target beyond T is never reached: capping it keeps tiny η from overflowing int64
        targets = np.minimum(targets, horizon + 1).astype(np.int64)
        targets = np.maximum.accumulate(np.maximum(targets, 1))
        return PhasedState(
            horizon=horizon,
            targets=targets,
            thresholds=self.draw_thresholds(k, phases, runs, rng),
            active=np.ones((runs, k), bool),
            eliminated_at=np.zeros((runs, k), np.int64),
        )

    def segment(self, state: PhasedState, index: int) -> RoundRobin:
        size = state.active.sum(axis=1)
        if index >= state.targets.size:  # after the planned phases: to the horizon
            return RoundRobin(state.active.copy(), np.full(size.shape, state.horizon, np.int64))
        previous = state.targets[index - 1] if index else 0
        per_arm = int(state.targets[index] - previous)
        return RoundRobin(state.active.copy(), per_arm * size)

    def decide(self, state: PhasedState, index, sums, counts, completed) -> None:
        if index >= state.targets.size:
            return
        means = np.where(state.active, sums / np.maximum(counts, 1), -np.inf)  # (runs, k)
        spread = means.max(axis=1, keepdims=True) - means  # D_i = max_j μ̂_j - μ̂_i
        tau = state.thresholds[:, index : index + 1]
        drop = state.active & (spread > tau) & completed[:, None]
        state.active &= ~drop
        state.eliminated_at[drop] = index + 1


class List2k(PhasedElimination):
    """Alg. 1: deterministic thresholds τ_p = 2^-p, accuracy η_p = τ_p / 8."""

    name = "list-2k"


def list_bound(k: int) -> int:
    return 2**k

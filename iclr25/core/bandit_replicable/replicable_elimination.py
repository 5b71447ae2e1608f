"""A ρ-replicable baseline: phased elimination with a shared random threshold per phase,
after Esfandiari, Kalavasis, Karbasi, Krause, Mirrokni & Velegkas, "Replicable Bandits"
(ICLR 2023).

ρ-replicability (their Definition): two executions that *share* their internal random
bits but see independent rewards play the same trace with probability ≥ 1 - ρ. List
replicability (Chen et al. 2025) asks for a short list of traces with *fresh* bits in
every execution. This baseline shows the difference: it is ρ-replicable (measured with
``run --shared-randomness``: ``pair_agreement`` ≥ 1 - ρ), yet with fresh bits its traces
spread like Alg. 1's, and its accuracy costs the k²/ρ² factor in samples that Komiyama et
al. (2024) identify in the existing replicable algorithms. Their pseudocode was not at
hand; this is our design in their style (randomised decisions against shared random
thresholds, the rounding trick of Impagliazzo et al. 2022), with our argument. ρ is the
tool's ``--delta``.

Algorithm: Alg. 1's phased elimination (:mod:`.list_2k`) with
- one offset U_p ~ U[0, 1) per phase (internal randomness; independent across phases)
  and thresholds τ_p = 2^-p (1 + U_p);
- accuracy η_p = c 2^-p with c = :func:`accuracy_ratio` (k, ρ), L = ln(2kP/ρ_G), ρ_G = ρ/8.

ρ-replicability: two executions sharing U agree if both stay on their good events
(|μ̂_i - μ_i| ≤ η_p throughout; probability ≥ 1 - 2ρ_G = 1 - ρ/4) and no arm is
ambiguous, i.e. no Δ_i lies in a zone [τ_p - 2η_p, τ_p + 2η_p]: then every elimination
is decided by (Δ, U) alone. Arm i can meet the zone of at most two phases (those with
2^p Δ_i ∈ [1 - 2c, 2 + 2c]), each for U_p in an interval of length 4c: P(ambiguous) ≤ 8c.
With c = (3ρ/4) / (8(k - 1)): P(disagree) ≤ ρ/4 + 8c(k - 1) ≤ ρ.

Fresh bits: arm i's fate depends only on the offsets of its ≤ 2 phases, so arms whose
gaps lie in different octaves 2^-p ≤ Δ < 2^{1-p} have independent fates: up to 2^(k-1)
traces, Alg. 1's count — ρ-replicability does not give a short list (the tool measures
it). Regret: as Alg. 1 with 1/c = O(k/ρ): O(Σ_i σ² L / (c² Δ_i)) = O((k²/ρ²) Σ_i L/Δ_i),
Õ((k/ρ)√(kT)) in the worst case.

Symbols: U_p → ``offsets``, τ_p → ``thresholds``, c → :func:`accuracy_ratio`, ρ → ``delta``.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.bandit_replicable.list_2k import PhasedElimination

#: share of ρ spent on the two executions' concentration events (ρ_G = ρ/8 each)
GOOD_EVENT_SHARE = 0.25


def accuracy_ratio(k: int, rho: float) -> float:
    """c of η_p = c 2^-p: every arm unambiguous with probability ≥ 1 - 3ρ/4 (c < 3/32,
    below Alg. 1's 1/8, so each arm keeps two fates)."""
    return (1.0 - GOOD_EVENT_SHARE) * rho / (8.0 * (k - 1))


class ReplicableElimination(PhasedElimination):
    name = "replicable-elimination"
    threshold_span = 2.0  # τ_p(r) = 2^-p (1 + r), r < 1

    def accuracies(self, k: int, phases: np.ndarray) -> np.ndarray:
        return accuracy_ratio(k, self.delta) * 2.0 ** -phases.astype(np.float64)

    def log_term(self, k: int, planned: int) -> float:
        return float(np.log(2.0 * k * planned / (GOOD_EVENT_SHARE * self.delta / 2.0)))

    def draw_thresholds(self, k: int, phases: np.ndarray, runs: int, rng) -> np.ndarray:
        offsets = self.internal_uniforms(rng, runs, phases.size)  # (runs, P) U_p
        return (1.0 + offsets) * 2.0 ** -phases.astype(np.float64)[None, :]

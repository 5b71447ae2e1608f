"""Alg. 2 of Chen et al. (ICLR 2025): an (O(k/δ), δ)-list replicable algorithm
(list size ⌈12k/δ⌉), regret Õ((k/δ)√(kT)).

The paper's pseudocode was not available to us; this is the randomised-threshold design
of the project note (the replicability trick of Impagliazzo et al. 2022 and Esfandiari et
al. 2023: decisions against a threshold shifted by one random offset), with our argument.

Algorithm: Alg. 1's phased elimination (:mod:`.list_2k`) with
- one offset r drawn per execution (fresh internal randomness) uniformly from the grid
  {0, 1/M, ..., (M-1)/M}, M = ⌈12k/δ⌉, and thresholds τ_p(r) = 2^-p (1 + r);
- accuracy η_p = c 2^-p with c = δ / (24 k), and L = ln(4 k P / δ) (failure δ/2).

List size M = ⌈12k/δ⌉: call the offset *clean* if no suboptimal gap lies in any zone
Z_p(r) = [τ_p(r) - 2η_p, τ_p(r) + 2η_p]. For an arm, Δ_i ∈ Z_p(r) means
|2^p Δ_i - 1 - r| ≤ 2c, an interval of length 4c in r, and as r sweeps [0, 1) the
thresholds 2^-p(1+r) tile (0, 1] once, so at most two phases (8c in total, one extra
grid point each) can catch Δ_i: the grid fraction of unclean offsets is at most
(k-1)(8c + 2/M) ≤ δ/3 + δ/6. On the good event (probability ≥ 1 - δ/2) and a clean
offset, every elimination is decided with certainty (as in Alg. 1), so each clean offset
yields one trace: at most M traces with probability ≥ 1 - δ.

A sharper count (ours, measured by the tool): for a clean offset arm i is eliminated at
the first p with 2^-p(1+r) < Δ_i, which moves by one phase exactly once as r sweeps
[0, 1). The k-1 switch points cut [0, 1) into at most k pieces, so at most k of the M
traces can occur: the measured ``traces_covering_1_minus_delta`` should stay ≤ k.

Regret: the sample sizes grow by (1/(8c))² = (3k/δ)² over Alg. 1's, so the regret bound
grows by 3k/δ: Õ((k/δ)√(kT)). The constants make the first phase long: at moderate T and
small δ every arm is still in phase 1 at the horizon (one trace, linear regret), which is
what the bound says for T ≲ (k/δ)² k log(k/δ).
"""

from __future__ import annotations

import numpy as np

from iclr25.core.bandit_replicable.list_2k import PhasedElimination


def grid_size(k: int, delta: float) -> int:
    """M = ⌈12k/δ⌉, the number of offsets and the list bound."""
    return int(np.ceil(12.0 * k / delta - 1e-9))


class ListKDelta(PhasedElimination):
    name = "list-k-delta"

    def accuracies(self, k: int, phases: np.ndarray) -> np.ndarray:
        c = self.delta / (24.0 * k)
        return c * 2.0 ** -phases.astype(np.float64)

    def log_term(self, k: int, planned: int) -> float:
        return float(np.log(4.0 * k * planned / self.delta))

    def draw_thresholds(self, k: int, phases: np.ndarray, runs: int, rng) -> np.ndarray:
        grid = grid_size(k, self.delta)
        offsets = rng.integers(0, grid, size=runs) / grid  # (runs,) r, fresh per execution
        return (1.0 + offsets[:, None]) * 2.0 ** -phases.astype(np.float64)[None, :]


def list_bound(k: int, delta: float) -> int:
    return grid_size(k, delta)

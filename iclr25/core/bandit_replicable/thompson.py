"""Thompson sampling with Gaussian posteriors (Agrawal & Goyal, AISTATS 2013, Alg. 2).

Algorithm: at every round sample θ_i ~ N(μ̂_i, s² / (n_i + 1)) with μ̂_i = S_i / (n_i + 1)
(a N(0, s²) prior), play argmax_i θ_i (ties: lowest index). s = 1 for Bernoulli rewards
(the paper's choice for rewards in [0, 1]) and s = σ for Gaussian rewards. Regret
O(√(kT ln k)) worst case, O(Σ ln T / Δ_i) on a fixed instance (their Thms 1.2-1.3).

List size: none. Internal randomness is drawn every round, so even with identical
rewards two executions diverge; the number of traces is essentially the number of
executions. This is the baseline that shows how traces explode without replicability.

The posterior draws use streams 1..k of the counter RNG (inverse normal CDF of one
uniform each), so the CPU and CUDA paths draw the same numbers.
"""

from __future__ import annotations

from iclr25.core.bandit_replicable.sequential import normal_ppf
from iclr25.counter_rng import uniforms_streams


class Thompson:
    name = "thompson"
    kernel = "thompson"

    def __init__(self, prior_scale: float = 1.0):
        self.prior_scale = float(prior_scale)  # s

    def choose(self, t: int, sums, counts, keys, k: int, xp):
        u = uniforms_streams(keys, t * (k + 1) + 1, k, xp)  # (runs, k)
        z = normal_ppf(xp)(u)
        spread = self.prior_scale / xp.sqrt(counts + 1.0)
        return xp.argmax(sums / (counts + 1.0) + spread * z, axis=1)

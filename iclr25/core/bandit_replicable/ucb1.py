"""UCB1 (Auer, Cesa-Bianchi & Fischer, Machine Learning 2002, Fig. 1): a baseline.

Algorithm: play each arm once; then at round t (t plays so far) play
argmax_i μ̂_i + √(2 ln t / n_i) (ties: lowest index). Regret ≤ Σ_{Δ_i>0} 8 ln T / Δ_i +
(1 + π²/3) Σ_i Δ_i (their Thm 1): logarithmic on a fixed instance, Õ(√(kT)) worst case.

List size: none. The arm played at every round depends on all rewards so far, so two
executions part ways at the first near-tie of indices; the number of distinct traces
grows with T and quickly equals the number of executions (the tool measures it).

Symbols: μ̂_i → sums/counts, n_i → counts, t → plays so far. CPU: the vectorised
per-round loop of :mod:`.sequential`; CUDA: ``iclr25/gpu/kernels/bandit_sequential``.
"""

from __future__ import annotations

import math


class Ucb1:
    name = "ucb1"
    kernel = "ucb1"

    def choose(self, t: int, sums, counts, keys, k: int, xp):
        if t < k:  # initialisation: every arm once, in index order
            return xp.full(sums.shape[0], t, dtype=xp.int64)
        bonus = xp.sqrt((2.0 * math.log(t)) / counts)  # √(2 ln t / n_i), same order as CUDA
        return xp.argmax(sums / counts + bonus, axis=1)

"""Plain per-execution references for the ``bandit_sequential`` kernel (UCB1, Thompson).

One execution at a time, one round at a time, Python floats — the definition of what the
kernel and the vectorised CPU path (:mod:`iclr25.core.bandit_replicable.sequential`)
compute, drawing the same counter-based numbers
(:mod:`iclr25.counter_rng`). Tests compare all three.
"""

from __future__ import annotations

import math

from iclr25.counter_rng import (
    HASH_P1,
    HASH_P2,
    MASK64,
    mix64_int,
    run_key_int,
    uniform_int,
)


def _reward(noise: str, sigma: float, mu: float, u: float) -> float:
    if noise == "bernoulli":
        return 1.0 if u < mu else 0.0
    from scipy.special import ndtri

    return mu + sigma * float(ndtri(u))


def sequential_reference_run(
    algo: str,
    means: list[float],
    noise: str,
    sigma: float,
    horizon: int,
    seed: int,
    run: int,
    prior_scale: float = 1.0,
) -> dict:
    """One execution of ``algo`` ("ucb1" or "thompson"): arms, pulls, regret, key."""
    from scipy.special import ndtri

    k = len(means)
    key = run_key_int(seed, run)
    sums, counts = [0.0] * k, [0.0] * k
    best = max(means)
    arms, regret, h1, h2 = [], 0.0, 0, 0
    for t in range(horizon):
        if algo == "ucb1":
            if t < k:
                arm = t
            else:
                c = 2.0 * math.log(t)
                index = [sums[i] / counts[i] + math.sqrt(c / counts[i]) for i in range(k)]
                arm = max(range(k), key=lambda i: (index[i], -i))  # first max
        else:
            draws = []
            for i in range(k):
                z = float(ndtri(uniform_int(key, t * (k + 1) + 1 + i)))
                spread = prior_scale / math.sqrt(counts[i] + 1.0)
                draws.append(sums[i] / (counts[i] + 1.0) + spread * z)
            arm = max(range(k), key=lambda i: (draws[i], -i))
        reward = _reward(noise, sigma, means[arm], uniform_int(key, t * (k + 1)))
        sums[arm] += reward
        counts[arm] += 1.0
        regret += best - means[arm]
        arms.append(arm)
        h1 = (h1 * HASH_P1 + arm + 1) & MASK64
        h2 = (h2 * HASH_P2 + arm + 1) & MASK64
    return {
        "arms": arms,
        "pulls": [int(c) for c in counts],
        "regret": regret,
        "key": (mix64_int(h1), mix64_int(h2)),
    }

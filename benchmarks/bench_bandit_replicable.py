"""bandit-replicable: aggregated phase simulation and the vectorised UCB1, against peers.

1. Alg. 1 (list-2k) at 10,000 executions × T = 10^6 × k = 10, simulated in aggregate (one
   binomial sum per arm and phase), against the per-round vectorised numpy simulation of
   the same algorithm (one reward per round, all executions at once) at 1,000 × 10^5.
   Compared per execution-round. Target ≥ 50×.
2. UCB1: our vectorised per-round path (numpy, all executions at once) against the
   plainest correct Python loop a researcher would write (one execution at a time,
   ``random.random``), per execution-round.
Mean regrets of each pair are reported next to the timings as a correctness check.
"""

from __future__ import annotations

import math
import random
import time

import numpy as np

NAME = "bandit-replicable"
TARGETS = {"alg1_aggregated_vs_per_round": (">=", 50.0)}


def _instance(k: int):
    from iclr25.core.bandit_replicable.environments import k_armed

    return k_armed(k=k, horizon=10, instance="random", rng=np.random.default_rng(2025))


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def plain_ucb1(means: list[float], horizon: int, rng: random.Random) -> float:
    """UCB1 for one execution, the obvious way: lists, math, random.random."""
    k = len(means)
    counts, sums = [0] * k, [0.0] * k
    best, regret = max(means), 0.0
    for t in range(horizon):
        if t < k:
            arm = t
        else:
            arm = max(
                range(k), key=lambda i: sums[i] / counts[i] + math.sqrt(2 * math.log(t) / counts[i])
            )
        reward = 1.0 if rng.random() < means[arm] else 0.0
        counts[arm] += 1
        sums[arm] += reward
        regret += best - means[arm]
    return regret


def _alg1(quick: bool) -> tuple[dict, dict]:
    from iclr25.core.bandit_replicable.list_2k import List2k
    from iclr25.core.bandit_replicable.schedule import simulate_aggregated, simulate_per_round

    env = _instance(10)
    big = (2_000, 100_000) if quick else (10_000, 1_000_000)
    small = (200, 20_000) if quick else (1_000, 100_000)
    ours, ours_s = _timed(
        lambda: simulate_aggregated(List2k(0.05), env, big[1], big[0], np.random.default_rng(0))
    )
    peer, peer_s = _timed(
        lambda: simulate_per_round(List2k(0.05), env, small[1], small[0], np.random.default_rng(1))
    )
    check = simulate_aggregated(List2k(0.05), env, small[1], small[0], np.random.default_rng(2))
    ours_ns = 1e9 * ours_s / (big[0] * big[1])
    peer_ns = 1e9 * peer_s / (small[0] * small[1])
    details = {
        "ours": {
            "runs": big[0],
            "horizon": big[1],
            "seconds": ours_s,
            "ns_per_run_round": ours_ns,
            "mean_regret": float(ours.regret.mean()),
        },
        "peer_per_round": {
            "runs": small[0],
            "horizon": small[1],
            "seconds": peer_s,
            "ns_per_run_round": peer_ns,
            "mean_regret": float(peer.regret.mean()),
        },
        "ours_at_peer_size_mean_regret": float(check.regret.mean()),
    }
    return {"alg1_aggregated_vs_per_round": peer_ns / ours_ns}, details


def _ucb1(quick: bool) -> tuple[dict, dict]:
    from iclr25.core.bandit_replicable.sequential import simulate_sequential
    from iclr25.core.bandit_replicable.ucb1 import Ucb1

    env = _instance(10)
    ours_size = (2_000, 5_000) if quick else (10_000, 20_000)
    peer_size = (5, 5_000) if quick else (20, 100_000)
    ours, ours_s = _timed(
        lambda: simulate_sequential(Ucb1(), env, ours_size[1], np.arange(ours_size[0]), seed=0)
    )
    rng = random.Random(0)
    means = env.means.tolist()
    peer, peer_s = _timed(
        lambda: [plain_ucb1(means, peer_size[1], rng) for _ in range(peer_size[0])]
    )
    same = simulate_sequential(Ucb1(), env, peer_size[1], np.arange(200), seed=1)
    ours_ns = 1e9 * ours_s / (ours_size[0] * ours_size[1])
    peer_ns = 1e9 * peer_s / (peer_size[0] * peer_size[1])
    details = {
        "ours": {
            "runs": ours_size[0],
            "horizon": ours_size[1],
            "seconds": ours_s,
            "ns_per_run_round": ours_ns,
            "mean_regret": float(ours.regret.mean()),
        },
        "peer_python_loop": {
            "runs": peer_size[0],
            "horizon": peer_size[1],
            "seconds": peer_s,
            "ns_per_run_round": peer_ns,
            "mean_regret": float(np.mean(peer)),
        },
        "ours_at_peer_horizon_mean_regret": float(same.regret.mean()),
    }
    return {"ucb1_vectorised_vs_python_loop": peer_ns / ours_ns}, details


def run(quick: bool = False) -> dict:
    ratios, details = {}, {}
    for name, part in (("alg1", _alg1), ("ucb1", _ucb1)):
        r, d = part(quick)
        ratios.update(r)
        details[name] = d
    return {"ratios": ratios, "details": details}

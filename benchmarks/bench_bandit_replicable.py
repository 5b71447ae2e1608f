"""bandit-replicable: the aggregated phase simulation and the vectorised UCB1, against peers.

Both comparisons solve the *same* problem on both sides (same algorithm, instance, number
of executions and horizon), timed interleaved by the harness (``report.time``):

1. Alg. 1 (list-2k), k = 10, 500 executions × T = 10^5 (quick: 100 × 2·10^4): ours draws
   one binomial sum per arm and phase (``simulate_aggregated``); the peer is the plain
   vectorised per-round simulation of the same algorithm object (one reward per round,
   all executions at once — what a researcher writes first; ``simulate_per_round``).
   Target ≥ 50×: below that the aggregated engine would not justify its complexity.
   Ours alone at 10,000 × 10^6 is reported as a figure (the peer cannot run that size).
2. UCB1, k = 10, 200 executions × T = 5,000 (quick: 50 × 2,000): our per-round path
   vectorised over executions (numpy, counter RNG) against the plainest correct Python
   loop (one execution at a time, ``random.random``). Target ≥ 10×: vectorising over
   executions is the point of the sequential simulator.

Correctness beside each timing: both sides' regret distributions (fixed seeds, same
sizes) must pass a two-sample Kolmogorov–Smirnov test (p > 0.001); otherwise the ratio is
reported as *not comparable*. The interval of each ratio is a bootstrap 95% interval of
the median of the per-round paired ratios (rounds are interleaved, so pairs share load).
"""

from __future__ import annotations

import math
import random

import numpy as np

from benchmarks.harness import Report, Target

NAME = "bandit-replicable"
TARGETS = {
    "alg1_aggregated_vs_per_round": Target(
        ">=", 50.0, "the aggregated engine must beat the obvious per-round simulation by a lot"
    ),
    "ucb1_vectorised_vs_python_loop": Target(
        ">=", 10.0, "vectorising over executions is the point of the sequential simulator"
    ),
}


def _instance(k: int):
    from iclr25.core.bandit_replicable.environments import k_armed

    return k_armed(k=k, horizon=10, instance="random", rng=np.random.default_rng(2025))


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


def _same_distribution(ours: np.ndarray, peer: np.ndarray) -> tuple[bool, float]:
    from scipy import stats

    p = float(stats.ks_2samp(ours, peer).pvalue)
    return p > 1e-3, p


def _alg1(report: Report) -> None:
    from iclr25.core.bandit_replicable.list_2k import List2k
    from iclr25.core.bandit_replicable.schedule import simulate_aggregated, simulate_per_round

    env = _instance(10)
    runs, horizon = (100, 20_000) if report.quick else (500, 100_000)

    def ours():
        return simulate_aggregated(List2k(0.05), env, horizon, runs, np.random.default_rng(0))

    def peer():
        return simulate_per_round(List2k(0.05), env, horizon, runs, np.random.default_rng(1))

    timed = report.time("alg1", {"ours": ours, "peer": peer})
    regret_ours, regret_peer = ours().regret, peer().regret
    same, p = _same_distribution(regret_ours, regret_peer)
    report.check(
        "alg1_aggregated_vs_per_round",
        timed.ratio("peer", "ours"),
        comparable=same,
        interval=timed.ratio_interval("peer", "ours"),
        note=f"{runs} executions × T = {horizon:,}, k = 10; regret KS p = {p:.3g}",
    )
    report.figure(
        "alg1_mean_regret", {"ours": float(regret_ours.mean()), "peer": float(regret_peer.mean())}
    )
    big_runs, big_horizon = (2_000, 10**5) if report.quick else (10_000, 10**6)
    big = report.time(
        "alg1_large",
        {
            "ours": lambda: simulate_aggregated(
                List2k(0.05), env, big_horizon, big_runs, np.random.default_rng(2)
            )
        },
    )
    report.figure(
        "alg1_large_seconds",
        {"runs": big_runs, "horizon": big_horizon, "median_s": big.seconds("ours")},
    )


def _ucb1(report: Report) -> None:
    from iclr25.core.bandit_replicable.sequential import simulate_sequential
    from iclr25.core.bandit_replicable.ucb1 import Ucb1

    env = _instance(10)
    means = env.means.tolist()
    runs, horizon = (50, 2_000) if report.quick else (200, 5_000)

    def ours():
        return simulate_sequential(Ucb1(), env, horizon, np.arange(runs), seed=0)

    def peer():
        rng = random.Random(0)
        return np.array([plain_ucb1(means, horizon, rng) for _ in range(runs)])

    timed = report.time("ucb1", {"ours": ours, "peer": peer})
    regret_ours, regret_peer = ours().regret, peer()
    same, p = _same_distribution(regret_ours, regret_peer)
    report.check(
        "ucb1_vectorised_vs_python_loop",
        timed.ratio("peer", "ours"),
        comparable=same,
        interval=timed.ratio_interval("peer", "ours"),
        note=f"{runs} executions × T = {horizon:,}, k = 10; regret KS p = {p:.3g}",
    )
    report.figure(
        "ucb1_mean_regret", {"ours": float(regret_ours.mean()), "peer": float(regret_peer.mean())}
    )


def run(report: Report) -> None:
    _alg1(report)
    _ucb1(report)

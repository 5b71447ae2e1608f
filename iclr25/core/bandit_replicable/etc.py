"""Explore-then-commit: the (k, 0)-list replicable algorithm with O(T^{2/3}) regret.

Paper: Chen et al., ICLR 2025 — the (k, 0)-list replicable algorithm that shows the lower
bound (no (k-1, δ)-list replicable algorithm has o(T) regret) is tight in the list size.

Algorithm: play every arm ``m`` times in round-robin (index order), then commit to the
empirical best arm (ties → lowest index) for the remaining T - mk rounds.

Guarantee (list size): the exploration block is the same in every execution, and the rest
of the trace is fixed by the committed arm, so at most k traces exist — with probability
1, hence (k, 0)-list replicable.

Regret: m Σ_i Δ_i + (T - mk) Σ_i Δ_i P(commit to i). With m = ⌈(T/k)^{2/3}⌉ the worst
case over instances is O(k^{1/3} T^{2/3} √log) (Lattimore & Szepesvári, Thm 6.1 and
exercise 6.5), the T^{2/3} of the paper's table. :func:`expected_regret` evaluates the
expectation exactly (Bernoulli: binomial sums; Gaussian: one numerical integral).

Symbols: m → ``explore_per_arm``, k → ``K`` (number of arms), T → ``horizon``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.schedule import RoundRobin


def explore_per_arm(horizon: int, k: int) -> int:
    """m = ⌈(T/k)^{2/3}⌉, capped at ⌊T/k⌋ (every arm at least once)."""
    return int(min(horizon // k, max(1, int(np.ceil((horizon / k) ** (2.0 / 3.0))))))


@dataclass
class EtcState:
    horizon: int
    k: int
    m: int  # explorations per arm
    committed: np.ndarray  # (runs,) int64, -1 before the decision


class ExploreThenCommit:
    """ETC; with ``allowed`` = k - 1 it may only commit to arms 0..k-2 — a (k-1, 0)-list
    replicable algorithm, the subject of the paper's lower bound (see :mod:`.lower_bound`)."""

    name = "etc"

    def __init__(self, allowed: int | None = None):
        self.allowed = allowed  # commit only to arms [0, allowed); None: every arm

    def init(self, env, horizon, runs, rng) -> EtcState:
        m = explore_per_arm(horizon, env.k)
        return EtcState(horizon, env.k, m, np.full(runs, -1, np.int64))

    def segment(self, state: EtcState, index: int):
        runs, k = state.committed.shape[0], state.k
        if index == 0:
            active = np.ones((runs, k), bool)
            return RoundRobin(active, np.full(runs, state.m * k, np.int64))
        active = np.zeros((runs, k), bool)
        active[np.arange(runs), np.maximum(state.committed, 0)] = True
        return RoundRobin(active, np.full(runs, state.horizon - state.m * k, np.int64))

    def decide(self, state: EtcState, index, sums, counts, completed) -> None:
        if index == 0:
            means = sums / np.maximum(counts, 1)
            if self.allowed is not None:
                means = means[:, : self.allowed]
            best = np.argmax(means, axis=1)  # first max: lowest index
            state.committed = np.where(completed, best, state.committed)


def commit_probabilities(means: np.ndarray, m: int, noise: str, sigma: float) -> np.ndarray:
    """P(commit to arm i) after m pulls of each arm, ties to the lowest index: (k,)."""
    from scipy import integrate, stats

    k = means.shape[0]
    if noise == "bernoulli":
        support = np.arange(m + 1)
        pmf = stats.binom.pmf(support[None, :], m, means[:, None])  # (k, m+1)
        cdf = np.cumsum(pmf, axis=1)  # P(S_j ≤ s)
        below = cdf - pmf  # P(S_j < s)
        probs = np.empty(k)
        for i in range(k):
            factor = np.prod(below[:i], axis=0) * np.prod(cdf[i + 1 :], axis=0)
            probs[i] = float((pmf[i] * factor).sum())
        return probs
    scale = sigma / np.sqrt(m)  # sd of an empirical mean
    probs = np.empty(k)
    for i in range(k):
        others = np.delete(means, i)

        def density(x, i=i, others=others):
            return stats.norm.pdf(x, means[i], scale) * np.prod(stats.norm.cdf(x, others, scale))

        lo, hi = means.min() - 12 * scale, means.max() + 12 * scale
        probs[i] = integrate.quad(density, lo, hi, limit=200, points=list(means))[0]
    return probs


def expected_regret(means: np.ndarray, horizon: int, noise: str = "bernoulli", sigma=1.0):
    """E[pseudo-regret] of ETC with m = :func:`explore_per_arm` — exact (quadrature for
    Gaussian rewards)."""
    k = means.shape[0]
    m = explore_per_arm(horizon, k)
    gaps = means.max() - means
    probs = commit_probabilities(means, m, noise, sigma)
    return float(m * gaps.sum() + (horizon - m * k) * (probs @ gaps))

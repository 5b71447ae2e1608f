"""The per-round simulator of fully sequential algorithms (UCB1, Thompson sampling).

These algorithms change their mind every round, so nothing can be aggregated: the CPU path
steps all executions one round at a time (vectorised over executions, numpy or cupy via
``xp``); the CUDA path (``iclr25/gpu/kernels/bandit_sequential``) runs one thread per
execution. Both draw the counter-based numbers of :mod:`iclr25.counter_rng`, so an execution's
rewards depend only on (seed, execution index, round), not on the device or on chunking.

A *rule* supplies ``choose(t, sums, counts, keys, k, xp) -> arms`` for round t (0-based,
t rounds already played), drawing its internal randomness from streams 1.. of ``keys``.
Stream 0 of each round is the reward. With ``shared_pairs`` the executions 2i and 2i+1
draw their internal randomness from execution 2i's key (their rewards stay independent).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.traces import finish_roll_hash, roll_hash
from iclr25.counter_rng import run_keys, uniforms


@dataclass
class SequentialOutcome:
    pulls: np.ndarray  # (runs, k) int64
    regret: np.ndarray  # (runs,) pseudo-regret
    keys: np.ndarray  # (runs, 2) uint64 rolling-hash trace keys
    curve: np.ndarray  # (C,) summed regret at the checkpoints
    arms: np.ndarray | None = None  # (runs, T) full sequences when recorded


def normal_ppf(xp) -> Callable:
    """The standard normal quantile for numpy or cupy arrays."""
    if xp is np:
        from scipy.special import ndtri
    else:  # pragma: no cover - needs a GPU
        from cupyx.scipy.special import ndtri
    return ndtri


def draw_reward(env_noise: str, sigma: float, mu, u, ppf):
    """Bernoulli(μ) as u < μ, N(μ, σ²) as μ + σ Φ^-1(u): one uniform per reward."""
    if env_noise == "bernoulli":
        return (u < mu).astype(mu.dtype)
    return mu + sigma * ppf(u)


def simulate_sequential(
    rule,
    env,
    horizon: int,
    run_ids: np.ndarray,
    seed: int,
    checkpoints: np.ndarray | None = None,
    record_arms: bool = False,
    xp=np,
    on_progress: Callable[[int], None] | None = None,
    shared_pairs: bool = False,
) -> SequentialOutcome:
    """Simulate executions ``run_ids`` of ``rule`` for ``horizon`` rounds."""
    k, runs = env.k, int(len(run_ids))
    ppf = normal_ppf(xp)
    means, gaps = xp.asarray(env.means), xp.asarray(env.gaps)
    ids = xp.asarray(run_ids)
    keys = run_keys(seed, ids, xp)
    internal = run_keys(seed, ids - ids % 2, xp) if shared_pairs else keys
    sums = xp.zeros((runs, k))
    counts = xp.zeros((runs, k))
    regret = xp.zeros(runs)
    h1 = xp.zeros(runs, dtype=xp.uint64)
    h2 = xp.zeros(runs, dtype=xp.uint64)
    base = xp.arange(runs) * k
    marks = np.zeros(0, np.int64) if checkpoints is None else np.asarray(checkpoints)
    curve = np.zeros(marks.size)
    arms_played = np.zeros((runs, horizon), np.int32) if record_arms else None
    step = max(1, horizon // 100)
    for t in range(horizon):
        arms = rule.choose(t, sums, counts, internal, k, xp)
        u = uniforms(keys, t * (k + 1), xp)
        reward = draw_reward(env.noise, env.sigma, means[arms], u, ppf)
        flat = base + arms
        sums.reshape(-1)[flat] += reward  # one arm per execution: no repeated index
        counts.reshape(-1)[flat] += 1.0
        regret += gaps[arms]
        h1, h2 = roll_hash(h1, h2, arms, xp)
        if arms_played is not None:
            arms_played[:, t] = _to_numpy(arms)
        for ci in np.flatnonzero(marks == t + 1):
            curve[ci] = float(regret.sum())
        if on_progress is not None and (t + 1) % step == 0:
            on_progress(step)
    return SequentialOutcome(
        pulls=_to_numpy(counts).astype(np.int64),
        regret=_to_numpy(regret),
        keys=_to_numpy(finish_roll_hash(h1, h2, xp)),
        curve=curve,
        arms=arms_played,
    )


def _to_numpy(x) -> np.ndarray:
    return x.get() if hasattr(x, "get") else np.asarray(x)

"""A demonstration of the lower bound: no (k-1, δ)-list replicable algorithm has o(T) regret.

Paper: Chen et al. (ICLR 2025), the lower-bound theorem (its proof, a Sperner / KKM-type
covering argument over instances on the simplex, is not reproduced here). What the tool
shows, on the family of k vertex instances I_j (arm j at 0.5 + Δ/2, the others at
0.5 - Δ/2) plus the centre instance (all arms at 0.5):

1. *Capped ETC*, explore-then-commit that may only commit to arms 1..k-1, plays at most
   k-1 traces on every instance — it is (k-1, 0)-list replicable — and its worst regret
   over the family stays linear: regret/T → Δ (up to exploration) on I_k, for every T.
2. ETC itself (k traces) has regret/T → 0 on every instance of the family.
3. The price of k-1 traces for a sublinear algorithm: at the centre instance, where all
   arms tie, the k-1 most frequent traces of the chosen algorithm cover only a share
   ``top_k_minus_1_share`` of executions; when that is < 1-δ, it is not (k-1, δ)-list
   replicable there. The theorem says some instance of the family always forces this.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.etc import ExploreThenCommit
from iclr25.core.bandit_replicable.schedule import simulate_aggregated
from iclr25.core.bandit_replicable.simulate import SimulationConfig, check_memory, simulate
from iclr25.core.bandit_replicable.traces import trace_counts
from iclr25.errors import UsageError


@dataclass(frozen=True)
class LowerBoundConfig:
    k: int = 3
    gap: float = 0.2  # Δ between the best arm and the rest on a vertex instance
    horizons: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
    runs: int = 500
    delta: float = 0.05
    algo: str = "etc"  # whose trace shares are measured at the centre instance


def family(k: int, gap: float) -> list[ArmsEnvironment]:
    """The k vertex instances I_1..I_k, then the centre (all arms equal)."""
    out = []
    for j in range(k):
        means = np.full(k, 0.5 - gap / 2)
        means[j] = 0.5 + gap / 2
        out.append(ArmsEnvironment(means, "bernoulli", label=f"I_{j + 1}"))
    out.append(ArmsEnvironment(np.full(k, 0.5), "bernoulli", label="centre"))
    return out


def _worst_regret_over_t(algo, instances, horizon, runs, rng) -> tuple[float, str, int]:
    worst, label, traces = -1.0, "", 0
    for env in instances:
        out = simulate_aggregated(algo, env, horizon, runs, rng)
        value = float(out.regret.mean() / horizon)
        traces = max(traces, int(trace_counts(out.keys).size))
        if value > worst:
            worst, label = value, env.label
    return worst, label, traces


def run_lower_bound(config: LowerBoundConfig, seed: int, on_progress=None) -> dict:
    if config.k < 2:
        raise UsageError(f"k = {config.k} arms is too few", "use --k 2 or more")
    if not (0 < config.gap <= 1):
        raise UsageError(f"--gap {config.gap} is outside (0, 1]", "use e.g. --gap 0.2")
    if min(config.horizons) < config.k:
        raise UsageError("a horizon is shorter than k", f"use horizons of at least {config.k}")
    instances = family(config.k, config.gap)
    check_memory(instances[0], SimulationConfig("etc", max(config.horizons), config.runs))
    rng = np.random.default_rng(np.random.SeedSequence(seed & (2**63 - 1), spawn_key=(7,)))
    capped, plain = ExploreThenCommit(allowed=config.k - 1), ExploreThenCommit()
    rows = []
    for horizon in config.horizons:
        c_worst, c_where, c_traces = _worst_regret_over_t(
            capped, instances, horizon, config.runs, rng
        )
        e_worst, e_where, e_traces = _worst_regret_over_t(
            plain, instances, horizon, config.runs, rng
        )
        rows.append(
            {
                "horizon": horizon,
                "capped_worst_regret_over_T": c_worst,
                "capped_worst_instance": c_where,
                "capped_max_traces": c_traces,
                "etc_worst_regret_over_T": e_worst,
                "etc_worst_instance": e_where,
                "etc_max_traces": e_traces,
            }
        )
        if on_progress is not None:
            on_progress(1)
    return {
        "k": config.k,
        "gap": config.gap,
        "rows": rows,
        "capped_list_size": config.k - 1,
        "linear_regret_fraction": rows[-1]["capped_worst_regret_over_T"],
        "centre": _centre_shares(config, instances[-1], seed),
    }


def _centre_shares(config: LowerBoundConfig, centre: ArmsEnvironment, seed: int) -> dict:
    horizon = max(config.horizons)
    sim_config = SimulationConfig(config.algo, horizon, config.runs, config.delta, curve_points=0)
    sim = simulate(centre, sim_config, seed)
    counts = trace_counts(sim.keys)
    share = float(counts[: config.k - 1].sum() / max(counts.sum(), 1))
    return {
        "algorithm": config.algo,
        "horizon": horizon,
        "distinct_traces": int(counts.size),
        "top_k_minus_1_share": share,
        "needed_for_k_minus_1_delta": 1.0 - config.delta,
        "k_minus_1_list_replicable_here": bool(share >= 1.0 - config.delta),
    }

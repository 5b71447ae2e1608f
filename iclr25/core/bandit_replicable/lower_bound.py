"""The lower bound, measured: no (k-1, δ)-list replicable algorithm has o(T) regret.

Paper: Chen et al. (ICLR 2025), the lower-bound theorem. Its proof (a KKM / Sperner-type
covering argument over the instances near the all-equal one) is not reproduced; the tool
measures both halves of what it says, for every algorithm it ships.

**A. Sub-linear algorithms need ≥ k traces somewhere.** For each algorithm, the search of
:mod:`.instances` restricted to *near-tied* instances (every mean within ``max_scale`` of
the others) finds the instance with the most traces covering 1-δ; fresh executions there
give the list size with its one-sided 95% lower bound ℓ̲ (:mod:`.guarantee`). Pass
condition (fixed here, before any run): ℓ̲ ≥ k — then no list of k-1 traces covers 1-δ of
the executions at that instance, at 95% confidence. An algorithm for which the search
finds no such instance *escapes at this size*, and the results say so.

**B. Restricted to k-1 traces, regret is linear.** The restriction, generic for any
algorithm A: fix in advance the list L of A's k-1 most frequent traces on the centre
instance (every arm at 0.5, the most ambiguous one; the list depends on A and T only, not
on the instance being played), and let A|L play A but, when its trace is about to leave
L, follow a trace of L instead (e.g. the one sharing the longest prefix). A|L plays only
traces of L on every instance: it is (k-1, 0)-list replicable. Whatever the redirection
rule, every execution of A|L plays some t ∈ L, so its regret on instance I is at least
min_{t ∈ L} R_I(t) (R_I(t) = Σ_i n_t(i) Δ_i(I), from t's pull counts n_t). We report
that lower bound, worst over the vertex instances I_j (arm j at 0.5 + Δ/2, the others at
0.5 - Δ/2), as regret/T against T, beside A's own worst regret/T (the control, same
instances and budget). For a list fixed in advance this is pigeonhole — each trace plays
at most one arm more than T/2 times, so some arm j is played ≤ T/2 times by every trace
of L and R_{I_j} ≥ ΔT/2 — and part A is the half of the theorem that lets the list depend
on the instance. Pass condition: the restricted regret/T is ≥ Δ/4 at every horizon and
the control's upper 95% bound at the largest horizon lies below it.

Symbols: L → the ``listed`` traces, n_t → ``pulls``, Δ → ``gap``, I_j → ``vertex``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable import instances, registry
from iclr25.core.bandit_replicable.cells import InstanceSpec, run_cells
from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.simulate import (
    SimulationConfig,
    regret_summary,
    run_experiment,
    simulate,
    validate,
)
from iclr25.core.bandit_replicable.traces import partition
from iclr25.errors import UsageError
from iclr25.parallel import Execution, Outcome, derive_seed

COMMAND = "bandit-replicable lower-bound"
RESTRICTED_FLOOR = 0.25  # pass: restricted regret/T ≥ this × Δ at every horizon
CONTRAST_MARGIN = 0.01  # the control must be below the restricted figure by this share
HYPOTHESES = {
    "needs_k_traces": (
        "every sub-linear algorithm needs at least k traces to cover 1-δ of its "
        "executions on some instance near the all-equal one"
    ),
    "restricted_is_linear": (
        "restricted to k-1 traces (a list fixed in advance), every algorithm's worst "
        "regret/T over the vertex instances stays bounded away from 0 as T grows, while "
        "the unrestricted algorithm's falls below it"
    ),
}
PASS_CONDITIONS = {
    "needs_k_traces": "one-sided 95% lower bound on the list size (fresh executions) ≥ k",
    "restricted_is_linear": (
        f"restricted worst regret/T ≥ {RESTRICTED_FLOOR:g}·Δ at every horizon, and the "
        "unrestricted worst regret/T (upper 95% bound) at the largest horizon below it"
    ),
}


@dataclass(frozen=True)
class LowerBoundConfig:
    algos: tuple[str, ...] = ("etc", "list-2k", "list-k-delta", "list-batched", "linear-batched")
    k: int = 3
    gap: float = 0.2  # Δ of the vertex instances (part B)
    horizons: tuple[int, ...] = (1_000, 10_000, 100_000)
    runs: int = 500
    delta: float = 0.05
    batches: int = 3
    max_scale: float = 0.25  # part A: every mean within this of the others
    pilot_runs: int = 200


def vertices(k: int, gap: float) -> list[ArmsEnvironment]:
    """I_1..I_k: arm j at 0.5 + Δ/2, the others at 0.5 - Δ/2."""
    out = []
    for j in range(k):
        means = np.full(k, 0.5 - gap / 2)
        means[j] = 0.5 + gap / 2
        out.append(ArmsEnvironment(means, "bernoulli", label=f"I_{j + 1}"))
    return out


def centre(k: int) -> ArmsEnvironment:
    return ArmsEnvironment(np.full(k, 0.5), "bernoulli", label="centre")


# ---------------------------------------------------------------------------------------
# A. at least k traces on a near-tied instance
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NeedsCell:
    search: instances.SearchConfig
    runs: int


def run_needs_cell(cell: NeedsCell, seed: int) -> dict:
    """Search near-tied instances, then measure the list size on fresh executions."""
    s = cell.search
    found = instances.search_instance(s, derive_seed(seed, "search"))
    spec = InstanceSpec(tuple(found["means"]), s.noise, s.sigma, found["family"])
    config = SimulationConfig(s.algo, s.horizon, cell.runs, s.delta, s.batches, curve_points=0)
    result = run_experiment(spec.environment(), config, derive_seed(seed, "confirm"))
    lower, upper = result["list_size_interval"]
    needs = lower >= s.k
    means = np.asarray(found["means"])
    return {
        "horizon": s.horizon,
        "instance": {**found, "spread": float(means.max() - means.min())},
        "traces_covering_1_minus_delta": result["traces_covering_1_minus_delta"],
        "list_size_interval": [lower, upper],
        "distinct_traces": result["distinct_traces"],
        "regret_over_horizon": result["regret_over_horizon"],
        "verdict": "needs ≥ k traces" if needs else "escapes at this size",
        "passed": needs,
    }


# ---------------------------------------------------------------------------------------
# B. restricted to k-1 traces
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RestrictedCell:
    algo: str
    k: int
    gap: float
    horizon: int
    runs: int
    delta: float
    batches: int


def listed_traces(keys: np.ndarray, pulls: np.ndarray, size: int) -> tuple[np.ndarray, float]:
    """Pull counts (size, k) of the ``size`` most frequent traces (ties: first seen), and
    the share of executions that played one of them."""
    labels = partition(keys)
    counts = np.bincount(labels)
    order = np.lexsort((np.arange(counts.size), -counts))[:size]
    first = np.array([np.flatnonzero(labels == label)[0] for label in order])
    return pulls[first], float(counts[order].sum() / labels.size)


def restricted_regret(listed_pulls: np.ndarray, gap: float, horizon: int) -> np.ndarray:
    """min over listed traces of their regret on each vertex I_j: (k,) = Δ (T - max_t n_t(j))."""
    return gap * (horizon - listed_pulls.max(axis=0))


def run_restricted_cell(cell: RestrictedCell, seed: int) -> dict:
    config = SimulationConfig(
        cell.algo, cell.horizon, cell.runs, cell.delta, cell.batches, curve_points=0
    )
    at_centre = simulate(centre(cell.k), config, derive_seed(seed, "centre"), keep_pulls=True)
    pulls, share = listed_traces(at_centre.keys, at_centre.pulls, cell.k - 1)
    restricted = restricted_regret(pulls, cell.gap, cell.horizon) / cell.horizon  # (k,)
    own = []
    for j, env in enumerate(vertices(cell.k, cell.gap)):
        sim = simulate(env, config, derive_seed(seed, "vertex", j))
        summary = regret_summary(sim.regret)
        own.append((summary["mean_regret"], summary["mean_regret_ci95"]))
    worst = int(np.argmax([mean for mean, _ in own]))
    return {
        "horizon": cell.horizon,
        "listed_traces": int(pulls.shape[0]),
        "listed_share_at_centre": share,
        "restricted_regret_over_T": float(restricted.max()),
        "restricted_worst_instance": f"I_{int(np.argmax(restricted)) + 1}",
        "unrestricted_regret_over_T": own[worst][0] / cell.horizon,
        "unrestricted_regret_over_T_ci95": [v / cell.horizon for v in own[worst][1]],
        "unrestricted_worst_instance": f"I_{worst + 1}",
    }


def restricted_verdict(rows: list[dict], gap: float) -> dict:
    floor = RESTRICTED_FLOOR * gap
    linear = all(r["restricted_regret_over_T"] >= floor for r in rows)
    last = rows[-1]
    # strictly below, beyond float noise: one round-robin trace has exactly the same regret
    margin = CONTRAST_MARGIN * last["restricted_regret_over_T"]
    contrast = (
        last["unrestricted_regret_over_T_ci95"][1] < last["restricted_regret_over_T"] - margin
    )
    if linear and contrast:
        verdict = "linear when restricted; the algorithm itself is below it"
    elif linear:
        verdict = (
            "linear when restricted, but the algorithm's own worst regret/T is not below it "
            "at this size (no contrast)"
        )
    else:
        verdict = "escapes: the restricted regret/T fell below the floor"
    return {"verdict": verdict, "passed": bool(linear and contrast), "floor": floor}


# ---------------------------------------------------------------------------------------
# Both parts
# ---------------------------------------------------------------------------------------
def validate_lower_bound(config: LowerBoundConfig) -> None:
    if config.k < 2:
        raise UsageError(f"k = {config.k} arms is too few", "use --k 2 or more")
    if not (0 < config.gap <= 1):
        raise UsageError(f"--gap {config.gap} is outside (0, 1]", "use e.g. --gap 0.2")
    if not (0 < config.max_scale <= 0.5):
        raise UsageError(
            f"--max-scale {config.max_scale} is outside (0, 0.5]", "use e.g. --max-scale 0.125"
        )
    if config.pilot_runs < 1:
        raise UsageError(
            f"--pilot-runs {config.pilot_runs} must be at least 1", "use e.g. --pilot-runs 200"
        )
    if min(config.horizons) < config.k:
        raise UsageError("a horizon is shorter than k", f"use horizons of at least {config.k}")
    if not config.algos:
        raise UsageError("--algos is empty", f"list some of: {', '.join(registry.NAMES)}")
    for name in config.algos:
        validate(
            SimulationConfig(name, max(config.horizons), config.runs, config.delta, config.batches)
        )


def _tasks(config: LowerBoundConfig, seed: int):
    needs, restricted = [], []
    for name in config.algos:
        search = instances.SearchConfig(
            name,
            config.k,
            max(config.horizons),
            config.pilot_runs,
            config.delta,
            config.batches,
            max_scale=config.max_scale,
            max_spread=config.max_scale,
        )
        needs.append((NeedsCell(search, config.runs), derive_seed(seed, "needs", name)))
        for horizon in config.horizons:
            cell = RestrictedCell(
                name, config.k, config.gap, horizon, config.runs, config.delta, config.batches
            )
            restricted.append((cell, derive_seed(seed, "restricted", name, horizon)))
    return needs, restricted


def run_lower_bound(
    config: LowerBoundConfig, seed: int, execution: Execution | None = None, on_progress=None
) -> tuple[dict, list[Outcome]]:
    validate_lower_bound(config)
    needs, restricted = _tasks(config, seed)
    part_a = run_cells(
        run_needs_cell,
        [c for c, _ in needs],
        [s for _, s in needs],
        execution,
        COMMAND,
        on_progress,
        [f"{c.search.algo} part A" for c, _ in needs],
    )
    part_b = run_cells(
        run_restricted_cell,
        [c for c, _ in restricted],
        [s for _, s in restricted],
        execution,
        COMMAND,
        on_progress,
        [f"{c.algo} T={c.horizon}" for c, _ in restricted],
    )
    per_algo = len(config.horizons)
    algorithms = []
    for i, name in enumerate(config.algos):
        rows = part_b.results[i * per_algo : (i + 1) * per_algo]
        algorithms.append(
            {
                "algorithm": name,
                "needs_k_traces": part_a.results[i],
                "restricted": {"rows": rows, **restricted_verdict(rows, config.gap)},
            }
        )
    return {
        "k": config.k,
        "gap": config.gap,
        "delta": config.delta,
        "horizons": list(config.horizons),
        "runs": config.runs,
        "max_scale": config.max_scale,
        "hypotheses": HYPOTHESES,
        "pass_conditions": PASS_CONDITIONS,
        "pigeonhole_floor": config.gap / 2,
        "algorithms": algorithms,
        "escapes": escapes(algorithms, config.gap),
    }, [part_a, part_b]


def escapes(algorithms: list[dict], gap: float) -> list[str]:
    """Plain sentences for every algorithm that escaped either half at this size."""
    out = []
    for a in algorithms:
        if not a["needs_k_traces"]["passed"]:
            lo = a["needs_k_traces"]["list_size_interval"][0]
            line = (
                f"{a['algorithm']}: no near-tied instance needing ≥ k traces was found "
                f"(best lower bound {lo}) at this horizon and run count"
            )
            last = a["restricted"]["rows"][-1]
            if last["unrestricted_regret_over_T"] >= RESTRICTED_FLOOR * gap:
                line += (
                    f"; its own worst regret/T at T = {last['horizon']:,} is "
                    f"{last['unrestricted_regret_over_T']:.3g}, not sub-linear at this size, so "
                    "the theorem asks nothing of it here"
                )
            out.append(line)
        if not a["restricted"]["passed"]:
            out.append(f"{a['algorithm']}: {a['restricted']['verdict']}")
    return out

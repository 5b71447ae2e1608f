"""N independent executions of one algorithm on one instance, and what they show.

:func:`run_experiment` simulates ``runs`` executions (fresh rewards and fresh internal
randomness each) in fixed-size chunks, then reports the regret (mean with a 95% interval)
and the list statistics the paper's definition is about. Executions are seeded per
chunk (phase engine: ``SeedSequence(seed, spawn_key=(stream, chunk))``) or per execution
(sequential algorithms: the counter RNG), so results depend only on the seed and the
configuration — never on memory, workers or device.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.bandit_replicable import guarantee, registry
from iclr25.core.bandit_replicable.environments import BallEnvironment
from iclr25.core.bandit_replicable.linear_batched import simulate_ball
from iclr25.core.bandit_replicable.schedule import simulate_aggregated
from iclr25.core.bandit_replicable.sequential import simulate_sequential
from iclr25.core.bandit_replicable.traces import list_statistics
from iclr25.errors import UsageError

#: executions simulated together; fixed so results never depend on memory, and even so
#: that the pairs (2i, 2i+1) of --shared-randomness never straddle two chunks
CHUNK_RUNS = 20_000
MEMORY_SHARE = 0.8  # of the available memory a run may plan to use


@dataclass(frozen=True)
class SimulationConfig:
    algo: str
    horizon: int
    runs: int = 1000
    delta: float = 0.05  # δ of the (ℓ, δ) guarantee and of the confidence bounds
    batches: int = 3  # B for list-batched / linear-batched
    curve_points: int = 40  # log-spaced rounds at which the mean regret curve is recorded
    device: str = "cpu"
    stream: int = 0  # distinguishes experiments that share a seed (sweep cells)
    shared_randomness: bool = False  # executions 2i, 2i+1 share internal bits (ρ-replicability)


@dataclass
class Simulation:
    regret: np.ndarray  # (runs,) pseudo-regret per execution
    keys: np.ndarray  # (runs, 2) uint64 trace keys
    curve_t: np.ndarray  # (C,) rounds
    curve_mean: np.ndarray  # (C,) mean regret after that many rounds
    pulls: np.ndarray | None = None  # (runs, k) pulls per arm, when asked for (keep_pulls)


def validate(config: SimulationConfig) -> registry.AlgorithmInfo:
    info = registry.get(config.algo)
    if not (0.0 < config.delta < 1.0):
        raise UsageError(f"--delta {config.delta} is outside (0, 1)", "use e.g. --delta 0.05")
    if config.runs < 1:
        raise UsageError(f"--runs {config.runs} must be at least 1", "use e.g. --runs 1000")
    if config.batches < 2:
        raise UsageError(
            f"--batches {config.batches} must be at least 2", "use --batches 2 or more"
        )
    return info


def checkpoints(horizon: int, points: int, first: int = 1) -> np.ndarray:
    if points <= 0:
        return np.zeros(0, np.int64)
    grid = np.geomspace(max(1, min(first, horizon)), horizon, points)
    return np.unique(np.round(grid).astype(np.int64))


# ---------------------------------------------------------------------------------------
# Memory guard
# ---------------------------------------------------------------------------------------
def available_memory_bytes() -> int:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def memory_needed_bytes(env, config: SimulationConfig) -> int:
    """Peak bytes: 24 per execution kept (regret + key) plus one chunk's working arrays."""
    chunk = min(config.runs, CHUNK_RUNS)
    if isinstance(env, BallEnvironment):
        d = env.dim
        per_run = 8 * (6 * d + 3 * d * (2 * d + 1) + config.batches * d)
    else:
        k = env.k
        per_run = 8 * 16 * k
        if config.algo == "list-batched":
            per_run += 8 * 3 * k * (k + 1)
        if config.algo == "linear-batched":
            d = env.features.shape[1] if env.features is not None else k
            per_run += 8 * (4 * k + 3 * d * (2 * d + 1))
    return 24 * config.runs + chunk * per_run


def check_memory(env, config: SimulationConfig, available: int | None = None) -> None:
    available = available_memory_bytes() if available is None else available
    need = memory_needed_bytes(env, config)
    allowed = MEMORY_SHARE * available
    if need <= allowed:
        return
    fixed = memory_needed_bytes(env, SimulationConfig(**{**config.__dict__, "runs": 1})) - 24
    most = max(0, int((allowed - fixed) // 24))
    raise UsageError(
        f"--runs {config.runs:,} needs about {_gib(need)} of memory and "
        f"{_gib(available)} is available",
        f"use --runs {most:,} or fewer",
    )


def _gib(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB"


# ---------------------------------------------------------------------------------------
# Simulation
# ---------------------------------------------------------------------------------------
class ChunkProgress:
    """Reports a chunk's progress in executions (fractions of ``executions``) as its
    rounds advance: the sequential simulators add rounds, the phase engine reports the
    rounds every execution has completed."""

    def __init__(self, report: Callable | None, executions: int, horizon: int):
        self.report, self.executions, self.horizon = report, executions, horizon
        self.rounds = self.shown = 0.0

    def add_rounds(self, rounds: int) -> None:
        self.at_round(0, self.rounds + rounds)

    def at_round(self, index: int, rounds: float) -> None:
        self.rounds = min(float(rounds), self.horizon)
        share = self.executions * self.rounds / self.horizon
        if self.report is not None and share > self.shown:
            self.report(share - self.shown)
            self.shown = share

    def finish(self) -> None:
        self.at_round(0, self.horizon)


def simulate(
    env,
    config: SimulationConfig,
    seed: int,
    on_progress: Callable | None = None,
    keep_pulls: bool = False,
):
    """All executions of ``config.algo`` on ``env``: a :class:`Simulation` (with the pulls
    per arm when ``keep_pulls``; finite action sets only)."""
    info = validate(config)
    _check_environment(info, env)
    check_memory(env, config)
    marks = checkpoints(config.horizon, config.curve_points)
    regrets, keys, pulls = [], [], []
    curve = np.zeros(marks.size)
    for chunk, start in enumerate(range(0, config.runs, CHUNK_RUNS)):
        ids = np.arange(start, min(config.runs, start + CHUNK_RUNS))
        progress = ChunkProgress(on_progress, ids.size, config.horizon)
        out = _simulate_chunk(info, env, config, seed, chunk, ids, marks, progress)
        progress.finish()
        regrets.append(out.regret)
        keys.append(out.keys)
        if keep_pulls:
            pulls.append(out.pulls)
        curve += out.curve
    return Simulation(
        np.concatenate(regrets),
        np.concatenate(keys),
        marks,
        curve / config.runs,
        np.concatenate(pulls) if keep_pulls else None,
    )


def _check_environment(info, env) -> None:
    if isinstance(env, BallEnvironment) and info.name != "linear-batched":
        raise UsageError(
            f"{info.name} needs a finite set of arms, not the unit ball",
            "use --algo linear-batched on the ball, or give --arms N",
        )


def _chunk_rng(seed: int, stream: int, chunk: int) -> np.random.Generator:
    sequence = np.random.SeedSequence(seed & (2**63 - 1), spawn_key=(stream, chunk))
    return np.random.default_rng(sequence)


@dataclass
class _ChunkOut:
    regret: np.ndarray  # (n,)
    keys: np.ndarray  # (n, 2)
    curve: np.ndarray  # (C,) summed regret
    pulls: np.ndarray | None  # (n, k), None on the unit ball


def _simulate_chunk(info, env, config, seed, chunk, ids, marks, progress: ChunkProgress):
    if isinstance(env, BallEnvironment):
        rng = _chunk_rng(seed, config.stream, chunk)
        out = simulate_ball(env, config.horizon, ids.size, rng, config.delta, config.batches, marks)
        return _ChunkOut(out.regret, out.keys, out.curve, None)
    if info.kind == "sequential":
        prior = 1.0 if env.noise == "bernoulli" else env.sigma
        stream_seed = seed + 1_000_003 * config.stream
        if config.device == "cuda" and env.k <= 64 and not config.shared_randomness:
            from iclr25.gpu.kernels.bandit_sequential import run_sequential_cuda

            out = run_sequential_cuda(
                config.algo, env, config.horizon, ids, stream_seed, marks, prior
            )
        else:
            rule = registry.sequential_rule(config.algo, prior)
            out = simulate_sequential(
                rule,
                env,
                config.horizon,
                ids,
                stream_seed,
                marks,
                on_progress=progress.add_rounds,
                shared_pairs=config.shared_randomness,
            )
        return _ChunkOut(out.regret, out.keys, out.curve, out.pulls)
    algo = registry.build(config.algo, config.delta, config.batches, config.shared_randomness)
    rng = _chunk_rng(seed, config.stream, chunk)
    out = simulate_aggregated(
        algo, env, config.horizon, ids.size, rng, marks, on_segment=progress.at_round
    )
    return _ChunkOut(out.regret, out.keys, out.curve, out.pulls)


# ---------------------------------------------------------------------------------------
# What the executions show
# ---------------------------------------------------------------------------------------
def problem_of(env, config: SimulationConfig) -> registry.Problem:
    if isinstance(env, BallEnvironment):
        return registry.Problem(k=0, dim=env.dim, delta=config.delta, batches=config.batches)
    dim = env.features.shape[1] if env.features is not None else env.k
    return registry.Problem(k=env.k, dim=dim, delta=config.delta, batches=config.batches)


def regret_summary(regret: np.ndarray) -> dict:
    n = regret.size
    mean = float(regret.mean())
    sd = float(regret.std(ddof=1)) if n > 1 else 0.0
    half = 1.959963984540054 * sd / np.sqrt(n)  # normal 95% interval for the mean
    return {
        "mean_regret": mean,
        "mean_regret_ci95": [mean - half, mean + half],
        "regret_sd": sd,
        "regret_median": float(np.median(regret)),
        "regret_p95": float(np.quantile(regret, 0.95)),
    }


def pair_agreement(keys: np.ndarray) -> dict:
    """Share of the execution pairs (2i, 2i+1) that played the same trace, with a Wilson
    95% interval. With shared internal bits it estimates 1 - ρ (ρ-replicability)."""
    pairs = keys.shape[0] // 2
    if pairs == 0:
        return {"pair_agreement": None, "pair_agreement_ci95": None}
    same = (keys[0 : 2 * pairs : 2] == keys[1 : 2 * pairs : 2]).all(axis=1)
    p, z = float(same.mean()), 1.959963984540054
    centre = (p + z * z / (2 * pairs)) / (1 + z * z / pairs)
    half = z * np.sqrt(p * (1 - p) / pairs + z * z / (4 * pairs**2)) / (1 + z * z / pairs)
    return {
        "pair_agreement": p,
        "pair_agreement_ci95": [max(0.0, centre - half), min(1.0, centre + half)],
    }


def _list_check(info, problem, keys, config: SimulationConfig) -> dict:
    """The list claim (fresh bits only), tested by :mod:`.guarantee`, and the list-size
    bounds of every algorithm (baselines too: how long a list they would need)."""
    if config.shared_randomness:  # list claims are about fresh internal bits
        return {"bound": None, "check": None, "bounds": None}
    bound = info.list_bound(problem) if info.list_bound else None
    bounds = guarantee.list_size_bounds(keys, config.delta)
    check = None
    if bound is not None:
        claimed = info.list_delta(problem)
        check = guarantee.check_guarantee(keys, bound, claimed, claimed or config.delta)
    return {"bound": bound, "check": check, "bounds": bounds}


def _rho_check(info, problem, agreement: dict, shared: bool) -> dict:
    """The ρ claim (shared bits only), checked."""
    rho = info.rho_bound(problem) if info.rho_bound else None
    held = None
    if rho is not None and shared and agreement["pair_agreement"] is not None:
        held = bool(agreement["pair_agreement"] >= 1.0 - rho)
    return {"rho_bound": rho, "rho_held": held}


_HELD = {"held": True, "violated": False, "untestable": None}


def _guarantee_fields(listed: dict) -> dict:
    check, bounds = listed["check"], listed["bounds"]
    return {
        "list_bound": listed["bound"],
        "guarantee": check.outcome if check else None,
        "guarantee_held": _HELD[check.outcome] if check else None,
        "guarantee_check": check.as_dict() if check else None,
        "list_size_interval": [bounds.lower, bounds.upper] if bounds else None,
    }


def regret_bound_check(env, config: SimulationConfig, regret: np.ndarray) -> dict | None:
    """Alg. 1 / Alg. 2 / the ρ-replicable baseline: their high-probability regret bound at
    these constants against the measured regret quantile of the same probability."""
    if config.algo not in ("list-2k", "list-k-delta", "replicable-elimination"):
        return None
    if isinstance(env, BallEnvironment) or env.features is not None:
        return None
    algo = registry.build(config.algo, config.delta, config.batches)
    out = algo.regret_bound(env, config.horizon)
    measured = float(np.quantile(regret, out["probability"]))
    out["measured_quantile"] = measured
    out["within"] = bool(measured <= out["bound"] * (1 + 1e-12))
    return out


def summarize(sim: Simulation, env, config: SimulationConfig) -> dict:
    info = registry.get(config.algo)
    problem = problem_of(env, config)
    stats = list_statistics(sim.keys, config.delta, top=10)
    agreement = pair_agreement(sim.keys)
    listed = _list_check(info, problem, sim.keys, config)
    rho = _rho_check(info, problem, agreement, config.shared_randomness)
    return {
        "algorithm": info.name,
        "title": info.title,
        "guarantee_claim": info.guarantee,
        "claimed_regret": info.claimed_regret,
        "horizon": config.horizon,
        "runs": config.runs,
        "delta": config.delta,
        "batches": config.batches if info.name in ("list-batched", "linear-batched") else None,
        **regret_summary(sim.regret),
        "regret_over_horizon": float(sim.regret.mean() / config.horizon),
        "regret_bound": regret_bound_check(env, config, sim.regret),
        "distinct_traces": stats.distinct_traces,
        "traces_covering_1_minus_delta": stats.traces_covering,
        **_guarantee_fields(listed),
        "shared_randomness": config.shared_randomness,
        **agreement,
        **rho,
        "top_trace_shares": stats.top_shares,
        "regret_curve": {"t": sim.curve_t.tolist(), "mean_regret": sim.curve_mean.tolist()},
        "instance": env.describe(),
    }


def run_experiment(env, config: SimulationConfig, seed: int, on_progress=None) -> dict:
    return summarize(simulate(env, config, seed, on_progress), env, config)

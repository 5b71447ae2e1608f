"""Regret against the horizon (with a fitted exponent), and several algorithms side by side.

``sweep``: for log-spaced horizons T, the mean regret — by default the *worst case* over
a log grid of gaps on the two-level family (k-1 arms at 0.5 - Δ/2, one at 0.5 + Δ/2),
which is what a worst-case bound Õ(T^e) describes; a fixed instance would show log T
growth for any good algorithm. The exponent is the least-squares slope of log regret on
log T, with a 95% interval, printed beside the claimed exponent.

``compare``: several algorithms on one instance.

Independent cells (a horizon and a gap, or an algorithm) go to ``workers`` local
processes; each cell has its own seed stream, so results do not depend on ``workers``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from iclr25.core.bandit_replicable import registry
from iclr25.core.bandit_replicable.environments import ArmsEnvironment, two_level
from iclr25.core.bandit_replicable.list_batched import batches_for_exponent
from iclr25.core.bandit_replicable.simulate import SimulationConfig, run_experiment, validate
from iclr25.errors import UsageError


def map_cells(fn: Callable, tasks: Sequence, workers: int, on_done: Callable | None = None):
    """[fn(*task) for task in tasks], over ``workers`` processes when workers > 1.

    The workers ignore SIGINT and are terminated when the parent stops (Ctrl-C, SIGTERM,
    an error), so an interrupted sweep does not wait for the cells still queued."""
    if workers < 1:
        raise UsageError(f"--workers {workers} must be at least 1", "use --workers 1 or more")
    results = []
    if workers == 1 or len(tasks) <= 1:
        for task in tasks:
            results.append(fn(*task))
            if on_done is not None:
                on_done(1)
        return results
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # no fork of a threaded parent
    with context.Pool(min(workers, len(tasks)), initializer=_ignore_sigint) as pool:
        for result in pool.imap(_call, [(fn, task) for task in tasks]):  # in task order
            results.append(result)
            if on_done is not None:
                on_done(1)
    return results  # leaving the block terminates the pool, also on an exception


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(job):
    fn, task = job
    return fn(*task)


def _cell(env, config: SimulationConfig, seed: int) -> dict:
    return run_experiment(env, config, seed)


# ---------------------------------------------------------------------------------------
# Sweep over horizons
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepConfig:
    algo: str
    horizons: tuple[int, ...]
    runs: int = 500
    delta: float = 0.05
    batches: int = 3
    k: int = 5
    noise: str = "bernoulli"
    sigma: float = 1.0
    worst_case: bool = True  # max over a gap grid (the two-level family) at each horizon
    gap_points: int = 8  # size of that gap grid
    workers: int = 1


def horizon_grid(t_min: int, t_max: int, points: int) -> tuple[int, ...]:
    if t_min < 2 or t_max <= t_min or points < 2:
        raise UsageError(
            f"horizons {t_min}..{t_max} with {points} points do not make a sweep",
            "use e.g. --t-min 1000 --t-max 1000000 --points 6",
        )
    return tuple(int(t) for t in np.unique(np.round(np.geomspace(t_min, t_max, points))))


def gap_grid(k: int, horizon: int, points: int) -> np.ndarray:
    """Δ from ½√(k/T) (below which no algorithm can tell arms apart) to 0.8."""
    low = min(0.5 * np.sqrt(k / horizon), 0.4)
    return np.geomspace(low, 0.8, points)


def fit_exponent(horizons: Sequence[int], regrets: Sequence[float]) -> dict:
    """Slope of log regret on log T with a 95% interval (t distribution, n-2 df)."""
    from scipy import stats

    t = np.asarray(horizons, np.float64)
    r = np.asarray(regrets, np.float64)
    ok = r > 0
    if ok.sum() < 2:
        return {"fitted_exponent": None, "fitted_exponent_ci95": None}
    fit = stats.linregress(np.log(t[ok]), np.log(r[ok]))
    if ok.sum() < 3:
        return {"fitted_exponent": float(fit.slope), "fitted_exponent_ci95": None}
    half = stats.t.ppf(0.975, ok.sum() - 2) * fit.stderr
    return {
        "fitted_exponent": float(fit.slope),
        "fitted_exponent_ci95": [float(fit.slope - half), float(fit.slope + half)],
    }


def sweep_tasks(config: SweepConfig, env, seed: int) -> list[tuple]:
    tasks, stream = [], 0
    for horizon in config.horizons:
        base = SimulationConfig(
            config.algo, horizon, config.runs, config.delta, config.batches, curve_points=0
        )
        k_armed = env is None or (isinstance(env, ArmsEnvironment) and env.features is None)
        if config.worst_case and k_armed:
            for gap in gap_grid(config.k, horizon, config.gap_points):
                cell_env = two_level(config.k, float(gap), config.noise, config.sigma)
                tasks.append((cell_env, replace(base, stream=stream), seed))
                stream += 1
        elif env is not None:
            tasks.append((env, replace(base, stream=stream), seed))
            stream += 1
    return tasks


def run_sweep(config: SweepConfig, env, seed: int, on_progress=None) -> dict:
    """The sweep's JSON results (see the module docstring)."""
    info = validate(
        SimulationConfig(config.algo, config.horizons[0], config.runs, config.delta, config.batches)
    )
    if config.worst_case and config.gap_points < 1:
        raise UsageError(
            f"--gap-points {config.gap_points} leaves no gap to take the worst case over",
            "use --gap-points 8 (or --fixed-instance)",
        )
    tasks = sweep_tasks(config, env, seed)
    cells = map_cells(_cell, tasks, config.workers, on_progress)
    rows = []
    for horizon in config.horizons:
        mine = [c for c in cells if c["horizon"] == horizon]
        worst = max(mine, key=lambda c: c["mean_regret"])
        rows.append(_sweep_row(horizon, worst, len(mine) > 1))
    fit = fit_exponent([r["horizon"] for r in rows], [r["mean_regret"] for r in rows])
    batched = info.design_exponent is not None
    claimed = info.claimed_exponent(config.batches)
    return {
        "algorithm": info.name,
        "mode": "worst case over gaps" if len(tasks) > len(config.horizons) else "one instance",
        "batches": config.batches if batched else None,
        "rows": rows,
        **fit,
        "claimed_exponent": claimed,
        "design_exponent": info.design_exponent(config.batches) if batched else None,
        "batches_needed_for_claim": batches_for_exponent(claimed) if batched else None,
        "claimed_regret": info.claimed_regret,
        "guarantee": info.guarantee,
        "guarantee_held_everywhere": _all_held(cells),
    }


def _sweep_row(horizon: int, cell: dict, worst_case: bool) -> dict:
    return {
        "horizon": horizon,
        "mean_regret": cell["mean_regret"],
        "mean_regret_ci95": cell["mean_regret_ci95"],
        "regret_over_horizon": cell["regret_over_horizon"],
        "worst_gap": cell["instance"]["min_positive_gap"] if worst_case else None,
        "distinct_traces": cell["distinct_traces"],
        "traces_covering_1_minus_delta": cell["traces_covering_1_minus_delta"],
        "list_bound": cell["list_bound"],
        "guarantee_held": cell["guarantee_held"],
    }


def _all_held(cells: list[dict]) -> bool | None:
    held = [c["guarantee_held"] for c in cells if c["guarantee_held"] is not None]
    return all(held) if held else None


# ---------------------------------------------------------------------------------------
# Several algorithms on one instance
# ---------------------------------------------------------------------------------------
def run_compare(
    algos: Sequence[str], env, base: SimulationConfig, seed: int, workers: int, on_progress=None
) -> dict:
    for name in algos:
        validate(replace(base, algo=name))
    tasks = [(env, replace(base, algo=name, stream=i), seed) for i, name in enumerate(algos)]
    cells = map_cells(_cell, tasks, workers, on_progress)
    keep = (
        "algorithm",
        "guarantee",
        "claimed_regret",
        "mean_regret",
        "mean_regret_ci95",
        "regret_over_horizon",
        "distinct_traces",
        "list_bound",
        "traces_covering_1_minus_delta",
        "guarantee_held",
        "pair_agreement",
        "rho_bound",
        "rho_held",
        "top_trace_shares",
        "regret_curve",
    )
    return {
        "horizon": base.horizon,
        "runs": base.runs,
        "delta": base.delta,
        "shared_randomness": base.shared_randomness,
        "instance": cells[0]["instance"] if cells else None,
        "algorithms": [{key: cell[key] for key in keep} for cell in cells],
    }


def parse_algorithms(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError("--algos is empty", f"list some of: {', '.join(registry.NAMES)}")
    for name in names:
        registry.get(name)
    return list(dict.fromkeys(names))

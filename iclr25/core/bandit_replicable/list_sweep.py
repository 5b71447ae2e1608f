"""Measured list size against the theoretical bound, over k, δ or the number of batches.

``sweep --over k|delta|batches``: for each value, an instance that stresses the
algorithm — the winner of :func:`.instances.search_instance` (``family="search"``) or a
named family — is confirmed on ``runs`` *fresh* executions, and the row reports the traces
covering 1-δ with its interval (:func:`.guarantee.list_size_bounds`: each end a one-sided
95% bound), the theoretical bound ℓ, the share of the bound reached, and the guarantee's
outcome (held / violated / untestable). The search's own pilot count is reported beside it
but never used as the measurement (it is biased upwards by the selection).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from iclr25.core.bandit_replicable import instances, list_batched, registry
from iclr25.core.bandit_replicable.cells import InstanceSpec, run_cells
from iclr25.core.bandit_replicable.environments import check_common, family_means
from iclr25.core.bandit_replicable.environments import default_scale as family_scale
from iclr25.core.bandit_replicable.simulate import SimulationConfig, run_experiment, validate
from iclr25.core.bandit_replicable.sweep import guarantee_summary
from iclr25.errors import UsageError
from iclr25.parallel import Execution, Outcome, derive_seed

OVER = ("k", "delta", "batches")
BATCHED = ("list-batched", "linear-batched")
COMMAND = "bandit-replicable sweep --over"


@dataclass(frozen=True)
class ListSweepConfig:
    algo: str
    over: str  # k | delta | batches
    values: tuple[float, ...]
    horizon: int = 100_000
    runs: int = 1000  # fresh executions at the chosen instance
    k: int = 5
    delta: float = 0.05
    batches: int = 3
    family: str = "search"  # or a named family of environments.STRESS_FAMILIES
    pilot_runs: int = 200  # per search candidate
    noise: str = "bernoulli"
    sigma: float = 1.0


@dataclass(frozen=True)
class ListCell:
    """One value of the sweep: search (or build) the instance, then confirm it."""

    search: instances.SearchConfig
    family: str
    runs: int


def cell_configs(config: ListSweepConfig) -> list[ListCell]:
    out = []
    for value in config.values:
        k = int(value) if config.over == "k" else config.k
        delta = float(value) if config.over == "delta" else config.delta
        batches = int(value) if config.over == "batches" else config.batches
        search = instances.SearchConfig(
            config.algo,
            k,
            config.horizon,
            config.pilot_runs,
            delta,
            batches,
            config.noise,
            config.sigma,
        )
        out.append(ListCell(search, config.family, config.runs))
    return out


def run_list_cell(cell: ListCell, seed: int) -> dict:
    """Search (or build) the instance with one seed, confirm on fresh executions."""
    s = cell.search
    if cell.family == "search":
        found = instances.search_instance(s, derive_seed(seed, "search"))
    else:
        scale = family_scale(cell.family, s.k, s.horizon)
        means = family_means(cell.family, s.k, scale)
        found = {"family": cell.family, "scale": scale, "means": means.tolist(), "searched": False}
    spec = InstanceSpec(tuple(found["means"]), s.noise, s.sigma, found["family"])
    sim = SimulationConfig(s.algo, s.horizon, cell.runs, s.delta, s.batches, curve_points=0)
    result = run_experiment(spec.environment(), sim, derive_seed(seed, "confirm"))
    return {"k": s.k, "delta": s.delta, "batches": s.batches, "instance_search": found, **result}


def validate_list_sweep(config: ListSweepConfig) -> None:
    info = validate(
        SimulationConfig(config.algo, config.horizon, config.runs, config.delta, config.batches)
    )
    if config.over not in OVER:
        raise UsageError(
            f"--over {config.over!r} is not a list-size sweep",
            f"use one of: horizon, {', '.join(OVER)}",
        )
    if not config.values:
        raise UsageError("--values is empty", "give e.g. --values 2,3,4,5,6")
    if config.pilot_runs < 1:
        raise UsageError(
            f"--pilot-runs {config.pilot_runs} must be at least 1", "use e.g. --pilot-runs 200"
        )
    if config.over == "delta" and not all(0 < v < 1 for v in config.values):
        raise UsageError(
            "--values with --over delta must lie in (0, 1)", "use e.g. --values 0.2,0.1,0.05"
        )
    if config.over == "batches" and info.name not in BATCHED:
        raise UsageError(
            f"--over batches needs a batched algorithm, not {info.name}",
            "use --algo list-batched or linear-batched",
        )
    for value in config.values:
        cell = cell_configs(replace(config, values=(value,)))[0].search
        validate(SimulationConfig(cell.algo, cell.horizon, config.runs, cell.delta, cell.batches))
        if cell.k < 2 or cell.horizon < cell.k:
            raise UsageError(
                f"--values {value:g} gives k = {cell.k} arms for T = {cell.horizon}",
                "use k ≥ 2 and --horizon ≥ k",
            )
        if float(value) != int(value) and config.over != "delta":
            raise UsageError(
                f"--values {value:g} is not an integer",
                f"use whole numbers with --over {config.over}, e.g. --values 2,3,4",
            )
        check_common(cell.k, cell.horizon, config.noise, config.sigma)


def run_list_sweep(
    config: ListSweepConfig, seed: int, execution: Execution | None = None, on_progress=None
) -> tuple[dict, Outcome]:
    validate_list_sweep(config)
    cells = cell_configs(config)
    seeds = [derive_seed(seed, "list-sweep", config.algo, config.over, v) for v in config.values]
    labels = [f"{config.algo} {config.over}={v:g}" for v in config.values]
    outcome = run_cells(run_list_cell, cells, seeds, execution, COMMAND, on_progress, labels)
    rows = [
        _row(config, value, cell)
        for value, cell in zip(config.values, outcome.results, strict=True)
    ]
    info = registry.get(config.algo)
    return {
        "algorithm": info.name,
        "over": config.over,
        "horizon": config.horizon,
        "runs": config.runs,
        "family": config.family,
        "guarantee_claim": info.guarantee,
        "rows": rows,
        **guarantee_summary(outcome.results),
        "bound_approached": _approached(rows),
    }, outcome


def _row(config: ListSweepConfig, value: float, cell: dict) -> dict:
    bound = cell["list_bound"]
    covering = cell["traces_covering_1_minus_delta"]
    found = cell["instance_search"]
    prefix = None
    if config.algo == "list-batched":
        prefix = list_batched.prefix_list_bound(cell["k"], cell["batches"])
    return {
        "value": value,
        "k": cell["k"],
        "delta": cell["delta"],
        "batches": cell["batches"],
        "instance_family": found["family"],
        "instance_scale": found["scale"],
        "instance_means": found["means"],
        "pilot_covering": found.get("pilot_covering"),
        "traces_covering_1_minus_delta": covering,
        "list_size_interval": cell["list_size_interval"],
        "distinct_traces": cell["distinct_traces"],
        "list_bound": bound,
        "prefix_list_bound": prefix,
        "share_of_bound": covering / bound if bound else None,
        "guarantee": cell["guarantee"],
        "guarantee_check": cell["guarantee_check"],
        "mean_regret": cell["mean_regret"],
        "regret_over_horizon": cell["regret_over_horizon"],
    }


def _approached(rows: list[dict]) -> float | None:
    """The largest measured share of the bound (None without a bound)."""
    shares = [r["share_of_bound"] for r in rows if r["share_of_bound"] is not None]
    return max(shares) if shares else None

"""Regret against the horizon (with a fitted exponent), and several algorithms side by side.

``sweep``: for log-spaced horizons T, the mean regret — by default the *worst case* over
a log grid of gaps on the two-level family (k-1 arms at 0.5 - Δ/2, one at 0.5 + Δ/2),
which is what a worst-case bound Õ(T^e) describes; a fixed instance would show log T
growth for any good algorithm. The exponent is fitted over the horizons past the
exploration phase only (:mod:`.fits`: the rule is fixed there), with a 95% interval,
printed beside the claimed exponent and the fit over all horizons.

``compare``: several algorithms on one instance; with both ETC and Alg. 1 among them, the
two are also run at horizons from T/10 to 10^4 T on the same instance (cheap: both are
simulated per phase) and the horizon where
Alg. 1 would overtake ETC is extrapolated from their fits (:func:`.fits.crossing`).

Independent cells (a horizon and a gap, or an algorithm) are tasks of
:mod:`iclr25.parallel` (:mod:`.cells`): seeds derive from the run's seed and the cell's
labels, so results do not depend on the backend or the number of workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from iclr25.core.bandit_replicable import fits, registry
from iclr25.core.bandit_replicable.cells import Cell, InstanceSpec, run_cell, run_cells
from iclr25.core.bandit_replicable.environments import two_level
from iclr25.core.bandit_replicable.list_batched import batches_for_exponent
from iclr25.core.bandit_replicable.simulate import SimulationConfig, validate
from iclr25.errors import UsageError
from iclr25.parallel import Execution, Outcome, derive_seed

SWEEP_COMMAND = "bandit-replicable sweep"
COMPARE_COMMAND = "bandit-replicable compare"


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


def sweep_cells(config: SweepConfig, spec: InstanceSpec | None, seed: int):
    """(cells, seeds, labels): a cell per horizon and gap (or per horizon on ``spec``)."""
    cells, seeds, labels = [], [], []
    for horizon in config.horizons:
        base = SimulationConfig(
            config.algo, horizon, config.runs, config.delta, config.batches, curve_points=0
        )
        if spec is None:
            for i, gap in enumerate(gap_grid(config.k, horizon, config.gap_points)):
                env = two_level(config.k, float(gap), config.noise, config.sigma)
                cells.append(Cell(base, InstanceSpec.of(env)))
                seeds.append(derive_seed(seed, "sweep", config.algo, horizon, "gap", i))
                labels.append(f"{config.algo} T={horizon} gap={gap:.4g}")
        else:
            cells.append(Cell(base, spec))
            seeds.append(derive_seed(seed, "sweep", config.algo, horizon))
            labels.append(f"{config.algo} T={horizon}")
    return cells, seeds, labels


def run_sweep(
    config: SweepConfig,
    spec: InstanceSpec | None,
    seed: int,
    execution: Execution | None = None,
    on_progress=None,
) -> tuple[dict, Outcome]:
    """The sweep's JSON results (module docstring): the worst case over gaps, or the one
    instance ``spec`` when given; and how the cells ran."""
    info = validate(
        SimulationConfig(config.algo, config.horizons[0], config.runs, config.delta, config.batches)
    )
    if spec is None and config.gap_points < 1:
        raise UsageError(
            f"--gap-points {config.gap_points} leaves no gap to take the worst case over",
            "use --gap-points 8 (or --fixed-instance)",
        )
    cells, seeds, labels = sweep_cells(config, spec, seed)
    outcome = run_cells(run_cell, cells, seeds, execution, SWEEP_COMMAND, on_progress, labels)
    results = outcome.results
    rows = []
    for horizon in config.horizons:
        mine = [c for c in results if c["horizon"] == horizon]
        worst = max(mine, key=lambda c: c["mean_regret"])
        rows.append(_sweep_row(horizon, worst, mine[-1], spec is None))
    fit = fits.honest_fit(
        [r["horizon"] for r in rows],
        [r["mean_regret"] for r in rows],
        [r["past_exploration"] for r in rows],
    )
    batched = info.design_exponent is not None
    claimed = info.claimed_exponent(config.batches)
    return {
        "algorithm": info.name,
        "mode": "worst case over gaps" if spec is None else "one instance",
        "batches": config.batches if batched else None,
        "rows": rows,
        **fit,
        "claimed_exponent": claimed,
        "design_exponent": info.design_exponent(config.batches) if batched else None,
        "batches_needed_for_claim": batches_for_exponent(claimed) if batched else None,
        "claimed_regret": info.claimed_regret,
        "guarantee_claim": info.guarantee,
        "hypothesis": f"worst-case regret grows like T^{claimed:.4g} (the paper's rate)",
        "pass_condition": "the claimed exponent lies in the 95% interval of the fit past "
        "exploration",
        "verdict": exponent_verdict(fit, claimed),
        **guarantee_summary(results),
    }, outcome


def exponent_verdict(fit: dict, claimed: float) -> str:
    """Where the claimed exponent sits against the fitted interval (the pass condition)."""
    ci = fit.get("fitted_exponent_ci95")
    if ci is None:
        return "no verdict: fewer than 3 horizons past the exploration phase"
    if ci[0] <= claimed <= ci[1]:
        return "consistent with the claimed exponent"
    side = "above" if ci[0] > claimed else "below"
    return f"the measured exponent is {side} the claimed one (interval {ci[0]:.3f}..{ci[1]:.3f})"


def _uniform_regret(cell: dict) -> float:
    means = np.asarray(cell["instance"]["means"], np.float64)
    return float(cell["horizon"] * (means.max() - means).mean())


def _sweep_row(horizon: int, cell: dict, easiest: dict, worst_case: bool) -> dict:
    """The worst cell's figures; ``easiest`` (the largest gap) decides the fit rule."""
    uniform = _uniform_regret(easiest)
    return {
        "horizon": horizon,
        "mean_regret": cell["mean_regret"],
        "mean_regret_ci95": cell["mean_regret_ci95"],
        "regret_over_horizon": cell["regret_over_horizon"],
        "worst_gap": cell["instance"]["min_positive_gap"] if worst_case else None,
        "easiest_regret_share_of_uniform": easiest["mean_regret"] / uniform if uniform else None,
        "past_exploration": fits.exploiting(easiest["mean_regret"], uniform),
        "distinct_traces": cell["distinct_traces"],
        "traces_covering_1_minus_delta": cell["traces_covering_1_minus_delta"],
        "list_size_interval": cell["list_size_interval"],
        "list_bound": cell["list_bound"],
        "guarantee": cell["guarantee"],
    }


def guarantee_summary(cells: list[dict]) -> dict:
    """Outcome counts over cells; ``guarantee_held_everywhere``: true only when every cell
    held, false when one was violated, null otherwise (untestable cells, or no claim)."""
    outcomes = [c["guarantee"] for c in cells if c["guarantee"] is not None]
    counts = {name: outcomes.count(name) for name in ("held", "violated", "untestable")}
    if not outcomes:
        everywhere = None
    elif counts["violated"]:
        everywhere = False
    else:
        everywhere = True if counts["held"] == len(outcomes) else None
    return {"guarantee_outcomes": counts, "guarantee_held_everywhere": everywhere}


# ---------------------------------------------------------------------------------------
# Several algorithms on one instance
# ---------------------------------------------------------------------------------------
COMPARE_KEEP = (
    "algorithm",
    "guarantee_claim",
    "claimed_regret",
    "mean_regret",
    "mean_regret_ci95",
    "regret_over_horizon",
    "regret_bound",
    "distinct_traces",
    "list_bound",
    "traces_covering_1_minus_delta",
    "list_size_interval",
    "guarantee",
    "guarantee_held",
    "guarantee_check",
    "pair_agreement",
    "rho_bound",
    "rho_held",
    "top_trace_shares",
    "regret_curve",
)
#: horizons of the ETC / Alg. 1 crossing study, as multiples of the compare horizon
CROSSING_SCALES = (0.1, 0.316, 1.0, 3.16, 10.0, 31.6, 100.0, 316.0, 1000.0, 3160.0, 10000.0)


def run_compare(
    algos: Sequence[str],
    spec: InstanceSpec,
    base: SimulationConfig,
    seed: int,
    execution: Execution | None = None,
    on_progress=None,
) -> tuple[dict, list[Outcome]]:
    for name in algos:
        validate(replace(base, algo=name))
    cells = [Cell(replace(base, algo=name), spec) for name in algos]
    seeds = [derive_seed(seed, "compare", name) for name in algos]
    outcome = run_cells(run_cell, cells, seeds, execution, COMPARE_COMMAND, on_progress, algos)
    outcomes = [outcome]
    results = outcome.results
    crossing = None
    if "etc" in algos and "list-2k" in algos and not base.shared_randomness:
        crossing, extra = etc_crossing(spec, base, seed, execution)
        outcomes.append(extra)
    return {
        "horizon": base.horizon,
        "runs": base.runs,
        "delta": base.delta,
        "shared_randomness": base.shared_randomness,
        "instance": results[0]["instance"] if results else None,
        "algorithms": [{key: cell[key] for key in COMPARE_KEEP} for cell in results],
        "crossing": crossing,
    }, outcomes


def etc_crossing(spec: InstanceSpec, base: SimulationConfig, seed: int, execution=None):
    """ETC and Alg. 1 at horizons T/10 .. 10^4 T on the compare instance: fits past
    exploration and the extrapolated horizon where Alg. 1 overtakes ETC."""
    k = len(spec.means)
    horizons = sorted({max(k, int(round(base.horizon * s))) for s in CROSSING_SCALES})
    cells, seeds = [], []
    for name in ("list-2k", "etc"):
        for horizon in horizons:
            config = replace(base, algo=name, horizon=horizon, curve_points=0)
            cells.append(Cell(config, spec))
            seeds.append(derive_seed(seed, "crossing", name, horizon))
    outcome = run_cells(run_cell, cells, seeds, execution, COMPARE_COMMAND)
    n = len(horizons)
    found = {"list-2k": outcome.results[:n], "etc": outcome.results[n:]}
    curves, fitted = {}, {}
    for name, cells_of in found.items():
        regrets = [c["mean_regret"] for c in cells_of]
        in_fit = [fits.exploiting(c["mean_regret"], _uniform_regret(c)) for c in cells_of]
        fitted[name] = fits.honest_fit(horizons, regrets, in_fit)
        curves[name] = {
            "mean_regret": regrets,
            "mean_regret_ci95": [c["mean_regret_ci95"] for c in cells_of],
        }
    ahead = [
        t
        for t, a, b in zip(horizons, found["list-2k"], found["etc"], strict=True)
        if a["mean_regret_ci95"][1] < b["mean_regret_ci95"][0]
    ]
    return {
        "horizons": horizons,
        "regret": curves,
        "fits": {name: _fit_brief(f) for name, f in fitted.items()},
        "alg1_ahead_at": ahead,
        "alg1_overtakes_etc": fits.crossing(fitted["list-2k"], fitted["etc"], max(horizons)),
    }, outcome


def _fit_brief(fit: dict) -> dict:
    keep = (
        "fitted_exponent",
        "fitted_exponent_ci95",
        "log_intercept",
        "centroid",
        "fit_horizons",
        "exploration_horizons",
    )
    return {key: fit[key] for key in keep}


def parse_algorithms(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError("--algos is empty", f"list some of: {', '.join(registry.NAMES)}")
    for name in names:
        registry.get(name)
    return list(dict.fromkeys(names))

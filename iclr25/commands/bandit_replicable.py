"""`iclr25 bandit-replicable`: list-replicable bandit algorithms, simulated at scale.

Subcommands: ``run`` (N executions of one algorithm: regret and list size against the
guarantee), ``sweep`` (regret against the horizon, fitted exponent beside the claimed
one), ``compare`` (several algorithms on one instance) and ``lower-bound`` (regret/T of
an algorithm restricted to k-1 traces). The method lives in
:mod:`iclr25.core.bandit_replicable`.
"""

from enum import StrEnum
from typing import Annotated

import typer

from iclr25.demo import DemoStep
from iclr25.runner import Run, command

NAME = "bandit-replicable"
HELP = "List-replicable bandit algorithms, simulated at scale against their guarantees."
ALGORITHM_NAMES = (
    "etc, list-2k, list-k-delta, list-batched, linear-batched, ucb1, successive-elimination, "
    "thompson, replicable-elimination"
)

app = typer.Typer(no_args_is_help=True, help=HELP)


class Instance(StrEnum):
    random = "random"
    equal_gaps = "equal-gaps"
    hard = "hard"


class Noise(StrEnum):
    bernoulli = "bernoulli"
    gaussian = "gaussian"


class EnvKind(StrEnum):
    k_armed = "k-armed"
    linear = "linear"


_INSTANCE = "Instance"
_SIM = "Simulation"

AlgoOpt = Annotated[str, typer.Option("--algo", help=f"Algorithm: {ALGORITHM_NAMES}.")]
KOpt = Annotated[int, typer.Option("--k", help="Number of arms.", rich_help_panel=_INSTANCE)]
MeansOpt = Annotated[
    str | None,
    typer.Option(
        "--means", help="Arm means, e.g. 0.9,0.8,0.5 (sets k).", rich_help_panel=_INSTANCE
    ),
]
InstanceOpt = Annotated[
    Instance,
    typer.Option(
        "--instance",
        help="Generated means: random U(0.1,0.9), equal-gaps, or hard (one arm ahead by --gap).",
        rich_help_panel=_INSTANCE,
    ),
]
GapOpt = Annotated[
    float | None,
    typer.Option("--gap", help="Gap for equal-gaps / hard instances.", rich_help_panel=_INSTANCE),
]
NoiseOpt = Annotated[
    Noise, typer.Option("--noise", help="Reward noise.", rich_help_panel=_INSTANCE)
]
SigmaOpt = Annotated[
    float, typer.Option("--sigma", help="Gaussian reward sd.", rich_help_panel=_INSTANCE)
]
EnvOpt = Annotated[
    EnvKind,
    typer.Option("--env", help="k-armed or linear bandit.", rich_help_panel=_INSTANCE),
]
DimOpt = Annotated[
    int, typer.Option("--dim", help="Linear bandits: dimension d.", rich_help_panel=_INSTANCE)
]
ArmsOpt = Annotated[
    int,
    typer.Option(
        "--arms",
        help="Linear bandits: N random unit-vector arms (0 = the unit ball).",
        rich_help_panel=_INSTANCE,
    ),
]
ThetaOpt = Annotated[
    float, typer.Option("--theta-norm", help="Linear bandits: |θ|.", rich_help_panel=_INSTANCE)
]
HorizonOpt = Annotated[int, typer.Option("--horizon", help="Rounds T.", rich_help_panel=_SIM)]
RunsOpt = Annotated[
    int, typer.Option("--runs", help="Independent executions.", rich_help_panel=_SIM)
]
DeltaOpt = Annotated[
    float,
    typer.Option(
        "--delta",
        help="δ of the (ℓ, δ) guarantee (ρ for replicable-elimination).",
        rich_help_panel=_SIM,
    ),
]
BatchesOpt = Annotated[
    int,
    typer.Option("--batches", help="B for list-batched / linear-batched.", rich_help_panel=_SIM),
]
SharedOpt = Annotated[
    bool,
    typer.Option(
        "--shared-randomness",
        help="Executions 2i and 2i+1 share their internal random bits (fresh rewards): "
        "pair_agreement then measures ρ-replicability; list checks are skipped.",
        rich_help_panel=_SIM,
    ),
]
WorkersOpt = Annotated[
    int,
    typer.Option("--workers", help="Local processes for independent cells.", rich_help_panel=_SIM),
]

RUN_KEYS = (
    "algorithm, title, guarantee, claimed_regret, horizon, runs, delta, batches, mean_regret, "
    "mean_regret_ci95, regret_sd, regret_median, regret_p95, regret_over_horizon, "
    "distinct_traces, list_bound, traces_covering_1_minus_delta, guarantee_held, "
    "shared_randomness, pair_agreement, pair_agreement_ci95, rho_bound, rho_held, "
    "top_trace_shares, regret_curve {t, mean_regret}, instance"
)


def _short_table(rows: list[dict], headers: dict[str, str], title: str):
    """A table of ``rows`` showing the keys of ``headers`` under short names (≤ 100 columns)."""
    from iclr25.output import rows_table

    shown = [{headers[key]: row[key] for key in headers} for row in rows]
    return rows_table(shown, list(headers.values()), title=title)


def _bound_text(bound):
    return bound if bound is None or bound < 10**9 else f"{float(bound):.3g}"


def _environment(
    run: Run, *, env, k, means, instance, gap, noise, sigma, dim, arms, theta_norm, horizon
):
    import numpy as np

    from iclr25.core.bandit_replicable import environments as envs

    rng = np.random.default_rng(np.random.SeedSequence(run.seed & (2**63 - 1), spawn_key=(99,)))
    if env == EnvKind.linear:
        if arms == 0:
            return envs.unit_ball(
                dim=dim, horizon=horizon, theta_norm=theta_norm, sigma=sigma, rng=rng
            )
        return envs.linear_finite(
            dim=dim, arms=arms, horizon=horizon, theta_norm=theta_norm, sigma=sigma, rng=rng
        )
    parsed = envs.parse_means(means) if means is not None else None
    return envs.k_armed(
        k=k,
        horizon=horizon,
        instance=instance.value,
        gap=gap,
        means=parsed,
        noise=noise.value,
        sigma=sigma,
        rng=rng,
    )


def _k_armed_environment(run: Run, **instance_options):
    """The k-armed environment of the instance options (compare, sweep)."""
    return _environment(run, env=EnvKind.k_armed, dim=0, arms=0, theta_norm=1.0, **instance_options)


def _device(run: Run, algo: str) -> str:
    from iclr25.core.bandit_replicable.registry import get

    if run.device.kind == "cuda" and get(algo).kind == "sequential":
        from iclr25.gpu import get_cupy

        if get_cupy() is not None:
            return "cuda"
        run.warn("CUDA was selected but CuPy is missing: UCB1/Thompson run on the CPU")
    return "cpu"


def _render_run(console, results) -> None:
    from iclr25.output import render_mapping

    shown = {k: v for k, v in results.items() if k not in ("regret_curve", "instance")}
    render_mapping(console, shown, title=f"bandit-replicable run: {results['algorithm']}")
    render_mapping(console, results["instance"], title="instance")


def _plots_run(run: Run, results: dict) -> None:
    from iclr25.core.bandit_replicable import plots

    run.save_plot(plots.regret_curves([results], "mean regret"), "regret_curve")
    run.save_plot(plots.trace_frequencies([results], "trace frequencies"), "trace_frequencies")


@command(app, "run", epilog=f"JSON results: {RUN_KEYS}.")
def run_command(
    algo: AlgoOpt = "list-2k",
    k: KOpt = 10,
    horizon: HorizonOpt = 100_000,
    runs: RunsOpt = 1000,
    delta: DeltaOpt = 0.05,
    batches: BatchesOpt = 3,
    instance: InstanceOpt = Instance.random,
    means: MeansOpt = None,
    gap: GapOpt = None,
    noise: NoiseOpt = Noise.bernoulli,
    sigma: SigmaOpt = 1.0,
    env: EnvOpt = EnvKind.k_armed,
    dim: DimOpt = 5,
    arms: ArmsOpt = 20,
    theta_norm: ThetaOpt = 1.0,
    shared_randomness: SharedOpt = False,
    *,
    run: Run,
) -> None:
    """N independent executions of one algorithm: regret, distinct traces, list bound."""
    from iclr25.core.bandit_replicable.simulate import SimulationConfig, run_experiment, validate

    validate(SimulationConfig(algo, horizon, runs, delta, batches))
    environment = _environment(
        run,
        env=env,
        k=k,
        means=means,
        instance=instance,
        gap=gap,
        noise=noise,
        sigma=sigma,
        dim=dim,
        arms=arms,
        theta_norm=theta_norm,
        horizon=horizon,
    )
    device = "cpu" if shared_randomness else _device(run, algo)  # the kernel has no pairs
    config = SimulationConfig(
        algo, horizon, runs, delta, batches, device=device, shared_randomness=shared_randomness
    )
    with run.progress(f"{algo}: executions", total=runs) as advance, run.timer("simulate_s"):
        results = run_experiment(environment, config, run.seed, on_progress=advance)
    if run.wants_artifacts:
        _plots_run(run, results)
    run.finish(results, config, _render_run)


# ---------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------
DEFAULT_ALGOS = (
    "etc,list-2k,list-k-delta,list-batched,linear-batched,ucb1,successive-elimination,thompson,"
    "replicable-elimination"
)
COMPARE_KEYS = (
    "horizon, runs, delta, instance, algorithms [{algorithm, guarantee, claimed_regret, "
    "mean_regret, mean_regret_ci95, regret_over_horizon, distinct_traces, list_bound, "
    "traces_covering_1_minus_delta, guarantee_held, pair_agreement, rho_bound, rho_held, "
    "top_trace_shares, regret_curve}], shared_randomness"
)


def _render_compare(console, results) -> None:
    headers = {
        "algorithm": "algorithm",
        "mean_regret": "regret",
        "regret_over_horizon": "regret/T",
        "distinct_traces": "traces",
        "traces_covering_1_minus_delta": "cover 1-δ",
        "list_bound": "bound ℓ",
        "guarantee_held": "held",
        "pair_agreement": "pairs agree",
    }
    rows = [{**a, "list_bound": _bound_text(a["list_bound"])} for a in results["algorithms"]]
    title = f"T = {results['horizon']:,}, {results['runs']:,} executions, δ = {results['delta']}"
    console.print(_short_table(rows, headers, title))


@command(app, "compare", epilog=f"JSON results: {COMPARE_KEYS}.")
def compare_command(
    algos: Annotated[str, typer.Option("--algos", help="Comma-separated algorithm names.")] = (
        DEFAULT_ALGOS
    ),
    k: KOpt = 5,
    horizon: HorizonOpt = 50_000,
    runs: RunsOpt = 400,
    delta: DeltaOpt = 0.05,
    batches: BatchesOpt = 3,
    instance: InstanceOpt = Instance.random,
    means: MeansOpt = None,
    gap: GapOpt = None,
    noise: NoiseOpt = Noise.bernoulli,
    sigma: SigmaOpt = 1.0,
    workers: WorkersOpt = 1,
    shared_randomness: SharedOpt = False,
    *,
    run: Run,
) -> None:
    """Several algorithms on one instance: regret, traces, guarantees; curves and a
    trace-frequency plot with --out."""
    from iclr25.core.bandit_replicable import plots
    from iclr25.core.bandit_replicable.simulate import SimulationConfig
    from iclr25.core.bandit_replicable.sweep import parse_algorithms, run_compare

    names = parse_algorithms(algos)
    environment = _k_armed_environment(
        run, k=k, means=means, instance=instance, gap=gap, noise=noise, sigma=sigma, horizon=horizon
    )
    base = SimulationConfig(
        names[0], horizon, runs, delta, batches, shared_randomness=shared_randomness
    )
    with run.progress("algorithms", total=len(names)) as advance, run.timer("simulate_s"):
        results = run_compare(names, environment, base, run.seed, workers, advance)
    if run.wants_artifacts:
        entries = results["algorithms"]
        run.save_plot(plots.regret_curves(entries, "mean regret"), "regret_curves")
        run.save_plot(plots.trace_frequencies(entries, "trace frequencies"), "trace_frequencies")
    config = {
        "algos": names,
        "horizon": horizon,
        "runs": runs,
        "delta": delta,
        "batches": batches,
        "workers": workers,
        "shared_randomness": shared_randomness,
    }
    run.finish(results, config, _render_compare)


# ---------------------------------------------------------------------------------------
# sweep
# ---------------------------------------------------------------------------------------
SWEEP_KEYS = (
    "algorithm, mode, rows [{horizon, mean_regret, mean_regret_ci95, regret_over_horizon, "
    "worst_gap, distinct_traces, traces_covering_1_minus_delta, list_bound, guarantee_held}], "
    "fitted_exponent, fitted_exponent_ci95, claimed_exponent, design_exponent, batches, "
    "batches_needed_for_claim, claimed_regret, guarantee, guarantee_held_everywhere"
)


def _render_sweep(console, results) -> None:
    headers = {
        "horizon": "T",
        "mean_regret": "mean regret",
        "regret_over_horizon": "regret/T",
        "worst_gap": "worst gap",
        "distinct_traces": "traces",
        "traces_covering_1_minus_delta": "cover 1-δ",
        "list_bound": "bound ℓ",
    }
    rows = [{**r, "list_bound": _bound_text(r["list_bound"])} for r in results["rows"]]
    console.print(_short_table(rows, headers, f"{results['algorithm']}: {results['mode']}"))
    fitted, ci = results["fitted_exponent"], results["fitted_exponent_ci95"]
    line = f"measured exponent {fitted:.3f}" if fitted is not None else "measured exponent n/a"
    if ci:
        line += f" (95% CI {ci[0]:.3f}..{ci[1]:.3f})"
    console.print(f"{line}   claimed {results['claimed_exponent']:.4g}")
    batches = results["batches"]
    if batches is not None:
        console.print(
            f"B = {batches} batches: design {results['design_exponent']:.4g} = {batches}-batch "
            f"lower bound (Gao et al. 2019); claim needs ≥ {results['batches_needed_for_claim']}"
            " batches"
        )


@command(app, "sweep", epilog=f"JSON results: {SWEEP_KEYS}.")
def sweep_command(
    algo: AlgoOpt = "list-2k",
    t_min: Annotated[int, typer.Option("--t-min", help="Smallest horizon.")] = 1_000,
    t_max: Annotated[int, typer.Option("--t-max", help="Largest horizon.")] = 1_000_000,
    points: Annotated[int, typer.Option("--points", help="Log-spaced horizons.")] = 6,
    k: KOpt = 5,
    runs: RunsOpt = 300,
    delta: DeltaOpt = 0.05,
    batches: BatchesOpt = 3,
    fixed_instance: Annotated[
        bool,
        typer.Option(
            "--fixed-instance",
            help="One instance (the instance options) instead of the worst case over a gap grid.",
        ),
    ] = False,
    gap_points: Annotated[
        int, typer.Option("--gap-points", help="Gaps in the worst-case grid.")
    ] = 8,
    instance: InstanceOpt = Instance.random,
    means: MeansOpt = None,
    gap: GapOpt = None,
    noise: NoiseOpt = Noise.bernoulli,
    sigma: SigmaOpt = 1.0,
    workers: WorkersOpt = 1,
    *,
    run: Run,
) -> None:
    """Regret against log-spaced horizons, the fitted exponent beside the claimed one."""
    from iclr25.core.bandit_replicable import plots
    from iclr25.core.bandit_replicable.sweep import SweepConfig, horizon_grid, run_sweep

    horizons = horizon_grid(t_min, t_max, points)
    environment = None
    if fixed_instance:
        environment = _k_armed_environment(
            run,
            k=k,
            means=means,
            instance=instance,
            gap=gap,
            noise=noise,
            sigma=sigma,
            horizon=horizons[0],
        )
        k = environment.k
    else:
        from iclr25.core.bandit_replicable.environments import check_common

        check_common(k, horizons[0], noise.value, sigma)
    config = SweepConfig(
        algo,
        horizons,
        runs,
        delta,
        batches,
        k,
        noise.value,
        sigma,
        worst_case=not fixed_instance,
        gap_points=gap_points,
        workers=workers,
    )
    cells = len(horizons) * (1 if fixed_instance else gap_points)
    with run.progress(f"{algo}: sweep cells", total=cells) as advance, run.timer("simulate_s"):
        results = run_sweep(config, environment, run.seed, advance)
    if run.wants_artifacts:
        run.save_plot(plots.sweep_plot(results), "regret_vs_horizon")
    run.finish(results, config, _render_sweep)


# ---------------------------------------------------------------------------------------
# lower-bound
# ---------------------------------------------------------------------------------------
LOWER_KEYS = (
    "k, gap, rows [{horizon, capped_worst_regret_over_T, capped_worst_instance, "
    "capped_max_traces, etc_worst_regret_over_T, etc_worst_instance, etc_max_traces}], "
    "capped_list_size, linear_regret_fraction, centre {algorithm, horizon, distinct_traces, "
    "top_k_minus_1_share, needed_for_k_minus_1_delta, k_minus_1_list_replicable_here}"
)


def _render_lower(console, results) -> None:
    from iclr25.output import render_mapping

    headers = {
        "horizon": "T",
        "capped_worst_regret_over_T": "capped: worst regret/T",
        "capped_worst_instance": "on",
        "capped_max_traces": "traces",
        "etc_worst_regret_over_T": "ETC: worst regret/T",
        "etc_worst_instance": "on ",
        "etc_max_traces": "traces ",
    }
    title = f"k = {results['k']}, gap = {results['gap']}: ETC capped to k-1 traces vs ETC"
    console.print(_short_table(results["rows"], headers, title))
    render_mapping(console, results["centre"], title="centre instance (all arms equal)")


@command(app, "lower-bound", epilog=f"JSON results: {LOWER_KEYS}.")
def lower_bound_command(
    k: KOpt = 3,
    gap: Annotated[float, typer.Option("--gap", help="Gap of the vertex instances.")] = 0.2,
    t_min: Annotated[int, typer.Option("--t-min", help="Smallest horizon.")] = 1_000,
    t_max: Annotated[int, typer.Option("--t-max", help="Largest horizon.")] = 1_000_000,
    points: Annotated[int, typer.Option("--points", help="Log-spaced horizons.")] = 4,
    runs: RunsOpt = 500,
    delta: DeltaOpt = 0.05,
    algo: Annotated[
        str, typer.Option("--algo", help="Algorithm whose trace shares are measured at the centre.")
    ] = "etc",
    *,
    run: Run,
) -> None:
    """Regret/T of ETC restricted to k-1 traces (linear) against ETC (sublinear)."""
    from iclr25.core.bandit_replicable import plots
    from iclr25.core.bandit_replicable.lower_bound import LowerBoundConfig, run_lower_bound
    from iclr25.core.bandit_replicable.simulate import SimulationConfig, validate
    from iclr25.core.bandit_replicable.sweep import horizon_grid

    validate(SimulationConfig(algo, t_max, runs, delta))
    config = LowerBoundConfig(k, gap, horizon_grid(t_min, t_max, points), runs, delta, algo)
    with run.progress("horizons", total=len(config.horizons)) as advance, run.timer("simulate_s"):
        results = run_lower_bound(config, run.seed, advance)
    if run.wants_artifacts:
        run.save_plot(plots.lower_bound_plot(results), "regret_over_T")
    run.finish(results, config, _render_lower)


def _demo_headline(doc: dict) -> str:
    rows = {a["algorithm"]: a for a in doc["results"]["algorithms"]}
    alg1, ucb = rows["list-2k"], rows["ucb1"]
    return (
        f"Alg. 1: {alg1['distinct_traces']} traces (bound {alg1['list_bound']}), "
        f"regret {alg1['mean_regret']:.0f}; UCB1: {ucb['distinct_traces']} traces, "
        f"regret {ucb['mean_regret']:.0f}"
    )


DEMO = (
    DemoStep(
        "bandit-replicable compare",
        (
            *("bandit-replicable", "compare", "--algos", "etc,list-2k,list-batched,ucb1"),
            *("--k", "5", "--horizon", "50000", "--runs", "400"),
        ),
        _demo_headline,
    ),
)

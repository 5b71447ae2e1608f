"""`iclr25 bandit-replicable`: list-replicable bandit algorithms, simulated at scale.

Subcommands: ``run`` (N executions of one algorithm: regret, list size and a binomial test
of the guarantee), ``sweep`` (regret against the horizon with an exponent fitted past the
exploration phase, or — ``--over k|delta|batches`` — measured list size against the
bound on instances that stress it), ``compare`` (several algorithms on one instance, and
where Alg. 1 overtakes ETC) and ``lower-bound`` (both halves of the theorem, measured).
The method lives in :mod:`iclr25.core.bandit_replicable`; options in
:mod:`.bandit_replicable_options`, tables in :mod:`.bandit_replicable_render`.
"""

from typing import Annotated

import typer

from iclr25.commands.bandit_replicable_options import (
    ALGORITHM_NAMES,
    AlgoOpt,
    ArmsOpt,
    BatchesOpt,
    DeltaOpt,
    DimOpt,
    EnvKind,
    EnvOpt,
    Family,
    GapOpt,
    HorizonOpt,
    Instance,
    InstanceOpt,
    KOpt,
    MeansOpt,
    Noise,
    NoiseOpt,
    Over,
    RunsOpt,
    SharedOpt,
    SigmaOpt,
    ThetaOpt,
)
from iclr25.demo import DemoStep
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt
from iclr25.runner import Run, command

NAME = "bandit-replicable"
HELP = "List-replicable bandit algorithms, simulated at scale against their guarantees."
app = typer.Typer(no_args_is_help=True, help=HELP)

GUARANTEE_KEYS = (
    "guarantee (held | violated | untestable | null), guarantee_held (true/false/null), "
    "guarantee_claim, guarantee_check {outcome, list_bound, delta_claimed, delta_tested, "
    "confidence, list_size_lower, list_size_upper, outside_share_upper, "
    "outside_share_lower, selection_runs, test_runs, runs_needed, reason}, "
    "list_size_interval [lower, upper]"
)
RUN_KEYS = (
    "algorithm, title, claimed_regret, horizon, runs, delta, batches, mean_regret, "
    "mean_regret_ci95, regret_sd, regret_median, regret_p95, regret_over_horizon, "
    "regret_bound {bound, trivial_bound, bound_formula, probability, accuracy_ratio, "
    "log_term, vacuous, first_decision_round, measured_quantile, within}, distinct_traces, "
    "list_bound, traces_covering_1_minus_delta, "
    f"{GUARANTEE_KEYS}, shared_randomness, pair_agreement, pair_agreement_ci95, rho_bound, "
    "rho_held, top_trace_shares, regret_curve {t, mean_regret}, instance"
)


def _warn_untestable(run: Run, entry: dict) -> None:
    check = entry.get("guarantee_check")
    if check and check["outcome"] == "untestable":
        needed = check["runs_needed"]
        fix = f"; about {needed:,} runs would decide" if needed else ""
        run.warn(
            f"{entry['algorithm']}: the ({check['list_bound']:,}, {check['delta_claimed']:g}) "
            f"guarantee is untestable with {entry['runs']:,} runs ({check['reason']}){fix}"
        )


def _report_outcomes(run: Run, outcomes) -> None:
    from iclr25 import parallel_options

    for outcome in outcomes:
        parallel_options.report(run, outcome)


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
    """N independent executions of one algorithm: regret, traces, and a binomial test of
    the list guarantee (held / violated / untestable)."""
    from iclr25.commands import bandit_replicable_options as opts
    from iclr25.commands.bandit_replicable_render import render_run
    from iclr25.core.bandit_replicable import plots
    from iclr25.core.bandit_replicable.simulate import SimulationConfig, run_experiment, validate

    validate(SimulationConfig(algo, horizon, runs, delta, batches))
    environment = opts.environment(
        run,
        **dict(env=env, k=k, means=means, instance=instance, gap=gap, noise=noise),
        **dict(sigma=sigma, dim=dim, arms=arms, theta_norm=theta_norm, horizon=horizon),
    )
    device = "cpu" if shared_randomness else opts.device(run, algo)  # the kernel has no pairs
    config = SimulationConfig(
        algo, horizon, runs, delta, batches, device=device, shared_randomness=shared_randomness
    )
    with run.progress(f"{algo}: executions", total=runs) as advance, run.timer("simulate_s"):
        results = run_experiment(environment, config, run.seed, on_progress=advance)
    _warn_untestable(run, results)
    if run.wants_artifacts:
        run.save_plot(plots.regret_curves([results], "mean regret"), "regret_curve")
        run.save_plot(plots.trace_frequencies([results], "trace frequencies"), "trace_frequencies")
    run.finish(results, config, render_run)


# ---------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------
DEFAULT_ALGOS = (
    "etc,list-2k,list-k-delta,list-batched,linear-batched,ucb1,successive-elimination,thompson,"
    "replicable-elimination"
)
COMPARE_KEYS = (
    "horizon, runs, delta, instance, algorithms [{algorithm, guarantee_claim, claimed_regret, "
    "mean_regret, mean_regret_ci95, regret_over_horizon, regret_bound, distinct_traces, "
    "list_bound, traces_covering_1_minus_delta, list_size_interval, guarantee, "
    "guarantee_held, guarantee_check, pair_agreement, rho_bound, rho_held, top_trace_shares, "
    "regret_curve}], shared_randomness, crossing (with etc and list-2k: {horizons, regret, "
    "fits, alg1_ahead_at, alg1_overtakes_etc {horizon, range, note}})"
)


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
    shared_randomness: SharedOpt = False,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """Several algorithms on one instance: regret, traces, guarantees, and (with etc and
    list-2k) the horizon where Alg. 1 would overtake ETC; curves and a trace plot with --out."""
    from iclr25 import parallel_options
    from iclr25.commands import bandit_replicable_options as opts
    from iclr25.commands.bandit_replicable_render import render_compare
    from iclr25.core.bandit_replicable import plots
    from iclr25.core.bandit_replicable.cells import InstanceSpec
    from iclr25.core.bandit_replicable.simulate import SimulationConfig
    from iclr25.core.bandit_replicable.sweep import parse_algorithms, run_compare

    names = parse_algorithms(algos)
    execution = parallel_options.execution(workers, scheduler, no_cache)
    environment = opts.k_armed_environment(
        run, k=k, means=means, instance=instance, gap=gap, noise=noise, sigma=sigma, horizon=horizon
    )
    base = SimulationConfig(
        names[0], horizon, runs, delta, batches, shared_randomness=shared_randomness
    )
    spec = InstanceSpec.of(environment)
    with run.progress("cells", total=len(names)) as advance, run.timer("simulate_s"):
        results, outcomes = run_compare(names, spec, base, run.seed, execution, advance)
    _report_outcomes(run, outcomes)
    for entry in results["algorithms"]:
        _warn_untestable(run, {**entry, "runs": runs})
    if run.wants_artifacts:
        entries = results["algorithms"]
        run.save_plot(plots.regret_curves(entries, "mean regret"), "regret_curves")
        run.save_plot(plots.trace_frequencies(entries, "trace frequencies"), "trace_frequencies")
        if results["crossing"]:
            run.save_plot(plots.crossing_plot(results["crossing"]), "etc_crossing")
    config = {"algos": names, "horizon": horizon, "runs": runs, "delta": delta}
    config |= {"batches": batches, "shared_randomness": shared_randomness}
    run.finish(results, config, render_compare)


# ---------------------------------------------------------------------------------------
# sweep
# ---------------------------------------------------------------------------------------
SWEEP_KEYS = (
    "--over horizon: algorithm, mode, rows [{horizon, mean_regret, mean_regret_ci95, "
    "regret_over_horizon, worst_gap, easiest_regret_share_of_uniform, past_exploration, "
    "distinct_traces, traces_covering_1_minus_delta, list_size_interval, list_bound, "
    "guarantee}], fitted_exponent, fitted_exponent_ci95, fit_rule, fit_horizons, "
    "exploration_horizons, fitted_exponent_all_horizons(_ci95), claimed_exponent, "
    "design_exponent, batches, batches_needed_for_claim, claimed_regret, guarantee_claim, "
    "hypothesis, pass_condition, verdict, guarantee_outcomes, guarantee_held_everywhere. "
    "--over k|delta|batches: algorithm, over, "
    "horizon, runs, family, rows [{value, k, delta, batches, instance_family, "
    "instance_scale, instance_means, pilot_covering, traces_covering_1_minus_delta, "
    "list_size_interval, distinct_traces, list_bound, prefix_list_bound, share_of_bound, "
    "guarantee, guarantee_check, mean_regret, regret_over_horizon}], guarantee_outcomes, "
    "guarantee_held_everywhere, bound_approached"
)
OverOpt = Annotated[
    Over,
    typer.Option(
        "--over",
        help="horizon: regret against T (exponent fit). k, delta or batches: measured list "
        "size against the bound, on instances that stress it (--values, --horizon).",
    ),
]
ValuesOpt = Annotated[
    str | None,
    typer.Option(
        "--values",
        help="Values of --over k|delta|batches (default k: 2..8; delta: 0.2..0.01; batches: 2..5).",
    ),
]
FamilyOpt = Annotated[
    Family,
    typer.Option(
        "--family",
        help="--over k|delta|batches: the instance of each value: search (the most traces "
        "over the stress families and random perturbations) or one named family.",
    ),
]


@command(app, "sweep", epilog=f"JSON results: {SWEEP_KEYS}.")
def sweep_command(
    algo: AlgoOpt = "list-2k",
    over: OverOpt = Over.horizon,
    t_min: Annotated[int, typer.Option("--t-min", help="Smallest horizon.")] = 1_000,
    t_max: Annotated[int, typer.Option("--t-max", help="Largest horizon.")] = 1_000_000,
    points: Annotated[int, typer.Option("--points", help="Log-spaced horizons.")] = 6,
    values: ValuesOpt = None,
    horizon: Annotated[
        int, typer.Option("--horizon", help="--over k|delta|batches: rounds T.")
    ] = 100_000,
    family: FamilyOpt = Family.search,
    pilot_runs: Annotated[
        int, typer.Option("--pilot-runs", help="Executions per candidate of the search.")
    ] = 200,
    k: KOpt = 5,
    runs: Annotated[
        int | None,
        typer.Option("--runs", help="Executions per cell (default 300; 1000 for list sizes)."),
    ] = None,
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
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """Regret against log-spaced horizons (exponent fitted past exploration), or measured
    list size against the bound over k, δ or B (--over)."""
    from iclr25 import parallel_options
    from iclr25.commands import bandit_replicable_options as opts
    from iclr25.commands.bandit_replicable_render import render_list_sweep, render_sweep
    from iclr25.core.bandit_replicable import plots

    execution = parallel_options.execution(workers, scheduler, no_cache)
    if over != Over.horizon:
        from iclr25.core.bandit_replicable.list_sweep import ListSweepConfig, run_list_sweep

        config = ListSweepConfig(
            algo,
            over.value,
            opts.parse_values(values, over.value),
            horizon,
            runs or 1000,
            k,
            delta,
            batches,
            family.value,
            pilot_runs,
            noise.value,
            sigma,
        )
        with run.progress(f"{algo}: {over.value}", total=len(config.values)) as advance:
            with run.timer("simulate_s"):
                results, outcome = run_list_sweep(config, run.seed, execution, advance)
        _report_outcomes(run, [outcome])
        if run.wants_artifacts:
            run.save_plot(plots.list_size_plot(results), "list_size_vs_bound")
        run.finish(results, config, render_list_sweep)
        return
    from iclr25.core.bandit_replicable.cells import InstanceSpec
    from iclr25.core.bandit_replicable.sweep import SweepConfig, horizon_grid, run_sweep

    horizons = horizon_grid(t_min, t_max, points)
    spec = None
    if fixed_instance:
        environment = opts.k_armed_environment(
            run,
            k=k,
            means=means,
            instance=instance,
            gap=gap,
            noise=noise,
            sigma=sigma,
            horizon=horizons[0],
        )
        spec, k = InstanceSpec.of(environment), environment.k
    else:
        from iclr25.core.bandit_replicable.environments import check_common

        check_common(k, horizons[0], noise.value, sigma)
    config = SweepConfig(
        algo,
        horizons,
        runs or 300,
        delta,
        batches,
        k,
        noise.value,
        sigma,
        worst_case=not fixed_instance,
        gap_points=gap_points,
    )
    cells = len(horizons) * (1 if fixed_instance else max(gap_points, 0))
    with run.progress(f"{algo}: sweep cells", total=cells) as advance, run.timer("simulate_s"):
        results, outcome = run_sweep(config, spec, run.seed, execution, advance)
    _report_outcomes(run, [outcome])
    if run.wants_artifacts:
        run.save_plot(plots.sweep_plot(results), "regret_vs_horizon")
    run.finish(results, config, render_sweep)


# ---------------------------------------------------------------------------------------
# lower-bound
# ---------------------------------------------------------------------------------------
LOWER_KEYS = (
    "k, gap, delta, horizons, runs, max_scale, hypotheses, pass_conditions, "
    "pigeonhole_floor, algorithms [{algorithm, needs_k_traces {horizon, instance, "
    "traces_covering_1_minus_delta, list_size_interval, distinct_traces, "
    "regret_over_horizon, verdict, passed}, restricted {rows [{horizon, listed_traces, "
    "listed_share_at_centre, restricted_regret_over_T, restricted_worst_instance, "
    "unrestricted_regret_over_T, unrestricted_regret_over_T_ci95, "
    "unrestricted_worst_instance}], verdict, passed, floor}}], escapes"
)
LOWER_ALGOS = "etc,list-2k,list-k-delta,list-batched,linear-batched"


@command(app, "lower-bound", epilog=f"JSON results: {LOWER_KEYS}.")
def lower_bound_command(
    algos: Annotated[
        str, typer.Option("--algos", help=f"Comma-separated names ({ALGORITHM_NAMES}).")
    ] = LOWER_ALGOS,
    k: KOpt = 3,
    gap: Annotated[float, typer.Option("--gap", help="Δ of the vertex instances (part B).")] = 0.2,
    t_min: Annotated[int, typer.Option("--t-min", help="Smallest horizon.")] = 1_000,
    t_max: Annotated[int, typer.Option("--t-max", help="Largest horizon (part A's).")] = 1_000_000,
    points: Annotated[int, typer.Option("--points", help="Log-spaced horizons.")] = 4,
    runs: RunsOpt = 500,
    delta: DeltaOpt = 0.05,
    batches: BatchesOpt = 3,
    max_scale: Annotated[
        float,
        typer.Option("--max-scale", help="Part A: every mean within this of the others."),
    ] = 0.25,
    pilot_runs: Annotated[
        int, typer.Option("--pilot-runs", help="Executions per candidate of the search.")
    ] = 200,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """Both halves of the lower bound, measured: each algorithm needs ≥ k traces on some
    near-tied instance (A), and restricted to k-1 traces its regret/T stays away from 0 (B)."""
    from iclr25 import parallel_options
    from iclr25.commands.bandit_replicable_render import render_lower
    from iclr25.core.bandit_replicable import plots
    from iclr25.core.bandit_replicable.lower_bound import LowerBoundConfig, run_lower_bound
    from iclr25.core.bandit_replicable.sweep import horizon_grid, parse_algorithms

    execution = parallel_options.execution(workers, scheduler, no_cache)
    names = tuple(parse_algorithms(algos))
    horizons = horizon_grid(t_min, t_max, points)
    config = LowerBoundConfig(names, k, gap, horizons, runs, delta, batches, max_scale, pilot_runs)
    total = len(names) * (1 + len(horizons))
    with run.progress("cells", total=total) as advance, run.timer("simulate_s"):
        results, outcomes = run_lower_bound(config, run.seed, execution, advance)
    _report_outcomes(run, outcomes)
    for line in results["escapes"]:
        run.warn(line)
    if run.wants_artifacts:
        run.save_plot(plots.lower_bound_plot(results), "regret_over_T")
    run.finish(results, config, render_lower)


def _demo_headline(doc: dict) -> str:
    from iclr25.core.bandit_replicable.summaries import compare_headline

    return compare_headline(doc["results"])


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

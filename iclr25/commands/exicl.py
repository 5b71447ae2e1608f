"""`iclr25 exicl`: several distinct constraints that each explain the expert (ExICL).

Zhao, Xu, Yue, Liu, ICLR 2025. "ICL" is *inverse constraint learning* here — recovering a
constraint from demonstrations optimal under it — not in-context learning (`icl-order`).
Subcommands: ``train-prior`` (the trajectory diffusion prior), ``recover`` (K constraints
from demonstrations, each checked exactly), ``verify`` (exact verdicts of given masks),
``calibrate`` (GDV against exact verdicts: precision, recall) and ``experiment`` (the
headline: ExICL against an equal-budget control and max-entropy ICL). The method lives in
:mod:`iclr25.core.exicl`; options in :mod:`.exicl_options`.
"""

import typer

from iclr25.commands import exicl_options as opt
from iclr25.demo import DemoStep
from iclr25.runner import Run, command

NAME = "exicl"
HELP = (
    "Exploratory inverse constraint learning (ExICL): several distinct constraints that "
    "each explain the expert. ICL = inverse constraint learning, not in-context learning."
)
app = typer.Typer(no_args_is_help=True, help=HELP)


# ---------------------------------------------------------------------------------------
# train-prior
# ---------------------------------------------------------------------------------------
@command(app, "train-prior", epilog=opt.TRAIN_KEYS)
def train_prior_command(
    save: opt.SaveOpt,
    demos: opt.DemosOpt = None,
    env: opt.EnvOpt = None,
    layout: opt.LayoutOpt = opt.Layout.wall,
    nominal: opt.NominalOpt = None,
    horizon: opt.HorizonOpt = 32,
    train_steps: opt.TrainStepsOpt = 3000,
    trajectories: opt.TrajectoriesOpt = 2000,
    tolerance: opt.ToleranceOpt = 0.10,
    state_columns: opt.StateColsOpt = "x,y",
    action_columns: opt.ActionColsOpt = "dx,dy",
    *,
    run: Run,
) -> None:
    """Train the trajectory diffusion prior p_θ(τ) on nominal data (given with --nominal,
    else generated from the spec: noisy shortest paths, constraints ignored)."""
    from iclr25.core.exicl.pipeline import check_inputs, fit_prior, load_problem
    from iclr25.core.exicl.prior import save_prior

    opt.check_save(save, run.options.overwrite)
    problem = load_problem(demos, env, layout.value, run.seed, state_columns, action_columns)
    config = opt.prior_config(horizon, train_steps, trajectories)
    check_inputs(problem, config.horizon, tolerance)
    data = opt.read_nominal(nominal, problem, config.horizon)
    with run.progress("prior", total=config.train_steps) as advance, run.timer("train_s"):
        prior, report = fit_prior(problem, config, run.seed, data, advance)
    save_prior(prior, save, problem.spec)
    results = {"saved_to": str(save), "spec_digest": prior.spec_digest, **report}
    run.finish(results, report.pop("config"), opt.render_prior)


# ---------------------------------------------------------------------------------------
# recover
# ---------------------------------------------------------------------------------------
@command(app, "recover", epilog=opt.RECOVER_KEYS)
def recover_command(
    demos: opt.DemosOpt = None,
    env: opt.EnvOpt = None,
    layout: opt.LayoutOpt = opt.Layout.wall,
    prior: opt.PriorOpt = None,
    k: opt.KOpt = 5,
    diversity: opt.DiversityOpt = 1.0,
    sparsity: opt.SparsityOpt = 0.1,
    rounds: opt.RoundsOpt = 20,
    samples: opt.SamplesOpt = 32,
    tolerance: opt.ToleranceOpt = 0.10,
    horizon: opt.HorizonOpt = 32,
    state_columns: opt.StateColsOpt = "x,y",
    action_columns: opt.ActionColsOpt = "dx,dy",
    *,
    run: Run,
) -> None:
    """Learn K constraints from demonstrations (without --demos: the `wall` layout), each
    checked exactly; --out adds constraints.npz (masks, φ) and constraints.png."""
    from iclr25.core.exicl.pipeline import check_inputs, load_problem, recover

    problem = load_problem(demos, env, layout.value, run.seed, state_columns, action_columns)
    config = opt.exicl_config(k, diversity, sparsity, rounds, samples, tolerance)
    trivial = check_inputs(problem, horizon, tolerance)
    if trivial:
        run.warn(
            "the demonstrations are optimal without any constraint: every constraint they "
            "avoid explains them, so diversity is meaningless (trivial: true)"
        )
    model = opt.obtain_prior(run, prior, problem, horizon)
    with run.progress("rounds", total=k * rounds) as advance, run.timer("recover_s"):
        results, masks, phi = recover(problem, model, config, run.seed, trivial, advance)
    if run.wants_artifacts:
        opt.save_constraints(run, problem, masks, phi)
    run.finish(results, config, opt.render_recover)


# ---------------------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------------------
@command(app, "verify", epilog=opt.VERIFY_KEYS)
def verify_command(
    masks: opt.MasksOpt,
    demos: opt.DemosOpt = None,
    env: opt.EnvOpt = None,
    layout: opt.LayoutOpt = opt.Layout.wall,
    tolerance: opt.ToleranceOpt = 0.10,
    state_columns: opt.StateColsOpt = "x,y",
    action_columns: opt.ActionColsOpt = "dx,dy",
    *,
    run: Run,
) -> None:
    """Exact verdicts of given constraint masks (.npz `masks` bool [K, height, width],
    True = infeasible) against the demonstrations (Dijkstra; the CUDA kernel with
    --device cuda)."""
    from iclr25.core.exicl.pipeline import check_inputs, load_problem, verify_masks

    problem = load_problem(demos, env, layout.value, run.seed, state_columns, action_columns)
    check_inputs(problem, 10**9, tolerance)
    arrays = opt.read_masks(masks)
    with run.timer("verify_s"):
        results = verify_masks(problem, arrays, tolerance, opt.verify_device(run))
    run.finish(results, {"masks": str(masks), "tolerance": tolerance}, opt.render_verify)


# ---------------------------------------------------------------------------------------
# calibrate
# ---------------------------------------------------------------------------------------
@command(app, "calibrate", epilog=opt.CALIBRATE_KEYS)
def calibrate_command(
    candidates: opt.CandidatesOpt = 2000,
    layout: opt.LayoutOpt = opt.Layout.wall,
    prior: opt.PriorOpt = None,
    tolerance: opt.ToleranceOpt = 0.10,
    *,
    run: Run,
) -> None:
    """GDV against exact verdicts on perturbed and random masks of a built-in layout (drawn
    from --seed): precision and recall of "feasible"."""
    from iclr25.core.exicl.calibrate import CalibrateConfig, calibrate
    from iclr25.core.exicl.pipeline import check_inputs, load_problem
    from iclr25.runner import require

    require(candidates >= 1, f"--candidates {candidates} is below 1", "use ≥ 1")
    problem = load_problem(None, None, layout.value, run.seed)
    config = CalibrateConfig(candidates=candidates, tolerance=tolerance)
    check_inputs(problem, 10**9, tolerance)
    model = opt.obtain_prior(run, prior, problem, 32)
    with run.progress("masks", total=candidates) as advance, run.timer("calibrate_s"):
        results = calibrate(problem, model, config, run.seed, advance)
    run.finish(results, config, opt.render_calibrate)


# ---------------------------------------------------------------------------------------
# experiment
# ---------------------------------------------------------------------------------------
@command(app, "experiment", epilog=opt.EXPERIMENT_KEYS)
def experiment_command(
    quick: opt.QuickOpt = False,
    seeds: opt.SeedsOpt = None,
    k: opt.KOpt = 5,
    rounds: opt.RoundsOpt = 20,
    samples: opt.SamplesOpt = 32,
    workers: opt.WorkersOpt = 1,
    scheduler: opt.SchedulerOpt = None,
    no_cache: opt.NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """The headline: on fresh hidden constraints, ExICL against the equal-budget control
    (--diversity 0) on `wall` (ambiguous) and `box` (almost identifiable); exact verdicts,
    paired 95 % t-intervals, pass conditions fixed in code."""
    from iclr25 import parallel_options
    from iclr25.core.exicl.experiment import ExperimentConfig, run_experiment

    config = ExperimentConfig.make(quick, seeds, k, rounds, samples)
    execution = parallel_options.execution(workers, scheduler, no_cache)
    with run.progress("recoveries", total=config.tasks) as advance, run.timer("experiment_s"):
        results, outcome = run_experiment(config, run.seed, execution, advance)
    parallel_options.report(run, outcome)
    if results["verdict"] != "reproduced":
        run.warn(results["summary"])
    run.finish(results, config, opt.render_experiment)


def _demo_headline(doc: dict) -> str:
    from iclr25.core.exicl.experiment import recover_headline

    return recover_headline(doc["results"])


DEMO = (
    DemoStep(
        "exicl recover",
        ("exicl", "recover", "--k", "2", "--rounds", "4", "--samples", "16"),
        _demo_headline,
        timeout_s=180.0,
    ),
)

"""`iclr25 pn-gail`: imitation from imperfect demonstrations with Positive-Negative GAIL.

Thin commands over :mod:`iclr25.core.pn_gail` (Liu, Fu, Tang, Chen, Dong, ICLR 2025):
``demos`` (generate or inspect demonstrations), ``confidence`` (complete the unlabelled
confidences), ``train`` (one method with TRPO from sb3-contrib), ``fixed-point`` (where
each loss drives the policy: closed forms against adversarial play) and ``compare`` (the
headline study against GAIL, 2IWIL, IC-GAIL and BC, with its controls and verdict).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands.pn_gail_options import (
    METHODS,
    TRAIN_PANEL,
    Classifier,
    ClassifierOpt,
    ClassifierStepsOpt,
    CompareWorkersOpt,
    ConfidenceFileOpt,
    DemosOpt,
    EnvOpt,
    EpisodesOpt,
    ExpertReturnOpt,
    FixedHorizonOpt,
    LabeledOpt,
    LevelsOpt,
    Noise,
    NoiseOpt,
    OptimalShareOpt,
    OracleOpt,
    Preset,
    PresetOpt,
    StepsOpt,
    check_steps,
    demo_config,
    parse_floats,
    parse_matrix,
    parse_names,
)
from iclr25.commands.pn_gail_render import (
    render_compare,
    render_confidence,
    render_demos,
    render_fixed_point,
    render_train,
)
from iclr25.demo import DemoStep
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, execution, report
from iclr25.runner import Run, command, require

NAME = "pn-gail"
HELP = "Imitation from imperfect demonstrations: PN-GAIL against GAIL, 2IWIL, IC-GAIL, BC."

app = typer.Typer(no_args_is_help=True, help=HELP)

DEFAULT_LEVELS = "0.4,0.6,0.8,1.0"
SavePath = Annotated[
    Path | None,
    typer.Option("--save", help="Write the output here (never overwritten without --overwrite)."),
]


def _device_note(run: Run) -> None:
    if run.device.kind == "cuda":
        run.warn("pn-gail trains on the CPU: its networks are 64–100 wide, too small for a GPU")


def _load_demos(run: Run, path, confidence_file, env: str, config, labeled):
    """(demos, spec): the file's demonstrations, or generated ones (Pendulum only)."""
    import numpy as np

    from iclr25.core.pn_gail.demo_files import load_demos
    from iclr25.core.pn_gail.demos import generate, hide_confidences
    from iclr25.core.pn_gail.envs import PENDULUM, env_spec, require_rl_stack

    require_rl_stack()
    spec = env_spec(env)
    if path is None:
        require(
            env == PENDULUM,
            f"--env {env} has no bundled expert to generate demonstrations",
            "pass --demos FILE recorded on that environment",
        )
        return generate(config, run.seed), spec
    demos = load_demos(path, confidence_file, (spec.obs_dim, spec.act_dim))
    if labeled is not None or (confidence_file is not None and demos.labeled.all()):
        fraction = config.labeled_fraction
        if fraction < 1:
            truth = demos.true_confidence if demos.true_confidence is not None else None
            source = truth if truth is not None else demos.confidence
            if np.isnan(source).any():
                run.warn("--labeled-fraction applies to labelled pairs only: NaNs are kept")
            demos.confidence = hide_confidences(source, fraction, np.random.default_rng(run.seed))
    return demos, spec


def _classifier(kind: Classifier, steps: int = 600):
    from iclr25.core.pn_gail.confidence import ClassifierConfig

    require(1 <= steps <= 10_000_000, f"--classifier-steps {steps} is out of range", "use 600")
    return ClassifierConfig(kind=kind.value, steps=steps)


DEMOS_KEYS = "demonstrators {level, return_mean, confidence, pairs, episodes}, pairs, labeled"


@command(app, "demos", epilog=f"JSON results: {DEMOS_KEYS}, saved_to.")
def demos_command(
    save: SavePath = None,
    demos: DemosOpt = None,
    confidence_file: ConfidenceFileOpt = None,
    levels: LevelsOpt = DEFAULT_LEVELS,
    noise: NoiseOpt = Noise.uniform,
    episodes: EpisodesOpt = 5,
    optimal_share: OptimalShareOpt = 0.2,
    labeled_fraction: LabeledOpt = None,
    env: EnvOpt = "pendulum",
    *,
    run: Run,
) -> None:
    """Generate imperfect demonstrations from the bundled expert (or inspect a file)."""
    from iclr25.atomic import refuse_existing
    from iclr25.core.pn_gail.demo_files import save_demos
    from iclr25.core.pn_gail.reports import demos_summary

    if save is not None:
        refuse_existing(save, run.options.overwrite)
    config = demo_config(levels, noise, episodes, optimal_share, labeled_fraction)
    with run.timer("demos_s"):
        data, _ = _load_demos(run, demos, confidence_file, env, config, labeled_fraction)
    results = demos_summary(data)
    if save is not None:
        save_demos(save, data, run.options.overwrite)
        results["saved_to"] = str(save)
    run.finish(results, {"demos": config, "source": data.source}, render_demos)


CONFIDENCE_KEYS = (
    "classifier, pairs, labeled, mae_unlabeled, correlation, per_demonstrator {demonstrator, "
    "level, true_confidence, predicted_mean, unlabeled_pairs}, saved_to"
)


@command(app, "confidence", epilog=f"JSON results: {CONFIDENCE_KEYS}.")
def confidence_command(
    demos: DemosOpt = None,
    save: SavePath = None,
    confidence_file: ConfidenceFileOpt = None,
    classifier: ClassifierOpt = Classifier.balanced,
    classifier_steps: ClassifierStepsOpt = 600,
    levels: LevelsOpt = DEFAULT_LEVELS,
    noise: NoiseOpt = Noise.uniform,
    episodes: EpisodesOpt = 5,
    optimal_share: OptimalShareOpt = 0.2,
    labeled_fraction: LabeledOpt = None,
    env: EnvOpt = "pendulum",
    *,
    run: Run,
) -> None:
    """Confidence of the unlabelled pairs by the balanced (or 2IWIL) classifier."""
    from iclr25.atomic import refuse_existing
    from iclr25.core.pn_gail.demo_files import save_demos
    from iclr25.core.pn_gail.pipeline import complete_confidences
    from iclr25.core.pn_gail.reports import confidence_summary

    if save is not None:
        refuse_existing(save, run.options.overwrite)
    config = demo_config(levels, noise, episodes, optimal_share, labeled_fraction)
    data, _ = _load_demos(run, demos, confidence_file, env, config, labeled_fraction)
    classifier_config = _classifier(classifier, classifier_steps)
    with run.progress("classifier steps", classifier_config.steps) as advance:
        with run.timer("classifier_s"):
            r = complete_confidences(data, classifier_config, run.seed, on_step=advance)
    results = confidence_summary(data, r, classifier.value)
    if data.true_confidence is None:
        run.warn("the file has no true confidences: MAE and correlation are not measured")
    if save is not None:
        data.confidence = r
        save_demos(save, data, run.options.overwrite)
        results["saved_to"] = str(save)
    run.finish(results, {"classifier": classifier_config, "demos": config}, render_confidence)


TRAIN_KEYS = (
    "method, env, normalized_return (mean of the evaluations at 80–100 % of the budget), "
    "return_mean, final_normalized_return, curve {rollout, env_steps, return_mean, "
    "normalized_return}, env_steps, confidence {mae_unlabeled, correlation}, saved_to"
)


@command(app, "train", epilog=f"JSON results: {TRAIN_KEYS}.")
def train_command(
    method: Annotated[
        str,
        typer.Option(
            "--method", help=f"One of: {', '.join(METHODS)}.", rich_help_panel=TRAIN_PANEL
        ),
    ] = "pn-gail",
    demos: DemosOpt = None,
    env: EnvOpt = "pendulum",
    steps: StepsOpt = 200_000,
    save: SavePath = None,
    preset: PresetOpt = Preset.default,
    fixed_horizon: FixedHorizonOpt = False,
    expert_return: ExpertReturnOpt = None,
    confidence_file: ConfidenceFileOpt = None,
    classifier: ClassifierOpt = Classifier.balanced,
    oracle_confidence: OracleOpt = False,
    levels: LevelsOpt = DEFAULT_LEVELS,
    noise: NoiseOpt = Noise.uniform,
    episodes: EpisodesOpt = 5,
    optimal_share: OptimalShareOpt = 0.2,
    labeled_fraction: LabeledOpt = None,
    *,
    run: Run,
) -> None:
    """Train one method (TRPO from sb3-contrib) on imperfect demonstrations."""
    from iclr25.atomic import refuse_existing
    from iclr25.core.pn_gail import envs, reports, trainer
    from iclr25.core.pn_gail.bc import BCConfig
    from iclr25.core.pn_gail.pipeline import check_method, complete_confidences, run_method

    check_method(method)
    check_steps(steps)
    if save is not None:
        refuse_existing(save, run.options.overwrite)
    _device_note(run)
    config = demo_config(levels, noise, episodes, optimal_share, labeled_fraction)
    data, spec = _load_demos(run, demos, confidence_file, env, config, labeled_fraction)
    if envs.ends_early(env) and not fixed_horizon:
        run.warn(
            f"{env} can end episodes early: the reward −log D > 0 is a survival bonus there; "
            "pass --fixed-horizon"
        )
    train_config = trainer.preset(
        preset.value,
        method=method,
        steps=steps,
        env=env,
        fixed_horizon=fixed_horizon,
        expert_return=expert_return,
    )
    with run.timer("confidence_s"):
        r = complete_confidences(data, _classifier(classifier), run.seed, oracle_confidence)
    total = (
        0 if method in ("bc", "weighted-bc") else train_config.rollouts * train_config.rollout_steps
    )
    with run.progress(f"{method}: env steps", total or None) as advance, run.timer("train_s"):
        results = run_method(
            method,
            data,
            r,
            spec,
            train_config,
            BCConfig(),
            run.seed,
            advance,
            reports.saver(save) if save else None,
        )
    results = reports.train_summary(results, data, r, env, save)
    if results["normalized_return"] is None:
        run.warn("no R_expert for this env: pass --expert-return to get normalized_return")
    run.finish(results, {"train": train_config, "demos": config}, render_train)


FIXED_POINT_KEYS = (
    "closed_form {gail, 2iwil, pn-gail}, learned {…}, max_abs_error, p_d, positive_mass, "
    "negative_mass"
)


@command(app, "fixed-point", epilog=f"JSON results: {FIXED_POINT_KEYS}.")
def fixed_point_command(
    probs: Annotated[
        str, typer.Option("--probs", help="Action distribution of each demonstrator, rows ';'.")
    ] = "0.8,0.1,0.1;0.1,0.1,0.8",
    confidence: Annotated[
        str, typer.Option("--confidence", help="Confidence r of each demonstrator.")
    ] = "1,0.2",
    shares: Annotated[
        str, typer.Option("--shares", help="Share of the pairs from each demonstrator.")
    ] = "0.2,0.8",
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds of adversarial play.")] = 500,
    *,
    run: Run,
) -> None:
    """Where GAIL, 2IWIL and PN-GAIL drive a one-state policy: closed forms vs learned."""
    from iclr25.core.pn_gail import fixed_point as fp

    require(10 <= rounds <= 1_000_000, f"--rounds {rounds} is out of range", "use e.g. 500")
    game = fp.make_game(
        parse_matrix(probs, "--probs"),
        parse_floats(confidence, "--confidence"),
        parse_floats(shares, "--shares"),
    )
    play = fp.PlayConfig(rounds=rounds)
    with run.timer("play_s"):
        results = fp.solve(game, config=play, seed=run.seed)
    if results["max_abs_error"] > 0.02:
        run.warn(
            f"learned points differ from the closed forms by up to "
            f"{results['max_abs_error']:.3f}: try more --rounds"
        )
    run.finish(
        results,
        {"play": play, "probs": probs, "confidence": confidence, "shares": shares},
        render_fixed_point,
    )


COMPARE_KEYS = (
    "verdict, conditions {name, rule, value, ci95, passed}, settings → setting → methods → "
    "method → normalized_return {mean, ci95, per_seed}, differences {setting:a_vs_b: mean, "
    "ci95, per_seed}, env_steps_per_run, fixed_point (with --quick), headline"
)


@command(app, "compare", epilog=f"JSON results: {COMPARE_KEYS}.")
def compare_command(
    quick: Annotated[
        bool, typer.Option("--quick", help="Fixed point + GAIL vs PN-GAIL, 1 seed, 100k steps.")
    ] = False,
    settings: Annotated[
        str, typer.Option("--settings", help="dominated (80 % non-optimal) and/or optimal.")
    ] = "dominated,optimal",
    methods: Annotated[
        str | None, typer.Option("--methods", help="Run only these methods (default: all).")
    ] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds (fresh demos each).")] = 5,
    steps: StepsOpt = 200_000,
    classifier: ClassifierOpt = Classifier.balanced,
    classifier_steps: ClassifierStepsOpt = 600,
    workers: CompareWorkersOpt = None,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """The headline: PN-GAIL vs GAIL (+ 2IWIL, IC-GAIL, BC) with controls and a verdict."""
    import dataclasses

    from iclr25.core.pn_gail import study
    from iclr25.core.pn_gail.envs import require_rl_stack
    from iclr25.core.pn_gail.trainer import TrainConfig

    require_rl_stack()
    check_steps(steps)
    require(1 <= seeds <= 1000, f"--seeds {seeds} is out of range", "use e.g. --seeds 5")
    _device_note(run)
    config = study.CompareConfig(
        settings=parse_names(settings, tuple(study.SETTINGS), "--settings"),
        methods=parse_names(methods, study.SETTING_METHODS["dominated"], "--methods"),
        seeds=seeds,
        train=TrainConfig(steps=steps),
        classifier=_classifier(classifier, classifier_steps),
    )
    if quick:
        config = study.quick_config(config)
    elif seeds < 3:
        run.warn(f"{seeds} seed(s): the intervals are wide or undefined; the issue asks for ≥ 3")
    if workers is None:
        free = study.free_cores()
        workers = study.default_workers(quick and scheduler is None, free)
        if quick and scheduler is None:
            run.log(f"--quick: {workers} process(es), {max(free, 0):.1f} cores free (--workers N)")
    ex = execution(workers, scheduler, no_cache)
    with run.progress("pn-gail compare: tasks", study.task_count(config)) as advance:
        with run.timer("study_s"):
            results, outcomes = study.run_study(config, run.seed, ex, advance)
    for outcome in outcomes:
        report(run, outcome)
    results["headline"] = study.headline(results)
    run.finish(results, dataclasses.asdict(config), render_compare)


DEMO = (
    DemoStep(
        "pn-gail fixed-point",
        ("pn-gail", "fixed-point", "--rounds", "300"),
        lambda doc: (
            "PN-GAIL's fixed point "
            + ", ".join(f"{p:.2f}" for p in doc["results"]["closed_form"]["pn-gail"])
            + f" (learned within {doc['results']['max_abs_error']:.3f}); GAIL "
            + ", ".join(f"{p:.2f}" for p in doc["results"]["closed_form"]["gail"])
        ),
        timeout_s=180.0,
    ),
    DemoStep(
        "pn-gail compare",
        ("pn-gail", "compare", "--quick", "--no-cache"),
        lambda doc: doc["results"]["headline"],
        timeout_s=600.0,
    ),
)

"""`iclr25 diffusion-at`: adversarially trained diffusion / consistency models (Wang et al.,
ICLR 2025) — train, sample, evaluate, and compare against the baseline at equal steps.

Thin commands over :mod:`iclr25.core.diffusion_at`: parse options, build a config, call
the core, render. Heavy imports (torch, numpy, matplotlib) stay inside the functions.
"""

from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands.diffusion_at_options import (
    AlphaOpt,
    AtOpt,
    AtStartOpt,
    AtStepOpt,
    BatchOpt,
    CmGridOpt,
    CmTargetOpt,
    DataOpt,
    ImageSizeOpt,
    LrOpt,
    NormOpt,
    ObjectiveOpt,
    PgdOpt,
    ReplayOpt,
    ScheduleOpt,
    StepsOpt,
    TargetOpt,
    TeacherOpt,
    TOpt,
    WidthOpt,
    check_data,
    choice,
    collect,
    parse_nfe_list,
    positive,
    validate,
)
from iclr25.demo import DemoStep
from iclr25.runner import Run, command, require

NAME = "diffusion-at"
HELP = "Adversarially trained diffusion and consistency models, and the train/sample mismatch."
app = typer.Typer(no_args_is_help=True, help=HELP)


@command(
    app,
    "train",
    epilog=(
        "JSON results: objective, data, steps, resumed_from_step, n_parameters, final_loss "
        "(mean of the last 100 steps), held_out_loss, loss_curve (every 10th %), at (the AT "
        "config), model_file. Wall-clock steps/s is in timings."
    ),
)
def train(
    data: DataOpt = None,
    objective: ObjectiveOpt = None,
    teacher: TeacherOpt = None,
    steps: StepsOpt = None,
    batch_size: BatchOpt = None,
    lr: LrOpt = None,
    schedule: ScheduleOpt = None,
    diffusion_steps: TOpt = None,
    width: WidthOpt = None,
    image_size: ImageSizeOpt = None,
    cm_grid: CmGridOpt = None,
    cm_target_ema: CmTargetOpt = None,
    at: AtOpt = None,
    norm: NormOpt = None,
    alpha: AlphaOpt = None,
    at_step: AtStepOpt = None,
    pgd_steps: PgdOpt = None,
    free_replays: ReplayOpt = None,
    at_target: TargetOpt = None,
    at_start: AtStartOpt = None,
    checkpoint_dir: Annotated[
        Path | None,
        typer.Option(help="Write full training state every --checkpoint-every steps here."),
    ] = None,
    checkpoint_every: Annotated[int, typer.Option(help="Steps between checkpoints.")] = 500,
    resume: Annotated[
        Path | None, typer.Option(help="Continue from a checkpoint (its options are the defaults).")
    ] = None,
    *,
    run: Run,
) -> None:
    """Train a DDPM (or consistency model), optionally with adversarial training."""
    from iclr25.commands.diffusion_at_train import run_train

    opts = collect(locals())
    validate(opts)
    check_data(data)
    positive(checkpoint_every, "--checkpoint-every")
    run_train(run, data, opts, checkpoint_dir, checkpoint_every, resume)


@command(
    app,
    "sample",
    epilog=(
        "JSON results: sampler, nfe, n, shape, mean, std (per coordinate or pixel average), "
        "finite, samples_file (samples.npy in --out, in the data's units; images in 0..1)."
    ),
)
def sample(
    checkpoint: Annotated[Path, typer.Option(help="A checkpoint written by train.")],
    sampler: Annotated[
        str | None,
        typer.Option(help="ddim | ddpm | cm (default: ddim for DDPMs, cm for consistency models)."),
    ] = None,
    nfe: Annotated[
        int | None, typer.Option(help="Function evaluations (default: 10; cm: 1).")
    ] = None,
    n: Annotated[int, typer.Option(help="Number of samples.")] = 1000,
    weights: Annotated[str, typer.Option(help="ema | model weights.")] = "ema",
    *,
    run: Run,
) -> None:
    """Draw samples from a trained model."""
    from iclr25.commands.diffusion_at_train import run_sample

    choice(sampler, "--sampler", ("ddim", "ddpm", "cm"))
    choice(weights, "--weights", ("ema", "model"))
    positive(n, "--n", 2)
    positive(nfe, "--nfe")
    run_sample(run, checkpoint, sampler, nfe, n, weights)


@command(
    app,
    "eval",
    epilog=(
        "JSON results: data, objective, primary_metric, feature_space, per_nfe (list of "
        "{sampler, nfe, <metric>...}: sw, w2, mmd for points; fd, precision, recall, mmd, sw "
        "for images), mismatch ({sampler, nfe, curve: list of {step, t, mmd, sw}})."
    ),
)
def evaluate(
    checkpoint: Annotated[Path, typer.Option(help="A checkpoint written by train.")],
    data: DataOpt = None,
    sampler: Annotated[str | None, typer.Option(help="ddim | ddpm | cm.")] = None,
    nfe: Annotated[
        str | None,
        typer.Option(help="Comma-separated NFE list (default: 1,2,5,10,20,50; cm: 1,2)."),
    ] = None,
    n: Annotated[int, typer.Option(help="Generated samples per NFE.")] = 2000,
    n_reference: Annotated[int, typer.Option(help="True samples for the metrics.")] = 2000,
    mismatch_nfe: Annotated[
        int, typer.Option(help="NFE of the mismatch curve (0 = skip it).")
    ] = 10,
    weights: Annotated[str, typer.Option(help="ema | model weights.")] = "ema",
    *,
    run: Run,
) -> None:
    """Score a trained model at several NFE and measure its train/sample mismatch."""
    from iclr25.commands.diffusion_at_train import run_eval

    choice(sampler, "--sampler", ("ddim", "ddpm", "cm"))
    choice(weights, "--weights", ("ema", "model"))
    positive(n, "--n", 2)
    positive(n_reference, "--n-reference", 2)
    positive(mismatch_nfe, "--mismatch-nfe", 0)
    check_data(data)
    nfe_list = parse_nfe_list(nfe) if nfe is not None else None
    run_eval(run, checkpoint, data, sampler, nfe_list, n, n_reference, mismatch_nfe, weights)


@command(
    app,
    "compare",
    epilog=(
        "JSON results: data, objective, primary_metric, metrics, feature_space, seeds, steps, "
        "per_nfe (list of {nfe, sampler, baseline: {metric: {mean, sd}}, at: {...}, difference "
        "(AT - baseline, primary metric): {mean, sd}, at_better_seeds}), mismatch ({nfe, "
        "sampler, curve: list of {step, t, baseline: {mmd, sw}, at: {mmd, sw}}}), final_loss, "
        "verdict ({at_better_nfe, at_better_beyond_1sd_nfe, nfe_total})."
    ),
)
def compare(
    data: DataOpt = None,
    objective: ObjectiveOpt = None,
    steps: StepsOpt = None,
    seeds: Annotated[int, typer.Option(help="Number of seeds (--seed, --seed+1, ...).")] = 3,
    nfe: Annotated[
        str | None,
        typer.Option(help="Comma-separated NFE list (default: 2,3,5,10,20,50; cm: 1,2)."),
    ] = None,
    sampler: Annotated[str | None, typer.Option(help="ddim | ddpm | cm.")] = None,
    n: Annotated[
        int | None, typer.Option(help="Generated samples per NFE (default: 2000).")
    ] = None,
    mismatch_nfe: Annotated[
        int | None, typer.Option(help="NFE of the mismatch curves (0 = skip) (default: 10; cm: 2).")
    ] = None,
    quick: Annotated[
        bool, typer.Option(help="Demo size: 800 steps, 3 seeds, NFE 3,5,10,20, 800 samples.")
    ] = False,
    batch_size: BatchOpt = None,
    lr: LrOpt = None,
    schedule: ScheduleOpt = None,
    diffusion_steps: TOpt = None,
    width: WidthOpt = None,
    image_size: ImageSizeOpt = None,
    cm_grid: CmGridOpt = None,
    cm_target_ema: CmTargetOpt = None,
    at: AtOpt = "free",
    norm: NormOpt = None,
    alpha: AlphaOpt = None,
    at_step: AtStepOpt = None,
    pgd_steps: PgdOpt = None,
    free_replays: ReplayOpt = None,
    at_target: TargetOpt = None,
    at_start: AtStartOpt = None,
    *,
    run: Run,
) -> None:
    """Baseline vs AT at equal training steps over seeds: metric per NFE, mismatch curves."""
    from iclr25.commands.diffusion_at_compare import run_compare_command

    opts = collect(locals())
    validate(opts, need_teacher=False)  # compare trains a teacher per seed for cd
    check_data(data)
    require(at != "none", "--at none leaves nothing to compare", "pass --at free, fgsm or pgd")
    positive(seeds, "--seeds")
    positive(n, "--n", 2)
    positive(mismatch_nfe, "--mismatch-nfe", 0)
    choice(sampler, "--sampler", ("ddim", "ddpm", "cm"))
    nfe_list = parse_nfe_list(nfe) if nfe is not None else None
    run_compare_command(run, data, opts, seeds, nfe_list, sampler, n, mismatch_nfe, quick)


def _demo_headline(doc: dict) -> str:
    res = doc["results"]
    row = res["per_nfe"][0]
    metric = res["primary_metric"]
    base, at = row["baseline"][metric], row["at"][metric]
    return (
        f"{res['data']} NFE {row['nfe']} {metric}: baseline {base['mean']:.3f}±{base['sd']:.3f}"
        f" vs AT {at['mean']:.3f}±{at['sd']:.3f} ({row['at_better_seeds']}/{len(res['seeds'])}"
        " seeds better)"
    )


DEMO = (DemoStep("diffusion-at compare", ("diffusion-at", "compare", "--quick"), _demo_headline),)

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
    PresetOpt,
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
    parse_variants,
    positive,
    validate,
)
from iclr25.core.diffusion_at.names import PRESETS
from iclr25.demo import DemoStep
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt, execution
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
        "config), at_start, mean_delta_norm (mean per-sample ‖δ‖ of the perturbed passes), "
        "model_file, preview_n (samples per panel of samples.png). Wall-clock train_s, "
        "steps_per_s and preview_s are in timings."
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
    preset: PresetOpt = None,
    preview: Annotated[
        int | None,
        typer.Option(
            help="Samples per preview sampler in samples.png (with --out; 0 = none). Default: "
            "as many as fit in 10% of the training time (at most 2000 points / 64 images)."
        ),
    ] = None,
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
    choice(preset, "--preset", PRESETS)
    positive(checkpoint_every, "--checkpoint-every")
    positive(preview, "--preview", 0)
    run_train(run, data, opts, checkpoint_dir, checkpoint_every, resume, preset, preview)


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
        "JSON results: data, objective, primary_metric, primary_label, feature_space, per_nfe "
        "(list of {sampler, nfe, <metric>...}: sw, w2, mmd for points; fd, precision, recall, "
        "density, coverage, mmd, sw for images), mismatch ({sampler, nfe, curve: list of "
        "{step, t, mmd, sw}})."
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
        "JSON results: data, objective, primary_metric, primary_label, metrics, feature_space, "
        "variants, seeds, steps, at_start, at, hypothesis (claim, controls, test, "
        "pass_conditions), per_nfe (list of {nfe, sampler, <variant>: {metric: {mean, sd, low, "
        "high}} for each variant, versus_baseline: {variant: {difference, p_value, p_holm, "
        "significant, better_seeds}}, at_versus: {replay|noise: ...}, significant: [variants "
        "significantly better than the baseline]}), mismatch ({nfe, sampler, curve: list of "
        "{step, t, <variant>: {mmd, sw}, at_minus_baseline_mmd}, at_raises_t, at_lowers_t}), "
        "training ({variant: {final_loss, delta_norm}}), verdict (significant, at_better_nfe, "
        "paper_claim_observed, adversarial_effect_observed, adversarial_nfe, statement)."
    ),
)
def compare(
    data: DataOpt = None,
    objective: ObjectiveOpt = None,
    steps: StepsOpt = None,
    seeds: Annotated[
        int | None,
        typer.Option(help="Paired replicates (seeds derived from --seed) (default: 5; quick: 3)."),
    ] = None,
    variants: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated variants besides the baseline: at, replay, noise (default: "
            "all; the controls need --at free)."
        ),
    ] = None,
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
    preset: PresetOpt = None,
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
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """Baseline vs AT, replay-only and noise controls at equal optimiser steps over seeds:
    metric per NFE with paired tests, mismatch curves, the verdict."""
    from iclr25.commands.diffusion_at_compare import run_compare_command

    opts = collect(locals())
    opts["method"] = opts["method"] or ("free" if preset is None else None)
    validate(opts, need_teacher=False)  # compare trains a teacher per seed for cd
    check_data(data)
    choice(preset, "--preset", PRESETS)
    require(at != "none", "--at none leaves nothing to compare", "pass --at free, fgsm or pgd")
    require(
        at not in ("replay", "noise"),
        f"--at {at} is a control, which compare runs itself",
        "pass the AT method under test: --at free (default), fgsm or pgd",
    )
    positive(seeds, "--seeds")
    positive(n, "--n", 2)
    positive(mismatch_nfe, "--mismatch-nfe", 0)
    choice(sampler, "--sampler", ("ddim", "ddpm", "cm"))
    args = {
        "seeds": seeds or (3 if quick else 5),
        "nfe_list": parse_nfe_list(nfe) if nfe is not None else None,
        "sampler": sampler,
        "n": n,
        "mismatch_nfe": mismatch_nfe,
        "quick": quick,
        "variants": parse_variants(variants),
        "preset": preset,
    }
    run_compare_command(run, data, opts, args, execution(workers, scheduler, no_cache))


def _demo_headline(doc: dict) -> str:
    from iclr25.core.diffusion_at.verdict import headline

    return headline(doc["results"])


DEMO = (DemoStep("diffusion-at compare", ("diffusion-at", "compare", "--quick"), _demo_headline),)

"""`iclr25 diffusion-at`: adversarially trained diffusion / consistency models (Wang et al.,
ICLR 2025) — train, sample, evaluate, and compare against the baseline at equal steps.

Thin commands over :mod:`iclr25.core.diffusion_at`: parse options, build a config, call
the core, render. Heavy imports (torch, numpy, matplotlib) stay inside the functions.
"""

from pathlib import Path
from typing import Annotated

import typer

from iclr25.demo import DemoStep
from iclr25.errors import UsageError
from iclr25.runner import Run, command, require

NAME = "diffusion-at"
HELP = "Adversarially trained diffusion and consistency models, and the train/sample mismatch."
app = typer.Typer(no_args_is_help=True, help=HELP)

_AT = "Adversarial training"
_TRAIN = "Training"
DataOpt = Annotated[
    str | None,
    typer.Option(
        "--data",
        help=(
            "8gaussians | swissroll | checkerboard | digits | PATH (.npy array or image folder)."
        ),
    ),
]
ObjectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--objective",
        help="ddpm | ct (consistency training) | cd (consistency distillation).",
        rich_help_panel=_TRAIN,
    ),
]
TeacherOpt = Annotated[
    Path | None,
    typer.Option("--teacher", help="cd: the DDPM checkpoint to distil.", rich_help_panel=_TRAIN),
]
StepsOpt = Annotated[
    int | None,
    typer.Option(
        "--steps", help="Optimiser updates (the training budget).", rich_help_panel=_TRAIN
    ),
]
BatchOpt = Annotated[
    int | None,
    typer.Option(
        "--batch-size",
        help="Minibatch size (default: points 256, images 128).",
        rich_help_panel=_TRAIN,
    ),
]
LrOpt = Annotated[
    float | None,
    typer.Option(
        "--lr",
        help="Adam learning rate (default: points 1e-3, images 5e-4).",
        rich_help_panel=_TRAIN,
    ),
]
ScheduleOpt = Annotated[
    str | None,
    typer.Option(
        "--schedule",
        help="Noise schedule: linear | cosine (default: linear).",
        rich_help_panel=_TRAIN,
    ),
]
TOpt = Annotated[
    int | None,
    typer.Option(
        "--diffusion-steps",
        help="T, the number of diffusion steps (default: 1000).",
        rich_help_panel=_TRAIN,
    ),
]
WidthOpt = Annotated[
    int | None,
    typer.Option(
        "--width",
        help="MLP hidden units / U-Net base channels (default: 128 / 32).",
        rich_help_panel=_TRAIN,
    ),
]
ImageSizeOpt = Annotated[
    int | None,
    typer.Option("--image-size", help="Image folders: resize to this square size (default: 16)."),
]
CmGridOpt = Annotated[
    int | None,
    typer.Option(
        "--cm-grid",
        help="Consistency models: N discretisation points (default: 40).",
        rich_help_panel=_TRAIN,
    ),
]
AtOpt = Annotated[
    str | None,
    typer.Option(
        "--at",
        help="none | fgsm | pgd | free | replay (control: free's replays, no δ).",
        rich_help_panel=_AT,
    ),
]
NormOpt = Annotated[
    str | None,
    typer.Option(
        "--norm",
        help="Perturbation norm: l2 | linf (default: l2, as the paper's code).",
        rich_help_panel=_AT,
    ),
]
AlphaOpt = Annotated[
    float | None,
    typer.Option(
        "--alpha",
        help="Radius α per coordinate (ℓ∞: α, ℓ2: α·√d) (default: the measured default).",
        rich_help_panel=_AT,
    ),
]
AtStepOpt = Annotated[
    float | None,
    typer.Option(
        "--at-step",
        help="Ascent step, same units (default: fgsm/free: α, pgd: 2.5α/k).",
        rich_help_panel=_AT,
    ),
]
PgdOpt = Annotated[
    int | None,
    typer.Option("--pgd-steps", help="PGD iterations k (default: 3).", rich_help_panel=_AT),
]
ReplayOpt = Annotated[
    int | None,
    typer.Option(
        "--free-replays",
        help="Free AT: replays m of each minibatch (default: 3).",
        rich_help_panel=_AT,
    ),
]
AtStartOpt = Annotated[
    int | None,
    typer.Option(
        "--at-start",
        help="First step with AT; earlier steps are plain (AT as fine-tuning) (default: 0).",
        rich_help_panel=_AT,
    ),
]
TargetOpt = Annotated[
    str | None,
    typer.Option(
        "--at-target",
        help="eps (keep ε) | x0 (ε + δ/σ_t, the paper's code) (default: x0).",
        rich_help_panel=_AT,
    ),
]


def _choice(value: str | None, name: str, choices: tuple[str, ...]) -> None:
    require(
        value is None or value in choices,
        f"{name} must be one of {', '.join(choices)}, got {value!r}",
        f"pass {name} {choices[0]}",
    )


def check_data(spec: str | None) -> None:
    """Fail fast (before importing torch) on a --data that names nothing."""
    from iclr25.core.diffusion_at.names import DATASETS
    from iclr25.errors import InputError

    if spec is None or spec in DATASETS or Path(spec).expanduser().exists():
        return
    if "/" not in spec and not spec.endswith(".npy"):
        raise InputError(
            f"unknown data set {spec!r}",
            f"use one of {', '.join(DATASETS)}, a .npy file or an image folder",
        )
    raise InputError(
        f"{spec}: no such file or folder", f"check the path, or use one of {', '.join(DATASETS)}"
    )


def _positive(value, name: str, minimum: float = 1) -> None:
    require(
        value is None or value >= minimum,
        f"{name} must be >= {minimum:g}, got {value}",
        f"pass a value >= {minimum:g}",
    )


def _validate(opts: dict, need_teacher: bool = True) -> None:
    """One-line option checks shared by train and compare (before any heavy work)."""
    from iclr25.core.diffusion_at.names import AT_METHODS, AT_TARGETS, NORMS, OBJECTIVES, SCHEDULES

    _choice(opts.get("objective"), "--objective", OBJECTIVES)
    _choice(opts.get("schedule"), "--schedule", SCHEDULES)
    _choice(opts.get("method"), "--at", AT_METHODS)
    _choice(opts.get("norm"), "--norm", NORMS)
    _choice(opts.get("target"), "--at-target", AT_TARGETS)
    alpha = opts.get("alpha")
    require(
        alpha is None or alpha >= 0,
        f"--alpha must be >= 0, got {alpha}",
        "pass a radius such as --alpha 0.05 (0 turns AT off)",
    )
    at_step = opts.get("step")
    require(
        at_step is None or at_step > 0,
        f"--at-step must be > 0, got {at_step}",
        "omit it for the default step",
    )
    for key, flag in (
        ("steps", "--steps"),
        ("batch_size", "--batch-size"),
        ("diffusion_steps", "--diffusion-steps"),
        ("width", "--width"),
        ("pgd_steps", "--pgd-steps"),
        ("free_replays", "--free-replays"),
    ):
        _positive(opts.get(key), flag)
    _positive(opts.get("cm_grid"), "--cm-grid", 2)
    _positive(opts.get("at_start"), "--at-start", 0)
    lr = opts.get("lr")
    require(lr is None or lr > 0, f"--lr must be > 0, got {lr}", "pass e.g. --lr 1e-3")
    if opts.get("objective") == "cd" and need_teacher:
        require(
            opts.get("teacher") is not None,
            "--objective cd needs a teacher",
            "pass --teacher PATH (a checkpoint of `train --objective ddpm`)",
        )


def _build_config(opts: dict, dataset, base=None, data_spec: str | None = None):
    """TrainConfig from options (None = keep ``base``'s value, or the per-kind default)."""
    import dataclasses

    from iclr25.core.diffusion_at.adversarial import ATConfig
    from iclr25.core.diffusion_at.models import ModelSpec
    from iclr25.core.diffusion_at.pipeline import DEFAULT_ALPHA, default_config, teacher_settings

    if base is None:
        base = default_config(dataset, data=data_spec)
    top = {
        k: opts.get(k)
        for k in (
            "at_start",
            "objective",
            "steps",
            "batch_size",
            "lr",
            "schedule",
            "diffusion_steps",
            "cm_grid",
            "image_size",
            "seed",
        )
    }
    top = {k: v for k, v in top.items() if v is not None}
    if opts.get("width") is not None:
        top["model"] = dataclasses.replace(base.model, width=opts["width"])
    elif base.model.data_shape != tuple(dataset.shape):
        top["model"] = ModelSpec.default_for(dataset.shape)
    at_fields = {
        k: opts.get(k)
        for k in ("method", "norm", "alpha", "step", "pgd_steps", "free_replays", "target")
    }
    at_fields = {k: v for k, v in at_fields.items() if v is not None}
    if at_fields.get("method", base.at.method) != "none" and "alpha" not in at_fields:
        at_fields.setdefault("alpha", base.at.alpha or DEFAULT_ALPHA[dataset.kind])
    config = dataclasses.replace(
        base, **top, at=ATConfig(**{**dataclasses.asdict(base.at), **at_fields})
    )
    if config.objective == "cd" and opts.get("teacher") is not None:
        teacher = teacher_settings(Path(opts["teacher"]), dataset)
        for key in ("schedule", "diffusion_steps"):
            given = opts.get(key)
            require(
                given is None or given == teacher[key],
                f"--{key.replace('_', '-')} {given} differs from the teacher's {teacher[key]}",
                "omit it: distillation uses the teacher's schedule",
            )
        config = dataclasses.replace(config, **teacher)
    if config.objective != "cd" and config.teacher is not None:
        config = dataclasses.replace(config, teacher=None, teacher_sha256=None)
    return config


def _open_checkpoint_dir(folder: Path | None, resume) -> None:
    """Refuse to overwrite checkpoints: a fresh run needs an empty folder; a resumed run
    must not find checkpoints beyond the step it resumes from."""
    if folder is None:
        return
    folder.mkdir(parents=True, exist_ok=True)
    steps = [
        int(p.stem.split("-")[1])
        for p in folder.glob("step-*.safetensors")
        if p.stem.split("-")[1].isdigit()
    ]
    start = resume.step if resume is not None else -1
    if resume is None and (steps or (folder / "last.safetensors").exists()):
        raise UsageError(
            f"{folder} already holds checkpoints",
            f"continue with --resume {folder / 'last.safetensors'}, or choose another folder",
        )
    later = [s for s in steps if s > start]
    if later:
        raise UsageError(
            f"{folder} holds checkpoints after step {start} (e.g. step {max(later)})",
            "resume from the latest checkpoint, or choose another --checkpoint-dir",
        )


def _train_render(console, results) -> None:
    from iclr25.output import render_mapping

    render_mapping(console, results, title="diffusion-at train")


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
    from iclr25.commands._diffusion_at_train import run_train

    opts = {
        "objective": objective,
        "teacher": teacher,
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "schedule": schedule,
        "diffusion_steps": diffusion_steps,
        "width": width,
        "image_size": image_size,
        "cm_grid": cm_grid,
        "method": at,
        "norm": norm,
        "alpha": alpha,
        "step": at_step,
        "pgd_steps": pgd_steps,
        "free_replays": free_replays,
        "target": at_target,
        "at_start": at_start,
    }
    _validate(opts)
    check_data(data)
    _positive(checkpoint_every, "--checkpoint-every")
    run_train(run, data, opts, checkpoint_dir, checkpoint_every, resume)


def _parse_nfe_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(
            f"--nfe must be a comma-separated list of integers, got {text!r}",
            "pass e.g. --nfe 1,2,5,10",
        ) from None
    require(
        bool(values) and min(values) >= 1,
        f"--nfe values must be >= 1, got {text!r}",
        "pass e.g. --nfe 1,2,5,10",
    )
    return sorted(set(values))


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
    from iclr25.commands._diffusion_at_train import run_sample

    _choice(sampler, "--sampler", ("ddim", "ddpm", "cm"))
    _choice(weights, "--weights", ("ema", "model"))
    _positive(n, "--n", 2)
    _positive(nfe, "--nfe")
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
    from iclr25.commands._diffusion_at_train import run_eval

    _choice(sampler, "--sampler", ("ddim", "ddpm", "cm"))
    _choice(weights, "--weights", ("ema", "model"))
    _positive(n, "--n", 2)
    _positive(n_reference, "--n-reference", 2)
    _positive(mismatch_nfe, "--mismatch-nfe", 0)
    check_data(data)
    nfe_list = _parse_nfe_list(nfe) if nfe is not None else None
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
    from iclr25.commands._diffusion_at_compare import run_compare_command

    opts = {
        "objective": objective,
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "schedule": schedule,
        "diffusion_steps": diffusion_steps,
        "width": width,
        "image_size": image_size,
        "cm_grid": cm_grid,
        "method": at,
        "norm": norm,
        "alpha": alpha,
        "step": at_step,
        "pgd_steps": pgd_steps,
        "free_replays": free_replays,
        "target": at_target,
        "at_start": at_start,
    }
    _validate(opts, need_teacher=False)  # compare trains a teacher per seed for cd
    check_data(data)
    require(at != "none", "--at none leaves nothing to compare", "pass --at free, fgsm or pgd")
    _positive(seeds, "--seeds")
    _positive(n, "--n", 2)
    _positive(mismatch_nfe, "--mismatch-nfe", 0)
    _choice(sampler, "--sampler", ("ddim", "ddpm", "cm"))
    nfe_list = _parse_nfe_list(nfe) if nfe is not None else None
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

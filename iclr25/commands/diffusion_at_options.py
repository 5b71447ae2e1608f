"""Options shared by the `diffusion-at` commands: declarations, checks, the TrainConfig.

Imported by the command module at start-up, so only typer, the stdlib and light iclr25
modules at module level (`iclr25 --help` stays instant).
"""

import math
from pathlib import Path
from typing import Annotated

import typer

from iclr25.errors import UsageError
from iclr25.runner import require

#: command parameter → key of the options dict (the AT fields carry ATConfig's names)
RENAMED = {"at": "method", "at_step": "step", "at_target": "target"}
#: the options dict of `train` and `compare` (TrainConfig and ATConfig fields, "teacher")
RUN_OPTIONS = (
    "objective",
    "teacher",
    "steps",
    "batch_size",
    "lr",
    "schedule",
    "diffusion_steps",
    "width",
    "image_size",
    "cm_grid",
    "cm_target_ema",
    "method",
    "norm",
    "alpha",
    "step",
    "pgd_steps",
    "free_replays",
    "target",
    "at_start",
)


def collect(values: dict) -> dict:
    """The options dict from a command's parameters (``locals()``): renamed, run keys only."""
    renamed = {RENAMED.get(k, k): v for k, v in values.items()}
    return {k: renamed.get(k) for k in RUN_OPTIONS}


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
CmTargetOpt = Annotated[
    float | None,
    typer.Option(
        "--cm-target-ema",
        help="Consistency models: μ of the target network θ⁻ ← μθ⁻ + (1-μ)θ; 0 = θ⁻ = θ "
        "(default: 0.95).",
        rich_help_panel=_TRAIN,
    ),
]
AtOpt = Annotated[
    str | None,
    typer.Option(
        "--at",
        help="none | fgsm | pgd | free | replay | noise (controls: free's replays with no δ, "
        "or with a random δ of the same norm).",
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
        help="Ascent step, same units (default: fgsm/free: α, pgd: 2.5α/k; preset paper: "
        "an ℓ2 length of 0.1).",
        rich_help_panel=_AT,
    ),
]
PresetOpt = Annotated[
    str | None,
    typer.Option(
        "--preset",
        help="paper: the official code's AT settings — free AT, 3 replays, ℓ2, α 0.1, an "
        "absolute ℓ2 step of 0.1, x0 target, cosine schedule, AT fine-tuning the last 1/4 of "
        "--steps (or from a plain --resume checkpoint). Options you pass win.",
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


def choice(value: str | None, name: str, choices: tuple[str, ...]) -> None:
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


def positive(value, name: str, minimum: float = 1) -> None:
    require(
        value is None or value >= minimum,
        f"{name} must be >= {minimum:g}, got {value}",
        f"pass a value >= {minimum:g}",
    )


def validate(opts: dict, need_teacher: bool = True) -> None:
    """One-line option checks shared by train and compare (before any heavy work)."""
    from iclr25.core.diffusion_at.names import AT_METHODS, AT_TARGETS, NORMS, OBJECTIVES, SCHEDULES

    choice(opts.get("objective"), "--objective", OBJECTIVES)
    choice(opts.get("schedule"), "--schedule", SCHEDULES)
    choice(opts.get("method"), "--at", AT_METHODS)
    choice(opts.get("norm"), "--norm", NORMS)
    choice(opts.get("target"), "--at-target", AT_TARGETS)
    alpha = opts.get("alpha")
    require(
        alpha is None or 0 <= alpha < math.inf,
        f"--alpha must be a finite number >= 0, got {alpha}",
        "pass a radius such as --alpha 0.05 (0 turns AT off)",
    )
    at_step = opts.get("step")
    require(
        at_step is None or 0 < at_step < math.inf,
        f"--at-step must be a finite number > 0, got {at_step}",
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
        positive(opts.get(key), flag)
    positive(opts.get("cm_grid"), "--cm-grid", 2)
    mu = opts.get("cm_target_ema")
    require(
        mu is None or 0 <= mu < 1,
        f"--cm-target-ema must lie in [0, 1), got {mu}",
        "pass e.g. --cm-target-ema 0.95 (0: the target is the online network)",
    )
    positive(opts.get("at_start"), "--at-start", 0)
    lr = opts.get("lr")
    require(
        lr is None or 0 < lr < math.inf,
        f"--lr must be > 0 and finite, got {lr}",
        "pass e.g. --lr 1e-3",
    )
    if opts.get("objective") == "cd" and need_teacher:
        require(
            opts.get("teacher") is not None,
            "--objective cd needs a teacher",
            "pass --teacher PATH (a checkpoint of `train --objective ddpm`)",
        )


def build_config(opts: dict, dataset, base=None, data_spec: str | None = None):
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
            "cm_target_ema",
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


def apply_preset(opts: dict, preset: str | None, dim: int, resume_step: int | None = None) -> dict:
    """``opts`` with the preset's values where the user gave none (explicit options win)."""
    if preset is None:
        return opts
    from iclr25.core.diffusion_at.presets import paper_options
    from iclr25.core.diffusion_at.training import TrainConfig

    steps = opts.get("steps") or TrainConfig.steps
    values = paper_options(dim, steps, resume_step)
    return {**opts, **{k: v for k, v in values.items() if opts.get(k) is None}}


def parse_variants(text: str | None) -> tuple[str, ...]:
    """--variants: a comma-separated subset of the variants; the baseline is always run."""
    from iclr25.core.diffusion_at.names import VARIANTS

    if text is None:
        return VARIANTS
    asked = [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in asked if v not in VARIANTS]
    problem = f"unknown variant(s) {', '.join(unknown)}" if unknown else "no variant to compare"
    require(
        not unknown and any(v != "baseline" for v in asked),
        f"--variants {text!r}: {problem}",
        f"pass a comma-separated subset of {','.join(VARIANTS)}",
    )
    return tuple(v for v in VARIANTS if v == "baseline" or v in asked)


def parse_nfe_list(text: str) -> list[int]:
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

"""Putting the pieces together: defaults per data set, objectives, train / sample / score.

These are the functions the ``diffusion-at`` commands call (and a notebook can):
:func:`default_config` fills the model and optimiser defaults for a data set,
:func:`train` runs (or resumes) a training run, :func:`load_trained` rebuilds what a
checkpoint needs to sample, and :func:`sample` / :func:`score` use it.

Defaults (measured on CPU, see docs/diffusion-at.md): points → MLP 128×3, batch 256,
Adam 1e-3; images → U-Net with 32 base channels, batch 128, Adam 5e-4; 1000 diffusion
steps with the linear schedule; EMA 0.999.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import torch

from iclr25.core.diffusion_at.adversarial import ATConfig
from iclr25.core.diffusion_at.checkpoints import (
    Checkpoint,
    check_resumable,
    file_sha256,
    load_checkpoint,
    load_model,
    restore_state,
)
from iclr25.core.diffusion_at.consistency import ConsistencyObjective, ConsistencyParam
from iclr25.core.diffusion_at.data import Dataset, load_dataset
from iclr25.core.diffusion_at.ddpm import DDPMObjective
from iclr25.core.diffusion_at.evaluation import Evaluator
from iclr25.core.diffusion_at.memory import check_memory
from iclr25.core.diffusion_at.models import ModelSpec
from iclr25.core.diffusion_at.samplers import SamplerSpec, generate
from iclr25.core.diffusion_at.schedules import NoiseSchedule
from iclr25.core.diffusion_at.training import (
    CheckpointFn,
    ProgressFn,
    TrainConfig,
    TrainState,
    init_state,
    run_training,
)
from iclr25.distributed_torch import DataParallel
from iclr25.errors import InputError, UsageError

#: --alpha when an AT method is given without one (measured sweep, docs/diffusion-at.md)
DEFAULT_ALPHA = {"points": 0.05, "image": 0.05}


def activation_bytes(spec: ModelSpec, batch_size: int) -> float:
    """A coarse estimate of one training step's float32 activations (forward + backward)."""
    if spec.arch == "mlp":
        per_sample = spec.width * (6 * spec.depth + 4) + 8 * spec.time_dim
    else:
        per_sample = 48 * spec.width * spec.data_shape[1] * spec.data_shape[2]
    return 4.0 * batch_size * per_sample


def default_config(dataset: Dataset, **overrides) -> TrainConfig:
    """A TrainConfig for ``dataset`` with per-kind defaults; ``overrides`` win (None = default)."""
    points = dataset.kind == "points"
    base = {
        "data": dataset.name,  # callers pass data=<the --data string> for files and folders
        "model": ModelSpec.default_for(dataset.shape),
        "batch_size": 256 if points else 128,
        "lr": 1e-3 if points else 5e-4,
    }
    base.update({k: v for k, v in overrides.items() if v is not None})
    return TrainConfig(**base)


def make_schedule(config: TrainConfig) -> NoiseSchedule:
    return NoiseSchedule.make(config.schedule, config.diffusion_steps)


def make_objective(config: TrainConfig, dataset: Dataset, device: str = "cpu"):
    schedule = make_schedule(config)
    if config.objective == "ddpm":
        return DDPMObjective(schedule, dataset, config.at.target, device)
    param = ConsistencyParam(schedule, config.cm_grid)
    teacher = None
    if config.objective == "cd":
        teacher_path = Path(config.teacher)
        if not teacher_path.is_file():
            raise InputError(
                f"{teacher_path}: the teacher checkpoint is missing",
                "pass --teacher with the DDPM checkpoint to distil",
            )
        if config.teacher_sha256 and file_sha256(teacher_path) != config.teacher_sha256:
            raise InputError(
                f"{teacher_path} is not the teacher this run was distilled from (its content "
                "changed)",
                "restore the original teacher file, or start a new distillation",
            )
        teacher, teacher_config = load_model(teacher_path, "ema", device)
        if teacher_config.objective != "ddpm":
            raise InputError(
                f"{config.teacher}: the teacher must be a DDPM (it is a "
                f"{teacher_config.objective} model)",
                "train a teacher with --objective ddpm",
            )
    return ConsistencyObjective(param, dataset, config.at.target, teacher, device)


def teacher_settings(teacher_path: Path, dataset: Dataset) -> dict:
    """For distillation: the teacher's schedule and T, its digest; checks its data shape."""
    ckpt = load_checkpoint(teacher_path)
    if tuple(ckpt.config.model.data_shape) != tuple(dataset.shape):
        raise InputError(
            f"{teacher_path}: the teacher was trained on data of shape "
            f"{ckpt.config.model.data_shape}, the data has shape {dataset.shape}",
            "distil on the data set the teacher was trained on",
        )
    return {
        "schedule": ckpt.config.schedule,
        "diffusion_steps": ckpt.config.diffusion_steps,
        "teacher": str(teacher_path),
        "teacher_sha256": file_sha256(teacher_path),
    }


@dataclass
class Trained:
    state: TrainState
    config: TrainConfig
    dataset: Dataset
    schedule: NoiseSchedule
    param: ConsistencyParam | None


def train(
    config: TrainConfig,
    dataset: Dataset,
    device: str = "cpu",
    resume: Checkpoint | None = None,
    on_progress: ProgressFn | None = None,
    on_checkpoint: CheckpointFn | None = None,
    checkpoint_every: int = 0,
    state: TrainState | None = None,
    parallel: DataParallel | None = None,
) -> Trained:
    """Train (or resume from a checkpoint, or continue ``state``) up to ``config.steps``;
    with ``parallel`` (torchrun) as this rank's part of a data-parallel run."""
    check_memory(
        activation_bytes(config.model, config.batch_size),
        f"--batch-size {config.batch_size}",
        "use a smaller --batch-size (e.g. 256 for points, 128 for images)",
    )
    objective = make_objective(config, dataset, device)
    if state is None and resume is not None:
        check_resumable(resume, config)
        state = restore_state(resume, config, device)
    elif state is None:
        state = init_state(config, device)
    if parallel is not None:
        state.parallel = parallel.attach(state.model)
    run_training(state, objective, config, on_progress, on_checkpoint, checkpoint_every)
    param = getattr(objective, "param", None)
    return Trained(state, config, dataset, objective.schedule, param)


def load_trained(
    path: Path, data: str | None = None, device: str = "cpu", weights: str = "ema"
) -> tuple:
    """(model, config, dataset, schedule, param) for sampling from a checkpoint."""
    model, config = load_model(path, weights, device)
    dataset = load_dataset(data or config.data, config.image_size)
    if tuple(dataset.shape) != tuple(config.model.data_shape):
        raise InputError(
            f"--data {dataset.name} has samples of shape {dataset.shape}, the model "
            f"was trained on {config.model.data_shape}",
            "pass the training data set",
        )
    schedule = make_schedule(config)
    param = ConsistencyParam(schedule, config.cm_grid) if config.objective != "ddpm" else None
    return model, config, dataset, schedule, param


def check_sampler(spec: SamplerSpec, config: TrainConfig) -> None:
    """Refuse sampler/model combinations that make no sense, with the fix."""
    if config.objective == "ddpm" and spec.kind == "cm":
        raise UsageError("the cm sampler needs a consistency model", "use --sampler ddim or ddpm")
    if config.objective != "ddpm" and spec.kind != "cm":
        raise UsageError(
            f"a consistency model ({config.objective}) samples with --sampler cm",
            "pass --sampler cm with --nfe 1 or 2",
        )
    if spec.kind != "cm" and spec.nfe > config.diffusion_steps:
        raise UsageError(
            f"NFE {spec.nfe} is larger than the {config.diffusion_steps} diffusion "
            "steps the model was trained with",
            f"use NFE <= {config.diffusion_steps}",
        )


def sample(
    model,
    spec: SamplerSpec,
    schedule: NoiseSchedule,
    dataset: Dataset,
    n: int,
    seed: int,
    param: ConsistencyParam | None = None,
    device: str = "cpu",
) -> torch.Tensor:
    """n samples (CPU float32) drawn with the generator seeded by ``seed``."""
    # the samples, their float64 copy in the user's units and the .npy buffer
    check_memory(20.0 * n * dataset.dim, f"--n {n} samples", "pass a smaller --n")
    gen = torch.Generator().manual_seed(seed)
    return generate(model, spec, schedule, n, dataset.shape, gen, dataset.clip, param, device)


def score(
    model,
    specs: list[SamplerSpec],
    schedule: NoiseSchedule,
    evaluator: Evaluator,
    seed: int,
    param: ConsistencyParam | None = None,
    device: str = "cpu",
) -> list[dict]:
    """[{"sampler", "nfe", **metrics}] for each sampler spec, same seed for all."""
    rows = []
    for spec in specs:
        x = sample(
            model,
            spec,
            schedule,
            evaluator.dataset,
            evaluator.config.n_samples,
            seed,
            param,
            device,
        )
        rows.append({"sampler": spec.kind, "nfe": spec.nfe, **evaluator(x)})
    return rows


def with_at(config: TrainConfig, at: ATConfig) -> TrainConfig:
    return dataclasses.replace(config, at=at)

"""The baseline against AT and its two controls at equal optimiser steps, over seeds.

Variants (``names.VARIANTS``), all trained for the same number of optimiser updates:

- ``baseline``: plain denoising training;
- ``at``: the AT method under test (free AT, the paper's code, by default);
- ``replay``: free AT's schedule — m updates per minibatch — with δ ≡ 0 (separates the
  adversarial perturbation from "m times fewer distinct minibatches");
- ``noise``: the same schedule with a random δ of the norm AT's δ has at that replay
  (separates the adversarial *direction* from noise augmentation).

The two controls mirror free AT; with ``fgsm`` / ``pgd`` (one update per minibatch) only
the baseline and AT are compared.

Pairing. For one seed every variant starts from the same initial weights and the same
data/noise generator, is sampled from the same x_T and scored by one :class:`Evaluator`
(fixed reference set), so differences between variants are paired by seed
(``verdict.py`` tests them). With ``at_start`` > 0 (AT as fine-tuning of a plainly trained
model, the paper's protocol) all variants continue from the same plain prefix.
Distillation (``cd``) first trains a plain DDPM teacher per seed, which all students share.

Execution. Each seed × variant is one task of :mod:`iclr25.parallel` — a pure function
:func:`variant_task` of (configuration, seed) — so the comparison runs in-process, on
local processes or on a Dask cluster with identical results. A task runs on one torch
thread (float sums depend on the thread count), loads its data set from the configuration,
and memoises in-process what several tasks of one seed share (the plain prefix, the
teacher), so an in-process run trains each once; on several workers they are recomputed
(deterministically) where needed.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from iclr25.core.diffusion_at.adversarial import ATConfig
from iclr25.core.diffusion_at.evaluation import METRICS, PRIMARY, EvalConfig
from iclr25.core.diffusion_at.names import VARIANTS
from iclr25.core.diffusion_at.samplers import SamplerSpec
from iclr25.core.diffusion_at.stats import mean_sd  # noqa: F401  (public name, kept)
from iclr25.core.diffusion_at.training import TrainConfig
from iclr25.parallel import Execution, Outcome, Task, derive_seed, run_tasks

COMMAND = "diffusion-at compare"  # names the task cache entries


@dataclass(frozen=True)
class CompareConfig:
    base: TrainConfig  # the baseline run (its ``at`` is ignored; ``seed`` is per task)
    at: ATConfig  # the AT arm
    seeds: tuple[int, ...] = (0, 1, 2)  # training seeds, one per paired replicate
    samplers: tuple[SamplerSpec, ...] = tuple(SamplerSpec("ddim", k) for k in (2, 3, 5, 10, 20, 50))
    eval: EvalConfig = EvalConfig()
    mismatch: SamplerSpec | None = SamplerSpec("ddim", 10)
    mismatch_n: int = 1000
    variants: tuple[str, ...] = VARIANTS
    previews: tuple[SamplerSpec, ...] = ()  # samplers whose samples the first seed keeps
    preview_n: int = 0  # samples kept per variant and preview sampler (plots)
    device: str = "cpu"


@dataclass(frozen=True)
class VariantTask:
    """One variant's training run and scoring; the seed comes with the task."""

    variant: str
    train: TrainConfig  # the variant's configuration (its ``at``); ``seed`` is overridden
    samplers: tuple[SamplerSpec, ...]
    eval: EvalConfig
    mismatch: SamplerSpec | None
    mismatch_n: int
    previews: tuple[SamplerSpec, ...] = ()
    preview_n: int = 0
    device: str = "cpu"


def seeds_for(run_seed: int, n: int) -> tuple[int, ...]:
    """The training seeds of ``n`` paired replicates under the run seed (independent of
    workers and task order)."""
    return tuple(derive_seed(run_seed, "diffusion-at compare seed", i) for i in range(n))


def variants_for(at: ATConfig, requested: tuple[str, ...] = VARIANTS) -> tuple[str, ...]:
    """The requested variants that are defined for ``at`` (controls need free AT)."""
    controls = ("replay", "noise")
    return tuple(v for v in requested if v not in controls or at.method == "free")


def variant_config(config: CompareConfig, variant: str) -> TrainConfig:
    """The TrainConfig of one variant (seed 0: the task's seed replaces it)."""
    at = {
        "baseline": ATConfig(),
        "at": config.at,
        "replay": dataclasses.replace(config.at, method="replay"),
        "noise": dataclasses.replace(config.at, method="noise"),
    }[variant]
    return dataclasses.replace(config.base, at=at, seed=0)


def tasks_for(config: CompareConfig) -> list[Task]:
    """Seed-major: every variant of seed 0, then of seed 1, … (in-process memoisation of
    the shared prefix works best in this order)."""
    tasks = []
    for index, seed in enumerate(config.seeds):
        for variant in config.variants:
            spec = VariantTask(
                variant=variant,
                train=variant_config(config, variant),
                samplers=config.samplers,
                eval=config.eval,
                mismatch=config.mismatch,
                mismatch_n=config.mismatch_n,
                previews=config.previews if index == 0 else (),
                preview_n=config.preview_n if index == 0 else 0,
                device=config.device,
            )
            tasks.append(Task(variant_task, spec, seed, label=f"{variant} seed {index}"))
    return tasks


def run_compare(
    config: CompareConfig,
    execution: Execution | None = None,
    on_done: Callable[[int], None] | None = None,
) -> tuple[dict, Outcome, dict]:
    """(results, outcome, previews): results as ``verdict.summarise_compare`` builds them,
    how the tasks ran, and the first seed's preview samples by variant."""
    from iclr25.core.diffusion_at.data import load_dataset
    from iclr25.core.diffusion_at.verdict import summarise_compare

    dataset = load_dataset(config.base.data, config.base.image_size)
    tasks = tasks_for(config)
    outcome = run_tasks(tasks, execution, command=COMMAND, on_done=on_done)
    per_seed = [
        {t.config.variant: r for t, r in zip(tasks, outcome.results, strict=True) if t.seed == s}
        for s in config.seeds
    ]
    previews = {v: per_seed[0][v].get("previews", {}) for v in config.variants}
    results = summarise_compare(config, dataset, per_seed)
    return results, outcome, previews


# ---------------------------------------------------------------------------------------
# The task
# ---------------------------------------------------------------------------------------
def variant_task(task: VariantTask, seed: int) -> dict:
    """Train one variant with ``seed``, score it at every NFE, measure its mismatch.

    Returns ``{"rows": [{sampler, nfe, <metric>...}], "curve": [{step, t, mmd, sw}] | None,
    "final_loss", "delta_norm", "previews": {"<kind>:<nfe>": samples as nested lists}}``."""
    with _one_torch_thread():
        return _variant_task(task, seed)


def _variant_task(task: VariantTask, seed: int) -> dict:
    from iclr25.core.diffusion_at.mismatch import mismatch_curve
    from iclr25.core.diffusion_at.pipeline import sample, score

    dataset = _dataset(task.train.data, task.train.image_size)
    trained = _train_variant(dataclasses.replace(task.train, seed=seed), dataset, task.device)
    evaluator = _evaluator(dataset, task.eval, task.device)
    model, device = trained.state.ema, task.device
    sample_seed = derive_seed(seed, "samples")
    rows = score(
        model, list(task.samplers), trained.schedule, evaluator, sample_seed, trained.param, device
    )
    curve = None
    if task.mismatch is not None:
        curve = mismatch_curve(
            model,
            task.mismatch,
            trained.schedule,
            dataset,
            task.mismatch_n,
            derive_seed(seed, "mismatch"),
            trained.param,
            device,
        )
    previews = {}
    for spec in task.previews:
        x = sample(
            model, spec, trained.schedule, dataset, task.preview_n, sample_seed, trained.param
        )
        previews[f"{spec.kind}:{spec.nfe}"] = x.tolist()
    losses = trained.state.losses
    return {
        "rows": rows,
        "curve": curve,
        "final_loss": sum(losses[-100:]) / max(len(losses[-100:]), 1),
        "delta_norm": trained.state.mean_delta_norm,
        "previews": previews,
    }


@contextlib.contextmanager
def _one_torch_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _train_variant(config: TrainConfig, dataset, device: str):
    """The trained variant: after the (memoised) teacher for cd, from the (memoised) plain
    prefix when ``at_start`` is inside the run."""
    from iclr25.core.diffusion_at.checkpoints import clone_state
    from iclr25.core.diffusion_at.pipeline import teacher_settings, train

    if config.objective == "cd":
        path = _teacher(config, dataset, device)
        config = dataclasses.replace(config, **teacher_settings(path, dataset))
    state = None
    if 0 < config.at_start < config.steps:
        head = dataclasses.replace(config, steps=config.at_start, at=ATConfig())
        state = clone_state(_prefix(head, dataset, device), config, device)
    return train(config, dataset, device, state=state)


_MEMO: dict[str, object] = {}  # one entry per kind: (key, value) of the latest use


def _memo(kind: str, key: str, make: Callable):
    """The value ``make()`` for ``key``, reused while consecutive calls ask for the same
    key (tasks are ordered seed-major, so a seed's shared work is computed once)."""
    hit = _MEMO.get(kind)
    if hit is not None and hit[0] == key:
        return hit[1]
    value = make()
    _MEMO[kind] = (key, value)
    return value


def _key(*parts) -> str:
    from iclr25.output import to_jsonable

    return json.dumps(to_jsonable(parts), sort_keys=True)


def _dataset(spec: str, image_size: int | None):
    from iclr25.core.diffusion_at.data import load_dataset

    return _memo("dataset", _key(spec, image_size), lambda: load_dataset(spec, image_size))


def _evaluator(dataset, config: EvalConfig, device: str):
    from iclr25.core.diffusion_at.evaluation import Evaluator

    key = _key(dataset.name, dataset.info, config, device)
    return _memo("evaluator", key, lambda: Evaluator(dataset, config, device))


def _prefix(head: TrainConfig, dataset, device: str):
    from iclr25.core.diffusion_at.pipeline import train

    key = _key(head, device)
    return _memo("prefix", key, lambda: train(head, dataset, device).state)


def _teacher(config: TrainConfig, dataset, device: str) -> Path:
    """A plain DDPM of the student's seed and budget, saved in a process temp folder."""
    from iclr25.core.diffusion_at.checkpoints import save_checkpoint
    from iclr25.core.diffusion_at.pipeline import train

    teacher = dataclasses.replace(
        config, objective="ddpm", teacher=None, teacher_sha256=None, at=ATConfig(), at_start=0
    )

    def make() -> Path:
        path = _scratch() / f"teacher-{derive_seed(0, _key(teacher, device))}.safetensors"
        return save_checkpoint(path, train(teacher, dataset, device).state, teacher)

    return _memo("teacher", _key(teacher, device), make)


_SCRATCH: list[Path] = []


def _scratch() -> Path:
    """A temp folder for teachers, removed when the process exits."""
    if not _SCRATCH:
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="iclr25-teacher-")))
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    return _SCRATCH[0]


def primary_metric(kind: str) -> str:
    return PRIMARY[kind]


def metric_names(kind: str) -> tuple[str, ...]:
    return METRICS[kind]

"""Baseline against AT at equal training steps, over seeds: the paper's claim, measured.

For every seed s the baseline (no AT) and the AT run start from the same initial weights
and the same data/noise generator (both seeded with s) and take the same number of
optimiser steps. With ``at_start`` > 0 (AT as fine-tuning, the paper's protocol) the
plain prefix is trained once and both arms continue from a copy of it. Each arm is
sampled at every NFE of the sweep with the same x_T seed and scored by one
:class:`Evaluator` (fixed reference set), and its train/sample mismatch curve is
measured at one NFE (``mismatch.py``). Distillation (``cd``) first trains a
plain DDPM teacher per seed, which both students share.

Results: ``per_nfe`` — one entry per NFE with ``baseline`` and ``at`` each holding
``{metric: {"mean", "sd"}}`` over seeds (sd with ddof 1), the paired difference AT −
baseline of the primary metric, and in how many seeds AT was better; ``mismatch`` —
the same for the per-timestep discrepancy.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.core.diffusion_at.adversarial import ATConfig
from iclr25.core.diffusion_at.checkpoints import clone_state, save_checkpoint
from iclr25.core.diffusion_at.data import Dataset
from iclr25.core.diffusion_at.evaluation import HIGHER_IS_BETTER, METRICS, EvalConfig, Evaluator
from iclr25.core.diffusion_at.mismatch import mismatch_curve
from iclr25.core.diffusion_at.pipeline import score, teacher_settings, train
from iclr25.core.diffusion_at.samplers import SamplerSpec
from iclr25.core.diffusion_at.training import TrainConfig


@dataclass(frozen=True)
class CompareConfig:
    base: TrainConfig  # the baseline run (its ``at`` is ignored)
    at: ATConfig  # the AT arm
    seeds: tuple[int, ...] = (0, 1, 2)
    samplers: tuple[SamplerSpec, ...] = tuple(SamplerSpec("ddim", k) for k in (2, 3, 5, 10, 20, 50))
    eval: EvalConfig = EvalConfig()
    mismatch: SamplerSpec | None = SamplerSpec("ddim", 10)
    mismatch_n: int = 1000


def mean_sd(values: list[float]) -> dict:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0 or not np.isfinite(arr).all():
        return {"mean": float("nan"), "sd": float("nan")}
    sd = float(arr.std(ddof=1)) if arr.size > 1 else float("nan")
    return {"mean": float(arr.mean()), "sd": sd}


def _train_arms(
    config: CompareConfig,
    dataset: Dataset,
    seed: int,
    device: str,
    advance: Callable,
    teacher_dir: Path,
) -> dict:
    """The trained baseline and AT runs of one seed (after the teacher, for cd)."""
    base = dataclasses.replace(config.base, seed=seed, at=ATConfig())
    if base.objective == "cd":
        teacher_cfg = dataclasses.replace(base, objective="ddpm", teacher=None, teacher_sha256=None)
        teacher = train(teacher_cfg, dataset, device, on_progress=lambda *_: advance(1))
        path = save_checkpoint(
            teacher_dir / f"teacher-{seed}.safetensors", teacher.state, teacher_cfg
        )
        base = dataclasses.replace(base, **teacher_settings(path, dataset))
    prefix = None
    if 0 < base.at_start < base.steps:  # both arms share the plain steps before at_start
        head = dataclasses.replace(base, steps=base.at_start)
        prefix = train(head, dataset, device, on_progress=lambda *_: advance(1)).state
    arms = {}
    for arm, at in (("baseline", ATConfig()), ("at", config.at)):
        cfg = dataclasses.replace(base, at=at)
        state = clone_state(prefix, cfg, device) if prefix is not None else None
        arms[arm] = train(cfg, dataset, device, on_progress=lambda *_: advance(1), state=state)
    return arms


def steps_per_seed(base: TrainConfig) -> int:
    """Optimiser steps one seed trains (for progress bars): teacher, shared prefix, arms."""
    shared = base.at_start if 0 < base.at_start < base.steps else 0
    teacher = base.steps if base.objective == "cd" else 0
    return teacher + shared + 2 * (base.steps - shared)


def _seed_outcome(
    config: CompareConfig, evaluator: Evaluator, arms: dict, seed: int, device: str
) -> dict:
    """Metrics per NFE and the mismatch curve of both arms of one seed."""
    out = {}
    for arm, trained in arms.items():
        model = trained.state.ema
        rows = score(
            model,
            list(config.samplers),
            trained.schedule,
            evaluator,
            1000 + seed,
            trained.param,
            device,
        )
        curve = None
        if config.mismatch is not None:
            curve = mismatch_curve(
                model,
                config.mismatch,
                trained.schedule,
                evaluator.dataset,
                config.mismatch_n,
                2000 + seed,
                trained.param,
                device,
            )
        losses = trained.state.losses
        out[arm] = {"rows": rows, "curve": curve, "final_loss": float(np.mean(losses[-100:]))}
    return out


def _better(at: float, baseline: float, metric: str) -> bool:
    return at > baseline if metric in HIGHER_IS_BETTER else at < baseline


def summarise(
    outcomes: list[dict], metrics: tuple[str, ...], primary: str, samplers: tuple[SamplerSpec, ...]
) -> list[dict]:
    """The ``per_nfe`` list of the results (see the module docstring)."""
    per_nfe = []
    for i, spec in enumerate(samplers):
        entry = {"nfe": spec.nfe, "sampler": spec.kind}
        for arm in ("baseline", "at"):
            entry[arm] = {m: mean_sd([o[arm]["rows"][i][m] for o in outcomes]) for m in metrics}
        pairs = [(o["at"]["rows"][i][primary], o["baseline"]["rows"][i][primary]) for o in outcomes]
        entry["difference"] = mean_sd([a - b for a, b in pairs])
        entry["at_better_seeds"] = sum(_better(a, b, primary) for a, b in pairs)
        per_nfe.append(entry)
    return per_nfe


def summarise_mismatch(outcomes: list[dict]) -> list[dict]:
    first = outcomes[0]["baseline"]["curve"]
    if first is None:
        return []
    rows = []
    for j, point in enumerate(first):
        row = {"step": point["step"], "t": point["t"]}
        for arm in ("baseline", "at"):
            row[arm] = {
                m: mean_sd([o[arm]["curve"][j][m] for o in outcomes]) for m in ("mmd", "sw")
            }
        rows.append(row)
    return rows


def run_compare(
    config: CompareConfig,
    dataset: Dataset,
    device: str = "cpu",
    on_progress: Callable | None = None,
) -> tuple[dict, dict]:
    """(results, artifacts): see the module docstring; artifacts hold seed-0 samples."""
    advance = on_progress or (lambda n=1, **_: None)
    evaluator = Evaluator(dataset, config.eval, device)
    outcomes, artifacts = [], {}
    with tempfile.TemporaryDirectory(prefix="iclr25-teacher-") as tmp:
        for seed in config.seeds:
            arms = _train_arms(config, dataset, seed, device, advance, Path(tmp))
            outcomes.append(_seed_outcome(config, evaluator, arms, seed, device))
            if not artifacts:
                artifacts = {arm: trained for arm, trained in arms.items()}
    metrics = METRICS[dataset.kind]
    per_nfe = summarise(outcomes, metrics, evaluator.primary, config.samplers)
    results = {
        "data": dataset.name,
        "objective": config.base.objective,
        "primary_metric": evaluator.primary,
        "metrics": list(metrics),
        "feature_space": evaluator.feature_space,
        "seeds": list(config.seeds),
        "steps": config.base.steps,
        "per_nfe": per_nfe,
        "mismatch": {
            "nfe": config.mismatch.nfe if config.mismatch else None,
            "sampler": config.mismatch.kind if config.mismatch else None,
            "curve": summarise_mismatch(outcomes),
        },
        "final_loss": {
            arm: mean_sd([o[arm]["final_loss"] for o in outcomes]) for arm in ("baseline", "at")
        },
        "verdict": verdict(per_nfe, evaluator.primary),
    }
    return results, artifacts


def verdict(per_nfe: list[dict], primary: str) -> dict:
    """At which NFE AT's mean primary metric is better, and whether by more than 1 sd."""
    better, clear = [], []
    for row in per_nfe:
        diff = row["difference"]
        if not math.isfinite(diff["mean"]):
            continue
        gain = -diff["mean"] if primary not in HIGHER_IS_BETTER else diff["mean"]
        if gain > 0:
            better.append(row["nfe"])
            if math.isfinite(diff["sd"]) and gain > diff["sd"]:
                clear.append(row["nfe"])
    return {
        "at_better_nfe": better,
        "at_better_beyond_1sd_nfe": clear,
        "nfe_total": [row["nfe"] for row in per_nfe],
    }

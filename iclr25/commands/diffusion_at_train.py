"""The bodies of `diffusion-at train`, `sample` and `eval` (imported lazily by the command
module, so `iclr25 --help` never loads torch)."""

from __future__ import annotations

import time
from pathlib import Path

from iclr25.errors import UsageError
from iclr25.runner import Run


def limit_threads(kind: str) -> None:
    """Intra-op threads for small models (unless OMP_NUM_THREADS says otherwise): 1 for the
    points MLP, half the cores for the image U-Net. A parallel region waits for its slowest
    thread, so a team as large as the machine collapses when anything else runs: on a busy
    2-core machine two threads trained 8 Gaussians at 2 steps/s against 367 with one
    (docs/diffusion-at.md)."""
    import os

    from iclr25.threads import set_torch_threads

    set_torch_threads(1 if kind == "points" else max(1, (os.cpu_count() or 1) // 2))


def report_data(run: Run, dataset) -> None:
    """Threads for the data's model, and a warning for every image file skipped or reshaped."""
    limit_threads(dataset.kind)
    info = dataset.info
    if info.get("skipped_unreadable"):
        more = info["skipped_unreadable"] - len(info["skipped_files"])
        run.warn(
            f"{info['skipped_unreadable']} unreadable image file(s) skipped in {dataset.name}: "
            f"{', '.join(info['skipped_files'])}{f' and {more} more' if more > 0 else ''}"
        )
    if info.get("distinct_sizes", 1) > 1:
        size = info["image_size"]
        run.warn(
            f"{dataset.name}: images of {info['distinct_sizes']} different sizes were "
            f"centre-cropped to squares and resized to {size}x{size}"
        )


def open_checkpoint_dir(folder: Path | None, resume) -> None:
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


def _progress_callback(advance, every: int = 10):
    """on_progress(step, loss) → the rich bar, with the loss and steps/s every few steps."""
    t0, last = time.perf_counter(), [0]

    def on_progress(step: int, loss: float) -> None:
        if step - last[0] >= every:
            rate = step / max(time.perf_counter() - t0, 1e-9)
            advance(step - last[0], loss=f"{loss:.4f}", steps_s=f"{rate:.0f}")
            last[0] = step

    return on_progress


def _loss_curve(losses: list[float]) -> list[dict]:
    """Mean loss over each tenth of the run: [{"until_step", "loss"}]."""
    import numpy as np

    if not losses:
        return []
    edges = np.linspace(0, len(losses), 11).astype(int)
    return [
        {"until_step": int(b), "loss": float(np.mean(losses[a:b]))}
        for a, b in zip(edges[:-1], edges[1:], strict=True)
        if b > a
    ]


def _resolve_config(
    run: Run, data: str | None, opts: dict, resume_path: Path | None, preset: str | None = None
):
    from iclr25.commands.diffusion_at_options import apply_preset, build_config
    from iclr25.core.diffusion_at.checkpoints import load_checkpoint
    from iclr25.core.diffusion_at.data import load_dataset

    ckpt = load_checkpoint(resume_path) if resume_path is not None else None
    base = ckpt.config if ckpt is not None else None
    spec = data or (base.data if base is not None else "8gaussians")
    image_size = opts.get("image_size") or (base.image_size if base is not None else None)
    dataset = load_dataset(spec, image_size)
    report_data(run, dataset)
    opts = {**opts, "seed": None if ckpt is not None else run.seed}
    plain = ckpt is not None and (not base.at.active or base.at_start >= ckpt.step)
    opts = apply_preset(opts, preset, dataset.dim, ckpt.step if plain else None)
    config = build_config(opts, dataset, base, data_spec=spec)
    if preset == "paper" and plain and config.schedule != "cosine":
        run.warn(
            f"--preset paper fine-tunes {resume_path.name} with its {config.schedule} schedule "
            "(the paper's code uses cosine; the checkpoint defines the model)"
        )
    if ckpt is not None and run.seed not in (0, ckpt.config.seed):
        run.warn(f"the resumed run keeps its seed {ckpt.config.seed} (--seed {run.seed} ignored)")
    return config, dataset, ckpt


def run_train(
    run: Run,
    data,
    opts: dict,
    checkpoint_dir: Path | None,
    checkpoint_every: int,
    resume_path: Path | None,
    preset: str | None = None,
    preview: int | None = None,
) -> None:
    """Under torchrun: this process's part of a data-parallel run (only rank 0 writes)."""
    from iclr25 import distributed_torch

    with distributed_torch.process_group(run.device.kind) as group:
        _train(
            run, data, opts, checkpoint_dir, checkpoint_every, resume_path, group, preset, preview
        )


def _train(
    run, data, opts, checkpoint_dir, checkpoint_every, resume_path, group, preset, preview
) -> None:
    from iclr25.core.diffusion_at.checkpoints import check_resumable, save_checkpoint
    from iclr25.core.diffusion_at.ddpm import held_out_loss
    from iclr25.core.diffusion_at.models import build_model, count_parameters
    from iclr25.core.diffusion_at.pipeline import make_objective, train
    from iclr25.distributed_torch import DataParallel

    config, dataset, ckpt = _resolve_config(run, data, opts, resume_path, preset)
    parallel = DataParallel(group, config.batch_size) if group.active else None
    if group.active:
        run.environment_extra["distributed"] = group.as_dict()
    checkpoint_dir = checkpoint_dir if group.is_main else None  # rank 0 writes
    if ckpt is not None:
        check_resumable(ckpt, config)
    open_checkpoint_dir(checkpoint_dir, ckpt)
    if checkpoint_dir is None and not run.wants_artifacts:
        run.warn("the trained model is not saved: pass --out DIR (or --checkpoint-dir DIR)")

    def write_checkpoint(state) -> None:
        save_checkpoint(checkpoint_dir / f"step-{state.step:07d}.safetensors", state, config)
        save_checkpoint(checkpoint_dir / "last.safetensors", state, config)

    start = ckpt.step if ckpt is not None else 0
    with run.progress("training", total=config.steps - start) as advance, run.timer("train_s"):
        trained = train(
            config,
            dataset,
            run.device.kind,
            ckpt,
            _progress_callback(advance),
            write_checkpoint if checkpoint_dir else None,
            checkpoint_every,
            parallel=parallel,
        )
    run.timings["steps_per_s"] = (config.steps - start) / max(run.timings["train_s"], 1e-9)
    if checkpoint_dir is not None and config.steps % checkpoint_every:
        write_checkpoint(trained.state)
    model_file = run.artifact_path("model.safetensors")
    preview_n = None
    if model_file is not None:
        save_checkpoint(model_file, trained.state, config)
        preview_n = _train_plots(run, trained, preview)
    losses = trained.state.losses
    objective = make_objective(config, dataset, run.device.kind)
    results = {
        "objective": config.objective,
        "data": dataset.name,
        "steps": config.steps,
        "resumed_from_step": start if ckpt is not None else None,
        "n_parameters": count_parameters(build_model(config.model)),
        "final_loss": sum(losses[-100:]) / len(losses[-100:]),
        "held_out_loss": held_out_loss(trained.state.ema, objective),
        "loss_curve": _loss_curve(losses),
        "at": config.at,
        "at_start": config.at_start,
        "mean_delta_norm": trained.state.mean_delta_norm,
        "model_file": "model.safetensors" if model_file is not None else None,
        "preview_n": preview_n,
    }
    run.finish(results, config)


def _train_plots(run: Run, trained, requested: int | None) -> int:
    """loss.png, and samples.png within the preview budget; returns the samples per panel."""
    from iclr25.core.diffusion_at import plots
    from iclr25.core.diffusion_at.pipeline import sample
    from iclr25.core.diffusion_at.preview import plan_preview
    from iclr25.core.diffusion_at.samplers import SamplerSpec

    run.save_plot(plots.loss_figure(trained.state.losses), "loss")
    cm = trained.param is not None
    specs = (
        [SamplerSpec("cm", 1), SamplerSpec("cm", 2)]
        if cm
        else [SamplerSpec("ddim", k) for k in (5, 20) if k <= trained.config.diffusion_steps]
    )

    def draw(n: int, spec: SamplerSpec):
        model, schedule, param = trained.state.ema, trained.schedule, trained.param
        return sample(model, spec, schedule, trained.dataset, n, run.seed, param, run.device.kind)

    by_nfe = {spec.nfe: spec for spec in specs}
    with run.timer("preview_s"):
        plan = plan_preview(
            run.timings.get("train_s", 0.0),
            trained.dataset.kind,
            [s.nfe for s in specs],
            lambda n, nfe: draw(n, by_nfe[nfe]),
            requested,
        )
        panels = (
            [(f"{s.kind} NFE {s.nfe}", draw(plan.n, s).numpy()) for s in specs] if plan.n else []
        )
    if panels:
        run.save_plot(plots.samples_figure(panels, trained.dataset.kind), "samples")
    elif requested is None:
        run.warn(
            f"no preview samples: not even one fits in 10% of the {run.timings['train_s']:.1f} s"
            " of training — pass --preview N to draw N anyway"
        )
    return plan.n


def _default_sampler(config, sampler: str | None, nfe: int | None):
    from iclr25.core.diffusion_at.pipeline import check_sampler
    from iclr25.core.diffusion_at.samplers import SamplerSpec

    cm = config.objective != "ddpm"
    kind = sampler or ("cm" if cm else "ddim")
    if kind == "cm" and nfe is not None and nfe > 2:
        raise UsageError(
            f"consistency sampling takes 1 or 2 steps, got --nfe {nfe}", "pass --nfe 1 or 2"
        )
    spec = SamplerSpec(kind, nfe or (1 if kind == "cm" else 10))
    check_sampler(spec, config)
    return spec


def run_sample(run: Run, checkpoint: Path, sampler, nfe, n: int, weights: str) -> None:
    import numpy as np

    from iclr25 import atomic
    from iclr25.core.diffusion_at import plots
    from iclr25.core.diffusion_at.pipeline import load_trained, sample

    model, config, dataset, schedule, param = load_trained(
        checkpoint, None, run.device.kind, weights
    )
    limit_threads(dataset.kind)
    spec = _default_sampler(config, sampler, nfe)
    with run.timer("sampling_s"):
        x = sample(model, spec, schedule, dataset, n, run.seed, param, run.device.kind)
    user = dataset.to_user(x)
    path = run.artifact_path("samples.npy")
    if path is not None:
        import io

        buffer = io.BytesIO()
        np.save(buffer, user)
        atomic.write_bytes(path, buffer.getvalue())
        run.save_plot(
            plots.samples_figure([(f"{spec.kind} NFE {spec.nfe}", x.numpy())], dataset.kind),
            "samples",
        )
    flat = user.reshape(n, -1)
    results = {
        "sampler": spec.kind,
        "nfe": spec.nfe,
        "n": n,
        "shape": list(dataset.shape),
        "mean": flat.mean(axis=0).tolist() if flat.shape[1] <= 8 else float(flat.mean()),
        "std": flat.std(axis=0).tolist() if flat.shape[1] <= 8 else float(flat.std()),
        "finite": bool(np.isfinite(user).all()),
        "samples_file": "samples.npy" if path is not None else None,
    }
    run.finish(results, {"checkpoint": checkpoint, "sampler": spec, "n": n, "weights": weights})


def run_eval(
    run: Run,
    checkpoint: Path,
    data,
    sampler,
    nfe_list,
    n: int,
    n_reference: int,
    mismatch_nfe: int,
    weights: str,
) -> None:
    from iclr25.core.diffusion_at.evaluation import EvalConfig, Evaluator
    from iclr25.core.diffusion_at.mismatch import mismatch_curve
    from iclr25.core.diffusion_at.pipeline import load_trained, score

    model, config, dataset, schedule, param = load_trained(
        checkpoint, data, run.device.kind, weights
    )
    report_data(run, dataset)
    cm = config.objective != "ddpm"
    nfe_list = nfe_list or ([1, 2] if cm else [1, 2, 5, 10, 20, 50])
    specs = [_default_sampler(config, sampler, k) for k in nfe_list]
    evaluator = Evaluator(dataset, EvalConfig(n, n_reference, seed=run.seed), run.device.kind)
    with run.progress("scoring", total=len(specs)) as advance, run.timer("scoring_s"):
        rows = []
        for spec in specs:
            rows += score(model, [spec], schedule, evaluator, run.seed, param, run.device.kind)
            advance(1)
    mismatch = None
    if mismatch_nfe:
        spec = _default_sampler(config, sampler, min(mismatch_nfe, 2) if cm else mismatch_nfe)
        with run.timer("mismatch_s"):
            curve = mismatch_curve(
                model, spec, schedule, dataset, min(n, 2000), run.seed, param, run.device.kind
            )
        mismatch = {"sampler": spec.kind, "nfe": spec.nfe, "curve": curve}
    results = {
        "data": dataset.name,
        "objective": config.objective,
        "primary_metric": evaluator.primary,
        "primary_label": evaluator.primary_label,
        "feature_space": evaluator.feature_space,
        "per_nfe": rows,
        "mismatch": mismatch,
    }
    run.finish(
        results,
        {
            "checkpoint": checkpoint,
            "data": data or config.data,
            "n": n,
            "n_reference": n_reference,
            "weights": weights,
        },
        _eval_render,
    )


def _eval_render(console, results) -> None:
    from iclr25.output import rows_table

    metric_rows = results["per_nfe"]
    console.print(
        rows_table(
            metric_rows,
            title=f"diffusion-at eval: {results['data']} "
            f"({results['objective']}, primary {results['primary_metric']})",
        )
    )
    if results["mismatch"]:
        console.print(
            rows_table(
                results["mismatch"]["curve"],
                title=f"mismatch q(x_t) vs p_θ(x_t), {results['mismatch']['sampler']}"
                f" NFE {results['mismatch']['nfe']}",
            )
        )

"""`iclr25 mim-refine`: where a masked-image model keeps its features, and MIM-Refiner.

Alkin et al., ICLR 2025. Thin commands over :mod:`iclr25.core.mim_refine`: ``profile``
(k-NN and probe per block, peak vs last), ``knn`` (the repository's k-NN protocol on
feature files), ``refine`` (two-stage NNA refinement of a ViT), ``experiment`` (NNA
against honest controls of equal budget, pass conditions fixed in code) and ``make-data``
(the built-in ``textures`` set as PNG folders).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from iclr25.demo import DemoStep
from iclr25.parallel_options import NoCacheOpt, SchedulerOpt, WorkersOpt
from iclr25.runner import Run, command, require

NAME = "mim-refine"
HELP = "MIM-Refiner: per-block k-NN of a ViT, NNA refinement and its controls."
app = typer.Typer(no_args_is_help=True, help=HELP)

PROFILE_KEYS = (
    "blocks, knn_accuracy, knn_val_accuracy, probe_accuracy, chance, peak_block, last_block, "
    "peak_minus_last {mean, ci_low, ci_high}, verdict, model {source, path, depth, dim}, "
    "preprocessing, data"
)
REFINE_KEYS = "heads, knn_before, knn_after, loss_curve, saved_to, model, data"
EXPERIMENT_KEYS = (
    "profile, arms {mim, nna_multi, nna_last, mae_continued: knn_last, probe_last, wall_s "
    "(per seed); mim also knn_best}, budget, mae_lr_selection {rule, grid, val_knn, "
    "chosen} (null with --mae-lr), comparisons [treatment, control, metric, "
    "mean_diff, ci_low, ci_high, n_seeds, verdict], headline_holds, headline"
)

ModelOpt = Annotated[
    Path | None,
    typer.Option("--model", help="timm save_for_hf or HF ViT/ViTMAE/DINOv2 folder (default: "
                 "the bundled MAE)."),
]  # fmt: skip
DataOpt = Annotated[
    Path | None,
    typer.Option("--data", help="DIR/train + DIR/test ImageFolders, or one ImageFolder "
                 "(seeded 80/20 split); default: built-in textures."),
]  # fmt: skip
NTrainOpt = Annotated[int, typer.Option("--n-train", help="Built-in textures: train images.")]
NTestOpt = Annotated[int, typer.Option("--n-test", help="Built-in textures: test images.")]
KOpt = Annotated[int, typer.Option("--k", help="k nearest neighbours.")]
KnnTauOpt = Annotated[float, typer.Option("--tau", help="Vote temperature: weights exp(s/τ).")]


def _load(model: Path | None, data: Path | None, n_train: int, n_test: int, seed: int):
    """(encoder, (x_train, y_train), (x_test, y_test), data description)."""
    from iclr25.core.mim_refine.data import load_data
    from iclr25.core.mim_refine.encoder import load_encoder
    from iclr25.core.mim_refine.textures import textures_splits

    enc = load_encoder(model)
    if data is None:
        require(n_train >= 20 and n_test >= 10, "--n-train/--n-test too small", "use ≥ 20 / ≥ 10")
        train, test = textures_splits(n_train, n_test, 0)
        return enc, train, test, f"built-in textures ({n_train} train, {n_test} test)"
    tr, te, layout = load_data(data, enc.image_size, seed)
    return enc, (tr.images, tr.labels), (te.images, te.labels), f"{data} ({layout})"


@command(app, "make-data", epilog="JSON results: out, classes, n_train, n_test.")
def make_data(
    out_dir: Annotated[Path, typer.Argument(help="Folder to create (train/ and test/).")],
    n_train: NTrainOpt = 10_000,
    n_test: NTestOpt = 2000,
    *,
    run: Run,
) -> None:
    """Write the built-in textures as PNGs: DIR/train/<class>/*.png and DIR/test/...."""
    from iclr25 import atomic
    from iclr25.core.mim_refine.data import Split, write_image_folder
    from iclr25.core.mim_refine.textures import CLASSES, textures_splits

    require(n_train >= 20 and n_test >= 10, "--n-train/--n-test too small", "use ≥ 20 / ≥ 10")
    atomic.refuse_existing(out_dir, run.options.overwrite)
    train, test = textures_splits(n_train, n_test, 0)
    with atomic.staged_dir(out_dir, overwrite=run.options.overwrite) as staging:
        for name, (images, labels) in (("train", train), ("test", test)):
            write_image_folder(staging / name, Split(images, labels, CLASSES))
    results = {"out": str(out_dir), "classes": list(CLASSES), "n_train": n_train, "n_test": n_test}
    run.finish(results)


@command(app, "profile", epilog=f"JSON results: {PROFILE_KEYS}.")
def profile(
    model: ModelOpt = None,
    data: DataOpt = None,
    pooling: Annotated[str, typer.Option("--pooling", help="cls or mean (patch tokens).")] = "cls",
    k: KOpt = 10,
    tau: KnnTauOpt = 0.07,
    probe: Annotated[
        bool, typer.Option("--probe", help="Also a logistic probe per block.")
    ] = False,
    n_train: NTrainOpt = 5000,
    n_test: NTestOpt = 1000,
    *,
    run: Run,
) -> None:
    """k-NN accuracy of every block's CLS/mean token; is the best block before the last?"""
    from iclr25.core.mim_refine.data import stratified_split
    from iclr25.core.mim_refine.encoder import check_pooling, extract_blocks
    from iclr25.core.mim_refine.knn import check_knn_args
    from iclr25.core.mim_refine.profile import ProfileConfig, profile_features

    with run.timer("load_s"):
        enc, (x_tr, y_tr), (x_te, y_te), described = _load(model, data, n_train, n_test, run.seed)
    check_pooling(enc, pooling)
    fit_idx, _ = stratified_split(y_tr, 0.2, run.seed)  # the validation bank, as profile's
    check_knn_args(k, tau, len(fit_idx))  # smaller than the test bank (all of train)
    with run.timer("extract_s"):
        f_tr, f_te = extract_blocks(enc, x_tr, pooling), extract_blocks(enc, x_te, pooling)
    cfg = ProfileConfig(pooling, k, tau, probe, run.seed, device=run.device.kind)
    with run.timer("knn_s"):
        results = profile_features(f_tr, y_tr, f_te, y_te, cfg)
    results["model"] = enc.describe()
    results["preprocessing"] = enc.preprocessing()
    results["data"] = described
    if results["verdict"] == "vacuous":
        run.warn("every block is within 0.1 of chance: the per-block comparison says nothing")
    run.finish(results, cfg, _render_profile)


def _render_profile(console, results) -> None:
    from iclr25.output import rows_table

    probe = results["probe_accuracy"] or [None] * len(results["blocks"])
    rows = [
        {"block": b, "k-NN (test)": a, "k-NN (val)": v, "probe": p if p is not None else "–"}
        for b, a, v, p in zip(
            results["blocks"], results["knn_accuracy"], results["knn_val_accuracy"], probe,
            strict=True,
        )
    ]  # fmt: skip
    console.print(rows_table(rows, title=f"per-block probe, {results['model']['path']}"))
    d = results["peak_minus_last"]
    console.print(
        f"peak block {results['peak_block']} (validation) vs last {results['last_block']}: "
        f"{d['mean']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] (test bootstrap); "
        f"chance {results['chance']:.2f}; verdict: {results['verdict']}",
        markup=False,
    )


@command(app, "knn", epilog="JSON results: accuracy, n_train, n_test, k, tau.")
def knn(
    train: Annotated[Path, typer.Option("--train", help="NPZ with features (N, D), labels (N,).")],
    test: Annotated[Path, typer.Option("--test", help="NPZ with features (M, D), labels (M,).")],
    k: KOpt = 10,
    tau: KnnTauOpt = 0.07,
    *,
    run: Run,
) -> None:
    """The repository's k-NN: bank-standardised, L2-normalised, exp(s/τ)-weighted top-k."""
    from iclr25.core.mim_refine.knn import (
        KnnConfig,
        check_feature_pair,
        check_knn_args,
        knn_accuracy,
    )

    bank, queries = _read_npz(train, "--train"), _read_npz(test, "--test")
    check_feature_pair(bank, queries)
    check_knn_args(k, tau, len(bank["labels"]))
    with run.timer("knn_s"):
        acc = knn_accuracy(
            bank["features"], bank["labels"], queries["features"], queries["labels"],
            KnnConfig(k, tau, device=run.device.kind),
        )  # fmt: skip
    results = {"accuracy": acc, "n_train": len(bank["labels"]), "n_test": len(queries["labels"])}
    run.finish({**results, "k": k, "tau": tau})


def _read_npz(path: Path, option: str) -> dict:
    import numpy as np

    from iclr25.errors import InputError

    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except (OSError, ValueError) as exc:
        raise InputError(
            f"{option} {path} is not a readable .npz ({exc})", "pass an NPZ file"
        ) from None


@command(app, "refine", epilog=f"JSON results: {REFINE_KEYS}.")
def refine(
    save: Annotated[Path, typer.Option("--save", help="Folder for the refined encoder.")],
    model: ModelOpt = None,
    data: DataOpt = None,
    heads: Annotated[
        str, typer.Option("--heads", help="auto (last third) or 1-based blocks.")
    ] = "auto",
    head_steps: Annotated[int, typer.Option("--head-steps", help="Stage 1: heads only.")] = 100,
    steps: Annotated[int, typer.Option("--steps", help="Stage 2: encoder + heads.")] = 900,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Images per step.")] = 64,
    lr: Annotated[float, typer.Option("--lr", help="Heads' lr; block b: lr·0.65^(L+1−b).")] = 1e-3,
    tau: Annotated[float, typer.Option("--tau", help="NNA temperature.")] = 0.2,
    topk: Annotated[int, typer.Option("--topk", help="Neighbour candidates (stage 2).")] = 20,
    queue: Annotated[int, typer.Option("--queue", help="FIFO size per head (≥ 4 × batch).")] = 4096,
    objective: Annotated[str, typer.Option("--objective", help="nna or nnclr.")] = "nna",
    pooling: Annotated[str, typer.Option("--pooling", help="cls or mean.")] = "cls",
    n_train: NTrainOpt = 5000,
    n_test: NTestOpt = 1000,
    *,
    run: Run,
) -> None:
    """Two-stage NNA refinement (heads only, then encoder + heads); saves the encoder.

    Trains on the common ``--device`` (auto: CUDA when usable; ``--device cuda`` without a
    usable CUDA device is an error, exit 2, nothing written)."""
    import torch

    from iclr25 import atomic
    from iclr25.core.mim_refine.encoder import check_pooling, extract_blocks, save_encoder
    from iclr25.core.mim_refine.knn import knn_accuracy
    from iclr25.core.mim_refine.refine import RefineConfig, check_refine_config, parse_heads
    from iclr25.core.mim_refine.refine import refine as run_refine

    atomic.refuse_existing(save, run.options.overwrite)
    enc, (x_tr, y_tr), (x_te, y_te), described = _load(model, data, n_train, n_test, run.seed)
    check_pooling(enc, pooling)
    cfg = RefineConfig(
        parse_heads(heads, enc.depth), head_steps, steps, batch_size, lr, tau=tau, topk=topk,
        queue=queue, objective=objective, pooling=pooling, device=run.device.kind,
    )  # fmt: skip
    check_refine_config(cfg)
    run.log(f"refining on {run.device.kind} ({run.device.reason})")

    def last_knn() -> float:
        f_tr, f_te = extract_blocks(enc, x_tr, pooling)[-1], extract_blocks(enc, x_te, pooling)[-1]
        return knn_accuracy(f_tr, y_tr, f_te, y_te)

    before = last_knn()
    timer = {"t0": None}

    def on_step(step: int, total: int, loss: float) -> None:
        import time

        if step == 0:
            timer["t0"] = time.perf_counter()
        if step == 5:
            per = (time.perf_counter() - timer["t0"]) / 5
            run.log(f"ETA {per * (total - 5):.0f} s ({per:.2f} s/step, loss {loss:.3f})")

    with run.timer("refine_s"):
        out = run_refine(enc, torch.as_tensor(x_tr), cfg, run.seed, on_step)
    after = last_knn()
    with atomic.staged_dir(save, overwrite=run.options.overwrite) as staging:
        save_encoder(enc, staging)
    results = {
        "heads": out["heads"],
        "knn_before": before,
        "knn_after": after,
        "loss_curve": out["loss_curve"],
        "saved_to": str(save),
        "model": enc.describe(),
        "data": described,
    }
    run.finish(results, cfg)


@command(app, "experiment", epilog=f"JSON results: {EXPERIMENT_KEYS}.")
def experiment(
    quick: Annotated[
        bool, typer.Option("--quick", help="2 seeds, tiny budget: a smoke run.")
    ] = False,
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds (≥ 2; ≥ 3 for evidence).")] = 3,
    n_train: NTrainOpt = 5000,
    n_test: NTestOpt = 1000,
    head_steps: Annotated[int, typer.Option("--head-steps", help="Stage 1 steps.")] = 100,
    steps: Annotated[int, typer.Option("--steps", help="Stage 2 steps (MAE: the sum).")] = 900,
    batch_size: Annotated[int, typer.Option("--batch-size", help="Images per step.")] = 64,
    queue: Annotated[int, typer.Option("--queue", help="FIFO size per head.")] = 4096,
    topk: Annotated[int, typer.Option("--topk", help="Neighbour candidates.")] = 20,
    mae_lr: Annotated[
        float | None,
        typer.Option("--mae-lr", help="mae_continued's base lr (default: the validation sweep)."),
    ] = None,
    workers: WorkersOpt = 1,
    scheduler: SchedulerOpt = None,
    no_cache: NoCacheOpt = False,
    *,
    run: Run,
) -> None:
    """mim vs nna_multi, nna_last and mae_continued from the bundled MAE; paired t-intervals."""
    from dataclasses import replace

    from iclr25 import parallel_options
    from iclr25.core.mim_refine.experiment import (
        QUICK,
        ExperimentConfig,
        choose_mae_lr,
        summarise,
        sweep_tasks,
        tasks,
    )
    from iclr25.core.mim_refine.refine import RefineConfig, check_refine_config
    from iclr25.parallel import run_tasks

    require(seeds >= 2, f"--seeds {seeds}: an interval needs ≥ 2 seeds", "use --seeds 3")
    require(mae_lr is None or mae_lr > 0, f"--mae-lr {mae_lr} must be > 0", "e.g. --mae-lr 1e-4")
    sizes = {"n_train": n_train, "n_test": n_test, "head_steps": head_steps, "steps": steps,
             "queue": queue, "topk": topk, "seeds": seeds}  # fmt: skip
    cfg = ExperimentConfig(
        **{**sizes, **(QUICK if quick else {})}, batch_size=batch_size, quick=quick
    )
    check_refine_config(
        RefineConfig(
            (1,), cfg.head_steps, cfg.steps, cfg.batch_size, topk=cfg.topk, queue=cfg.queue
        )
    )
    profile = _profile_for_experiment(cfg, run.seed)
    execution = parallel_options.execution(workers, scheduler, no_cache)
    selection = None
    if mae_lr is None:  # the pre-registered rule (experiment module docstring)
        sweep = sweep_tasks(cfg, run.seed)
        with run.progress("mae lr sweep", total=len(sweep)) as advance:
            found = run_tasks(sweep, execution, command="mim-refine experiment", on_done=advance)
        selection = choose_mae_lr(found.results)
        mae_lr = selection["chosen"]
        run.log(f"mae_continued lr {mae_lr:g} (validation k-NN {selection['val_knn']})")
    cfg = replace(cfg, mae_lr=mae_lr)
    task_list = tasks(cfg, run.seed)
    with run.progress("arm × seed", total=len(task_list)) as advance, run.timer("arms_s"):
        outcome = run_tasks(task_list, execution, command="mim-refine experiment", on_done=advance)
    parallel_options.report(run, outcome)
    results = summarise(cfg, task_list, outcome.results, profile, selection)
    if quick:
        run.warn("quick: a smoke run (2 seeds, 40 steps), not evidence")
    run.finish(results, cfg, _render_experiment)


def _profile_for_experiment(cfg, seed: int) -> dict:
    from iclr25.core.mim_refine.encoder import extract_blocks, load_encoder
    from iclr25.core.mim_refine.experiment import _data
    from iclr25.core.mim_refine.profile import ProfileConfig, profile_features

    (x_tr, y_tr), (x_te, y_te) = _data(cfg.n_train, cfg.n_test, cfg.data_seed)
    enc = load_encoder(None)
    f_tr, f_te = extract_blocks(enc, x_tr, cfg.pooling), extract_blocks(enc, x_te, cfg.pooling)
    out = profile_features(
        f_tr, y_tr, f_te, y_te, ProfileConfig(cfg.pooling, cfg.k, cfg.knn_tau, seed=seed)
    )
    return {**out, "model": enc.describe()}


def _render_experiment(console, results) -> None:
    from iclr25.output import rows_table

    rows = [
        {"arm": arm, **{key: sum(v) / len(v) for key, v in vals.items() if key != "best_block"}}
        for arm, vals in results["arms"].items()
    ]
    console.print(rows_table(rows, title="arms: means over seeds"))
    console.print(rows_table(
        [{k: c[k] for k in ("treatment", "control", "metric", "mean_diff", "ci_low", "ci_high",
                            "verdict")} for c in results["comparisons"]],
        title="paired differences, 95 % t-intervals",
    ))  # fmt: skip
    console.print(results["headline"], markup=False)


DEMO = (
    DemoStep(
        "mim-refine profile",
        ("mim-refine", "profile", "--n-train", "2000", "--n-test", "500"),
        lambda doc: (
            f"bundled MAE: k-NN peak at block {doc['results']['peak_block']} of "
            f"{doc['results']['last_block']} "
            f"({doc['results']['knn_accuracy'][doc['results']['peak_block'] - 1]:.2f} vs last "
            f"{doc['results']['knn_accuracy'][-1]:.2f}); verdict {doc['results']['verdict']}"
        ),
        timeout_s=60.0,
    ),
)

"""The headline experiment: does NNA refinement beat honest controls of equal budget?

Arms, all from the same MAE, with the same data order and augmentations per seed
(:mod:`augment`):

- ``mim``: the MAE untouched, evaluated at its last block and at the block that is best
  on a validation split of train (``knn_best``);
- ``nna_multi``: two-stage refinement with NNA heads on the last third of the blocks;
- ``nna_last``: the same with one head on the last block (the paper's 1-head ablation);
- ``mae_continued``: MAE training continued for the same steps and batch size, at the lr
  picked by the rule below.

``mae_continued``'s lr (rule fixed before any run; last round's control ran at the NNA
lr 1e-3 and lost accuracy, which made the comparison unfair to it): one continued-MAE run
per lr of :data:`MAE_LR_GRID`, each with the arms' budget (same steps, batch, data order
and views; seed = the run seed), scored by last-block k-NN on a stratified 20 % validation
split of the training images (bank = the other 80 %; the test set is not used); the best
wins, ties → the smaller lr. The NNA arms keep their lr untuned, so the selection can
only favour the control. ``--mae-lr`` skips the sweep.

Evaluation (every arm): last-block CLS k-NN (k 10, τ 0.07) and a logistic probe.

Pass conditions (fixed here, before any run): paired differences over seeds, 95 %
t-intervals; a comparison ``holds`` if ci_low > 0, ``reversed`` if ci_high < 0, else
``inconclusive``. ``headline_holds``: nna_multi beats mim (k-NN at its best block, probe
at its last block) and mae_continued, on k-NN and probe at the last block, every one of
those four comparisons with ci_low > 0. nna_multi vs nna_last gets its own verdicts.
"""

from __future__ import annotations

import functools
import time
from dataclasses import asdict, dataclass

import numpy as np

ARMS = ("mim", "nna_multi", "nna_last", "mae_continued")
#: (treatment, control, metric of treatment, metric of control); the first four decide
#: ``headline_holds``, the last two are nna_multi vs its one-head ablation
COMPARISONS = (
    ("nna_multi", "mim", "knn_last", "knn_best"),
    ("nna_multi", "mae_continued", "knn_last", "knn_last"),
    ("nna_multi", "mim", "probe_last", "probe_last"),
    ("nna_multi", "mae_continued", "probe_last", "probe_last"),
    ("nna_multi", "nna_last", "knn_last", "knn_last"),
    ("nna_multi", "nna_last", "probe_last", "probe_last"),
)
HEADLINE = 4  # the first four comparisons
#: mae_continued's lr grid (the module docstring's rule); base lr of the layer-wise decay
MAE_LR_GRID = (3e-5, 1e-4, 3e-4, 1e-3)


@dataclass(frozen=True)
class ExperimentConfig:
    n_train: int = 5000
    n_test: int = 1000
    head_steps: int = 100
    steps: int = 900  # 1000 steps × 64 = 12.8 epochs of 5000 images
    batch_size: int = 64
    lr: float = 1e-3
    mae_lr: float | None = None  # mae_continued's base lr; None: not chosen yet (sweep)
    tau: float = 0.2
    topk: int = 20
    queue: int = 4096
    seeds: int = 3
    k: int = 10
    knn_tau: float = 0.07
    pooling: str = "cls"
    data_seed: int = 0
    quick: bool = False


QUICK = {"n_train": 1000, "n_test": 300, "head_steps": 10, "steps": 30, "queue": 256,
         "topk": 5, "seeds": 2}  # fmt: skip


@functools.lru_cache(maxsize=2)
def _data(n_train: int, n_test: int, seed: int):
    from iclr25.core.mim_refine.textures import textures_splits

    return textures_splits(n_train, n_test, seed)


def evaluate(enc, train, test, cfg: ExperimentConfig, seed: int, all_blocks: bool) -> dict:
    """Last-block k-NN and probe; with ``all_blocks`` also the validation-best block."""
    from iclr25.core.mim_refine.encoder import extract_blocks
    from iclr25.core.mim_refine.knn import KnnConfig, knn_accuracy
    from iclr25.core.mim_refine.profile import ProfileConfig, logistic_probe, profile_features

    (x_tr, y_tr), (x_te, y_te) = train, test
    f_tr, f_te = extract_blocks(enc, x_tr, cfg.pooling), extract_blocks(enc, x_te, cfg.pooling)
    out = {
        "knn_last": knn_accuracy(f_tr[-1], y_tr, f_te[-1], y_te, KnnConfig(cfg.k, cfg.knn_tau)),
        "probe_last": logistic_probe(f_tr[-1], y_tr, f_te[-1], y_te, seed),
    }
    if all_blocks:
        prof = profile_features(
            f_tr, y_tr, f_te, y_te, ProfileConfig(cfg.pooling, cfg.k, cfg.knn_tau, seed=seed)
        )
        out["knn_best"] = prof["knn_accuracy"][prof["peak_block"] - 1]
        out["best_block"] = prof["peak_block"]
        out["profile"] = prof
    return out


def continue_mae(enc, images, cfg: ExperimentConfig, seed: int, lr: float) -> None:
    """The control: MAE training of the same encoder for the same steps and batch size,
    on view 1 of each step's batch, AdamW(0.9, 0.95) with the refinement's layer-wise
    decay of the base ``lr`` (the decoder gets ``lr``), same warm-up + cosine."""
    import torch

    from iclr25.core.mim_refine.augment import batch_indices, views
    from iclr25.core.mim_refine.mae import load_mae
    from iclr25.core.mim_refine.refine import layer_lrs, schedule

    torch.manual_seed(seed)
    mae = load_mae(enc)
    for p in mae.parameters():
        p.requires_grad_(True)
    groups = [{**g, "weight_decay": 0.05} for g in layer_lrs(enc, lr, 0.65)]
    groups.append({"params": list(mae.decoder.parameters()), "lr": lr, "weight_decay": 0.05})
    opt = torch.optim.AdamW(groups, betas=(0.9, 0.95))
    base = [g["lr"] for g in opt.param_groups]
    total = cfg.head_steps + cfg.steps
    for step in range(total):
        for g, lr in zip(opt.param_groups, base, strict=True):
            g["lr"] = lr * schedule(step, total)
        idx = batch_indices(len(images), cfg.batch_size, seed, step)
        (x,) = views(images, idx, seed, step, 1, enc)
        loss = mae.loss(x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    for p in mae.parameters():
        p.requires_grad_(False)


def run_arm(config: dict, seed: int) -> dict:
    """One arm × seed (a :class:`iclr25.parallel.Task` function): train, then evaluate."""
    import torch

    from iclr25.core.mim_refine.encoder import load_encoder
    from iclr25.core.mim_refine.refine import RefineConfig, parse_heads, refine
    from iclr25.threads import small_problem_threads

    cfg = ExperimentConfig(**config["experiment"])
    arm = config["arm"]
    with small_problem_threads():  # one BLAS and one torch thread: tiny models
        torch.manual_seed(seed)
        train, test = _data(cfg.n_train, cfg.n_test, cfg.data_seed)
        enc = load_encoder(None)
        images = torch.as_tensor(train[0])
        t0 = time.perf_counter()
        if arm in ("nna_multi", "nna_last"):
            heads = parse_heads("auto", enc.depth) if arm == "nna_multi" else (enc.depth,)
            rcfg = RefineConfig(
                heads, cfg.head_steps, cfg.steps, cfg.batch_size, cfg.lr, tau=cfg.tau,
                topk=cfg.topk, queue=cfg.queue, pooling=cfg.pooling,
            )  # fmt: skip
            refine(enc, images, rcfg, seed)
        elif arm == "mae_continued":
            continue_mae(enc, images, cfg, seed, cfg.lr if cfg.mae_lr is None else cfg.mae_lr)
        train_s = time.perf_counter() - t0
        result = evaluate(enc, train, test, cfg, seed, all_blocks=arm == "mim")
    result.pop("profile", None)
    return {**result, "wall_s": train_s}


def run_mae_lr(config: dict, seed: int) -> dict:
    """One lr of the sweep (a :class:`iclr25.parallel.Task` function): continued MAE at
    ``config["lr"]``, then last-block k-NN on the validation split of the training images."""
    import torch

    from iclr25.core.mim_refine.data import stratified_split
    from iclr25.core.mim_refine.encoder import extract_blocks, load_encoder
    from iclr25.core.mim_refine.knn import KnnConfig, knn_accuracy
    from iclr25.threads import small_problem_threads

    cfg = ExperimentConfig(**config["experiment"])
    with small_problem_threads():
        torch.manual_seed(seed)
        (x_tr, y_tr), _ = _data(cfg.n_train, cfg.n_test, cfg.data_seed)
        enc = load_encoder(None)
        t0 = time.perf_counter()
        continue_mae(enc, torch.as_tensor(x_tr), cfg, seed, config["lr"])
        train_s = time.perf_counter() - t0
        feats = extract_blocks(enc, x_tr, cfg.pooling)[-1]
        fit, val = stratified_split(y_tr, 0.2, seed)
        acc = knn_accuracy(
            feats[fit], y_tr[fit], feats[val], y_tr[val], KnnConfig(cfg.k, cfg.knn_tau)
        )
    return {"lr": config["lr"], "val_knn": acc, "wall_s": train_s}


def sweep_tasks(cfg: ExperimentConfig, run_seed: int, grid=MAE_LR_GRID) -> list:
    from iclr25.parallel import Task

    config = asdict(cfg)
    return [
        Task(run_mae_lr, {"lr": lr, "experiment": config}, run_seed, label=f"mae lr {lr:g}")
        for lr in grid
    ]


def choose_mae_lr(results: list[dict]) -> dict:
    """The rule: the highest validation k-NN; ties → the smaller lr."""
    best = min(results, key=lambda r: (-r["val_knn"], r["lr"]))
    return {
        "rule": "argmax validation last-block k-NN over the grid, ties → smaller lr",
        "grid": [r["lr"] for r in results],
        "val_knn": [r["val_knn"] for r in results],
        "wall_s": [r["wall_s"] for r in results],
        "chosen": best["lr"],
    }


def tasks(cfg: ExperimentConfig, run_seed: int) -> list:
    from iclr25.parallel import Task

    config = asdict(cfg)
    return [
        Task(run_arm, {"arm": arm, "experiment": config}, run_seed + s, label=f"{arm} seed {s}")
        for s in range(cfg.seeds)
        for arm in ARMS
    ]


def paired_interval(treatment: list[float], control: list[float]) -> dict:
    """Mean of paired differences and its 95 % t-interval over seeds."""
    from scipy import stats

    diff = np.asarray(treatment, dtype=np.float64) - np.asarray(control, dtype=np.float64)
    n = len(diff)
    mean = float(diff.mean())
    half = float(stats.t.ppf(0.975, n - 1) * diff.std(ddof=1) / np.sqrt(n)) if n > 1 else np.inf
    return {"mean_diff": mean, "ci_low": mean - half, "ci_high": mean + half, "n_seeds": n}


def comparison_verdict(ci_low: float, ci_high: float) -> str:
    return "holds" if ci_low > 0 else "reversed" if ci_high < 0 else "inconclusive"


def summarise(
    cfg: ExperimentConfig, task_list: list, results: list, profile: dict, mae_lr: dict | None = None
) -> dict:
    arms = {arm: {} for arm in ARMS}
    for task, res in zip(task_list, results, strict=True):
        arm = arms[task.config["arm"]]
        for key, value in res.items():
            if key != "best_block":
                arm.setdefault(key, []).append(value)
            else:
                arm.setdefault("best_block", []).append(value)
    comparisons = []
    for treat, control, metric_t, metric_c in COMPARISONS:
        ci = paired_interval(arms[treat][metric_t], arms[control][metric_c])
        comparisons.append({
            "treatment": treat, "control": control,
            "metric": metric_t if metric_t == metric_c else f"{metric_t} vs {metric_c}",
            **ci, "verdict": comparison_verdict(ci["ci_low"], ci["ci_high"]),
        })  # fmt: skip
    headline_holds = all(c["verdict"] == "holds" for c in comparisons[:HEADLINE])
    steps = cfg.head_steps + cfg.steps
    budget = {
        "steps_per_arm": steps,
        "head_only_steps": cfg.head_steps,
        "batch_size": cfg.batch_size,
        "epochs": steps * cfg.batch_size / cfg.n_train,
        "n_train": cfg.n_train,
        "n_test": cfg.n_test,
        "nna_lr": cfg.lr,
        "mae_lr": cfg.mae_lr,
    }
    return {
        "profile": profile,
        "arms": arms,
        "budget": budget,
        "mae_lr_selection": mae_lr,
        "comparisons": comparisons,
        "headline_holds": headline_holds,
        "headline": headline(comparisons, headline_holds, cfg.quick),
    }


def headline(comparisons: list[dict], holds: bool, quick: bool) -> str:
    prefix = "quick smoke run, not evidence: " if quick else ""
    if holds:
        return prefix + "reproduced: nna_multi beats mim and mae_continued on k-NN and probe"
    failed = [
        f"{c['metric']} vs {c['control']} {c['verdict']} ({c['mean_diff']:+.3f} "
        f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}])"
        for c in comparisons[:HEADLINE]
        if c["verdict"] != "holds"
    ]
    return prefix + "not reproduced: " + "; ".join(failed)

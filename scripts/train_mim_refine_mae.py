"""Train the MAE bundled with ``iclr25 mim-refine`` (iclr25/data/mim_refine/).

    nice -n 10 python scripts/train_mim_refine_mae.py [--steps 1500] [--batch-size 256]

Deterministic: one torch thread, seed 0, the built-in ``textures`` train split (10 000
images, seed 0 of :func:`iclr25.core.mim_refine.textures.textures_splits`). Writes
``mae_textures/`` (timm ``save_for_hf``: config.json + model.safetensors, the encoder),
``mae_decoder.safetensors`` (decoder, for the ``mae_continued`` control) and
``train_log.json`` (schedule, loss curve, wall time, sha256 of every file, and the
provenance of the run: command line, commit, date, machine, versions; docs/mim-refine.md
renders its figures from this file).

Under ``torchrun --nproc-per-node N scripts/train_mim_refine_mae.py`` the training runs
data-parallel (gloo, :mod:`iclr25.distributed_torch`): every process draws the same global
batch of ``--batch-size`` augmented images and the same patch masks (same seeds, same
generator), then computes the loss on its own rows; DDP averages the gradients, so the
update and the logged loss are the one-process ones (to float32 summation order). Rank 0
alone prints and writes. ``--loss-log`` (every step's batch loss, JSON) is for tests.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import sys  # noqa: E402

import torch  # noqa: E402

from iclr25.core.mim_refine.augment import batch_indices, views  # noqa: E402
from iclr25.core.mim_refine.encoder import Encoder  # noqa: E402
from iclr25.core.mim_refine.mae import MAE, MEAN, STD, MaeConfig, make_vit  # noqa: E402
from iclr25.core.mim_refine.textures import textures_splits  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "iclr25" / "data" / "mim_refine"


def lr_at(step: int, steps: int, base: float, warmup: int) -> float:
    if step < warmup:
        return base * (step + 1) / warmup
    return base * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1.5e-3)
    parser.add_argument("--n-train", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--loss-log", type=Path, help="every step's batch loss as JSON")
    args = parser.parse_args()
    from iclr25.distributed_torch import process_group

    torch.set_num_threads(1)
    with process_group("cpu") as group:
        train(args, group)


def train(args, group) -> None:
    import timm.models
    from safetensors.torch import save_file

    from iclr25.distributed_torch import DataParallel, forward_of
    from iclr25.provenance import provenance

    run_provenance = provenance(["python", *sys.argv], [0])  # at the start: the commit run

    torch.manual_seed(0)
    cfg = MaeConfig()
    (images, _), _ = textures_splits(args.n_train, 10, seed=0)
    images_t = torch.as_tensor(images)
    vit = make_vit(cfg)
    model = MAE(vit, cfg)
    enc = Encoder(vit, list(vit.blocks), "bundled", "", cfg.dim, 1, True, 32, MEAN, STD)
    # lightly's mask token is used only when masked tokens enter the encoder, which the MAE
    # never does: it gets no gradient, so AdamW never changes it. Frozen, DDP (which waits
    # for a gradient of every trainable parameter) agrees with that.
    model.backbone.mask_token.requires_grad_(False)
    parallel = None
    if group.active:
        parallel = DataParallel(group, args.batch_size)
        parallel.attach(forward_of(model, lambda m, x, keep, mask: m.loss(x, (keep, mask))))
    decay = [p for n, p in model.named_parameters() if p.ndim > 1 and "pos_embed" not in n]
    other = [p for n, p in model.named_parameters() if not (p.ndim > 1 and "pos_embed" not in n)]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": other, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
    )
    warmup = max(1, args.steps // 10)
    losses, t0 = [], time.perf_counter()
    model.train()
    for step in range(args.steps):
        for param_group in opt.param_groups:
            param_group["lr"] = lr_at(step, args.steps, args.lr, warmup)
        idx = batch_indices(len(images_t), args.batch_size, 0, step)
        (x,) = views(images_t, idx, 0, step, 1, enc)  # the global batch, on every rank
        masks = model.draw_masks(len(x))  # same generator state on every rank
        opt.zero_grad(set_to_none=True)
        if parallel is None:
            loss = model.loss(x, masks)
            loss.backward()
            value = float(loss.detach())
        else:
            rows = parallel.rows(len(x))
            loss = parallel.module(x[rows], masks[0][rows], masks[1][rows])
            parallel.scale(loss).backward()
            value = parallel.mean(loss)
        opt.step()
        losses.append(value)
        if group.is_main and (step % 10 == 0 or step == args.steps - 1):
            elapsed = time.perf_counter() - t0
            eta = elapsed / (step + 1) * (args.steps - step - 1)
            print(f"step {step} loss {value:.4f} elapsed {elapsed:.0f}s eta {eta:.0f}s")
    wall = time.perf_counter() - t0
    if not group.is_main:
        return

    args.out.mkdir(parents=True, exist_ok=True)
    enc_dir = args.out / "mae_textures"
    timm.models.save_for_hf(vit, enc_dir, model_args=cfg.model_args(), safe_serialization=True)
    save_file(
        {k: v.contiguous() for k, v in model.decoder.state_dict().items()},
        str(args.out / "mae_decoder.safetensors"),
    )
    files = [enc_dir / "config.json", enc_dir / "model.safetensors"]
    files.append(args.out / "mae_decoder.safetensors")
    log = {
        "script": "scripts/train_mim_refine_mae.py",
        "config": {**cfg.__dict__, "steps": args.steps, "batch_size": args.batch_size},
        "optimizer": {"name": "AdamW", "lr": args.lr, "betas": [0.9, 0.95], "wd": 0.05},
        "warmup_steps": warmup,
        "data": f"textures train split, {args.n_train} images, seed 0",
        "torch_threads": 1,
        "train_wall_s": round(wall, 1),
        "loss_first_last": [losses[0], losses[-1]],
        "loss_every_50": losses[::50],
        "sha256": {str(p.relative_to(args.out)): sha256(p) for p in files},
        "provenance": run_provenance,
    }
    if group.active:
        log["distributed"] = group.as_dict()
    (args.out / "train_log.json").write_text(json.dumps(log, indent=2) + "\n")
    if args.loss_log is not None:
        args.loss_log.write_text(json.dumps({"losses": losses}) + "\n")
    print(json.dumps({k: log[k] for k in ("train_wall_s", "loss_first_last", "sha256")}))


if __name__ == "__main__":
    main()

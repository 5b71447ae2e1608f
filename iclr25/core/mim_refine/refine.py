"""MIM-Refiner's two-stage refinement (Alkin et al., ICLR 2025, Sec. 3 and App. "recipes").

1. Stage 2 of the paper ("heads only", ``head_steps``): encoder frozen, one NNA head per
   chosen block trained with queue top-1.
2. Stage 3 ("refinement", ``steps``): encoder + heads, queue top-k, AdamW(0.9, 0.95),
   layer-wise lr decay: block b of L gets ``lr · decay^(L+1−b)`` (embeddings: b = 0),
   heads get ``lr``; encoder weight decay 0.05, heads 1e-5.
Each stage: linear warm-up over its first 10 % of steps, then cosine to 0. The queues are
filled with real projections of the (frozen) encoder before step 1 (a noise-filled queue
hands out noise as positives until it has been filled once). Both views of a batch go
through the encoder in one pass; hooks (:class:`encoder.BlockTaps`) hand each head its
block's pooled token.

Device (``RefineConfig.device``): the encoder, heads and queues train there; batches and
their views are drawn on the CPU (the same seeded generators as on CPU) and then moved;
on CUDA with CuPy the queue look-up uses the ``topk_cosine`` selection kernel
(:func:`nna.top_candidates`). The encoder is back on the CPU when :func:`refine` returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from iclr25.core.mim_refine.augment import batch_indices, views
from iclr25.core.mim_refine.encoder import BlockTaps, Encoder
from iclr25.core.mim_refine.nna import OBJECTIVES, FifoQueue, NNAHead, head_loss
from iclr25.errors import RunFailure, UsageError


@dataclass(frozen=True)
class RefineConfig:
    heads: tuple[int, ...]  # 1-based block ids (from :func:`parse_heads`)
    head_steps: int = 50  # stage 1 (encoder frozen)
    steps: int = 250  # stage 2 (encoder + heads)
    batch_size: int = 64
    lr: float = 1e-3  # heads' lr; blocks get lr · decay^(L+1−b)
    layer_decay: float = 0.65  # the paper's value
    tau: float = 0.2  # NNA temperature of the MAE-L/16 recipe
    topk: int = 20  # stage-2 neighbour candidates (stage 1 uses top-1, as the repository)
    queue: int = 4096  # FIFO size per head (≥ 4 × batch)
    objective: str = "nna"  # nna | nnclr (swap every logit)
    pooling: str = "cls"
    device: str = "cpu"  # cpu | cuda (resolved by the command's --device)
    head_hidden: int = 256  # "micro" preset scaled down: projector 256-256-128
    head_out: int = 128
    encoder_wd: float = 0.05
    head_wd: float = 1e-5


def parse_heads(text: str, depth: int) -> tuple[int, ...]:
    """``auto`` = the last third of the blocks (at least one); else ``4,6,8`` (1-based)."""
    if text == "auto":
        count = max(1, round(depth / 3))
        return tuple(range(depth - count + 1, depth + 1))
    try:
        blocks = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        blocks = ()
    if not blocks or any(b < 1 or b > depth for b in blocks):
        raise UsageError(f"--heads {text!r} must list blocks in 1..{depth}", "e.g. --heads auto")
    if len(set(blocks)) != len(blocks):
        raise UsageError(f"--heads {text!r} repeats a block", "list each block once")
    return tuple(sorted(blocks))


def check_refine_config(cfg: RefineConfig) -> None:
    if cfg.queue < 4 * cfg.batch_size:
        raise UsageError(
            f"--queue {cfg.queue} is < 4 × --batch-size {cfg.batch_size}",
            f"use --queue ≥ {4 * cfg.batch_size}",
        )
    if not 1 <= cfg.topk <= cfg.queue:
        raise UsageError(f"--topk {cfg.topk} is outside 1..{cfg.queue}", "e.g. --topk 20")
    if not cfg.tau > 0:
        raise UsageError(f"--tau {cfg.tau} must be > 0", "e.g. --tau 0.2")
    if not 0 < cfg.lr < float("inf"):  # also rejects NaN
        raise UsageError(f"--lr {cfg.lr} must be a positive number", "e.g. --lr 1e-3")
    if cfg.objective not in OBJECTIVES:
        raise UsageError(f"--objective {cfg.objective!r}", "use nna or nnclr")
    if cfg.batch_size < 2 or cfg.steps < 0 or cfg.head_steps < 0:
        raise UsageError("--batch-size must be ≥ 2 and step counts ≥ 0", "e.g. --batch-size 64")


def layer_lrs(enc: Encoder, base: float, decay: float) -> list[dict]:
    """AdamW groups: embeddings (b = 0) and blocks b = 1..L at base · decay^(L+1−b)."""
    depth = enc.depth
    in_block = {id(p) for blk in enc.blocks for p in blk.parameters()}
    embed = [p for p in enc.module.parameters() if id(p) not in in_block]
    groups = [{"params": embed, "lr_scale": decay ** (depth + 1), "block": 0}]
    for b, blk in enumerate(enc.blocks, start=1):
        groups.append(
            {"params": list(blk.parameters()), "lr_scale": decay ** (depth + 1 - b), "block": b}
        )
    for g in groups:
        g["lr"] = base * g["lr_scale"]
    return groups


def schedule(step: int, total: int) -> float:
    """Warm-up over the first 10 % of a stage, then cosine to 0 (a factor in [0, 1])."""
    warmup = max(1, total // 10)
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


class Refiner:
    """Heads, queues and taps of one refinement run."""

    def __init__(self, enc: Encoder, cfg: RefineConfig, seed: int) -> None:
        torch.manual_seed(seed)
        self.enc, self.cfg, self.seed = enc, cfg, seed
        self.heads = torch.nn.ModuleDict(
            {str(b): NNAHead(enc.dim, cfg.head_hidden, cfg.head_out) for b in cfg.heads}
        ).to(cfg.device)
        self.queues = {b: FifoQueue(cfg.queue, cfg.head_out, cfg.device) for b in cfg.heads}
        self.taps = BlockTaps(enc, [b - 1 for b in cfg.heads], cfg.pooling)
        self.gen = torch.Generator().manual_seed(seed + 17)

    def pooled(self, x: torch.Tensor, grad: bool) -> dict[int, torch.Tensor]:
        with torch.set_grad_enabled(grad):
            self.enc.run(x)
        return {b: self.taps.pooled[b - 1] for b in self.cfg.heads}

    def fill_queues(self, images: torch.Tensor) -> None:
        """Real projections of the untrained heads before step 1 (negative step ids)."""
        n_batches = math.ceil(self.cfg.queue / self.cfg.batch_size)
        with torch.no_grad():
            for j in range(n_batches):
                idx = batch_indices(len(images), self.cfg.batch_size, self.seed + 1, j)
                (x,) = views(images, idx, self.seed + 1, j, 1, self.enc)
                for b, h in self.pooled(x.to(self.cfg.device), grad=False).items():
                    z, _ = self.heads[str(b)](h)
                    self.queues[b].push(z, idx)

    def step_loss(self, images: torch.Tensor, step: int, topk: int, encoder_grad: bool):
        idx = batch_indices(len(images), self.cfg.batch_size, self.seed, step)
        v1, v2 = views(images, idx, self.seed, step, 2, self.enc)
        both = torch.cat([v1, v2]).to(self.cfg.device)
        pooled = self.pooled(both, grad=encoder_grad)  # (2B, D) per head
        n = len(idx)
        loss = sum(
            head_loss(
                self.heads[str(b)], self.queues[b], h[:n], h[n:], idx, self.cfg, topk, self.gen
            )
            for b, h in pooled.items()
        )
        return loss

    def close(self) -> None:
        self.taps.remove()


def refine(
    enc: Encoder,
    images: torch.Tensor,
    cfg: RefineConfig,
    seed: int,
    on_step: Callable[[int, int, float], None] | None = None,
) -> dict:
    """Run both stages in place on ``enc``; returns the loss curve and the schedule used."""
    check_refine_config(cfg)
    enc.module.to(cfg.device)
    refiner = Refiner(enc, cfg, seed)
    for p in enc.module.parameters():
        p.requires_grad_(False)
    losses: list[float] = []
    try:
        refiner.fill_queues(images)
        stages = [
            (cfg.head_steps, 1, False, [{"params": refiner.heads.parameters(), "lr": cfg.lr}]),
            (cfg.steps, cfg.topk, True, None),
        ]
        offset = 0
        for n_steps, topk, encoder_grad, groups in stages:
            if n_steps == 0:
                continue
            if groups is None:  # stage 2: the encoder with layer-wise decay, then the heads
                for p in enc.module.parameters():
                    p.requires_grad_(True)
                groups = [
                    {**g, "weight_decay": cfg.encoder_wd}
                    for g in layer_lrs(enc, cfg.lr, cfg.layer_decay)
                ]
                groups.append(
                    {
                        "params": refiner.heads.parameters(),
                        "lr": cfg.lr,
                        "weight_decay": cfg.head_wd,
                    }
                )
            else:
                groups = [{**g, "weight_decay": cfg.head_wd} for g in groups]
            opt = torch.optim.AdamW(groups, betas=(0.9, 0.95))
            base = [g["lr"] for g in opt.param_groups]
            for i in range(n_steps):
                for g, lr in zip(opt.param_groups, base, strict=True):
                    g["lr"] = lr * schedule(i, n_steps)
                loss = refiner.step_loss(images, offset + i, topk, encoder_grad)
                value = float(loss.detach())  # float() of a tensor that needs grad warns
                if not torch.isfinite(loss):
                    raise RunFailure(
                        f"the NNA loss became {value} at step {offset + i}",
                        "lower --lr or raise --tau",
                    )
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                losses.append(value)
                if on_step is not None:
                    on_step(offset + i, cfg.head_steps + cfg.steps, value)
            offset += n_steps
    finally:
        refiner.close()
        enc.module.to("cpu")
        for p in enc.module.parameters():
            p.requires_grad_(False)
    return {"heads": list(cfg.heads), "loss_curve": losses}

"""Data-parallel training under ``torchrun``: one process per device, one global batch.

``torchrun --nproc-per-node N -m iclr25 diffusion-at train ...`` starts N copies of the
command with ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``
set. This module turns that into a training run that is *the same run* as one process
with the same options, only split:

- :func:`process_group` joins the group (gloo on CPU, NCCL on CUDA, one GPU per local
  rank) and leaves it at the end; without a launcher it is a single-process no-op.
- **The global batch stays the user's ``--batch-size``.** Every rank draws the whole
  minibatch from the same seeded generator (cheap: the toolkit's data are in memory or
  synthetic) and keeps its own contiguous rows (:func:`shard_bounds`: sizes differ by at
  most one). The generator state therefore stays identical on all ranks, so a checkpoint
  written by rank 0 resumes in any number of processes.
- Gradients: DistributedDataParallel averages them over ranks; :meth:`DataParallel.scale`
  weights each rank's mean loss by ``n_rank · world / batch`` first, so the update is the
  gradient of the global batch mean even when the batch does not divide evenly.
- The recorded loss is the global batch mean (:meth:`DataParallel.mean`, one all-reduce
  of a scalar per step), so the loss curve is the one-process curve.
- Per-sample state that a rank updates for its rows only (free AT's δ) is merged with
  :meth:`DataParallel.merge_rows`, so every rank, and every checkpoint, holds all of it.
- A library's own training loop that DDP cannot wrap (stable-baselines3's SAC) gets the
  same arithmetic from :meth:`DataParallel.broadcast` (rank 0's parameters at the start)
  and :meth:`DataParallel.average_gradients` (an optimiser hook: every step applies the
  gradient of the global batch mean), so its ranks stay bit-identical.
- Only rank 0 reports: :func:`is_follower` tells the CLI runner to make other ranks quiet,
  without ``--out`` or stdout; commands write their own files only when
  :attr:`Context.is_main`.

The model is wrapped only for the training loss (``DataParallel.module``); the plain
module stays the one that is averaged (EMA), searched (adversarial δ, no gradient sync)
and saved, so checkpoints carry no ``module.`` prefix.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from iclr25.errors import UsageError

#: what a launcher must set for ``init_process_group("env://")``
LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
#: how long a collective waits for a rank that stopped answering before failing the run
COLLECTIVE_TIMEOUT = timedelta(minutes=10)


@dataclass(frozen=True)
class Context:
    """Where this process stands in the group (a single process: rank 0 of 1)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    backend: str | None = None  # "gloo" | "nccl" | None (no process group)

    @property
    def is_main(self) -> bool:
        """Rank 0: the process that prints and writes files."""
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world_size > 1

    def as_dict(self) -> dict:
        return {"world_size": self.world_size, "backend": self.backend}


def launched(environ: dict | None = None) -> bool:
    """Started by torchrun (or another launcher that sets the ``env://`` variables)."""
    env = os.environ if environ is None else environ
    return all(env.get(name) for name in LAUNCHER_VARS) and int(env["WORLD_SIZE"]) > 1


def is_follower(environ: dict | None = None) -> bool:
    """A rank other than 0 of a launched group: it computes, rank 0 reports."""
    env = os.environ if environ is None else environ
    return launched(env) and int(env["RANK"]) > 0


def context_from_env(device_kind: str, environ: dict | None = None) -> Context:
    """This process's :class:`Context` from the launcher's variables (not joined yet)."""
    env = os.environ if environ is None else environ
    if not launched(env):
        return Context()
    rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
    local_rank = int(env.get("LOCAL_RANK", rank))
    if not 0 <= rank < world:
        raise UsageError(f"RANK={rank} is outside WORLD_SIZE={world}", "start with torchrun")
    return Context(rank, world, local_rank, "nccl" if device_kind == "cuda" else "gloo")


@contextlib.contextmanager
def process_group(device_kind: str) -> Iterator[Context]:
    """Join the launcher's process group for the block (and leave it after); a plain
    single-process :class:`Context` when not launched."""
    ctx = context_from_env(device_kind)
    if not ctx.active:
        yield ctx
        return
    import torch
    import torch.distributed as dist

    if not dist.is_available():
        raise UsageError("this torch build has no torch.distributed", "run without torchrun")
    if ctx.backend == "nccl":
        if ctx.local_rank >= torch.cuda.device_count():
            raise UsageError(
                f"local rank {ctx.local_rank} has no GPU ({torch.cuda.device_count()} visible)",
                "use --nproc-per-node at most the number of GPUs, or --device cpu (gloo)",
            )
        torch.cuda.set_device(ctx.local_rank)
    joined = not dist.is_initialized()
    if joined:
        dist.init_process_group(ctx.backend, timeout=COLLECTIVE_TIMEOUT)
    try:
        yield ctx
    finally:
        if joined and dist.is_initialized():
            dist.destroy_process_group()


def shard_bounds(n: int, rank: int, world_size: int) -> tuple[int, int]:
    """[start, stop) of ``rank``'s contiguous share of ``n`` rows: the first ``n % world``
    ranks take one row more, so shares differ by at most one and tile [0, n) in order."""
    base, extra = divmod(n, world_size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def barrier(ctx: Context) -> None:
    """Wait for every rank (a no-op for one process)."""
    if ctx.active:
        import torch.distributed as dist

        dist.barrier()


def from_main(ctx: Context, value: float | None) -> float:
    """Rank 0's ``value`` on every rank (a figure only rank 0 computes, such as an
    evaluation that decides when training stops; other ranks pass None); one process:
    ``value`` itself."""
    if not ctx.active:
        return value
    import torch
    import torch.distributed as dist

    held = torch.tensor([float(value) if ctx.is_main else 0.0], dtype=torch.float64)
    dist.broadcast(held, src=0)
    return float(held)


def parameters_in_sync(ctx: Context, model) -> bool:
    """Whether every rank holds bit-identical parameters (one all-reduce of the max and
    the min of each parameter across ranks). DDP synchronises gradients, not parameters:
    ranks that took different optimiser decisions (a line search fed a rank's own loss)
    drift apart silently. One process: True."""
    if not ctx.active:
        return True
    import torch
    import torch.distributed as dist

    flat = torch.cat([p.detach().reshape(-1).double() for p in model.parameters()])
    high, low = flat.clone(), -flat
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    dist.all_reduce(low, op=dist.ReduceOp.MAX)
    return bool(torch.equal(high, -low))


def forward_of(model, fn):
    """A module whose ``forward(*args)`` is ``fn(model, *args)``: what DDP must wrap when
    the training loss does not go through ``model.forward`` (DDP synchronises only the
    forward it is called with). Parameters are ``model``'s."""
    import torch

    class _Forward(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, *args):
            return fn(self.inner, *args)

    return _Forward()


class DataParallel:
    """A training loop's view of the group: its rows of each global batch, the DDP
    wrapper for the training loss, loss weighting and reduction (module docstring)."""

    def __init__(self, ctx: Context, global_batch: int) -> None:
        if global_batch < ctx.world_size:
            raise UsageError(
                f"--batch-size {global_batch} is smaller than the {ctx.world_size} processes "
                "it is split over",
                f"use --batch-size of at least {ctx.world_size}, or fewer processes",
            )
        self.ctx = ctx
        self.global_batch = global_batch
        self.module: Any = None  # DistributedDataParallel(model), set by attach()

    def attach(self, model) -> DataParallel:
        """Wrap ``model`` (parameters are broadcast from rank 0, so all ranks start equal;
        buffers, where a model has any, are re-synchronised from rank 0 every forward)."""
        from torch.nn.parallel import DistributedDataParallel

        device_ids = [self.ctx.local_rank] if self.ctx.backend == "nccl" else None
        self.module = DistributedDataParallel(model, device_ids=device_ids)
        return self

    def rows(self, n: int) -> slice:
        return slice(*shard_bounds(n, self.ctx.rank, self.ctx.world_size))

    def local(self, tensors: dict) -> dict:
        """This rank's rows of every batch tensor (0-d entries are kept whole)."""
        return {k: v[self.rows(v.shape[0])] if v.dim() else v for k, v in tensors.items()}

    def local_rows(self, x):
        return x[self.rows(x.shape[0])]

    def _weight(self, count: int | None = None, total: int | None = None) -> float:
        """count / (total / world): this rank's share of the terms of a mean, relative to
        an even split (1 when the batch divides evenly). By default the terms are rows of
        the global batch; pass ``count``, ``total`` when they are not (a short last batch,
        tokens of variable-length rows)."""
        if count is None:
            total = self.global_batch if total is None else total
            rows = self.rows(total)
            count = rows.stop - rows.start
        return count * self.ctx.world_size / total

    def scale(self, loss, count: int | None = None, total: int | None = None):
        """The loss to back-propagate, ``loss`` being the mean over this rank's ``count``
        terms of the batch's ``total`` (default: its rows of the global batch): DDP's
        average of the scaled rank means is then the gradient of the whole batch's mean."""
        return loss * self._weight(count, total)

    def mean(self, loss, count: int | None = None, total: int | None = None) -> float:
        """The mean loss over the whole batch (one all-reduce of a scalar); ``count`` and
        ``total`` as for :meth:`scale`."""
        import torch.distributed as dist

        total_loss = loss.detach().reshape(1) * (self._weight(count, total) / self.ctx.world_size)
        dist.all_reduce(total_loss)
        return float(total_loss)

    def merge_rows(self, x):
        """Every rank's own rows of ``x`` put together (rows outside a rank's share are
        ignored): the full tensor on every rank."""
        import torch
        import torch.distributed as dist

        rows = self.rows(x.shape[0])
        full = torch.zeros_like(x)
        full[rows] = x[rows]
        dist.all_reduce(full)
        return full

    def broadcast(self, tensors) -> None:
        """Overwrite every tensor of ``tensors`` in place with rank 0's (parameters of a
        model that DDP does not wrap: all ranks then start from rank 0's)."""
        import torch
        import torch.distributed as dist

        with torch.no_grad():
            for tensor in tensors:
                dist.broadcast(tensor, src=0)

    def average_gradients(self, optimizer) -> Any:
        """For a training loop DDP cannot wrap: before every ``optimizer.step()`` each
        gradient becomes the gradient of the global batch mean, ``loss`` having been the
        mean over this rank's rows (``rows(global_batch)``): this rank's gradient weighted
        as by :meth:`scale`, then averaged over ranks (one all-reduce of all the optimiser's
        gradients, flattened). Every rank then applies the same update to the same
        parameters, so ranks that started equal (:meth:`broadcast`) stay bit-identical.
        Returns the hook's handle (``.remove()`` to detach it)."""
        import torch
        import torch.distributed as dist

        weight = self._weight() / self.ctx.world_size

        def reduce_before_step(opt, _args, _kwargs) -> None:
            grads = [p.grad for group in opt.param_groups for p in group["params"]
                     if p.grad is not None]  # fmt: skip
            if not grads:
                return
            flat = torch.cat([g.reshape(-1) for g in grads]) * weight  # (total numel,)
            dist.all_reduce(flat)
            for grad, part in zip(grads, flat.split([g.numel() for g in grads]), strict=True):
                grad.copy_(part.view_as(grad))

        return optimizer.register_step_pre_hook(reduce_before_step)

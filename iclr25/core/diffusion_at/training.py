"""The training loop shared by DDPM and consistency models, with the four AT methods.

One *training step* is one optimiser update; budgets ("equal training steps") count these.

- ``none``: draw a minibatch, one forward/backward on x_t, update.
- ``fgsm`` / ``pgd``: draw a minibatch, search δ* in the ball with 1 / k extra
  forward/backward passes (only ∂L/∂δ, ``adversarial.search_delta``), then one
  forward/backward on x_t + δ*, update: cost ≈ 2× / (k+1)× a plain step.
- ``free`` (Shafahi et al. 2019, Alg. 1; the paper's AT_Diff "fast" mode): each
  minibatch is replayed m times; every replay is one forward/backward on x_t + δ that
  yields both the parameter gradient (→ one update) and ∂L/∂δ (→ δ ← Π(δ + step·dir)),
  so AT costs about as much as plain training. δ starts at 0 for every new minibatch, so
  the first replay is the plain loss. m replays of one minibatch are m training steps:
  at equal steps, free AT sees m times fewer distinct minibatches than the baseline.

``at_start`` > 0 trains plainly up to that step and with AT afterwards: the paper's code
fine-tunes a trained ADM checkpoint with AT; at equal total steps this is that protocol,
and two runs that differ only in AT share their first ``at_start`` steps bit for bit.

``replay`` and ``noise`` are controls, not AT: free's schedule (m optimiser steps per
minibatch) with δ ≡ 0, or with a random δ of the norm free AT's δ has at that replay
(``adversarial.noise_norm``). Against ``free`` they isolate the effect of the adversarial
direction from the effect of seeing m times fewer distinct minibatches and from noise
augmentation. The noise directions come from a generator seeded by (seed, step), not from
the data generator, so ``noise`` sees exactly the minibatches ``free`` and ``replay`` see.

With α = 0 the ``fgsm``/``pgd`` paths run and give δ ≡ 0, i.e. bit-for-bit the baseline;
``free`` with α = 0 would be minibatch replay without any perturbation, which is not AT,
so it runs as the baseline (``ATConfig.active`` is False).

Everything random comes from one ``torch.Generator`` (data, t, ε) and the model's
initialisation seed; the generator state, optimiser moments, EMA weights, a consistency
model's target network, the free-AT carry (minibatch, δ, replay index) and the loss
history are all part of
:class:`TrainState`, so a run resumed from a checkpoint is identical to an uninterrupted
one (``checkpoints.py``).

Under ``torchrun`` (``TrainState.parallel``, :mod:`iclr25.distributed_torch`) every rank
draws the same global minibatch and computes the loss on its rows only; gradients, the
recorded loss and δ are combined over ranks, so the run is the one-process run, split.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from iclr25.core.diffusion_at.adversarial import (
    ATConfig,
    delta_norms,
    free_update,
    noise_norm,
    random_delta,
    search_delta,
)
from iclr25.core.diffusion_at.models import ModelSpec, build_model
from iclr25.distributed_torch import DataParallel
from iclr25.parallel import derive_seed


@dataclass(frozen=True)
class TrainConfig:
    """What defines a training run (``steps`` is the budget, not the identity of a run)."""

    objective: str = "ddpm"  # ddpm | ct (consistency training) | cd (distillation)
    data: str = "8gaussians"
    image_size: int | None = None  # image folders only
    model: ModelSpec = ModelSpec("mlp", (2,))
    schedule: str = "linear"
    diffusion_steps: int = 1000  # T
    steps: int = 3000  # optimiser updates
    batch_size: int = 256
    lr: float = 1e-3  # Adam
    ema_decay: float = 0.999  # sampling weights; warm-up min(decay, (1+n)/(10+n))
    at: ATConfig = ATConfig()
    at_start: int = 0  # first step with AT (> 0: AT fine-tunes a plainly trained model)
    cm_grid: int = 40  # N, discretisation points of a consistency model
    cm_target_ema: float = 0.95  # μ of the CM target θ⁻ ← μθ⁻ + (1-μ)θ; measured, see docs
    teacher: str | None = None  # cd: path of the DDPM teacher checkpoint
    teacher_sha256: str | None = None
    seed: int = 0

    def identity(self) -> dict:
        """The fields a checkpoint must share with a resumed run (all but the budget)."""
        from iclr25.output import to_jsonable

        fields = to_jsonable(self)
        fields.pop("steps")
        fields.pop("teacher")  # the digest identifies the teacher, not its path
        return fields


@dataclass
class TrainState:
    """Everything a training run is at a given step (a checkpoint stores all of it)."""

    model: nn.Module
    ema: nn.Module
    optimizer: torch.optim.Optimizer
    gen: torch.Generator
    step: int = 0
    losses: list[float] = field(default_factory=list)
    carry: dict[str, torch.Tensor] | None = None  # free AT: batch tensors, "delta", "replay"
    target: nn.Module | None = None  # consistency models: the target network θ⁻
    parallel: DataParallel | None = None  # torchrun: this rank's rows, DDP (not saved)
    # diagnostics of this process (not checkpointed): Σ‖δ_i‖ per sample over the forward
    # passes that were perturbed (free: replays r ≥ 1), and their count
    delta_norm_sum: float = 0.0
    delta_norm_count: int = 0

    def record_delta(self, delta: torch.Tensor, norm: str) -> None:
        self.delta_norm_sum += float(delta_norms(delta, norm).mean())
        self.delta_norm_count += 1

    @property
    def mean_delta_norm(self) -> float | None:
        """Mean per-sample ‖δ‖ of the perturbed passes (None when nothing was perturbed)."""
        return self.delta_norm_sum / self.delta_norm_count if self.delta_norm_count else None


def init_state(config: TrainConfig, device: str = "cpu") -> TrainState:
    """A fresh model (initialised from ``config.seed``), its EMA copy, Adam, the generator."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = build_model(config.model).to(device)
    ema = copy.deepcopy(model).requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    gen = torch.Generator().manual_seed(config.seed)
    target = copy.deepcopy(ema) if config.objective != "ddpm" else None
    return TrainState(model, ema, optimizer, gen, target=target)


@torch.no_grad()
def blend(average: nn.Module, model: nn.Module, mu: float) -> None:
    """average ← μ average + (1-μ) model, parameter by parameter."""
    for p_avg, p in zip(average.parameters(), model.parameters(), strict=True):
        p_avg.mul_(mu).add_(p.detach(), alpha=1 - mu)


def update_ema(state: TrainState, config: TrainConfig) -> None:
    """Sampling weights θ_ema with μ = min(decay, (1+n)/(10+n)) (warm-up); for consistency
    models also the target θ⁻ with the fixed μ of ``cm_target_ema`` (Song et al. 2023)."""
    blend(state.ema, state.model, min(config.ema_decay, (1 + state.step) / (10 + state.step)))
    if state.target is not None:
        blend(state.target, state.model, config.cm_target_ema)


def _loss(state: TrainState, objective, batch, delta: torch.Tensor | None = None, sync=True):
    """The loss on the minibatch — under torchrun on this rank's rows, through the DDP
    wrapper when the gradient is to be synchronised (``sync``)."""
    p = state.parallel
    if p is None:
        return objective.loss(state.model, batch, delta, state.target)
    rows = objective.restore(p.local(batch.tensors()))
    delta = None if delta is None else p.local_rows(delta)
    return objective.loss(p.module if sync else state.model, rows, delta, state.target)


def _backward(state: TrainState, loss: torch.Tensor) -> None:
    (loss if state.parallel is None else state.parallel.scale(loss)).backward()


def _merged(state: TrainState, delta: torch.Tensor) -> torch.Tensor:
    """δ with every rank's rows (each rank only updates its own)."""
    return delta if state.parallel is None else state.parallel.merge_rows(delta)


def _optimise(state: TrainState, loss: torch.Tensor, config: TrainConfig) -> float:
    """After the caller's backward: Adam step, EMA (and CM target) update, record the loss."""
    state.optimizer.step()
    state.optimizer.zero_grad(set_to_none=True)
    state.step += 1
    update_ema(state, config)
    value = float(loss.detach()) if state.parallel is None else state.parallel.mean(loss)
    state.losses.append(value)
    return value


def plain_step(state: TrainState, objective, config: TrainConfig) -> float:
    batch = objective.draw(config.batch_size, state.gen)
    loss = _loss(state, objective, batch)
    _backward(state, loss)
    return _optimise(state, loss, config)


def searched_step(state: TrainState, objective, config: TrainConfig) -> float:
    """FGSM / PGD: find δ* with extra passes (∂L/∂δ only), then train on x_t + δ*."""
    batch = objective.draw(config.batch_size, state.gen)

    def search(d: torch.Tensor) -> torch.Tensor:  # ∂L/∂δ only: no gradient sync
        return _loss(state, objective, batch, d, sync=False)

    delta = _merged(state, search_delta(search, batch.net_input, config.at))
    state.record_delta(delta, config.at.norm)
    loss = _loss(state, objective, batch, delta)
    _backward(state, loss)
    return _optimise(state, loss, config)


def _replay_delta(state: TrainState, config: TrainConfig, like: torch.Tensor, replay: int):
    """δ of this replay: free's carried δ (with grad), the noise control's random δ, or
    None (``replay``)."""
    at = config.at
    if at.method == "free":
        return state.carry["delta"].clone().requires_grad_(True)
    if at.method == "noise":
        d = like[0].numel()
        gen = torch.Generator().manual_seed(derive_seed(config.seed, "noise", state.step))
        return random_delta(like, at.norm, noise_norm(at, replay, d), gen)
    return None


def free_step(state: TrainState, objective, config: TrainConfig) -> float:
    """One replay of free AT (or of a control): a new minibatch every m replays, δ from
    the previous replay (free), random of free's norm (noise), or none (replay)."""
    if state.carry is None:
        batch = objective.draw(config.batch_size, state.gen)
        state.carry = {
            **batch.tensors(),
            "delta": torch.zeros_like(batch.net_input),
            "replay": torch.zeros((), dtype=torch.int64),
        }
    batch = objective.restore(state.carry)
    replay = int(state.carry["replay"])
    delta = _replay_delta(state, config, batch.net_input, replay)
    if delta is not None and replay > 0:
        state.record_delta(delta, config.at.norm)
    loss = _loss(state, objective, batch, delta)
    _backward(state, loss)
    if config.at.method == "free":
        state.carry["delta"] = _merged(state, free_update(delta, delta.grad, config.at))
    state.carry["replay"] += 1
    if replay + 1 >= config.at.free_replays:
        state.carry = None
    return _optimise(state, loss, config)


def step_function(at: ATConfig) -> Callable:
    """The step of ``at.method``; ``fgsm``/``pgd`` run even with α = 0 (δ ≡ 0 then)."""
    if at.method in ("fgsm", "pgd"):
        return searched_step
    if at.replays and at.active:
        return free_step
    return plain_step


ProgressFn = Callable[[int, float], None]  # (step, loss) after every step
CheckpointFn = Callable[[TrainState], None]


def run_training(
    state: TrainState,
    objective,
    config: TrainConfig,
    on_progress: ProgressFn | None = None,
    on_checkpoint: CheckpointFn | None = None,
    checkpoint_every: int = 0,
) -> TrainState:
    """Train from ``state.step`` up to ``config.steps`` optimiser updates (plain steps
    before ``config.at_start``, the AT method's steps from there on)."""
    at_step = step_function(config.at)
    state.model.train()
    while state.step < config.steps:
        step = at_step if state.step >= config.at_start else plain_step
        loss = step(state, objective, config)
        if on_progress is not None:
            on_progress(state.step, loss)
        if on_checkpoint is not None and checkpoint_every and state.step % checkpoint_every == 0:
            on_checkpoint(state)
    return state

"""The training recipe of PI-DION and its supervised reference, without torch.

:class:`TrainConfig` and :func:`check` live here (re-exported by
:mod:`iclr25.core.pi_dion.train`) so that a command can validate its options before it
pays for importing torch (~5 CPU-s on a busy 2-core machine).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 4000
    batch: int = 100  # instances per step
    collocation: int = 128  # random residual points per step
    lr: float = 1e-3
    width: int = 64
    depth: int = 3
    basis: int = 16  # p
    w_res: float = 0.1  # weight of the residual term; see docs/pi-dion.md for how it was chosen
    lbfgs_steps: int = 0  # then L-BFGS iterations on all instances at fixed collocation points


# 2-D recipe defaults (see :mod:`.train2d` for how each was chosen on a probe draw):
# 1,024 random collocation points per step, p = 64 trunk functions (p = 16 cannot span
# the 2-D fields: the best 16-dimensional linear space leaves rel. L² 0.39 of f and 0.05 of u
# on the probe draw), Adam learning rate 3e-3
COLLOCATION_2D, BASIS_2D, LR_2D = 1024, 64, 3e-3


def for_dim(dim: int, **fields) -> TrainConfig:
    """The recipe with ``fields`` (None = default), the 2-D defaults above when ``dim`` is 2."""
    base = {"collocation": 128} if dim == 1 else {
        "collocation": COLLOCATION_2D, "basis": BASIS_2D, "lr": LR_2D}  # fmt: skip
    return TrainConfig(**{**base, **{k: v for k, v in fields.items() if v is not None}})


def check(cfg: TrainConfig) -> None:
    from iclr25.errors import UsageError

    if cfg.steps < 1 or cfg.batch < 1 or cfg.width < 1 or cfg.basis < 1 or not cfg.lr > 0:
        raise UsageError("--steps, --batch, --width, --basis must be ≥ 1 and --lr > 0",
                         "e.g. --steps 4000 --width 64 --basis 16 --lr 1e-3")  # fmt: skip
    if cfg.lbfgs_steps < 0:
        raise UsageError(f"--lbfgs-steps {cfg.lbfgs_steps} is negative", "use 0 (none) or more")

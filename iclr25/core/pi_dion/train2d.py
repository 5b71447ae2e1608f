"""Training of the 2-D PI-DION (label-free) and its supervised reference, same budget.

The loss, scaling, optimiser and schedule are those of :mod:`.train` (1-D), with points
in (0,1)²: per batch of instances i with data d_i (the ``side × side`` sensor grid, row
major) and s_i = RMS(d_i),
  L = w_res · mean_{i,j} |𝓛u_θ,i(x_j) − f_θ,i(x_j)|² / (F s_i)²   (M random x_j ∈ (0,1)²)
    +         mean_{i,s} |u_θ,i(z_s) − d_i,s|² / s_i²              (data at the sensors)
with F = ``f_scale_2d`` = 5π² + |c| (𝓛's eigenvalue on the sine mode (1, 2), as the 1-D
F is 𝓛's on its second sine mode: a property of 𝓛, not of any label). u = 0 on ∂Ω by the
factor x(1−x)y(1−y). L-BFGS runs at the midpoints of a k × k grid (k² ≥ 2·collocation).
No f enters this loss; :func:`train_pi_dion_2d` never receives f.

Supervised reference: the same CNN inverse branch and trunk (a fresh PIDION2D, u branch
unused), optimiser, schedule and steps; MSE on f at the grid points for N labelled pairs.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from iclr25.core.pi_dion.model2d import PIDION2D, NetConfig2D
from iclr25.core.pi_dion.train import (
    DTYPE,
    TrainConfig,
    _fit,
    label_free_loss,
    supervised_loss,
)

CHANNELS = 16  # CNN channels of both branches
U_SCALE = 16.0  # boundary factor 16·x(1−x)y(1−y): maximum 1, as the branches' outputs are O(1)
TRUNK_GAIN = 16.0  # the trunk's first layer at init: weights × 16, centred on (½, ½)


def f_scale_2d(c: float) -> float:
    return 5 * math.pi**2 + abs(c)


def side_of(sensors: np.ndarray) -> int:
    """The sensor grid's side (the CNN branches need a full ``side × side`` grid)."""
    side = round(math.sqrt(len(sensors)))
    if side * side != len(sensors):
        from iclr25.errors import InputError

        raise InputError(f"{len(sensors)} sensors are not a square grid",
                         "the 2-D PI-DION reads a side × side sensor grid (16 × 16 from "
                         "`generate --dim 2`)")  # fmt: skip
    return side


def _new_model(cfg: TrainConfig, side: int, c: float, seed: int) -> PIDION2D:
    torch.manual_seed(seed)
    net = NetConfig2D(side, CHANNELS, cfg.width, cfg.depth, cfg.basis, f_scale_2d(c), U_SCALE)
    model = PIDION2D(net).to(DTYPE)
    with torch.no_grad():  # tanh features of many frequencies on (0,1)² from the start
        first = model.trunk[0]
        first.weight.mul_(TRUNK_GAIN)
        centre = torch.full((2,), 0.5, dtype=DTYPE)
        first.bias.copy_(first.bias * TRUNK_GAIN - first.weight @ centre)
    return model


def _row_major(d: np.ndarray, sensors: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Data and positions ordered row-major by (x, y), as the CNN reads them."""
    order = np.lexsort((sensors[:, 1], sensors[:, 0]))
    return (torch.as_tensor(d[:, order], dtype=DTYPE),
            torch.as_tensor(sensors[order], dtype=DTYPE))  # fmt: skip


def train_pi_dion_2d(
    d: np.ndarray,
    sensors: np.ndarray,
    c: float,
    cfg: TrainConfig,
    seed: int,
    progress=None,
    on_loss=None,
    group=None,
) -> tuple[PIDION2D, float]:
    """Label-free: only the noisy sensor data ``d`` (N, m) and their positions (m, 2).
    ``group``, ``on_loss``: as for :func:`.train._fit` (data-parallel under torchrun: each
    rank's share of the instances, the same collocation points; Adam and L-BFGS)."""
    model = _new_model(cfg, side_of(sensors), c, seed)
    data, z = _row_major(d, sensors)
    loss_of = label_free_loss(model, data, z, c, cfg.w_res)
    return model, _fit(model, loss_of, cfg, len(d), seed, progress, group, on_loss, dim=2)


def train_supervised_2d(
    d: np.ndarray,
    sensors: np.ndarray,
    f: np.ndarray,
    pts: np.ndarray,
    c: float,
    cfg: TrainConfig,
    seed: int,
    progress=None,
    on_loss=None,
    group=None,
) -> tuple[PIDION2D, float]:
    """CNN DeepONet on N labelled pairs (d_i, f_i at ``pts`` (G, 2)): MSE on f only;
    ``group``, ``on_loss`` as for :func:`train_pi_dion_2d`."""
    model = _new_model(cfg, side_of(sensors), c, seed)
    data, _ = _row_major(d, sensors)
    target = torch.as_tensor(f, dtype=DTYPE)
    loss_of = supervised_loss(model, data, target, torch.as_tensor(pts, dtype=DTYPE))
    return model, _fit(model, loss_of, cfg, len(d), seed, progress, group, on_loss, dim=2)


@torch.no_grad()
def predict_2d(
    model: PIDION2D, d: np.ndarray, sensors: np.ndarray, pts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(u, f) at ``pts`` (G, 2) for data ``d`` (N, m) at ``sensors`` (m, 2) → two (N, G)."""
    data, _ = _row_major(d, sensors)
    u, f = model.fields(data, torch.as_tensor(pts, dtype=DTYPE))
    return u.numpy(), f.numpy()

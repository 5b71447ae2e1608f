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

2-D recipe (how each choice was made). All choices label-free in what they optimise, made on
a PROBE draw (generator seeds 9001 for 300 unlabelled training inputs and 9002 for 200
probe instances whose f and u scored the choice), never on the studies' held-out draws
(seed 20250101 and the compare seeds' data). Diagnosis of the earlier recipe (p = 16,
factor x(1−x)y(1−y), default init, lr 1e-3; probe u 0.57 after 200 Adam steps, held-out
u 0.14–0.15, f 0.63): errors on the training inputs equalled the probe's (under-fitting,
not over-fitting), and with the residual term switched off (pure data fit) u was as bad,
so the physics weight was not the cause. Three causes, each measured at 1,000 full-batch
Adam steps (u / f on the probe):
- p: the best p-dimensional linear space (PCA of the probe's own fields) leaves rel. L²
  0.05 of u and 0.39 of f at p = 16, 0.016 / 0.22 at 32, 0.004 / 0.11 at 64 (a Bayes f
  error of 0.13 needs p ≥ 64): ``BASIS_2D`` = 64 (:mod:`.recipe`).
- The boundary factor x(1−x)y(1−y) peaks at 1/16, so u's coefficients had to grow ~16×
  from O(1): ``U_SCALE`` = 16 (u 0.26 → 0.22 at p = 128).
- Spectral bias of the trunk: a default-initialised tanh MLP on (0,1)² is nearly linear
  there, and the data fit alone stalled at u 0.22. The first layer's weights × ``TRUNK_GAIN``
  (centred on (½, ½)) with lr 3e-3: u 0.21 (lr 1e-3) → 0.18 (lr 3e-3) → 0.130 / 0.122 /
  0.110 (gain 4 / 8 / 16); lr 1e-2 was worse (0.195). f 0.73 → 0.57.
Not the cause: CNN width (32 channels: u 0.212 vs 0.212), a linear skip path in the branches
(0.124 vs 0.122), p = 128 vs 64 (0.116 vs 0.122). Then 2,000 Adam steps: u 0.081, f 0.51;
1,000 Adam + 1,000 L-BFGS (L-BFGS does not stall: loss 0.0185 → 0.0054): u 0.056, f 0.455,
142 CPU-s at 300 instances — the recipe ``scripts/train_pi_dion.py --dim 2`` and the 2-D
studies use. The 1-D model is unchanged.

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

"""The diffusion prior p_θ(τ) over fixed-horizon trajectories (Diffuser-style, MLP denoiser).

A trajectory is τ = (s_0, …, s_{H−1}) with states normalised to [−1, 1] per axis
(``to_unit``); actions are the state differences, so they are not modelled separately.
Episodes shorter than H are padded by staying at the goal (zero length, zero cost).
The start s_0 and the goal s_{H−1} are inpainted: written back into τ^i after every
reverse step, and into the noised input during training (as Diffuser's
``apply_conditioning``), so the model learns to use them.

Denoiser: τ̂^0_θ(τ^i, i) = √ᾱ_i·τ^i + an MLP on the flattened trajectory (2H) and a
sinusoidal embedding of the level i, ``width`` units per hidden layer, SiLU, trained on
E‖τ^0 − τ̂^0_θ(√ᾱ_i τ^0 + √(1−ᾱ_i) ε, i)‖² (Diffuser's x0-prediction) and used as ε_θ.
Trained on the nominal data only (never the demonstrations), so one prior serves every
hidden constraint of a layout family.

Saved as safetensors with metadata: the spec it was trained for (its digest is checked on
load: a prior for another spec is an input error), horizon, diffusion steps, schedule,
width, training data size, final loss and legal-move rate.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from iclr25.core.exicl.ddpm import DDPM
from iclr25.errors import InputError

FORMAT = "iclr25-exicl-prior/2"  # /2: the skip term of the denoiser


@dataclass(frozen=True)
class PriorConfig:
    horizon: int = 32  # H, states per trajectory (≥ the longest demonstration)
    steps: int = 20  # T, diffusion levels (few: guided sampling is the hot path on CPU)
    schedule: str = "cosine"
    width: int = 128  # hidden units per layer of the MLP denoiser
    layers: int = 3  # hidden layers
    train_steps: int = 3000  # optimiser steps
    batch: int = 128
    lr: float = 2e-3  # Adam, cosine-decayed to 5 % over the run
    trajectories: int = 2000  # nominal trajectories generated when none are given


def to_unit(xy, width: int, height: int):
    """Grid coordinates (…, 2) → [−1, 1]² (works on numpy arrays and torch tensors)."""
    scale = np.array([(width - 1) / 2.0, (height - 1) / 2.0])
    if hasattr(xy, "detach"):
        import torch

        scale = torch.as_tensor(scale, dtype=xy.dtype)
    return xy / scale - 1.0


def from_unit(u, width: int, height: int):
    scale = np.array([(width - 1) / 2.0, (height - 1) / 2.0])
    if hasattr(u, "detach"):
        import torch

        scale = torch.as_tensor(scale, dtype=u.dtype)
    return (u + 1.0) * scale


def level_embedding(i, dim: int = 32):
    """Sinusoidal embedding (B, dim) of integer levels i (B,)."""
    import torch

    half = dim // 2
    freqs = torch.exp(-math.log(1000.0) * torch.arange(half, dtype=torch.float32) / half)
    angles = i.float()[:, None] * freqs[None]
    return torch.cat([angles.sin(), angles.cos()], dim=1)


def make_denoiser(horizon: int, width: int, layers: int, steps: int, schedule: str):
    import torch
    from torch import nn

    a_bar = torch.as_tensor(DDPM(steps, schedule).alpha_bar.numpy(), dtype=torch.float32)

    class Denoiser(nn.Module):
        """τ̂^0_θ(τ^i, i) = √ᾱ_i·τ^i + MLP(τ^i, i), returned as ε (B, H, 2), (B,) → (B, H, 2).

        Diffuser's ``predict_epsilon=False``: the network predicts the clean trajectory
        (smooth, easy for an MLP), trained on ‖τ̂^0 − τ^0‖²; :meth:`forward` converts it to
        ε = (τ^i − √ᾱ_i τ̂^0) / √(1 − ᾱ_i) so the DDPM and the guided step are unchanged.
        The skip √ᾱ_i·τ^i is the optimal linear predictor of τ^0 for unit-variance data."""

        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("a_bar", a_bar)
            self.embed = nn.Sequential(nn.Linear(32, 64), nn.SiLU(), nn.Linear(64, 64))
            dims = [2 * horizon + 64] + [width] * layers
            blocks: list[nn.Module] = []
            for a, b in zip(dims[:-1], dims[1:], strict=True):
                blocks += [nn.Linear(a, b), nn.SiLU()]
            self.body = nn.Sequential(*blocks, nn.Linear(width, 2 * horizon))

        def x0(self, x, i):
            b = x.shape[0]
            h = torch.cat([x.reshape(b, -1), self.embed(level_embedding(i))], dim=1)
            ab = self.a_bar[i].reshape(b, 1, 1)
            return ab.sqrt() * x + self.body(h).reshape(b, horizon, 2)

        def forward(self, x, i):
            ab = self.a_bar[i].reshape(x.shape[0], 1, 1).to(x.dtype)
            return (x - ab.sqrt() * self.x0(x, i)) / (1.0 - ab).sqrt()

    return Denoiser()


@dataclass
class Prior:
    """A trained prior: the denoiser, its DDPM and what it was trained for."""

    model: object  # torch module
    ddpm: DDPM
    config: PriorConfig
    spec_digest: str
    width_cells: int
    height_cells: int
    meta: dict

    def condition(self, x, start_u, goal_u):
        """Inpaint: s_0 = start, s_{H−1} = goal (unit coordinates, (B, 2) each)."""
        x = x.clone()
        x[:, 0] = start_u
        x[:, -1] = goal_u
        return x


def train_prior(trajectories: np.ndarray, spec, config: PriorConfig, seed: int, on_step=None,
                parallel=None, on_loss=None) -> tuple[Prior, list[float]]:  # fmt: skip
    """Fit ε_θ on ``trajectories`` (N, H, 2) in grid coordinates; returns the prior and the
    loss curve (mean per 100 steps). Deterministic for a seed on one thread.

    ``parallel``: a :class:`iclr25.distributed_torch.DataParallel` under torchrun. Every
    rank draws the whole global batch (``config.batch``) from the same generator and
    computes the loss on its own rows (every row has the same number of terms, so the
    default share weighting is exact); the recorded loss is the whole batch's mean, so the
    curve is the one-process curve. ``on_loss(value)`` receives each step's batch loss."""
    import torch

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    ddpm = DDPM(config.steps, config.schedule)
    model = make_denoiser(
        config.horizon, config.width, config.layers, config.steps, config.schedule
    )
    data = torch.as_tensor(to_unit(trajectories, spec.width, spec.height), dtype=torch.float32)
    net = None
    if parallel is not None:  # DDP calls forward (ε); training needs τ̂^0
        from iclr25.distributed_torch import forward_of

        net = parallel.attach(forward_of(model, lambda m, x, i: m.x0(x, i))).module
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, config.train_steps, config.lr * 0.05)
    curve, window = [], []
    for step in range(config.train_steps):
        idx = torch.randint(0, len(data), (config.batch,), generator=g)
        x0 = data[idx]
        i = torch.randint(0, config.steps, (config.batch,), generator=g)
        noise = torch.randn(x0.shape, generator=g)
        x_t = ddpm.q_sample(x0, i, noise)
        x_t[:, 0], x_t[:, -1] = x0[:, 0], x0[:, -1]
        if parallel is None:
            loss = ((model.x0(x_t, i) - x0)[:, 1:-1] ** 2).mean()
            share, value = loss, float(loss.detach())
        else:  # this rank's rows of the global batch (module docstring of distributed_torch)
            rows = parallel.rows(config.batch)
            x_t, i, x0 = x_t[rows], i[rows], x0[rows]
            loss = ((net(x_t, i) - x0)[:, 1:-1] ** 2).mean()
            share, value = parallel.scale(loss), parallel.mean(loss)
        opt.zero_grad()
        share.backward()
        opt.step()
        sched.step()
        window.append(value)
        if on_loss is not None:
            on_loss(value)
        if len(window) == 100 or step == config.train_steps - 1:
            curve.append(float(np.mean(window)))
            window = []
        if on_step is not None:
            on_step(1)
    model.eval()
    meta = {"train_trajectories": int(len(data)), "final_loss": curve[-1]}
    return Prior(model, ddpm, config, spec.digest(), spec.width, spec.height, meta), curve


# ---------------------------------------------------------------------------------------
# Saving and loading
# ---------------------------------------------------------------------------------------
def save_prior(prior: Prior, path: Path, spec) -> None:
    from safetensors.torch import save as st_save

    from iclr25 import atomic

    meta = {
        "format": FORMAT,
        "config": json.dumps(asdict(prior.config)),
        "spec": json.dumps(spec.as_dict(), sort_keys=True),
        "spec_digest": prior.spec_digest,
        "meta": json.dumps(prior.meta),
    }
    state = {k: v.detach().contiguous() for k, v in prior.model.state_dict().items()}
    atomic.write_bytes(Path(path), st_save(state, metadata=meta))


def load_prior(path: Path, spec=None, flag: str = "--prior") -> Prior:
    """Load a prior; with ``spec``, refuse one trained for another spec (digest)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file, safe_open

    path = Path(path)
    if not path.is_file():
        raise InputError(
            f"{flag} {path}: no such file", "train one with `iclr25 exicl train-prior`"
        )
    try:
        with safe_open(str(path), framework="pt") as fh:
            meta = fh.metadata() or {}
        state = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise InputError(f"{flag} {path}: not a safetensors prior ({exc})", "retrain it") from None
    if meta.get("format") != FORMAT:
        raise InputError(f"{flag} {path}: not an exicl prior", "train one with `exicl train-prior`")
    config = PriorConfig(**json.loads(meta["config"]))
    spec_dict = json.loads(meta["spec"])
    if spec is not None and meta["spec_digest"] != spec.digest():
        raise InputError(
            f"{flag} {path}: trained for another spec (hash {meta['spec_digest']}, "
            f"{spec_dict['width']}×{spec_dict['height']} {spec_dict['type']}) than --env "
            f"(hash {spec.digest()})",
            "train a prior for this spec with `iclr25 exicl train-prior`",
        )
    model = make_denoiser(
        config.horizon, config.width, config.layers, config.steps, config.schedule
    )
    model.load_state_dict(state)
    model.eval()
    prior_meta = {**json.loads(meta.get("meta", "{}")), "spec": spec_dict}
    return Prior(
        model,
        DDPM(config.steps, config.schedule),
        config,
        meta["spec_digest"],
        spec_dict["width"],
        spec_dict["height"],
        prior_meta,
    )

"""The study's generative model: a small class-conditional DDPM over artists' works.

ArtSavant (Moayeri et al., ICLR 2025, Sec. 5) checks images a text-to-image model made
for an artist's name. Offline there is no such model, so the study trains one: a DDPM
(Ho et al. 2020) conditioned on the artist, on the reference works only, at a small
resolution. Generated images then come from a learned model, not from the procedural
generator that drew the references — the check has to recognise what the model learned.

Built on the toolkit's diffusion code (``iclr25.core.diffusion_at``): the U-Net's
residual blocks and time embedding (``models``), the noise schedule (``schedules``) and
the DDIM sampler (``samplers.ddim_trajectory``). Conditioning follows the class-
conditional DDPM of Dhariwal & Nichol (2021, Sec. 4: a class embedding added to the
timestep embedding): ``emb = TimeEmbedding(t) + E[y]``. The unconditional control is the
same network trained with every label set to the null class ``y = A`` (A artists), with
the same budget (steps, batch, learning rate).

Symbols: ``x0`` -> x_0 (works scaled to [-1, 1]), ``y`` -> the artist label, ``eps`` ->
ε, ``t`` -> t in 0..T-1, ``model(x_t, t, y)`` -> ε_θ(x_t, t, y); loss (Ho et al., eq. 14)
E ‖ε_θ(√ᾱ_t x_0 + σ_t ε, t, y) - ε‖², or by default the v-prediction of Salimans & Ho
(2022) E ‖v_θ - (√ᾱ_t ε - σ_t x_0)‖², converted to ε = σ_t x_t + √ᾱ_t v for the
sampler (measured: with ε-prediction at this budget, samples took their colours from the
initial noise and the artist label had no visible effect). Sampling: deterministic DDIM (η = 0) with
``sample_nfe`` steps on the trailing grid, x̂_0 clipped to [-1, 1], from the EMA weights.

Everything random (initialisation, minibatches, t, ε, x_T) comes from generators seeded
by the caller, and training uses one torch thread: a model is a deterministic function
of (works, labels, config, seed).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from iclr25.core.diffusion_at.models import UNet
from iclr25.core.diffusion_at.samplers import ddim_trajectory
from iclr25.core.diffusion_at.schedules import NoiseSchedule
from iclr25.core.diffusion_at.training import blend

# the config lives in a torch-free module (studies and docs read it without torch)
from iclr25.core.style_check.configs import GeneratorConfig as GeneratorConfig


class ConditionalUNet(UNet):
    """diffusion-at's two-level U-Net with an artist embedding added to the time one."""

    def __init__(self, channels: int, n_classes: int, base: int, time_dim: int) -> None:
        super().__init__(channels, base, time_dim)
        self.n_classes = n_classes
        self.label = nn.Embedding(n_classes + 1, time_dim)  # index n_classes: no artist

    def forward(self, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        emb = self.time(t) + self.label(y)  # (B, time_dim)
        # the body of UNet.forward with this embedding
        h1 = self.down1(self.inp(x), emb)  # (B, base, H, W)
        h2 = self.down2(self.pool(h1), emb)  # (B, 2 base, H/2, W/2)
        h = self.mid(h2, emb)
        h = self.up2(torch.cat([h, h2], dim=1), emb)  # (B, 2 base, H/2, W/2)
        h = self.up1(torch.cat([self.upsample(h), h1], dim=1), emb)  # (B, base, H, W)
        return self.out(h)


@dataclass
class TrainedGenerator:
    config: GeneratorConfig
    n_classes: int
    model: ConditionalUNet  # the EMA weights
    losses: list[float]

    @property
    def null_label(self) -> int:
        return self.n_classes


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """Training and sampling on one thread: the same floats in any process."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def images_to_tensor(images: np.ndarray) -> torch.Tensor:
    """(N, H, W, 3) uint8 -> (N, 3, H, W) float32 in [-1, 1]."""
    x = torch.from_numpy(np.array(images, dtype=np.float32)) / 127.5 - 1.0  # (N, H, W, 3)
    return x.permute(0, 3, 1, 2).contiguous()  # (N, 3, H, W)


def tensor_to_images(x: torch.Tensor) -> np.ndarray:
    """(N, 3, H, W) in [-1, 1] -> (N, H, W, 3) uint8."""
    x = ((x.clamp(-1, 1) + 1.0) * 127.5).round().to(torch.uint8)
    return x.permute(0, 2, 3, 1).numpy()  # (N, H, W, 3)


def _check_inputs(images: np.ndarray, labels: np.ndarray, config: GeneratorConfig) -> None:
    expected = (config.size_px, config.size_px, 3)
    if images.ndim != 4 or images.shape[1:] != expected:
        raise ValueError(f"works must be (N, {config.size_px}, {config.size_px}, 3) uint8")
    if config.size_px % 2:
        raise ValueError(f"size_px must be even (the U-Net halves it), got {config.size_px}")
    if len(labels) != len(images) or len(images) == 0:
        raise ValueError("one label per work, and at least one work")


def v_target(schedule: NoiseSchedule, x0: torch.Tensor, t: torch.Tensor, eps: torch.Tensor):
    """v = √ᾱ_t ε - σ_t x_0 (Salimans & Ho 2022, Sec. 4): informative at every noise level,
    where ε-prediction is nearly uninformative about x_0 when ᾱ_t -> 0 (the first sampler
    step then fixes each sample's colours from the noise)."""
    a, s = schedule.coefficients(t, x0.dim())
    return a * eps - s * x0


def train_generator(
    images: np.ndarray,
    labels: np.ndarray,
    n_classes: int,
    config: GeneratorConfig,
    seed: int,
    on_step: Callable[[int, float], None] | None = None,
) -> TrainedGenerator:
    """Fit ε_θ(x_t, t, y) on (images (N, S, S, 3) uint8, labels (N,) in 0..A-1)."""
    _check_inputs(images, labels, config)
    x_all = images_to_tensor(images)  # (N, 3, S, S)
    y_all = torch.as_tensor(np.asarray(labels), dtype=torch.int64)
    if not config.conditional:
        y_all = torch.full_like(y_all, n_classes)  # the null class: no artist information
    schedule = NoiseSchedule.make(config.schedule, config.diffusion_steps)
    with one_torch_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = ConditionalUNet(3, n_classes, config.width, config.time_dim)
        ema = copy.deepcopy(model).requires_grad_(False)
        optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
        gen = torch.Generator().manual_seed(seed)
        losses = []
        for step in range(config.steps):
            rows = torch.randint(0, len(x_all), (config.batch_size,), generator=gen)
            x0, y = x_all[rows], y_all[rows]  # (B, 3, S, S), (B,)
            t = torch.randint(0, schedule.num_steps, (config.batch_size,), generator=gen)
            eps = torch.randn(x0.shape, generator=gen)
            target = eps if config.prediction == "eps" else v_target(schedule, x0, t, eps)
            loss = (model(schedule.q_sample(x0, t, eps), t, y) - target).square().mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            blend(ema, model, min(config.ema_decay, (2 + step) / (11 + step)))
            losses.append(float(loss.detach()))
            if on_step is not None:
                on_step(step + 1, losses[-1])
    return TrainedGenerator(config, n_classes, ema.eval(), losses)


def sample(generator: TrainedGenerator, labels: np.ndarray, seed: int) -> np.ndarray:
    """One image per label (artist index, or ``null_label``): (n, S, S, 3) uint8."""
    cfg = generator.config
    schedule = NoiseSchedule.make(cfg.schedule, cfg.diffusion_steps)
    y = torch.as_tensor(np.asarray(labels), dtype=torch.int64)
    if not cfg.conditional:
        y = torch.full_like(y, generator.null_label)
    gen = torch.Generator().manual_seed(seed)
    x_T = torch.randn((len(y), 3, cfg.size_px, cfg.size_px), generator=gen)
    model = generator.model

    def denoiser(x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        out = model(x, t, y)
        if cfg.prediction == "eps":
            return out
        a, s = schedule.coefficients(t, x.dim())
        return s * x + a * out  # ε = σ x_t + √ᾱ v

    with one_torch_thread():
        states = ddim_trajectory(denoiser, schedule, x_T, cfg.sample_nfe, 0.0, gen, clip=1.0)
    return tensor_to_images(states[-1][1])


# -- cache ------------------------------------------------------------------------------
def cache_key(config: GeneratorConfig, images: np.ndarray, labels: np.ndarray, seed: int) -> str:
    """Hash of everything a trained model depends on."""
    digest = hashlib.sha256(json.dumps([asdict(config), int(seed)], sort_keys=True).encode())
    digest.update(np.ascontiguousarray(images).tobytes())
    digest.update(np.asarray(labels, dtype=np.int64).tobytes())
    return digest.hexdigest()[:32]


def to_bytes(generator: TrainedGenerator) -> bytes:
    from safetensors.torch import save

    meta = {
        "config": json.dumps(asdict(generator.config)),
        "n_classes": str(generator.n_classes),
        "losses": json.dumps(generator.losses),
    }
    tensors = {k: v.contiguous() for k, v in generator.model.state_dict().items()}
    return save(tensors, metadata=meta)


def from_bytes(data: bytes) -> TrainedGenerator:
    from safetensors.torch import load

    meta = safetensors_metadata(data)
    config = GeneratorConfig(**json.loads(meta["config"]))
    n_classes = int(meta["n_classes"])
    model = ConditionalUNet(3, n_classes, config.width, config.time_dim)
    model.load_state_dict(load(data))
    losses = json.loads(meta["losses"])
    return TrainedGenerator(config, n_classes, model.eval().requires_grad_(False), losses)


def safetensors_metadata(data: bytes) -> dict:
    """The string metadata of safetensors bytes (header: u64 little-endian length + JSON)."""
    length = int.from_bytes(data[:8], "little")
    return json.loads(data[8 : 8 + length]).get("__metadata__", {})

"""``diffusion-probe image`` end to end: load a model and data, probe, control, verdict.

Models: a diffusion-at image checkpoint (``iclr25 diffusion-at train`` writes them; EMA
weights), the bundled digits DDPM (the same format, EMA weights only, trained by
``scripts/train_probe_digits.py``), or a local diffusers folder with a ``UNet2DModel``
and a ``DDPMScheduler`` (ε-prediction; the optional extra ``diffusion-probe``).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from iclr25.core.diffusion_probe.image import (
    Denoiser,
    ImageProbeConfig,
    image_verdict,
    probe_gaussian,
    probe_model,
)
from iclr25.errors import InputError, UsageError
from iclr25.paths import package_file

BUNDLED = ("iclr25.data", "diffusion_probe", "digits_ddpm.safetensors")


def bundled_checkpoint() -> Path:
    return package_file(BUNDLED[0], BUNDLED[1], BUNDLED[2])


def load_checkpoint_denoiser(path: Path) -> tuple[Denoiser, tuple[int, ...]]:
    """(denoiser, image shape (C, H, W)) from a diffusion-at checkpoint."""
    from iclr25.core.diffusion_at.checkpoints import load_model
    from iclr25.core.diffusion_at.schedules import NoiseSchedule

    model, config = load_model(Path(path), "ema")
    shape = tuple(config.model.data_shape)
    if len(shape) != 3:
        raise InputError(
            f"{path}: a checkpoint of {shape[0]}-D points has no tokens to probe",
            "pass an image checkpoint (trained on digits, an image folder or an (N, C, H, W) .npy)",
        )
    schedule = NoiseSchedule.make(config.schedule, config.diffusion_steps)
    return Denoiser(model, schedule.alpha_bar, clip=1.0), shape


def load_pipeline_denoiser(folder: Path) -> tuple[Denoiser, tuple[int, ...]]:
    """(denoiser, image shape) from a local diffusers UNet2DModel + DDPMScheduler folder."""
    try:
        from diffusers import DDPMScheduler, UNet2DModel
    except ImportError:
        raise UsageError(
            "--pipeline needs diffusers, which is not installed",
            "install the extra: pip install 'iclr25[diffusion-probe]'",
        ) from None
    folder = Path(folder)
    unet_dir = folder / "unet" if (folder / "unet").is_dir() else folder
    sched_dir = folder / "scheduler" if (folder / "scheduler").is_dir() else folder
    try:
        unet = UNet2DModel.from_pretrained(str(unet_dir), local_files_only=True).eval()
        scheduler = DDPMScheduler.from_pretrained(str(sched_dir), local_files_only=True)
    except (OSError, ValueError) as exc:
        raise InputError(
            f"{folder}: not a diffusers UNet2DModel + DDPMScheduler folder ({exc})",
            "pass a folder saved with save_pretrained (unet/ and scheduler/ or both in one)",
        ) from None
    if scheduler.config.prediction_type != "epsilon":
        raise InputError(
            f"{folder}: the scheduler predicts {scheduler.config.prediction_type!r}",
            "the probe needs an ε-prediction model (prediction_type='epsilon')",
        )
    size = unet.config.sample_size
    size = (size, size) if isinstance(size, int) else tuple(size)

    def eps(x, t):
        return unet(x, t).sample

    shape = (unet.config.in_channels, *size)
    return Denoiser(eps, scheduler.alphas_cumprod.double().numpy(), clip=1.0), shape


def load_images(spec: str, shape: tuple[int, ...]) -> torch.Tensor:
    """``digits``, an (N, C, H, W) .npy or an image folder, checked against ``shape``."""
    from iclr25.core.diffusion_at.data import load_dataset

    dataset = load_dataset(spec, image_size=shape[-1])
    if dataset.kind != "image" or tuple(dataset.shape) != tuple(shape):
        raise InputError(
            f"--data {spec}: data of shape {tuple(dataset.shape)}, the model takes {shape}",
            "pass images of the model's shape (e.g. --data digits for the bundled model)",
        )
    return dataset.array


def digit_classify():
    from iclr25.core.diffusion_at.classifier import load_digit_classifier

    model = load_digit_classifier()

    def classify(x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return model(x.float()).argmax(dim=1)

    return classify


def run_image(config: ImageProbeConfig, den: Denoiser, data: torch.Tensor, seed: int) -> dict:
    """``per_time``, ``peak_time``, ``class_midpoint``, ``control``, ``verdict``."""
    gen = torch.Generator().manual_seed(seed)
    classify = digit_classify() if config.classifier else None
    rows, corr = probe_model(den, data, config, gen, classify)
    control = None
    if config.control == "gaussian":
        rng = np.random.default_rng(seed)
        control = probe_gaussian(data.numpy(), den.alpha_bar, config, rng)
    verdict = image_verdict(list(config.times), rows, control)
    return {
        "per_time": rows,
        "corr_r": corr,
        "peak_time": verdict.pop("peak_time"),
        "class_midpoint": verdict.pop("class_midpoint"),
        "control": None if control is None else {"name": "gaussian", "per_time": control},
        "verdict": verdict,
        "config": asdict(config),
    }


def image_headline(results: dict) -> str:
    v = results["verdict"]
    peak = results["peak_time"]
    mid = results["class_midpoint"]
    where = "no interior χ̃ peak" if peak is None else f"χ̃ peak at {peak:.2f} T"
    cls = "" if mid is None else f", class midpoint {mid:.2f} T"
    state = (
        "OBSERVED" if v["observed"] else "NOT OBSERVED: " + ", ".join(v["failed"] or ["untested"])
    )
    return f"{where}{cls}; {state}"

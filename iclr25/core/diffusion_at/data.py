"""Training data: exact 2-D samplers, scikit-learn's 8×8 digits, ``.npy`` arrays, image folders.

``--data`` names one of

- ``8gaussians``: a mixture of 8 isotropic Gaussians (std 0.2) centred on the circle of
  radius 2 at angles 2πk/8;
- ``swissroll``: s ~ U(1.5π, 4.5π), x = (s cos s, s sin s)/5 + N(0, 0.1² I);
- ``checkerboard``: uniform on the 8 dark unit squares of a 4×4 board on [-2, 2]²;
- ``digits``: scikit-learn's bundled 1797 8×8 grey digits, scaled to [-1, 1];
- a path to a ``.npy`` array: (N, d) points (standardised per coordinate; samples are
  mapped back with :meth:`Dataset.to_user`), or (N, H, W), (N, C, H, W), (N, H, W, C)
  images (uint8 0–255, or floats in [0, 1] or [-1, 1]) scaled to [-1, 1];
- a folder of images (png, jpg, bmp, gif, tif, webp): every file is read as grey (8-bit,
  16-bit or float grey) or RGB (RGB for the whole folder when any image has colour),
  centre-cropped to a square, resized to ``image_size`` × ``image_size`` (so images of
  mixed sizes become one array) and scaled to [-1, 1]; files that cannot be decoded are
  skipped, counted and named.

The 2-D samplers are exact: :meth:`Dataset.sample` draws fresh points, so "fresh true
samples" for the metrics are really fresh. Finite data sets are sampled with replacement
for training; their reference set for the metrics is the data set itself.
All randomness comes from the ``torch.Generator`` passed in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from iclr25.core.diffusion_at.names import DATASETS as BUILTIN_DATASETS
from iclr25.errors import InputError

TOY_DATASETS = ("8gaussians", "swissroll", "checkerboard")
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp"}
DEFAULT_IMAGE_SIZE = 16


def sample_8gaussians(n: int, gen: torch.Generator) -> torch.Tensor:
    k = torch.randint(0, 8, (n,), generator=gen)
    angle = 2 * math.pi * k.float() / 8
    centres = 2.0 * torch.stack([torch.cos(angle), torch.sin(angle)], dim=1)  # (n, 2)
    return centres + 0.2 * torch.randn(n, 2, generator=gen)


def sample_swissroll(n: int, gen: torch.Generator) -> torch.Tensor:
    s = 1.5 * math.pi * (1 + 2 * torch.rand(n, generator=gen))
    points = torch.stack([s * torch.cos(s), s * torch.sin(s)], dim=1) / 5.0  # (n, 2)
    return points + 0.1 * torch.randn(n, 2, generator=gen)


def sample_checkerboard(n: int, gen: torch.Generator) -> torch.Tensor:
    x1 = 4 * torch.rand(n, generator=gen) - 2
    x2 = torch.rand(n, generator=gen) - 2 * torch.randint(0, 2, (n,), generator=gen).float()
    x2 = x2 + torch.floor(x1).remainder(2)  # shift up on odd columns: a checkerboard
    return torch.stack([x1, x2], dim=1)  # (n, 2) in [-2, 2]²


TOY_SAMPLERS: dict[str, Callable[[int, torch.Generator], torch.Tensor]] = {
    "8gaussians": sample_8gaussians,
    "swissroll": sample_swissroll,
    "checkerboard": sample_checkerboard,
}


@dataclass
class Dataset:
    """A data source for training and evaluation (see the module docstring)."""

    name: str
    kind: str  # "points" or "image"
    shape: tuple[int, ...]  # one sample, e.g. (2,) or (1, 8, 8)
    sampler: Callable[[int, torch.Generator], torch.Tensor] | None = None  # exact sampler
    array: torch.Tensor | None = None  # finite data, (N, *shape) float32
    clip: float | None = None  # samplers clip x̂_0 to [-clip, clip] (images: 1)
    info: dict = field(default_factory=dict)  # counts, skipped files, transforms
    mean: np.ndarray | None = None  # points from .npy: per-coordinate standardisation
    std: np.ndarray | None = None

    @property
    def size(self) -> int | None:
        return None if self.array is None else int(self.array.shape[0])

    @property
    def dim(self) -> int:
        return int(np.prod(self.shape))

    def sample(self, n: int, gen: torch.Generator) -> torch.Tensor:
        """n training samples (fresh for exact samplers, with replacement otherwise)."""
        if self.sampler is not None:
            return self.sampler(n, gen)
        index = torch.randint(0, self.array.shape[0], (n,), generator=gen)
        return self.array[index]

    def reference(self, n: int, gen: torch.Generator) -> torch.Tensor:
        """n true samples for the metrics: fresh draws, or a random subset of the data."""
        if self.sampler is not None:
            return self.sampler(n, gen)
        order = torch.randperm(self.array.shape[0], generator=gen)[:n]
        return self.array[order]

    def to_user(self, x: torch.Tensor) -> np.ndarray:
        """Samples in the user's units: un-standardised points; images in [0, 1]."""
        out = x.detach().cpu().numpy().astype(np.float64)
        if self.kind == "image":
            return np.clip((out + 1) / 2, 0, 1)
        if self.mean is not None:
            return out * self.std + self.mean
        return out


def load_dataset(spec: str, image_size: int | None = None) -> Dataset:
    """The data set named by ``--data`` (see the module docstring)."""
    if spec in TOY_SAMPLERS:
        return Dataset(spec, "points", (2,), sampler=TOY_SAMPLERS[spec])
    if spec == "digits":
        return load_digits()
    path = Path(spec).expanduser()
    if path.is_dir():
        return load_image_folder(path, image_size or DEFAULT_IMAGE_SIZE)
    if path.suffix == ".npy" and path.is_file():
        return load_npy(path)
    names = ", ".join(BUILTIN_DATASETS)
    if not path.exists() and path.suffix != ".npy" and "/" not in spec:
        raise InputError(
            f"unknown data set {spec!r}", f"use one of {names}, a .npy file or a folder"
        )
    if not path.exists():
        raise InputError(
            f"{path}: no such file or folder", f"check the path, or use one of {names}"
        )
    raise InputError(f"{path}: not a .npy file or a folder", "pass an (N, d) or image .npy array")


def load_digits() -> Dataset:
    from sklearn.datasets import load_digits as sk_digits

    images = sk_digits().images.astype(np.float32) / 16.0 * 2 - 1  # (1797, 8, 8) in [-1, 1]
    array = torch.from_numpy(images[:, None])  # (1797, 1, 8, 8)
    return Dataset("digits", "image", (1, 8, 8), array=array, clip=1.0, info={"n": 1797})


def _image_array(raw: np.ndarray, path: Path) -> np.ndarray:
    """(N, H, W) | (N, C, H, W) | (N, H, W, C) → (N, C, H, W) float32 in [-1, 1]."""
    x = raw[:, None] if raw.ndim == 3 else raw
    if x.shape[1] not in (1, 3) and x.shape[-1] in (1, 3):
        x = np.transpose(x, (0, 3, 1, 2))  # (N, H, W, C) -> (N, C, H, W)
    if x.shape[1] not in (1, 3):
        raise InputError(
            f"{path}: images must have 1 or 3 channels, shape is {raw.shape}",
            "save the array as (N, H, W), (N, C, H, W) or (N, H, W, C)",
        )
    if x.shape[2] % 2 or x.shape[3] % 2:
        raise InputError(
            f"{path}: image height and width must be even, got {x.shape[2:]}",
            "crop or pad the images to an even size (e.g. 8x8, 16x16)",
        )
    if np.issubdtype(x.dtype, np.integer):
        if x.min() < 0 or x.max() > 255:
            raise InputError(f"{path}: integer images must be within 0..255", "save uint8 images")
        return (x.astype(np.float32) / 255.0 * 2 - 1).astype(np.float32)
    lo, hi = float(x.min()), float(x.max())
    if lo >= 0 and hi <= 1:
        return (x * 2 - 1).astype(np.float32)
    if lo >= -1 and hi <= 1:
        return x.astype(np.float32)
    raise InputError(
        f"{path}: float images must lie in [0, 1] or [-1, 1] (found {lo:.3g}..{hi:.3g})",
        "rescale the array, or save it as uint8",
    )


def load_npy(path: Path) -> Dataset:
    try:
        raw = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(
            f"{path}: not a readable .npy array ({exc})",
            "save it with numpy.save (no pickled objects)",
        ) from None
    if not (np.issubdtype(raw.dtype, np.number) and raw.ndim in (2, 3, 4)):
        raise InputError(
            f"{path}: expected a numeric (N, d) or image array, got "
            f"{raw.dtype} of shape {raw.shape}",
            "save points as (N, d), images as (N, H, W)",
        )
    if raw.shape[0] < 2 or raw[0].size == 0:
        raise InputError(
            f"{path}: needs at least 2 non-empty samples, shape is {raw.shape}",
            "pass a larger array",
        )
    if not np.isfinite(raw).all():
        raise InputError(f"{path}: contains NaN or infinite values", "remove or impute them")
    if raw.ndim == 2:
        mean, std = raw.mean(axis=0), raw.std(axis=0)
        std = np.where(std > 0, std, 1.0)
        points = ((raw - mean) / std).astype(np.float32)
        info = {"n": int(raw.shape[0]), "standardised": True}
        return Dataset(
            path.name,
            "points",
            (raw.shape[1],),
            array=torch.from_numpy(points),
            info=info,
            mean=mean,
            std=std,
        )
    images = _image_array(raw, path)
    return Dataset(
        path.name,
        "image",
        tuple(images.shape[1:]),
        array=torch.from_numpy(images),
        clip=1.0,
        info={"n": int(images.shape[0])},
    )


GREY_MODES = {"1", "L", "LA", "La"}
WIDE_MODES = {"I", "I;16", "I;16L", "I;16B", "I;16N", "F"}  # 16/32-bit grey, float


def _square(im, image_size: int):
    """Centre crop to the largest square, then resize to ``image_size`` (bilinear)."""
    from PIL import Image

    w, h = im.size
    side = min(w, h)
    box = ((w - side) // 2, (h - side) // 2, (w - side) // 2 + side, (h - side) // 2 + side)
    return im.resize((image_size, image_size), Image.BILINEAR, box=box)


def _read_image(file: Path, image_size: int) -> tuple[np.ndarray, tuple[int, int]]:
    """One file → ((H, W) grey or (H, W, 3) colour float32 in [0, 1], original size).

    Grey modes stay grey; 16-bit and 32-bit integer images are scaled by 65535 (or their
    maximum when larger), float images are taken as [0, 1] (or [0, 255] when larger);
    anything else (palette, RGBA, CMYK, ...) becomes RGB."""
    from PIL import Image

    with Image.open(file) as im:
        im.load()
        size = im.size
        if im.mode in WIDE_MODES:
            wide = np.asarray(im, dtype=np.float64)
            peak = float(wide.max()) if wide.size else 0.0
            full = (1.0 if peak <= 1 else 255.0) if im.mode == "F" else max(65535.0, peak)
            im = Image.fromarray((np.clip(wide, 0, None) / full).astype(np.float32), "F")
            return np.asarray(_square(im, image_size), dtype=np.float32).clip(0, 1), size
        mode = "L" if im.mode in GREY_MODES else "RGB"
        return np.asarray(_square(im.convert(mode), image_size), np.float32) / 255.0, size


def load_image_folder(path: Path, image_size: int) -> Dataset:
    """Every image file of ``path`` (not its subfolders), centre-cropped to a square and
    resized; files that cannot be decoded are skipped and counted."""
    from PIL import UnidentifiedImageError

    if image_size < 2 or image_size % 2:
        raise InputError(
            f"--image-size must be an even number >= 2, got {image_size}",
            "use e.g. --image-size 16",
        )
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    images, skipped, sizes = [], [], set()
    for file in files:
        try:
            image, size = _read_image(file, image_size)
        except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError):
            skipped.append(file.name)  # PIL raises all of these on damaged files
            continue
        images.append(image)
        sizes.add(size)
    if not images:
        raise InputError(
            f"{path}: no readable image among {len(files)} image file(s)",
            f"put .png/.jpg files in the folder ({len(skipped)} could not be read)",
        )
    colour = any(im.ndim == 3 for im in images)
    if colour:  # grey images join a colour folder as R = G = B
        images = [im if im.ndim == 3 else np.repeat(im[..., None], 3, axis=2) for im in images]
    x = np.stack(images) * 2 - 1  # (N, H, W[, 3]) in [-1, 1]
    x = np.transpose(x, (0, 3, 1, 2)) if colour else x[:, None]  # (N, C, H, W)
    info = {
        "n": len(images),
        "skipped_unreadable": len(skipped),
        "skipped_files": skipped[:10],
        "distinct_sizes": len(sizes),
        "image_size": image_size,
        "mode": "RGB" if colour else "L",
    }
    array = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    return Dataset(path.name, "image", tuple(x.shape[1:]), array=array, clip=1.0, info=info)

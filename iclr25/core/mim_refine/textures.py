"""``textures``: the built-in 10-class procedural image set of ``mim-refine``.

Each image is a two-colour pattern ``x = c1·(1 − m) + c2·m + noise`` with a mask
``m ∈ [0, 1]`` of one of ten families (random phase, frequency, colours, centre):
stripes at 0°, 45°, 90°, 135°, checker, dots, rings, spokes, zigzag, blobs. A shapes set
was tried first and dropped: a small MAE stayed at chance on it in every block
(../shared/papers/mim-refine.md), which would make the per-block study vacuous.
"""

from __future__ import annotations

import numpy as np

CLASSES = (
    "stripes_0",
    "stripes_45",
    "stripes_90",
    "stripes_135",
    "checker",
    "dots",
    "rings",
    "spokes",
    "zigzag",
    "blobs",
)
SIZE = 32  # pixels per side
NOISE_STD = 0.06  # additive Gaussian pixel noise, on a [0, 1] scale


def _mask(cls: int, rng: np.random.Generator, xx: np.ndarray, yy: np.ndarray) -> np.ndarray:
    """m(x, y) ∈ [0, 1] for one image of class ``cls``; xx, yy in [0, 1) of shape (S, S)."""
    freq = rng.uniform(2.0, 5.0)  # cycles per image
    phase = rng.uniform(0, 2 * np.pi)
    if cls < 4:  # stripes at 0, 45, 90, 135 degrees (±8° jitter)
        theta = np.deg2rad(45 * cls + rng.uniform(-8, 8))
        wave = np.sin(2 * np.pi * freq * (xx * np.cos(theta) + yy * np.sin(theta)) + phase)
    elif cls == 4:  # checker
        wave = np.sin(2 * np.pi * freq * xx + phase) * np.sin(
            2 * np.pi * freq * yy + rng.uniform(0, 2 * np.pi)
        )
    elif cls == 5:  # dots on a lattice
        dx = (xx * freq + rng.uniform()) % 1.0 - 0.5
        dy = (yy * freq + rng.uniform()) % 1.0 - 0.5
        wave = rng.uniform(0.2, 0.35) - np.sqrt(dx**2 + dy**2)
    elif cls in (6, 7):  # rings / spokes around a random centre
        cx, cy = rng.uniform(0.2, 0.8, size=2)
        if cls == 6:
            wave = np.sin(2 * np.pi * freq * np.hypot(xx - cx, yy - cy) + phase)
        else:
            spokes = rng.integers(3, 9)
            wave = np.sin(spokes * np.arctan2(yy - cy, xx - cx) + phase)
    elif cls == 8:  # zigzag: horizontal stripes displaced by a triangle wave of x
        teeth = rng.uniform(2.0, 4.0)
        tri = 2 * np.abs((xx * teeth) % 1.0 - 0.5)
        wave = np.sin(2 * np.pi * freq * (yy + rng.uniform(0.1, 0.25) * tri) + phase)
    else:  # blobs: a threshold of a few random Gaussian bumps
        count = rng.integers(3, 7)
        field = np.zeros_like(xx)
        for _ in range(count):
            cx, cy = rng.uniform(0, 1, size=2)
            width = rng.uniform(0.06, 0.15)
            field += np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * width**2))
        wave = field - 0.5
    sharp = rng.uniform(2.0, 8.0)  # soft edge ... nearly binary
    return 1.0 / (1.0 + np.exp(-sharp * wave / max(np.abs(wave).max(), 1e-6) * 3))


def make_textures(n: int, seed: int, size: int = SIZE) -> tuple[np.ndarray, np.ndarray]:
    """``n`` images (uint8, (n, size, size, 3)) and labels (int64, (n,)), classes balanced
    (label i % 10 before a seeded shuffle)."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % len(CLASSES)).astype(np.int64)
    coords = (np.arange(size) + 0.5) / size
    xx, yy = np.meshgrid(coords, coords)  # (S, S) each
    images = np.empty((n, size, size, 3), dtype=np.uint8)
    for i, cls in enumerate(labels):
        m = _mask(int(cls), rng, xx, yy)[..., None]  # (S, S, 1)
        c1, c2 = rng.uniform(0, 1, size=(2, 3))
        x = c1 * (1 - m) + c2 * m + rng.normal(0, NOISE_STD, size=(size, size, 3))
        images[i] = np.clip(np.rint(x * 255), 0, 255).astype(np.uint8)
    return images, labels


def textures_splits(
    n_train: int, n_test: int, seed: int = 0
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The built-in train and test splits (independent seeded draws)."""
    return make_textures(n_train, seed * 2 + 1), make_textures(n_test, seed * 2 + 2)

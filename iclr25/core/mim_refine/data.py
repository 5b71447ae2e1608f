"""Image data of ``mim-refine``: ImageFolder trees, the seeded 80/20 split, PNG export.

A data set in memory is ``(images, labels, classes)``: uint8 (N, H, W, 3), int64 (N,),
class names in label order. ``--data DIR`` is either ``DIR/train`` + ``DIR/test`` (two
ImageFolders with the same class folders) or one ImageFolder, split stratified 80/20 with
the run's seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.errors import InputError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff", ".gif")


@dataclass
class Split:
    images: np.ndarray  # uint8 (N, H, W, 3)
    labels: np.ndarray  # int64 (N,)
    classes: tuple[str, ...]


def _class_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def _image_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)


def read_image_folder(root: Path, size: int | None = None) -> Split:
    """One ImageFolder (``root/<class>/*.png``) as RGB uint8, resized to ``size`` if given
    (else every image must have the first image's size)."""
    from PIL import Image

    classes = _class_dirs(root)
    files = {c.name: _image_files(c) for c in classes}
    files = {name: paths for name, paths in files.items() if paths}
    if len(files) < 2:
        raise InputError(
            f"{root} has {len(files)} class folder(s) with images; need ≥ 2",
            "use DIR/<class>/*.png with at least two classes",
        )
    small = [name for name, paths in files.items() if len(paths) < 2]
    if small:
        raise InputError(
            f"{root}: class {small[0]!r} has fewer than 2 images ({len(small)} such class(es))",
            "give every class at least 2 images",
        )
    images, labels, bad = [], [], []
    for label, paths in enumerate(files.values()):
        for path in paths:
            try:
                with Image.open(path) as img:
                    rgb = img.convert("RGB")
                    if size is not None and rgb.size != (size, size):
                        rgb = rgb.resize((size, size), Image.BICUBIC)
                    images.append(np.asarray(rgb, dtype=np.uint8))
                    labels.append(label)
            except (OSError, ValueError):
                bad.append(path)
    if bad:
        raise InputError(
            f"{len(bad)} unreadable image(s) under {root}, first: {bad[0]}",
            "remove or re-encode them",
        )
    shapes = {im.shape for im in images}
    if len(shapes) > 1:
        raise InputError(f"{root}: images have different sizes {sorted(shapes)[:3]}", "resize")
    return Split(np.stack(images), np.asarray(labels, dtype=np.int64), tuple(files))


def stratified_split(labels: np.ndarray, fraction: float, seed: int) -> tuple[np.ndarray, ...]:
    """Indices (first, second) with ``fraction`` of each class in the second (≥ 1 each)."""
    rng = np.random.default_rng(seed)
    first, second = [], []
    for cls in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == cls))
        n_second = min(max(1, int(round(fraction * len(idx)))), len(idx) - 1)
        second.append(idx[:n_second])
        first.append(idx[n_second:])
    return np.sort(np.concatenate(first)), np.sort(np.concatenate(second))


def load_data(root: Path, size: int | None, seed: int) -> tuple[Split, Split, str]:
    """``--data DIR`` → (train, test, layout description)."""
    if not root.is_dir():
        raise InputError(f"--data {root} is not a folder", "pass an ImageFolder directory")
    if (root / "train").is_dir() and (root / "test").is_dir():
        train = read_image_folder(root / "train", size)
        test = read_image_folder(root / "test", size)
        if train.classes != test.classes:
            raise InputError(
                f"train and test class folders differ under {root}",
                "use the same class folder names in DIR/train and DIR/test",
            )
        return train, test, "train/test folders"
    whole = read_image_folder(root, size)
    first, second = stratified_split(whole.labels, 0.2, seed)
    pick = lambda idx: Split(whole.images[idx], whole.labels[idx], whole.classes)  # noqa: E731
    return pick(first), pick(second), "one folder, stratified 80/20 split"


def write_image_folder(root: Path, split: Split) -> int:
    """``root/<class>/<index>.png`` for every image; returns the count written."""
    from PIL import Image

    for name in split.classes:
        (root / name).mkdir(parents=True, exist_ok=True)
    for i, (image, label) in enumerate(zip(split.images, split.labels, strict=True)):
        Image.fromarray(image).save(root / split.classes[label] / f"{i:06d}.png")
    return len(split.labels)

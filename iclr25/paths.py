"""Where the toolkit keeps caches and reads its package data."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """The user cache folder, ``~/.cache/iclr25`` unless ``ICLR25_CACHE_DIR`` (or
    ``XDG_CACHE_HOME``) says otherwise. Sub-folders are created on demand."""
    root = os.environ.get("ICLR25_CACHE_DIR")
    if root:
        base = Path(root)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = (Path(xdg) if xdg else Path.home() / ".cache") / "iclr25"
    path = base.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def package_file(package: str, *parts: str) -> Path:
    """A file shipped as package data (e.g. ``package_file("iclr25.data", "citations.bib")``).

    Wheels install as plain folders, so the traversable is a real path; a zipped install
    is not supported (the CUDA sources must be readable by nvcc anyway)."""
    path = resources.files(package).joinpath(*parts)
    return Path(str(path))

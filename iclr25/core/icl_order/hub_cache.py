"""``--model org/name``: a Hugging Face id found in the local cache, without network.

``transformers`` keeps downloaded models under the hub cache in the layout::

    <cache>/models--<org>--<name>/refs/main             (the commit hash of "main")
    <cache>/models--<org>--<name>/snapshots/<hash>/     (config.json, weights, tokenizer)

The cache folder is ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub`` (the order
``huggingface_hub`` uses); ``$TRANSFORMERS_CACHE`` (older transformers) is searched too.
:func:`find_cached_model` returns the snapshot folder that ``refs/main`` names, else the
most recently modified snapshot holding a ``config.json``; the caller loads it like any
local folder. Nothing here touches the network.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_folders(environ: dict[str, str] | None = None) -> list[Path]:
    """The hub cache folders to search, most specific first, without duplicates."""
    env = os.environ if environ is None else environ
    found: list[Path] = []
    if env.get("HF_HUB_CACHE"):
        found.append(Path(env["HF_HUB_CACHE"]))
    if env.get("HF_HOME"):
        found.append(Path(env["HF_HOME"]) / "hub")
    xdg = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    found.append(xdg / "huggingface" / "hub")
    if env.get("TRANSFORMERS_CACHE"):
        found.append(Path(env["TRANSFORMERS_CACHE"]))
    unique: dict[str, Path] = {}
    for folder in found:
        unique.setdefault(str(folder.expanduser()), folder.expanduser())
    return list(unique.values())


def repo_folder_name(model_id: str) -> str:
    """``org/name`` -> ``models--org--name`` (``gpt2`` -> ``models--gpt2``)."""
    return "models--" + model_id.replace("/", "--")


def looks_like_hub_id(text: str) -> bool:
    """``gpt2`` or ``org/name``: no path prefix, at most one slash, no empty part."""
    if text.startswith((".", "/", "~")) or text.count("/") > 1 or "\\" in text:
        return False
    return all(part for part in text.split("/"))


def _snapshot(repo: Path) -> Path | None:
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    if ref.is_file():
        named = snapshots / ref.read_text().strip()
        if (named / "config.json").is_file():
            return named
    if not snapshots.is_dir():
        return None
    usable = [p for p in snapshots.iterdir() if (p / "config.json").is_file()]
    return max(usable, key=lambda p: (p.stat().st_mtime, p.name)) if usable else None


def find_cached_model(model_id: str, folders: list[Path] | None = None) -> Path | None:
    """The snapshot folder of ``model_id`` in the first cache that holds one, else None."""
    for folder in cache_folders() if folders is None else folders:
        snapshot = _snapshot(folder / repo_folder_name(model_id))
        if snapshot is not None:
            return snapshot
    return None

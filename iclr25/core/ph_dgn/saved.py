"""Trained transfer models on disk: ``transfer --save-models DIR`` / ``sensitivity --load-models``.

One file pair per model × distance × seed: ``<model>-d<distance>-s<seed>.safetensors`` (the
state dict) and the same name with ``.json`` (the :class:`.models.ModelSpec`, topology,
variant, seed index and the cell's test MSE); ``models.json`` lists them. A trained model
is rebuilt from its spec and loaded with ``load_state_dict`` (tensors only: no pickles, no
code execution). The state travels from the training task to the command as nested lists
(the task results are JSON); float32 → float → float32 is exact.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import torch

from iclr25.core.ph_dgn.models import ModelSpec, build
from iclr25.errors import InputError

FORMAT = "iclr25-ph-dgn-transfer-models/1"
MANIFEST = "models.json"


def state_to_lists(model: torch.nn.Module) -> dict:
    return {k: v.detach().cpu().tolist() for k, v in model.state_dict().items()}


def file_stem(model: str, distance: int, seed_index: int) -> str:
    return f"{model}-d{distance}-s{seed_index}"


def check_target(directory: Path, overwrite: bool) -> None:
    """Before training: ``directory`` may be created, or is empty, or ``overwrite`` is set."""
    if directory.exists() and not directory.is_dir():
        raise InputError(f"--save-models {directory} is a file", "give a folder path")
    if not directory.parent.is_dir():
        raise InputError(f"--save-models {directory}: no folder {directory.parent}", "create it")
    if directory.is_dir() and any(directory.iterdir()) and not overwrite:
        raise InputError(f"--save-models {directory} is not empty", "pass --overwrite")


def write(directory: Path, entries: list[dict]) -> list[str]:
    """Write each entry (``spec``, ``state`` lists, ``meta``) and the manifest; file names."""
    from safetensors.torch import save as st_save

    from iclr25 import atomic

    directory.mkdir(exist_ok=True)
    names = []
    for entry in entries:
        meta = entry["meta"]
        stem = file_stem(meta["model"], meta["distance"], meta["seed_index"])
        state = {k: torch.tensor(v, dtype=torch.float32) for k, v in entry["state"].items()}
        atomic.write_bytes(directory / f"{stem}.safetensors", st_save(state, {"format": FORMAT}))
        atomic.write_json(directory / f"{stem}.json",
                          {"format": FORMAT, "spec": entry["spec"], **meta})  # fmt: skip
        names.append(stem)
    atomic.write_json(directory / MANIFEST, {"format": FORMAT, "models": names})
    return names


def read(directory: Path) -> list[tuple[dict, torch.nn.Module]]:
    """Every saved model of ``directory``: (its JSON metadata, the rebuilt module)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    manifest = directory / MANIFEST
    if not manifest.is_file():
        raise InputError(
            f"--load-models {directory}: no {MANIFEST}", "save models with `transfer --save-models`"
        )
    try:
        listed = json.loads(manifest.read_text())
        if listed.get("format") != FORMAT:
            raise ValueError("not a ph-dgn transfer model folder")
        out = []
        known = {f.name for f in fields(ModelSpec)}
        for stem in listed["models"]:
            meta = json.loads((directory / f"{stem}.json").read_text())
            spec = ModelSpec(**{k: v for k, v in meta["spec"].items() if k in known})
            model = build(spec)
            model.load_state_dict(load_file(str(directory / f"{stem}.safetensors")))
            out.append((meta, model))
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, SafetensorError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"--load-models {directory}: unreadable ({first})", "save again with --save-models"
        ) from None
    if not out:
        raise InputError(f"--load-models {directory}: no models listed", "save some first")
    return out


def entries(task_list, outcomes) -> list[dict]:
    """What :func:`write` needs, from ``transfer`` tasks run with ``keep_state``."""
    out = []
    for task, res in zip(task_list, outcomes, strict=True):
        c = task.config
        meta = {k: c[k] for k in ("model", "topology", "variant", "distance", "seed_index")}
        meta.update(test_mse=res["test_mse"], val_mse=res["val_mse"], task_seed=task.seed)
        out.append({"spec": res["spec"], "state": res["state"], "meta": meta})
    return out

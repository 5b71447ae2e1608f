"""Checkpoints: the whole training state in one safetensors file, resume, refusal on mismatch.

A checkpoint holds the tensors

    model.*  ema.*                          network and EMA weights
    target.*                                consistency models: the target network θ⁻
    opt.<i>.exp_avg / exp_avg_sq / step     Adam moments per parameter
    gen_state                               the training generator (uint8)
    losses                                  the loss of every step so far (float64)
    carry.*                                 free AT between replays: batch, δ, replay index

and, as string metadata, ``format``, ``step`` and ``config`` (the :class:`TrainConfig` as
JSON). Restoring all of it makes a resumed run identical to an uninterrupted one. The same
file is what ``sample`` and ``eval`` read (they use the EMA weights by default).

:func:`check_resumable` refuses a checkpoint whose configuration differs from the
requested one (listing every differing field) or that has already reached ``--steps``.
One difference is allowed: the AT settings, when the checkpoint was trained plainly up to
its step and the new run starts AT there or later (``at_start`` ≥ its step) — the paper's
protocol of fine-tuning a pretrained baseline with AT; the resumed run is then exactly the
run the new configuration would have made from scratch.
Files are written with :mod:`iclr25.atomic` (temp file + rename).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import torch

from iclr25 import atomic
from iclr25.core.diffusion_at.adversarial import ATConfig
from iclr25.core.diffusion_at.models import ModelSpec, build_model
from iclr25.core.diffusion_at.training import TrainConfig, TrainState
from iclr25.errors import InputError, UsageError

FORMAT = "iclr25.diffusion-at/1"


def config_from_dict(data: dict) -> TrainConfig:
    """The inverse of ``to_jsonable(TrainConfig)``."""
    model = dict(data["model"])
    model["data_shape"] = tuple(model["data_shape"])
    return TrainConfig(**{**data, "model": ModelSpec(**model), "at": ATConfig(**data["at"])})


def state_tensors(state: TrainState) -> dict[str, torch.Tensor]:
    tensors = {f"model.{k}": v for k, v in state.model.state_dict().items()}
    tensors.update({f"ema.{k}": v for k, v in state.ema.state_dict().items()})
    if state.target is not None:
        tensors.update({f"target.{k}": v for k, v in state.target.state_dict().items()})
    for i, moments in state.optimizer.state_dict()["state"].items():
        tensors.update({f"opt.{i}.{k}": torch.as_tensor(v) for k, v in moments.items()})
    tensors["gen_state"] = state.gen.get_state()
    tensors["losses"] = torch.tensor(state.losses, dtype=torch.float64)
    for key, value in (state.carry or {}).items():
        tensors[f"carry.{key}"] = value
    return {k: v.detach().cpu().contiguous().clone() for k, v in tensors.items()}


def save_checkpoint(path: Path, state: TrainState, config: TrainConfig) -> Path:
    from safetensors.torch import save

    from iclr25.output import to_jsonable

    meta = {"format": FORMAT, "step": str(state.step), "config": json.dumps(to_jsonable(config))}
    atomic.write_bytes(Path(path), save(state_tensors(state), metadata=meta))
    return Path(path)


@dataclass
class Checkpoint:
    path: Path
    config: TrainConfig
    step: int
    tensors: dict[str, torch.Tensor]

    def group(self, prefix: str) -> dict[str, torch.Tensor]:
        return {
            k[len(prefix) + 1 :]: v for k, v in self.tensors.items() if k.startswith(prefix + ".")
        }


def load_checkpoint(path: Path) -> Checkpoint:
    from safetensors import SafetensorError
    from safetensors.torch import load_file, safe_open

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such checkpoint", "pass a .safetensors file written by train")
    try:
        with safe_open(str(path), framework="pt") as fh:
            meta = fh.metadata() or {}
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as exc:
        raise InputError(
            f"{path}: not a readable safetensors checkpoint ({exc})",
            "pass a checkpoint written by `iclr25 diffusion-at train`",
        ) from None
    if meta.get("format") != FORMAT:
        raise InputError(
            f"{path}: not a diffusion-at checkpoint (format {meta.get('format')!r})",
            "pass a checkpoint written by `iclr25 diffusion-at train`",
        )
    config = config_from_dict(json.loads(meta["config"]))
    return Checkpoint(path, config, int(meta["step"]), tensors)


def restore_state(ckpt: Checkpoint, config: TrainConfig, device: str = "cpu") -> TrainState:
    """The TrainState saved in ``ckpt``, with the optimiser built for ``config``."""
    model, ema = (_network(ckpt, prefix, device) for prefix in ("model", "ema"))
    ema.requires_grad_(False)
    target = (
        _network(ckpt, "target", device).requires_grad_(False) if ckpt.group("target") else None
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    moments: dict[int, dict] = {}
    for key, value in ckpt.group("opt").items():
        index, name = key.split(".", 1)
        moments.setdefault(int(index), {})[name] = value if name == "step" else value.to(device)
    groups = optimizer.state_dict()["param_groups"]
    optimizer.load_state_dict({"state": moments, "param_groups": groups})
    gen = torch.Generator()
    gen.set_state(ckpt.tensors["gen_state"])
    carry = {k: v.to(device) if k != "replay" else v for k, v in ckpt.group("carry").items()}
    losses = ckpt.tensors["losses"].tolist()
    return TrainState(model, ema, optimizer, gen, ckpt.step, losses, carry or None, target)


def _network(ckpt: Checkpoint, prefix: str, device: str) -> torch.nn.Module:
    network = build_model(ckpt.config.model)
    network.load_state_dict(ckpt.group(prefix))
    return network.to(device)


def clone_state(state: TrainState, config: TrainConfig, device: str = "cpu") -> TrainState:
    """An independent copy of ``state`` (through the checkpoint tensors, in memory)."""
    return restore_state(
        Checkpoint(Path("<memory>"), config, state.step, state_tensors(state)), config, device
    )


def _flatten(data: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def config_differences(
    saved: TrainConfig, wanted: TrainConfig, ignore_at: bool = False
) -> list[str]:
    """``field: checkpoint X, now Y`` for every identity field that differs (without the
    AT fields and ``at_start`` when ``ignore_at``)."""
    a, b = _flatten(saved.identity()), _flatten(wanted.identity())
    keys = sorted(set(a) | set(b))
    if ignore_at:
        keys = [k for k in keys if not (k.startswith("at.") or k == "at_start")]
    return [f"{k}: checkpoint {a.get(k)!r}, now {b.get(k)!r}" for k in keys if a.get(k) != b.get(k)]


def finetunes_plain(ckpt: Checkpoint, wanted: TrainConfig) -> bool:
    """The checkpoint is plain up to its step and ``wanted`` starts AT there or later."""
    saved = ckpt.config
    plain_so_far = not saved.at.active or saved.at_start >= ckpt.step
    return plain_so_far and wanted.at_start >= ckpt.step


def check_resumable(ckpt: Checkpoint, wanted: TrainConfig) -> None:
    diffs = config_differences(ckpt.config, wanted, ignore_at=finetunes_plain(ckpt, wanted))
    if diffs:
        raise InputError(
            f"{ckpt.path} was trained with another configuration ({'; '.join(diffs)})",
            "rerun with the checkpoint's options, or start a new run without --resume",
        )
    if ckpt.step >= wanted.steps:
        raise UsageError(
            f"{ckpt.path} is already at step {ckpt.step} (>= --steps {wanted.steps}): "
            "the run is finished",
            f"pass --steps above {ckpt.step} to train further",
        )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_model(path: Path, weights: str = "ema", device: str = "cpu"):
    """(network in eval mode, its TrainConfig) from a checkpoint; ``weights`` ema|model."""
    ckpt = load_checkpoint(path)
    model = _network(ckpt, "ema" if weights == "ema" else "model", device)
    return model.eval().requires_grad_(False), ckpt.config

"""ViT encoders of ``mim-refine``: loading (bundled, timm, Hugging Face), preprocessing,
and every block's pooled token in one forward pass.

Layouts of ``--model PATH``:

- a timm folder written by ``timm.models.save_for_hf`` (``config.json`` with
  ``architecture`` + ``model.safetensors``), loaded as ``timm.create_model("local-dir:PATH")``;
- a Hugging Face folder of a ViT, ViTMAE or DINOv2 (``config.json`` with ``model_type``
  vit / vit_mae / dinov2), loaded with ``local_files_only``; ViTMAE runs with mask ratio 0
  (its default forward masks 75 % of the patches).

Block outputs are collected with forward hooks on the blocks themselves, so no final
LayerNorm is applied (the paper's per-block protocol). ``h_b`` = CLS token of block b
(pooling ``cls``) or the mean of its patch tokens (pooling ``mean``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from iclr25.errors import InputError, UsageError
from iclr25.paths import package_file

HF_TYPES = ("vit", "vit_mae", "dinov2")
LAYOUTS = (
    "a timm save_for_hf folder (config.json with 'architecture' + model.safetensors), or a "
    "Hugging Face ViT / ViTMAE / DINOv2 folder (config.json with model_type vit, vit_mae, dinov2)"
)


def bundled_path() -> Path:
    return package_file("iclr25.data", "mim_refine", "mae_textures")


@dataclass
class Encoder:
    """A loaded ViT: the torch module, its blocks, and what preprocessing it expects."""

    module: object  # torch.nn.Module
    blocks: list  # the L transformer blocks, in order
    source: str  # bundled | timm | hf
    path: str
    dim: int
    prefix_tokens: int  # CLS (+ registers) before the patch tokens
    has_cls: bool
    image_size: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    hf_type: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def depth(self) -> int:
        return len(self.blocks)

    def describe(self) -> dict:
        return {"source": self.source, "path": self.path, "depth": self.depth, "dim": self.dim}

    def preprocessing(self) -> dict:
        return {"image_size": self.image_size, "mean": list(self.mean), "std": list(self.std)}

    def run(self, pixels):
        """Forward pass on preprocessed pixels (B, 3, S, S); block outputs come via hooks."""
        if self.source == "hf":
            return self.module(pixel_values=pixels)
        return self.module.forward_features(pixels)


def load_encoder(path: Path | None) -> Encoder:
    """The bundled MAE (``path`` None) or a user's folder (see the module docstring)."""
    if path is None:
        enc = _load_timm(bundled_path())
        enc.source, enc.path = "bundled", "iclr25/data/mim_refine/mae_textures"
        return enc
    config_file = path / "config.json"
    if not path.is_dir() or not config_file.exists():
        raise InputError(f"--model {path} is not a supported model folder", f"use {LAYOUTS}")
    try:
        config = json.loads(config_file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"--model {path}: config.json is unreadable ({exc})", LAYOUTS) from None
    if "architecture" in config:
        return _load_timm(path)
    if config.get("model_type") in HF_TYPES:
        return _load_hf(path, config)
    raise InputError(
        f"--model {path}: unsupported layout (model_type {config.get('model_type')!r})",
        f"use {LAYOUTS}",
    )


def _load_timm(path: Path) -> Encoder:
    import timm

    try:
        model = timm.create_model(f"local-dir:{path}", pretrained=True)
    except Exception as exc:  # noqa: BLE001 - a library's own message, shown as is
        raise InputError(f"--model {path}: timm could not load it ({exc})", LAYOUTS) from None
    if not hasattr(model, "blocks") or not hasattr(model, "forward_features"):
        raise InputError(f"--model {path}: not a timm VisionTransformer", LAYOUTS)
    cfg = timm.data.resolve_data_config({}, model=model)
    model.eval()
    saved = json.loads((path / "config.json").read_text())  # model_args: needed to save again
    return Encoder(
        module=model,
        blocks=list(model.blocks),
        source="timm",
        path=str(path),
        dim=int(model.embed_dim),
        prefix_tokens=int(getattr(model, "num_prefix_tokens", 1)),
        has_cls=getattr(model, "cls_token", None) is not None,
        image_size=int(cfg["input_size"][-1]),
        mean=tuple(float(v) for v in cfg["mean"]),
        std=tuple(float(v) for v in cfg["std"]),
        extra={"model_args": saved.get("model_args")},
    )


def _load_hf(path: Path, config: dict) -> Encoder:
    import transformers

    kind = config["model_type"]
    cls = {"vit": "ViTModel", "vit_mae": "ViTMAEModel", "dinov2": "Dinov2Model"}[kind]
    kwargs = {"mask_ratio": 0.0} if kind == "vit_mae" else {}
    if kind == "vit":
        kwargs["add_pooling_layer"] = False
    try:
        model = getattr(transformers, cls).from_pretrained(path, local_files_only=True, **kwargs)
    except Exception as exc:  # noqa: BLE001
        raise InputError(
            f"--model {path}: transformers could not load it ({exc})", LAYOUTS
        ) from None
    model.eval()
    size = config.get("image_size", 224)
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # ImageNet, the HF default
    proc = path / "preprocessor_config.json"
    if proc.exists():
        pcfg = json.loads(proc.read_text())
        mean, std = tuple(pcfg.get("image_mean", mean)), tuple(pcfg.get("image_std", std))
    registers = int(config.get("num_register_tokens", 0) or 0)
    return Encoder(
        module=model,
        blocks=_hf_blocks(model),
        source="hf",
        path=str(path),
        dim=int(config["hidden_size"]),
        prefix_tokens=1 + registers,
        has_cls=True,
        image_size=int(size if isinstance(size, int) else size[0]),
        mean=mean,
        std=std,
        hf_type=kind,
    )


def _hf_blocks(model) -> list:
    """The transformer layers: ``model.layers`` (transformers ≥ 5) or ``encoder.layer``."""
    if hasattr(model, "layers"):
        return list(model.layers)
    return list(model.encoder.layer)


def to_pixels(images: np.ndarray, enc: Encoder):
    """uint8 (N, H, W, 3) → normalised float tensor (N, 3, S, S) at the encoder's size."""
    import torch
    import torch.nn.functional as F

    x = torch.as_tensor(images).permute(0, 3, 1, 2).float() / 255.0  # (N, 3, H, W)
    if x.shape[-1] != enc.image_size or x.shape[-2] != enc.image_size:
        x = F.interpolate(x, size=(enc.image_size,) * 2, mode="bicubic", align_corners=False)
    mean = torch.tensor(enc.mean).view(1, 3, 1, 1)
    std = torch.tensor(enc.std).view(1, 3, 1, 1)
    return (x - mean) / std


def check_pooling(enc: Encoder, pooling: str) -> None:
    if pooling not in ("cls", "mean"):
        raise UsageError(f"--pooling {pooling!r}", "use cls or mean")
    if pooling == "cls" and not enc.has_cls:
        raise UsageError(f"--pooling cls: {enc.path} has no CLS token", "use --pooling mean")


class BlockTaps:
    """Forward hooks on chosen blocks: after a forward pass, ``pooled[b]`` is (B, D)."""

    def __init__(self, enc: Encoder, blocks: list[int], pooling: str) -> None:
        self.enc, self.pooling = enc, pooling
        self.pooled: dict[int, object] = {}
        self.handles = [enc.blocks[b].register_forward_hook(self._hook(b)) for b in blocks]

    def _hook(self, b: int):
        def hook(module, args, output):
            tokens = output[0] if isinstance(output, tuple) else output  # (B, N, D)
            if self.pooling == "cls":
                self.pooled[b] = tokens[:, 0]
            else:
                self.pooled[b] = tokens[:, self.enc.prefix_tokens :].mean(1)

        return hook

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def extract_blocks(enc: Encoder, images: np.ndarray, pooling: str, batch_size: int = 256):
    """Every block's pooled token, one forward pass per batch: float32 (L, N, D)."""
    import torch

    taps = BlockTaps(enc, list(range(enc.depth)), pooling)
    out = np.empty((enc.depth, len(images), enc.dim), dtype=np.float32)
    try:
        with torch.no_grad():
            for start in range(0, len(images), batch_size):
                enc.run(to_pixels(images[start : start + batch_size], enc))
                for b in range(enc.depth):
                    out[b, start : start + batch_size] = taps.pooled[b].float().numpy()
    finally:
        taps.remove()
    return out


def extract_block_per_pass(enc: Encoder, images: np.ndarray, pooling: str, block: int):
    """The slow peer of the benchmark: one forward pass for a single block's features."""
    import torch

    taps = BlockTaps(enc, [block], pooling)
    try:
        with torch.no_grad():
            enc.run(to_pixels(images, enc))
            return taps.pooled[block].float().numpy()
    finally:
        taps.remove()


def save_encoder(enc: Encoder, out: Path) -> None:
    """Write the (refined) encoder in the format it was read in."""
    if enc.source == "hf":
        enc.module.save_pretrained(out, safe_serialization=True)
        proc = Path(enc.path) / "preprocessor_config.json"
        if proc.exists():
            (out / "preprocessor_config.json").write_text(proc.read_text())
    else:
        import timm.models

        timm.models.save_for_hf(
            enc.module, out, model_args=enc.extra.get("model_args"), safe_serialization=True
        )

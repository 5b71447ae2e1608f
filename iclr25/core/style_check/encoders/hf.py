"""``--encoder hf:PATH``: a CLIP / SigLIP / DINOv2 (or any transformers vision) model.

Loaded from a local folder with ``local_files_only=True`` — nothing is downloaded.
Models with ``get_image_features`` (CLIP, SigLIP: joint image-text models) embed into
the joint space, so the text tower can tag images zero-shot from the bundled style
vocabulary; vision-only models (``CLIPVisionModel``, ``Dinov2Model``, ...) use the pooled
output (else the first token). Pre-processing comes from the folder's image processor
when it has one; otherwise: resize the shorter side to the model's ``image_size``
(bicubic), centre-crop, and normalise with the family's mean and std (CLIP's, SigLIP's
0.5, else ImageNet's). Batched; on CUDA when the run's device is CUDA; float32.

The encoder's identity is ``hf/<model_type>/<fingerprint>``, where the fingerprint
hashes the config and weight files (name, size, first and last MiB), so a DB refuses
embeddings from other weights even under the same folder name.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from iclr25.errors import InputError

CLIP_MEAN, CLIP_STD = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
FINGERPRINT_FILES = ("*.json", "*.safetensors", "*.bin", "*.pt", "*.txt", "*.model")
MIB = 1 << 20


def fingerprint(folder: Path) -> str:
    """sha256 over (name, size, first MiB, last MiB) of the model folder's files."""
    digest = hashlib.sha256()
    files = sorted(
        {p for pattern in FINGERPRINT_FILES for p in folder.glob(pattern) if p.is_file()}
    )
    for path in files:
        size = path.stat().st_size
        digest.update(f"{path.name}:{size}".encode())
        with open(path, "rb") as fh:
            digest.update(fh.read(MIB))
            if size > 2 * MIB:
                fh.seek(size - MIB)
                digest.update(fh.read(MIB))
    return digest.hexdigest()[:16]


def _image_size(config) -> int:
    vision = getattr(config, "vision_config", None) or config
    size = getattr(vision, "image_size", 224)
    return int(size if isinstance(size, int) else size[0])


def _mean_std(model_type: str) -> tuple[tuple, tuple]:
    if model_type.startswith("siglip"):
        return (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)
    if "clip" in model_type:
        return CLIP_MEAN, CLIP_STD
    return IMAGENET_MEAN, IMAGENET_STD


class HFVisionEncoder:
    def __init__(self, path: Path, device: str = "cpu", batch_size: int = 32) -> None:
        self.path = Path(path)
        if not (self.path / "config.json").is_file():
            raise InputError(
                f"hf:{self.path}: no config.json there",
                "point --encoder hf: at a folder written by save_pretrained (config + weights)",
            )
        self.spec = f"hf:{self.path}"
        self.batch_size = max(1, int(batch_size))
        self.model, self.config = self._load_model()
        self.model_type = str(self.config.model_type)
        import torch

        self.device = "cuda" if device == "cuda" and torch.cuda.is_available() else "cpu"
        self.model.to(self.device).eval()
        self.processor = self._load_processor()
        self.tokenizer = self._load_tokenizer()
        self.zero_shot = self.tokenizer is not None and hasattr(self.model, "get_text_features")
        self.name = f"hf:{self.model_type}"
        self.version = "1"
        self.identity = f"hf/{self.model_type}/{fingerprint(self.path)}"
        self.feature_names = None
        self.feature_groups = None
        from PIL import Image

        self.dim = int(self.encode([Image.new("RGB", (32, 32), (127, 127, 127))]).shape[1])

    # -- loading ---------------------------------------------------------------------
    def _load_model(self):
        from transformers import AutoConfig, AutoModel
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # our own progress bar reports the work

        try:
            config = AutoConfig.from_pretrained(self.path, local_files_only=True)
            model = AutoModel.from_pretrained(self.path, local_files_only=True)
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
            raise InputError(
                f"hf:{self.path}: cannot load a vision model ({str(exc).splitlines()[0]})",
                "pass a local CLIP/SigLIP/DINOv2 folder saved with save_pretrained",
            ) from None
        return model, config

    def _load_processor(self):
        from transformers import AutoImageProcessor

        try:
            return AutoImageProcessor.from_pretrained(self.path, local_files_only=True)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # no preprocessor_config.json: the documented fallback

    def _load_tokenizer(self):
        if not hasattr(self.model, "get_text_features"):
            return None
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    # -- pre-processing ----------------------------------------------------------------
    def _pixels(self, images: list):
        import torch

        if self.processor is not None:
            batch = self.processor(images=images, return_tensors="pt")
            return batch["pixel_values"].to(self.device)
        from PIL import Image

        side = _image_size(self.config)
        mean, std = _mean_std(self.model_type)
        arrays = []
        for image in images:
            w, h = image.size
            scale = side / min(w, h)
            resized = image.resize(
                (max(side, round(w * scale)), max(side, round(h * scale))),
                Image.Resampling.BICUBIC,
            )
            left, top = (resized.width - side) // 2, (resized.height - side) // 2
            crop = resized.crop((left, top, left + side, top + side))
            arrays.append(np.asarray(crop, dtype=np.float32) / 255.0)
        x = (np.stack(arrays) - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
        return torch.from_numpy(x.transpose(0, 3, 1, 2).copy()).to(self.device)  # (B, 3, S, S)

    # -- embeddings ----------------------------------------------------------------------
    def _forward(self, pixels):
        import torch

        if hasattr(self.model, "get_image_features"):
            out = self.model.get_image_features(pixel_values=pixels)
            return out if torch.is_tensor(out) else out.pooler_output
        out = self.model(pixel_values=pixels)
        pooled = getattr(out, "pooler_output", None)
        return pooled if pooled is not None else out.last_hidden_state[:, 0]

    def encode(self, images: list) -> np.ndarray:
        import torch

        chunks = []
        with torch.inference_mode():
            for start in range(0, len(images), self.batch_size):
                pixels = self._pixels(images[start : start + self.batch_size])
                feats = self._forward(pixels)  # (B, D)
                chunks.append(feats.float().cpu().numpy())
        if not chunks:
            return np.empty((0, getattr(self, "dim", 0)), dtype=np.float32)
        return np.concatenate(chunks).astype(np.float32)

    def encode_texts(self, texts: list[str]) -> np.ndarray:
        """(n, D) text embeddings in the joint space (needs ``zero_shot``)."""
        import torch

        if not self.zero_shot:
            raise InputError(f"hf:{self.path}: no text tower or tokenizer", "use attribute tags")
        padding = "max_length" if self.model_type.startswith("siglip") else True
        text_config = getattr(self.config, "text_config", None)
        max_length = int(getattr(text_config, "max_position_embeddings", 77))
        tokens = self.tokenizer(
            texts, padding=padding, truncation=True, max_length=max_length, return_tensors="pt"
        )
        tokens = {k: v.to(self.device) for k, v in tokens.items() if k != "token_type_ids"}
        with torch.inference_mode():
            out = self.model.get_text_features(**tokens)
            feats = out if torch.is_tensor(out) else out.pooler_output
        return feats.float().cpu().numpy()

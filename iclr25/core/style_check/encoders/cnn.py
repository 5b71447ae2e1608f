"""The second encoder: the small self-supervised CNN of ``ssl.py``, trained per corpus.

``index`` trains it on the reference corpus the first time it fills a DB (``--ssl``, the
default) and keeps its weights in the DB, so ``unique`` and ``check`` embed with the very
same network later; the study trains it on the study's references. Works are brought to
``size_px`` x ``size_px``: centre-cropped to a square, then resized (Lanczos). The
identity is ``ssl-cnn/<sha256 of the weights>``: a DB refuses embeddings of other weights.
The hash is over the tensors (sorted by name) and the metadata (sorted keys), not the file
bytes: safetensors writes its metadata map in a per-process random order, so the same
weights saved in two processes differ byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import numpy as np

NAME = "ssl-cnn"
VERSION = "1"


def square(image, side: int):
    """Centre square crop, resized to ``side`` x ``side`` (RGB PIL image)."""
    from PIL import Image

    w, h = image.size
    edge = min(w, h)
    left, top = (w - edge) // 2, (h - edge) // 2
    crop = image.crop((left, top, left + edge, top + edge))
    if edge != side:
        crop = crop.resize((side, side), Image.Resampling.LANCZOS, reducing_gap=3.0)
    return crop


def as_array(images: list, side: int) -> np.ndarray:
    """(N, side, side, 3) uint8 of RGB PIL images."""
    if not images:
        return np.zeros((0, side, side, 3), np.uint8)
    return np.stack([np.asarray(square(im.convert("RGB"), side), dtype=np.uint8) for im in images])


class SSLCNNEncoder:
    """``encode(list of RGB PIL images) -> (n, 128) float32`` with trained weights."""

    spec = NAME
    name = NAME
    version = VERSION
    feature_names = None
    feature_groups = None
    zero_shot = False

    def __init__(self, weights: bytes) -> None:
        from safetensors.torch import load

        from iclr25.core.style_check.generator import safetensors_metadata
        from iclr25.core.style_check.ssl import SSLConfig, StyleCNN

        meta = safetensors_metadata(weights)
        cfg = json.loads(meta["config"])
        cfg["crop_scale"] = tuple(cfg["crop_scale"])
        self.config = SSLConfig(**cfg)
        self.model = StyleCNN()
        self.model.load_state_dict(load(weights))
        self.model.eval().requires_grad_(False)
        self.weights = weights
        self.identity = f"{NAME}/{weights_digest(load(weights), meta)}"
        self.dim = self.model.dim

    def encode(self, images: list) -> np.ndarray:
        from iclr25.core.style_check.ssl import embed

        return embed(self.model, as_array(images, self.config.size_px))  # (n, dim)


def weights_digest(state: dict, meta: dict) -> str:
    """sha256 (16 hex digits) of tensors and metadata in a canonical order."""
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for name in sorted(state):
        tensor = state[name].contiguous()
        digest.update(f"|{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.numpy().tobytes())
    return digest.hexdigest()[:16]


def train_encoder(images: list, config, seed: int, on_step=None) -> SSLCNNEncoder:
    """Train the CNN on RGB PIL works (``ssl.train_ssl_cnn``) and wrap it as an encoder."""
    from safetensors.torch import save

    from iclr25.core.style_check.ssl import train_ssl_cnn

    rng = np.random.default_rng(seed)
    if len(images) > config.max_train_works:
        keep = np.sort(rng.choice(len(images), config.max_train_works, replace=False))
        images = [images[i] for i in keep]
    model, losses = train_ssl_cnn(as_array(images, config.size_px), config, seed, on_step)
    meta = {"config": json.dumps(asdict(config)), "final_loss": f"{losses[-1]:.6f}"}
    weights = save({k: v.contiguous() for k, v in model.state_dict().items()}, metadata=meta)
    return SSLCNNEncoder(weights)

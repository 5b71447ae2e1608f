"""The self-supervised CNN: NT-Xent against a direct computation, augmentations keep the
range and shape, training is deterministic and separates palettes it never saw labelled."""

from __future__ import annotations

import numpy as np
import torch

from iclr25.core.style_check import ssl
from iclr25.testing import assert_close


def test_nt_xent_matches_the_definition():
    gen = torch.Generator().manual_seed(0)
    z = torch.randn(6, 5, generator=gen)  # 3 works x 2 views
    tau = 0.2
    got = float(ssl.nt_xent(z, tau))
    u = (z / z.norm(dim=1, keepdim=True)).numpy().astype(np.float64)
    sim = u @ u.T / tau
    losses = []
    for i in range(6):
        j = (i + 3) % 6
        others = [k for k in range(6) if k != i]
        losses.append(-sim[i, j] + np.log(np.exp(sim[i, others]).sum()))
    assert_close(got, float(np.mean(losses)), rtol=1e-5)


def test_augment_keeps_shape_and_range():
    x = torch.rand(4, 3, 16, 16) * 2 - 1
    view = ssl.augment(x, ssl.SSLConfig(size_px=16), torch.Generator().manual_seed(1))
    assert view.shape == x.shape and view.min() >= -1 and view.max() <= 1
    assert not torch.equal(view, x)


def _palettes(n: int = 12, size: int = 16) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    colours = np.array([[200, 40, 40], [40, 200, 40], [40, 40, 200]])
    labels = np.arange(n) % 3
    noise = rng.integers(-30, 30, (n, size, size, 3))
    return np.clip(colours[labels][:, None, None, :] + noise, 0, 255).astype(np.uint8), labels


def test_training_is_deterministic_and_embeds_palettes_apart():
    images, labels = _palettes()
    cfg = ssl.SSLConfig(size_px=16, steps=30, batch_size=12)
    model, losses = ssl.train_ssl_cnn(images, cfg, seed=0)
    _, again = ssl.train_ssl_cnn(images, cfg, seed=0)
    assert losses == again and losses[-1] < losses[0]
    emb = ssl.embed(model, images)
    assert emb.shape == (12, model.dim) and emb.dtype == np.float32
    unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    sim = unit @ unit.T
    same = sim[labels[:, None] == labels[None, :]].mean()
    other = sim[labels[:, None] != labels[None, :]].mean()
    assert same > other


def test_identity_ignores_the_metadata_order_safetensors_writes():
    """safetensors writes its metadata map in a per-process random order: the same weights
    saved by two index workers must keep one identity (and the same embeddings)."""
    import json

    from PIL import Image

    from iclr25.core.style_check.encoders.cnn import SSLCNNEncoder, train_encoder

    images, _ = _palettes(4)
    enc = train_encoder([Image.fromarray(x) for x in images], ssl.SSLConfig(16, 2, 4), 0)
    length = int.from_bytes(enc.weights[:8], "little")
    header = json.loads(enc.weights[8 : 8 + length])
    meta = header.pop("__metadata__")
    assert len(meta) >= 2  # a reordering is possible
    reordered = {"__metadata__": dict(reversed(list(meta.items()))), **header}
    text = json.dumps(reordered, separators=(",", ":")).encode().ljust(length)
    swapped = enc.weights[:8] + text + enc.weights[8 + length :]
    assert swapped != enc.weights
    twin = SSLCNNEncoder(swapped)
    assert twin.identity == enc.identity
    np.testing.assert_array_equal(
        twin.encode([Image.fromarray(images[0])]), enc.encode([Image.fromarray(images[0])])
    )
    other = train_encoder([Image.fromarray(x) for x in images], ssl.SSLConfig(16, 2, 4), 1)
    assert other.identity != enc.identity

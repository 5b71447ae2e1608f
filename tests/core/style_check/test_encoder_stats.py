"""The style-statistics encoder: known colour values, determinism, format and size
invariance, orientation on stripes."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image

from iclr25.core.style_check.encoders.stats import (
    StyleStatsEncoder,
    soft_histogram,
    srgb_to_lab,
    style_statistics,
)
from iclr25.core.style_check.space import EmbeddingSpace
from iclr25.core.style_check.synthetic import make_artist, render_work, work_rng
from iclr25.core.style_check.tags import TERTILE_ATTRIBUTES, AttributeBinner
from iclr25.testing import assert_close


def test_lab_known_values():
    # CIELAB (D65) of sRGB white, black and pure red: 100/0/0, 0/0/0 and
    # L 53.24, a 80.09, b 67.20 (Lindbloom's calculator, same matrices)
    rgb = np.array([[[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]])
    lab = srgb_to_lab(rgb)[0]
    assert_close(lab[0], [100.0, 0.0, 0.0], atol=2e-3)
    assert_close(lab[1], [0.0, 0.0, 0.0], atol=1e-9)
    assert_close(lab[2], [53.24, 80.09, 67.20], atol=0.02)


def test_soft_histogram_known_answer():
    # one angle exactly on the centre of bin 2 of 4 (centres at 45, 135, 225, 315 deg)
    hist = soft_histogram(np.array([math.radians(225)]), np.array([1.0]), 4, 2 * math.pi)
    assert_close(hist, [0.0, 0.0, 1.0, 0.0], atol=1e-12)
    # halfway between two centres: split evenly; weights normalise to one
    hist = soft_histogram(np.array([math.radians(180)]), np.array([3.0]), 4, 2 * math.pi)
    assert_close(hist, [0.0, 0.5, 0.5, 0.0], atol=1e-12)


def _work(size: int = 192, index: int = 2) -> Image.Image:
    return render_work(make_artist(5, index), work_rng(5, 5, index, 0), size)


def test_feature_names_unique_and_deterministic():
    encoder = StyleStatsEncoder()
    assert len(set(encoder.feature_names)) == encoder.dim == len(encoder.feature_groups)
    image = _work()
    a, b = encoder.encode([image]), encoder.encode([image.copy()])
    assert np.array_equal(a, b)


def _reencode(image: Image.Image, fmt: str, **options) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def test_format_and_size_invariance(corpus):
    """PNG vs JPEG q95 and a resized copy land far closer than two works of one artist."""
    encoder = StyleStatsEncoder()
    space = EmbeddingSpace.fit(corpus.ref.embeddings, encoder.feature_groups)
    original = _work(384)  # copies stay above the 160^2 working size
    variants = {
        "jpeg95": _reencode(original, "JPEG", quality=95),
        "resized_down": original.resize((256, 256), Image.Resampling.LANCZOS),
        "resized_up": original.resize((512, 512), Image.Resampling.BICUBIC),
        "png_roundtrip": _reencode(original, "PNG"),
    }
    z0 = space.transform(encoder.encode([original]))[0]
    # typical distance between two works of the same artist, from the reference corpus
    Z = space.transform(corpus.ref.embeddings)
    same = [
        np.linalg.norm(Z[i] - Z[j])
        for a in np.unique(corpus.ref.artists)
        for i, j in [tuple(np.flatnonzero(corpus.ref.artists == a)[:2])]
    ]
    for name, image in variants.items():
        z = space.transform(encoder.encode([image]))[0]
        assert np.linalg.norm(z - z0) < 0.25 * np.median(same), name
        cosine = z @ z0 / (np.linalg.norm(z) * np.linalg.norm(z0))
        assert cosine > 0.98, (name, cosine)


def _stripes(vertical: bool, size: int = 128) -> Image.Image:
    x = np.arange(size)
    wave = (np.sin(2 * math.pi * x / 12) > 0).astype(np.uint8) * 200 + 30
    grid = np.tile(wave, (size, 1)) if vertical else np.tile(wave[:, None], (1, size))
    return Image.fromarray(np.stack([grid] * 3, axis=-1))


@pytest.mark.parametrize("vertical", [True, False])
def test_stripes_give_aligned_orientation(vertical):
    names, _, values = style_statistics(_stripes(vertical))
    feats = dict(zip(names, values, strict=True))
    assert feats["coherence_s2"] > 0.95  # one direction only
    # vertical stripes: horizontal gradients, doubled angle 0 -> cos 2theta = +1
    assert feats["orient_cos2_s2"] == pytest.approx(1.0 if vertical else -1.0, abs=0.05)
    binner = AttributeBinner({attr: (0.0, 1.0) for attr in TERTILE_ATTRIBUTES})
    tags = binner.transform(values[None, :], names).tags_of(0)
    assert f"stroke-direction:{'vertical' if vertical else 'horizontal'}" in tags
    assert "dominant-hue:neutral" in tags  # grey stripes

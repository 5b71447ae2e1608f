"""The style-statistics encoder: known colour values, determinism, format and size
invariance, orientation on stripes."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from PIL import Image

from iclr25.core.style_check.encoders.stats import (
    SCALES_PX,
    StyleStatsEncoder,
    derivatives,
    edge_features,
    soft_histogram,
    srgb_to_lab,
    style_statistics,
)
from iclr25.core.style_check.imageio import decode_image
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
    """``image`` written as ``fmt`` and read back the way ``index`` reads files."""
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return decode_image(buffer.getvalue())


def test_format_and_size_invariance(corpus):
    """PNG vs JPEG q95, resized copies and photo-sized files (read through the reduced
    JPEG decode and the box-then-Lanczos resize) land far closer than two works of one
    artist."""
    encoder = StyleStatsEncoder()
    space = EmbeddingSpace.fit(corpus.ref.embeddings, encoder.feature_groups)
    original = _work(384)  # copies stay above the 160^2 working size
    photo = original.resize((2304, 2304), Image.Resampling.BICUBIC)  # no new detail
    variants = {
        "jpeg95": _reencode(original, "JPEG", quality=95),
        "resized_down": original.resize((256, 256), Image.Resampling.LANCZOS),
        "resized_up": original.resize((512, 512), Image.Resampling.BICUBIC),
        "png_roundtrip": _reencode(original, "PNG"),
        "webp95": _reencode(original, "WEBP", quality=95),
        "photo_jpeg95": _reencode(photo, "JPEG", quality=95),  # decoded at DCT scale 1/4
        "photo_png": _reencode(photo, "PNG", compress_level=1),
    }
    assert variants["photo_jpeg95"].size == (576, 576)
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


# -- the fast paths against their definitions --------------------------------------------
def test_shared_derivative_passes_equal_scipy_gaussian_filter():
    from scipy.ndimage import gaussian_filter

    L = np.random.default_rng(0).random((37, 52))
    for sigma in SCALES_PX:
        d = derivatives(L, sigma)
        expected = {
            "smooth": gaussian_filter(L, sigma, mode="reflect"),
            "gx": sigma * gaussian_filter(L, sigma, order=(0, 1), mode="reflect"),
            "gy": sigma * gaussian_filter(L, sigma, order=(1, 0), mode="reflect"),
            "gxx": sigma**2 * gaussian_filter(L, sigma, order=(0, 2), mode="reflect"),
            "gyy": sigma**2 * gaussian_filter(L, sigma, order=(2, 0), mode="reflect"),
            "gxy": sigma**2 * gaussian_filter(L, sigma, order=(1, 1), mode="reflect"),
        }
        for name, want in expected.items():
            assert np.array_equal(getattr(d, name), want), (sigma, name)


def test_orientation_statistics_equal_the_complex_definition():
    """coherence and doubled angle: |sum m e^{2i theta}| / sum m, with zero gradients."""
    rng = np.random.default_rng(1)
    L = rng.random((40, 30))
    L[:10] = 0.5  # a flat band: zero gradient magnitudes
    scales = {sigma: derivatives(L, sigma) for sigma in SCALES_PX}
    feats = edge_features(scales)
    for sigma, d in scales.items():
        mag, theta = np.hypot(d.gx, d.gy), np.arctan2(d.gy, d.gx)
        resultant = (mag * np.exp(2j * theta)).sum() / mag.sum()
        s = f"s{int(sigma)}"
        assert_close(feats[f"orient_cos2_{s}"], resultant.real, atol=1e-12)
        assert_close(feats[f"orient_sin2_{s}"], resultant.imag, atol=1e-12)
        assert_close(feats[f"coherence_{s}"], abs(resultant), atol=1e-12)


@given(
    arrays(np.float64, st.integers(1, 50), elements=st.floats(-20, 20)),
    st.integers(2, 16),
    st.sampled_from([math.pi, 2 * math.pi]),
)
def test_soft_histogram_equals_a_plain_loop(angles, bins, period):
    weights = np.linspace(0.5, 2.0, len(angles))
    expected = np.zeros(bins)
    for angle, weight in zip(angles, weights, strict=True):
        pos = (angle % period) / period * bins - 0.5  # bin-centre coordinate
        lo = math.floor(pos)
        expected[lo % bins] += weight * (1 - (pos - lo))
        expected[(lo + 1) % bins] += weight * (pos - lo)
    got = soft_histogram(angles, weights, bins, period)
    assert_close(got, expected / expected.sum(), atol=1e-9)


def test_lab_table_lookup_equals_the_formula():
    codes = np.arange(256, dtype=np.uint8).reshape(16, 16, 1).repeat(3, axis=2)
    rgb = codes / 255.0
    assert np.array_equal(srgb_to_lab(rgb), srgb_to_lab(rgb + 0.0, table=False))


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

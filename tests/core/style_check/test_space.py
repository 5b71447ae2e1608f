"""The embedding space: group weights, the floor of constant dimensions, clipping."""

from __future__ import annotations

import numpy as np
from PIL import Image

from iclr25.core.style_check.space import STD_FLOOR_SHARE, Z_MAX, EmbeddingSpace
from iclr25.testing import assert_close


def test_group_weights_and_standardisation_known_answer():
    X = np.array([[0.0, 0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 2.0, 2.0, 2.0]])  # std 1 everywhere
    space = EmbeddingSpace.fit(X, ["a", "b", "b", "b", "b"])
    # group a has 1 feature (weight 1), group b 4 (weight 1/2): each group's norm is equal
    assert_close(space.transform([[2.0] * 5]), [[1.0, 0.5, 0.5, 0.5, 0.5]])


def test_constant_dimension_is_floored_and_outliers_clipped():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(0, 1.0, 200), rng.normal(0, 1.0, 200), np.zeros(200)])
    space = EmbeddingSpace.fit(X)
    floor = STD_FLOOR_SHARE * np.median(X.std(axis=0))
    assert space.std[2] == floor
    z = space.transform([[0.0, 0.0, 0.1 * floor], [100.0, 0.0, 1.0]])
    assert_close(z[0, 2], 0.1, atol=1e-6)  # a tiny deviation stays tiny
    assert z[1, 0] == Z_MAX and z[1, 2] == Z_MAX  # far outliers are bounded


def test_a_tinted_copy_stays_near_its_grey_twin_in_a_grey_corpus():
    """Black-and-white references: their colour features are constant. A sepia copy of
    one of them must not become orthogonal to everything (cosine 0.0009 without the
    floor and the clip: every typicality test would then reject it)."""
    from iclr25.core.style_check.encoders.stats import StyleStatsEncoder
    from iclr25.core.style_check.synthetic import make_artist, render_work, work_rng

    encoder = StyleStatsEncoder()
    greys = [
        render_work(make_artist(0, i % 4), work_rng(0, 0, i % 4, i), 64).convert("L")
        for i in range(16)
    ]
    X = encoder.encode([g.convert("RGB") for g in greys])
    space = EmbeddingSpace.fit(X, encoder.feature_groups)
    tint = np.asarray(greys[0].convert("RGB"), dtype=np.float64) * [1.0, 0.96, 0.88]
    sepia = Image.fromarray(tint.round().astype(np.uint8))
    u = space.unit(encoder.encode([greys[0].convert("RGB"), sepia]))
    assert np.abs(space.transform(encoder.encode([sepia]))).max() <= Z_MAX
    assert u[0] @ u[1] > 0.3

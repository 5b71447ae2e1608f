"""Synthetic artists: hard pairs (known answers of the blend), reproducibility."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest

from iclr25.core.style_check.synthetic import (
    SyntheticConfig,
    follower,
    make_artist,
    make_styled_artist,
    write_corpus,
)

PALETTE = ("base_hue_deg", "hue_spread_deg", "saturation", "brightness", "background", "shape")


def test_closeness_one_is_the_same_generator_under_another_name():
    leader, own = make_artist(0, 4), make_artist(0, 5)
    twin = follower(own, leader, 1.0)
    differs = {k for k, v in asdict(twin).items() if v != asdict(leader)[k]}
    assert differs == {"name", "follows", "closeness"}
    assert twin.name.startswith("05-") and twin.follows == leader.name


def test_closeness_zero_keeps_only_the_palette_and_shape():
    leader, own = make_artist(0, 2), make_artist(0, 3)
    pupil = follower(own, leader, 0.0)
    for field in PALETTE:
        assert getattr(pupil, field) == getattr(leader, field)
    for field in ("stroke_length", "stroke_width", "n_strokes", "opacity", "grain"):
        assert getattr(pupil, field) == pytest.approx(getattr(own, field))
    assert pupil.angle_deg == pytest.approx(own.angle_deg) and pupil.composition == own.composition


def test_directions_blend_along_the_shorter_arc():
    from dataclasses import replace

    leader = replace(make_artist(0, 0), angle_deg=10.0)
    own = replace(make_artist(0, 1), angle_deg=170.0)  # 20 degrees apart through 0/180
    assert follower(own, leader, 0.5).angle_deg == pytest.approx(0.0, abs=1e-9)
    assert follower(own, leader, 0.75).angle_deg == pytest.approx(5.0)


def test_hard_artists_do_not_depend_on_how_many_are_drawn(tmp_path):
    one = write_corpus(tmp_path / "a", SyntheticConfig(2, 1, size=16, difficulty="hard"))
    part = SyntheticConfig(1, 1, size=16, difficulty="hard", first_artist=1)
    assert write_corpus(tmp_path / "b", part) == one[1:]
    assert [a["closeness"] for a in one] == [None, 1.0]
    assert make_styled_artist(0, 3, "hard").closeness == 0.9
    assert make_styled_artist(0, 11, "hard").closeness == 0.9  # pair 5: the cycle again
    assert make_styled_artist(0, 3, "easy") == make_artist(0, 3)
    with pytest.raises(ValueError, match="unknown difficulty"):
        make_styled_artist(0, 1, "medium")


def test_works_are_reproducible_and_new_works_seed_draws_new_works(tmp_path):
    from PIL import Image

    config = SyntheticConfig(1, 2, size=24, difficulty="hard")
    write_corpus(tmp_path / "a", config)
    write_corpus(tmp_path / "b", config)
    write_corpus(tmp_path / "c", SyntheticConfig(1, 2, size=24, difficulty="hard", works_seed=5))
    pixels = {d: np.asarray(Image.open(next((tmp_path / d).glob("*/work-000.png")))) for d in "abc"}
    assert np.array_equal(pixels["a"], pixels["b"])
    assert not np.array_equal(pixels["a"], pixels["c"])


def test_the_docstring_states_the_closeness_the_code_uses():
    from iclr25.core.style_check import synthetic

    stated = ", ".join(f"{c:g}" if c < 1 else "1.0" for c in synthetic.CLOSENESS_CYCLE)
    assert stated == "1.0, 0.9, 0.8, 0.6"
    flat = " ".join(synthetic.__doc__.split())
    assert "= 1.0 (the same generator under two names" in flat and "0.9, 0.8, 0.6, then" in flat

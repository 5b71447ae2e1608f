"""Data sources: exact toy samplers, digits, .npy arrays, image folders, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from PIL import Image

from iclr25.core.diffusion_at.data import load_dataset
from iclr25.errors import InputError
from iclr25.testing import assert_close


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_8gaussians_points_sit_near_the_8_centres():
    x = load_dataset("8gaussians").sample(4000, _gen())
    angle = 2 * math.pi * torch.arange(8) / 8
    centres = 2 * torch.stack([torch.cos(angle), torch.sin(angle)], 1)  # (8, 2)
    nearest = torch.cdist(x, centres).min(dim=1)
    assert float(nearest.values.mean()) == pytest.approx(0.2 * math.sqrt(math.pi / 2), rel=0.05)
    counts = torch.bincount(nearest.indices, minlength=8)  # each mode ≈ 1/8 of the points
    assert counts.min() > 400 and counts.max() < 600


def test_checkerboard_is_uniform_on_the_dark_squares():
    x = load_dataset("checkerboard").sample(5000, _gen()).numpy()
    assert np.all(np.abs(x) <= 2)
    column, row = np.floor(x[:, 0]), np.floor(x[:, 1])
    assert np.all((column + row) % 2 == 0)  # only the 8 squares with an even index sum
    assert len({(int(c), int(r)) for c, r in zip(column, row, strict=True)}) == 8


def test_swissroll_radius_follows_its_parameter():
    x = load_dataset("swissroll").sample(3000, _gen()).numpy()
    radius = np.linalg.norm(x, axis=1)  # |(s cos s, s sin s)|/5 = s/5 in [0.94, 2.83] ± noise
    assert radius.min() > 0.94 - 0.5 and radius.max() < 2.83 + 0.5


def test_samplers_are_reproducible_from_the_generator():
    ds = load_dataset("8gaussians")
    assert torch.equal(ds.sample(10, _gen(3)), ds.sample(10, _gen(3)))


def test_digits():
    ds = load_dataset("digits")
    assert ds.kind == "image" and ds.shape == (1, 8, 8) and ds.size == 1797
    assert float(ds.array.min()) == -1.0 and float(ds.array.max()) == 1.0
    ref = ds.reference(5000, _gen())
    assert ref.shape == (1797, 1, 8, 8)  # the whole set, in random order


def test_npy_points_are_standardised_and_mapped_back(tmp_path):
    raw = np.random.default_rng(0).normal([10.0, -3.0, 0.5], [5.0, 0.1, 1.0], size=(500, 3))
    np.save(tmp_path / "p.npy", raw)
    ds = load_dataset(str(tmp_path / "p.npy"))
    assert ds.kind == "points" and ds.shape == (3,)
    assert np.allclose(ds.array.mean(0).numpy(), 0, atol=1e-5)
    assert np.allclose(ds.to_user(ds.array), raw, atol=1e-4)


@pytest.mark.parametrize("layout", ["nhw", "nchw", "nhwc"])
def test_npy_images_in_any_layout(tmp_path, layout):
    base = np.random.default_rng(1).integers(0, 256, size=(6, 3, 4, 4), dtype=np.uint8)
    arr = {"nhw": base[:, 0], "nchw": base, "nhwc": base.transpose(0, 2, 3, 1)}[layout]
    np.save(tmp_path / "i.npy", arr)
    ds = load_dataset(str(tmp_path / "i.npy"))
    assert ds.kind == "image" and ds.shape == ((1, 4, 4) if layout == "nhw" else (3, 4, 4))
    assert -1 <= float(ds.array.min()) and float(ds.array.max()) <= 1


@pytest.mark.parametrize(
    "array, message",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), "NaN"),
        (np.zeros(5), "expected a numeric"),
        (np.zeros((1, 3)), "at least 2"),
        (np.full((4, 1, 4, 4), 7.5), "float images"),
        (np.zeros((4, 1, 3, 3)), "even"),
    ],
)
def test_bad_npy_arrays_are_refused(tmp_path, array, message):
    np.save(tmp_path / "bad.npy", array)
    with pytest.raises(InputError, match=message):
        load_dataset(str(tmp_path / "bad.npy"))


def test_pickled_npy_is_refused(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="not a readable .npy"):
        load_dataset(str(tmp_path / "obj.npy"))


def test_image_folder_resizes_mixed_sizes_and_skips_corrupt_files(tmp_path):
    Image.new("L", (10, 12), 0).save(tmp_path / "a.png")
    Image.new("L", (30, 30), 255).save(tmp_path / "b.png")
    (tmp_path / "broken.png").write_bytes(b"not a png at all")
    (tmp_path / "notes.txt").write_text("ignored")
    ds = load_dataset(str(tmp_path), image_size=8)
    assert ds.shape == (1, 8, 8) and ds.size == 2
    assert ds.info["skipped_unreadable"] == 1 and ds.info["skipped_files"] == ["broken.png"]
    assert ds.info["distinct_sizes"] == 2
    assert sorted(float(v) for v in ds.array.mean(dim=(1, 2, 3))) == [-1.0, 1.0]


def test_image_folder_keeps_16_bit_grey_centre_crops_and_skips_damaged_files(tmp_path):
    wide = np.arange(64, dtype=np.uint16).reshape(8, 8) * 1000  # 0 … 63000 of 65535
    Image.fromarray(wide).save(tmp_path / "b_wide.png")  # mode I;16 (clipped to 255 by "L")
    strip = np.zeros((8, 16), np.uint8)
    strip[:, 4:12] = 255  # 8×16, black margins around a white central 8×8 square
    Image.fromarray(strip).save(tmp_path / "a_strip.png")
    png = (tmp_path / "a_strip.png").read_bytes()
    (tmp_path / "c_truncated.png").write_bytes(png[: len(png) // 2])  # header fine, data cut
    (tmp_path / "d_folder.png").mkdir()  # not a file: ignored, not counted
    ds = load_dataset(str(tmp_path), image_size=8)
    assert ds.size == 2 and ds.shape == (1, 8, 8) and ds.info["mode"] == "L"
    assert ds.info["skipped_files"] == ["c_truncated.png"]
    assert torch.equal(ds.array[0], torch.ones(1, 8, 8))  # the centre crop is the square
    assert_close((ds.array[1, 0].double() + 1) / 2 * 65535, wide.astype(np.float64), atol=0.1)


def test_colour_folder_is_rgb(tmp_path):
    Image.new("RGB", (8, 8), (255, 0, 0)).save(tmp_path / "r.png")
    Image.new("L", (8, 8), 128).save(tmp_path / "g.png")
    assert load_dataset(str(tmp_path), image_size=4).shape == (3, 4, 4)


def test_folder_without_readable_images(tmp_path):
    (tmp_path / "x.jpg").write_bytes(b"\x00\x01")
    with pytest.raises(InputError, match="no readable image"):
        load_dataset(str(tmp_path))


def test_unknown_names_and_paths():
    with pytest.raises(InputError, match="unknown data set") as err:
        load_dataset("moons")
    assert "8gaussians" in err.value.fix
    with pytest.raises(InputError, match="no such file"):
        load_dataset("/nonexistent/data.npy")

"""ImageFolder reading of mim-refine: bad folders, the stratified split, textures."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.mim_refine.data import Split, load_data, stratified_split, write_image_folder
from iclr25.core.mim_refine.textures import CLASSES, make_textures
from iclr25.errors import InputError


def write(root, images_per_class, broken=0):
    images, labels = make_textures(10 * images_per_class, seed=1)
    write_image_folder(root, Split(images, labels, CLASSES))
    for path in sorted(root.rglob("*.png"))[:broken]:
        path.write_bytes(b"not a png")


def test_one_folder_is_split_80_20_per_class_and_reproducibly(tmp_path):
    write(tmp_path / "d", 5)
    train, test, layout = load_data(tmp_path / "d", None, seed=3)
    assert layout.startswith("one folder") and train.images.shape[1:] == (32, 32, 3)
    assert np.bincount(test.labels).tolist() == [1] * 10 and len(train.labels) == 40
    again, _, _ = load_data(tmp_path / "d", 16, seed=3)
    assert again.images.shape[1:] == (16, 16, 3)  # resized to the model's size
    np.testing.assert_array_equal(again.labels, train.labels)


def test_bad_folders_name_the_problem(tmp_path):
    (tmp_path / "one" / "cats").mkdir(parents=True)
    with pytest.raises(InputError, match="need ≥ 2"):
        load_data(tmp_path / "one", None, 0)
    write(tmp_path / "broken", 2, broken=3)
    with pytest.raises(InputError, match=r"3 unreadable image\(s\) .* first: .*\.png"):
        load_data(tmp_path / "broken", None, 0)
    write(tmp_path / "few", 2)
    for path in sorted((tmp_path / "few" / "dots").glob("*.png"))[1:]:
        path.unlink()
    with pytest.raises(InputError, match="'dots' has fewer than 2 images"):
        load_data(tmp_path / "few", None, 0)


def test_stratified_split_keeps_every_class_on_both_sides():
    labels = np.repeat(np.arange(4), [2, 3, 10, 50])
    first, second = stratified_split(labels, 0.2, seed=0)
    assert set(labels[first]) == set(labels[second]) == {0, 1, 2, 3}
    assert len(np.intersect1d(first, second)) == 0 and len(first) + len(second) == len(labels)


def test_textures_are_seeded_and_balanced():
    a, la = make_textures(40, seed=5)
    b, lb = make_textures(40, seed=5)
    np.testing.assert_array_equal(a, b)
    assert np.bincount(la).tolist() == [4] * 10 and a.dtype == np.uint8

"""Listing reference folders, CSV manifests and generated folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from iclr25.core.style_check.corpus import list_generated, list_references
from iclr25.errors import InputError


def _img(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8)).save(path)
    return path


def test_folder_listing_reports_skips_and_empty_artists(tmp_path: Path):
    _img(tmp_path / "monet" / "a.png")
    _img(tmp_path / "monet" / "series" / "b.jpg")  # nested below the artist folder
    _img(tmp_path / "monet" / ".hidden.png")  # hidden: ignored silently
    (tmp_path / "monet" / "notes.txt").write_text("x")
    _img(tmp_path / "loose.png")  # not inside an artist folder
    (tmp_path / "empty_artist").mkdir()
    listing = list_references(tmp_path)
    assert [(w.path.name, w.artist) for w in listing.works] == [
        ("a.png", "monet"),
        ("b.jpg", "monet"),
    ]
    reasons = {Path(s["path"]).name: s["reason"] for s in listing.skipped}
    assert reasons == {
        "notes.txt": "not an image file type",
        "loose.png": "not inside an artist folder (use REFS/<artist>/<image>)",
    }
    assert listing.empty_artists == ["empty_artist"]


def test_manifest_relative_paths_and_missing_files(tmp_path: Path):
    _img(tmp_path / "imgs" / "x.png")
    _img(tmp_path / "imgs" / "y.png")
    manifest = tmp_path / "refs.csv"
    manifest.write_text(
        "path,artist\nimgs/x.png,hokusai\nimgs/y.png,hiroshige\nimgs/z.png,hokusai\n"
    )
    listing = list_references(manifest)
    assert [(w.path.name, w.artist) for w in listing.works] == [
        ("x.png", "hokusai"),
        ("y.png", "hiroshige"),
    ]
    assert listing.skipped == [
        {"path": str(tmp_path / "imgs" / "z.png"), "reason": "file not found"}
    ]


def test_manifest_without_columns_names_the_fix(tmp_path: Path):
    manifest = tmp_path / "refs.csv"
    manifest.write_text("file,label\na.png,b\n")
    with pytest.raises(InputError) as info:
        list_references(manifest)
    assert "'path' and 'artist'" in info.value.what and "header" in info.value.fix


def test_empty_or_missing_references_are_input_errors(tmp_path: Path):
    with pytest.raises(InputError, match="no such file"):
        list_references(tmp_path / "nope")
    (tmp_path / "artist").mkdir()
    with pytest.raises(InputError, match="no reference images"):
        list_references(tmp_path)


def test_generated_listing_made_for(tmp_path: Path):
    _img(tmp_path / "monet" / "g1.png")
    _img(tmp_path / "monet" / "deeper" / "g2.png")
    _img(tmp_path / "top.png")
    made_for = {w.path.name: w.artist for w in list_generated(tmp_path).works}
    assert made_for == {"g1.png": "monet", "g2.png": "monet", "top.png": None}
    forced = {w.path.name: w.artist for w in list_generated(tmp_path, artist="turner").works}
    assert set(forced.values()) == {"turner"}

"""`iclr25 style-check` through the real console script: the whole flow on synthetic
artists, the demo's --synthetic runs, and the error paths."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from iclr25.testing import error_line


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    """make-synthetic (refs + new works of the same artists) and index, once."""
    from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus

    root = tmp_path_factory.mktemp("style-cli")
    write_corpus(root / "gen", SyntheticConfig(n_artists=4, per_artist=3, works_seed=9, size=64))
    return root


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_make_synthetic_index_unique_check(cli, flow):
    refs, db = flow / "refs", flow / "refs.sqlite"
    made = cli(
        "style-check",
        "make-synthetic",
        refs,
        "--artists",
        "4",
        "--per-artist",
        "10",
        "--size",
        "64",
        "--json",
    )
    assert made.returncode == 0, made
    assert made.json()["results"]["n_artists"] == 4 and len(list(refs.glob("*/*.png"))) == 40

    (refs / made.json()["results"]["artists"][0]["name"] / "broken.png").write_bytes(
        b"\x89PNG junk"
    )
    indexed = cli("style-check", "index", refs, "--db", db, "--json")
    assert indexed.returncode == 0, indexed
    res = indexed.json()["results"]
    assert (res["embedded_new"], res["n_works"], res["n_artists"]) == (40, 40, 4)
    assert [Path(s["path"]).name for s in res["skipped"]] == ["broken.png"]
    assert any("broken.png" in w for w in indexed.json()["warnings"])
    for message in indexed.json()["warnings"]:  # stderr is a pipe here, not a terminal
        assert f"Warning: {message}" in indexed.stderr

    unique = cli("style-check", "unique", "--db", db, "--folds", "3", "--json")
    assert unique.returncode == 0, unique
    doc = unique.json()["results"]
    assert doc["mean_heldout_accuracy"] >= 0.9
    assert {"name", "heldout_accuracy", "unique"} <= set(doc["artists"][0])

    checked = cli("style-check", "check", flow / "gen", "--db", db, "--json", "--out", flow / "run")
    assert checked.returncode == 0, checked
    res = checked.json()["results"]
    assert res["attribution_accuracy"] >= 0.9 and res["n_images"] == 12
    assert res["mode"] == "classification" and res["n_targeted_artists"] == 4
    row = res["artists"][0]
    keys = {"unique", "heldout_accuracy", "set_attribution", "image_share"}
    assert keys | {"tag_signature_overlap", "verdict"} <= set(row)
    assert set(row["by_encoder"]) == {"style-stats", "ssl-cnn"}
    # the table's count is the artist's own images only
    assert row["n_attributed"] <= row["n_generated_for"] == 3
    assert all(r["verdict"] == "at risk" for r in res["artists"] if r["unique"])
    assert "not a finding of copying or of legal infringement" in res["disclaimer"]
    report = (flow / "run" / "report.html").read_text()
    assert "legal infringement" in report and "data:image/jpeg;base64" in report
    assert (flow / "run" / "contact_sheet.png").stat().st_size > 1000
    # 10 works per artist: too few for the default typicality test, and the run says so
    assert any("typicality test" in w for w in checked.json()["warnings"])
    text = _rendered(res)
    assert "attribution accuracy 100%" in text or "attribution accuracy 9" in text
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 100


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory) -> Path:
    """32 px works: 00-blue-dots and 01-red-rectangles (3 each), 02-green-arcs (1)."""
    from iclr25.core.style_check.index import IndexConfig, index_references
    from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus

    root = tmp_path_factory.mktemp("style-tiny")
    write_corpus(root / "refs", SyntheticConfig(n_artists=2, per_artist=3, size=32))
    write_corpus(root / "more", SyntheticConfig(n_artists=1, per_artist=1, size=32, first_artist=2))
    (root / "more" / "02-green-arcs").rename(root / "refs" / "02-green-arcs")
    index_references(root / "refs", root / "db.sqlite", IndexConfig())
    return root / "db.sqlite"


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_check_with_unknown_artist_names_the_fix(cli, flow, tiny_db):
    result = cli("style-check", "check", flow / "gen", "--db", tiny_db, "--artist", "00-red-lines")
    assert result.returncode == 2
    assert "Error: artist '00-red-lines' is not in the DB" in result.stderr
    assert "names are folder names" in result.stderr
    # nothing close: the valid names are listed
    result = cli("style-check", "check", flow / "gen", "--db", tiny_db, "--artist", "monet")
    assert result.returncode == 2
    names = "00-blue-dots, 01-red-rectangles, 02-green-arcs"
    assert f"the DB's 3 artists are {names}" in result.stderr
    explained = cli("style-check", "explain", "--db", tiny_db, "--folds", "2", "--artist", "x")
    assert explained.returncode == 2 and names in explained.stderr
    args = ("--db", tiny_db, "--folds", "2", "--artist")
    close = cli("style-check", "explain", *args, "02-green-arc")
    assert close.returncode == 2 and "did you mean 02-green-arcs?" in close.stderr
    too_few = cli("style-check", "explain", *args, "02-green-arcs")
    assert too_few.returncode == 2
    assert "has 1 work, fewer than the 2 folds need — lower --folds" in too_few.stderr


@pytest.fixture(scope="module")
def four_db(tmp_path_factory) -> Path:
    """4 easy artists x 8 works at 48 px, indexed without the SSL encoder (fast)."""
    from iclr25.core.style_check.index import IndexConfig, index_references
    from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus

    root = tmp_path_factory.mktemp("style-four")
    write_corpus(root / "refs", SyntheticConfig(n_artists=4, per_artist=8, size=48))
    index_references(root / "refs", root / "db.sqlite", IndexConfig(ssl=False))
    return root / "db.sqlite"


def test_check_a_flat_folder_says_what_it_cannot_measure(cli, flow, four_db, tmp_path):
    """No <artist>/ subfolders: shares of all images, no verdicts, a warning that says why."""
    import shutil

    flat = tmp_path / "flat"
    flat.mkdir()
    for i, path in enumerate(sorted((flow / "gen").glob("*/work-000.png"))):
        shutil.copy(path, flat / f"image-{i}.png")
    result = cli("style-check", "check", flat, "--db", four_db, "--folds", "4", "--json")
    assert result.returncode == 0, result
    doc = result.json()
    res = doc["results"]
    assert res["n_images"] == 4 and res["attribution_accuracy"] is None
    assert res["artists"] == [] and res["n_targeted_artists"] == 0 and res["n_at_risk"] == 0
    assert abs(sum(res["share_of_all"].values()) - res["attributed_share"]) < 1e-9
    assert any("no image names the artist it was made for" in w for w in doc["warnings"])
    assert any("no second encoder" in w for w in doc["warnings"])  # indexed with --no-ssl
    text = _rendered(res)
    assert "share of all" in text and "attribution accuracy" not in text
    assert "None" not in text and "…" not in text  # nothing cut or raw
    assert max(len(line) for line in text.splitlines()) <= 100


def test_generated_folders_naming_no_db_artist_are_refused(cli, flow, four_db, tmp_path):
    import shutil

    for name, source in (("monet", "00-blue-dots"), ("00-blue-dot", "01-red-rectangles")):
        shutil.copytree(flow / "gen" / source, tmp_path / "gen" / name)
    result = cli("style-check", "check", tmp_path / "gen", "--db", four_db, "--folds", "4")
    assert result.returncode == 2, result
    line = error_line(result.stderr)
    assert "none of its folders (00-blue-dot, monet) names an artist in the DB" in line
    assert "close DB names: 00-blue-dots" in line and "--artist NAME" in line


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_one_artist_db_answers_as_a_verification(cli, tmp_path):
    """An artist checking their own folder: exit 0 with a verification verdict."""
    from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus

    write_corpus(tmp_path / "refs", SyntheticConfig(n_artists=1, per_artist=10, size=48))
    write_corpus(tmp_path / "mine", SyntheticConfig(1, 4, works_seed=3, size=48))
    write_corpus(tmp_path / "other", SyntheticConfig(1, 4, seed=5, size=48, first_artist=1))
    db = tmp_path / "db.sqlite"
    indexed = cli("style-check", "index", tmp_path / "refs", "--db", db, "--no-ssl", "--json")
    assert indexed.returncode == 0, indexed
    name = next((tmp_path / "refs").iterdir()).name
    mine = cli("style-check", "check", tmp_path / "mine", "--db", db, "--json")
    assert mine.returncode == 0, mine
    res = mine.json()["results"]
    row = res["artists"][0]
    assert res["mode"] == "verification" and row["name"] == name
    assert row["unique"] and row["verdict"] == "at risk" and row["image_share"] >= 0.75
    assert any("verification" in w for w in mine.json()["warnings"])
    flat = tmp_path / "flat"
    next((tmp_path / "other").iterdir()).rename(flat)  # a flat folder: made for the artist
    other = cli("style-check", "check", flat, "--db", db, "--json")
    assert other.returncode == 0, other
    row = other.json()["results"]["artists"][0]
    assert row["verdict"] == "not recognised" and row["image_share"] <= 0.25
    few = cli("style-check", "check", flat, "--db", db, "--folds", "20")
    assert few.returncode == 2 and "no artist in the DB has the 20 works" in few.stderr


def test_index_of_unreadable_files_exits_2_with_the_skips(cli, tmp_path):
    bad = tmp_path / "refs" / "someone"
    bad.mkdir(parents=True)
    (bad / "a.png").write_bytes(b"\x89PNG broken")
    (bad / "b.jpg").write_bytes(b"")
    db = tmp_path / "db.sqlite"
    result = cli("style-check", "index", tmp_path / "refs", "--db", db)
    assert result.returncode == 2, result
    line = error_line(result.stderr)
    assert "no readable image, 2 file(s) skipped" in line and "b.jpg: empty file" in line
    assert "a.png: not a readable image" in line and "Traceback" not in result.stderr
    assert not db.exists()  # nothing left behind


def _rendered(results: dict) -> str:
    from rich.console import Console

    from iclr25.commands.style_check_views import render_check

    console = Console(width=100, record=True, file=io.StringIO())
    render_check(console, results)
    return console.export_text()


def test_empty_db_and_empty_file_are_refused_untouched(cli, tmp_path, tiny_db):
    import sqlite3

    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(tiny_db.read_bytes())
    with sqlite3.connect(empty) as conn:
        conn.execute("DELETE FROM works")
    result = cli("style-check", "unique", "--db", empty)
    assert result.returncode == 2 and "the DB holds no works" in result.stderr
    assert "iclr25 style-check index" in result.stderr
    zero = tmp_path / "zero.sqlite"
    zero.touch()
    result = cli("style-check", "check", tmp_path, "--db", zero)
    assert result.returncode == 2 and "is an empty file, not a style-check DB" in result.stderr
    assert zero.stat().st_size == 0  # a reading command never writes


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_hard_synthetic_artists_from_the_cli(cli, tmp_path):
    """make-synthetic --difficulty hard: followers name their leader; the identical first
    pair is reported not unique."""
    from iclr25.core.style_check.index import IndexConfig, index_references

    refs, db = tmp_path / "refs", tmp_path / "refs.sqlite"
    made = cli(
        "style-check", "make-synthetic", refs, "--artists", "4", "--per-artist", "12",
        "--size", "64", "--difficulty", "hard", "--json",
    )  # fmt: skip
    assert made.returncode == 0, made
    artists = made.json()["results"]["artists"]
    assert [(a["follows"], a["closeness"]) for a in artists] == [
        (None, None),
        (artists[0]["name"], 1.0),
        (None, None),
        (artists[2]["name"], 0.9),
    ]
    assert artists[1]["base_hue_deg"] == artists[0]["base_hue_deg"]
    index_references(refs, db, IndexConfig())
    unique = cli("style-check", "unique", "--db", db, "--folds", "3", "--json")
    rows = {r["name"]: r for r in unique.json()["results"]["artists"]}
    assert not rows[artists[0]["name"]]["unique"] and not rows[artists[1]["name"]]["unique"]


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_synthetic_check_demo_run_directory(cli, tmp_path):
    out = tmp_path / "run"
    result = cli("style-check", "check", "--synthetic", "--json", "--out", out)
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["attribution_accuracy"] >= 0.9 and res["n_targeted_artists"] == 8
    assert res["n_at_risk"] == res["n_unique_targeted"] == 8  # easy artists: all unique
    assert res["typicality_untestable"] == []  # 20 works per artist
    text = (out / "result.json").read_text() + (out / "config.json").read_text()
    assert ".partial" not in text  # staged paths rewritten to the final folder
    assert Path(res["images"][0]["path"]).exists()
    assert {"report.html", "contact_sheet.png", "attributions.csv", "synthetic"} <= {
        p.name for p in out.iterdir()
    }


@pytest.mark.parametrize(
    "args,fix",
    [
        (("unique",), "pass --db DB or --synthetic"),
        (("unique", "--db", "x.sqlite", "--synthetic"), "pass one"),
        (("unique", "--db", "missing.sqlite"), "build it first"),
        (("index", "no-such-folder", "--db", "d.sqlite"), "pass a folder of <artist>/<image>"),
        (("index", ".", "--db", "d.sqlite", "--encoder", "clip"), "--encoder hf:PATH"),
        (("unique", "--synthetic", "--classifier", "svm"), "use linear or knn"),
        (("check", "--db", "x.sqlite"), "pass the folder of generated images"),
        (("unique", "--db", "x.sqlite", "--difficulty", "hard"), "drop --difficulty"),
        (("unique", "--synthetic", "--difficulty", "medium"), "use --difficulty easy or hard"),
        (("make-synthetic", "d", "--difficulty", "x"), "use --difficulty easy or hard"),
        (("study", "--size", "9"), "give an even --size"),
        (("study", "--works", "6"), "give --works >= "),
        (("study", "--workers", "0"), "use --workers 1"),
    ],
)
def test_bad_usage_exits_2_with_fix(cli, tmp_path, args, fix):
    result = cli("style-check", *args, cwd=tmp_path)
    assert result.returncode == 2, result
    assert error_line(result.stderr).startswith("Error:") and fix in result.stderr
    assert "Traceback" not in result.stderr


def test_not_a_db_and_non_empty_folders_are_refused(cli, tmp_path):
    fake = tmp_path / "notes.sqlite"
    fake.write_text("hello")
    result = cli("style-check", "unique", "--db", fake)
    assert result.returncode == 2 and "not a style-check DB" in result.stderr
    keep = tmp_path / "corpus"
    keep.mkdir()
    (keep / "precious.txt").write_text("keep me")
    made = cli("style-check", "make-synthetic", keep, "--artists", "2", "--per-artist", "2")
    assert made.returncode == 2 and "--overwrite" not in made.stdout
    assert [p.name for p in keep.iterdir()] == ["precious.txt"]
    out = tmp_path / "out"
    out.mkdir()
    (out / "x").write_text("x")
    refused = cli("style-check", "unique", "--synthetic", "--out", out)
    assert refused.returncode == 2 and (out / "x").read_text() == "x"


@pytest.mark.slow  # torch + transformers in a subprocess; the hf path is covered in-process
def test_hf_encoder_from_the_cli(cli, tmp_path):
    import torch
    from transformers import Dinov2Config, Dinov2Model

    from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus

    torch.manual_seed(0)
    model = tmp_path / "dino"
    Dinov2Model(
        Dinov2Config(
            hidden_size=32,
            intermediate_size=37,
            num_hidden_layers=1,
            num_attention_heads=4,
            image_size=32,
            patch_size=8,
        )
    ).save_pretrained(model)
    write_corpus(tmp_path / "refs", SyntheticConfig(n_artists=2, per_artist=3, size=40))
    db = tmp_path / "d.sqlite"
    result = cli(
        "style-check", "index", tmp_path / "refs", "--db", db, "--encoder", f"hf:{model}", "--json"
    )
    assert result.returncode == 0, result
    encoder = result.json()["results"]["encoder"]
    assert encoder["dim"] == 32 and encoder["identity"].startswith("hf/dinov2/")
    from iclr25.core.style_check.store import StyleDB

    with StyleDB(db) as handle:
        ref = handle.load()
    assert ref.encoder.spec == f"hf:{model.resolve()}" and ref.embeddings.shape == (6, 32)

"""Incremental indexing and the DB's refusals (other encoder, not a DB, corrupt rows)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from iclr25.core.style_check.encoders import encoder_info
from iclr25.core.style_check.encoders.stats import StyleStatsEncoder
from iclr25.core.style_check.index import IndexConfig, index_references
from iclr25.core.style_check.store import StyleDB, check_same_encoder
from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus
from iclr25.errors import InputError, RunFailure

PLAIN = IndexConfig(ssl=False)  # no SSL encoder where a test is not about it (faster)


@pytest.fixture
def small_refs(tmp_path: Path) -> Path:
    refs = tmp_path / "refs"
    write_corpus(refs, SyntheticConfig(n_artists=3, per_artist=3, size=48))
    return refs


@pytest.fixture
def encode_counter(monkeypatch):
    """Count the images the style-statistics encoder embeds."""
    seen: list[int] = []
    original = StyleStatsEncoder.encode

    def counting(self, images):
        seen.append(len(images))
        return original(self, images)

    monkeypatch.setattr(StyleStatsEncoder, "encode", counting)
    return seen


def test_incremental_index_embeds_only_new_and_changed(tmp_path, small_refs, encode_counter):
    db = tmp_path / "refs.sqlite"
    first = index_references(small_refs, db, PLAIN)
    assert (first["embedded_new"], first["n_works"], first["n_artists"]) == (9, 9, 3)
    assert sum(encode_counter) == 9

    encode_counter.clear()
    again = index_references(small_refs, db, PLAIN)
    assert (again["embedded_new"], again["embedded_changed"], again["unchanged"]) == (0, 0, 9)
    assert sum(encode_counter) == 0  # nothing decoded or embedded

    artists = sorted(p for p in small_refs.iterdir())
    new = artists[0] / "new.png"
    Image.new("RGB", (48, 48), (200, 30, 30)).save(new)  # new file
    changed = artists[1] / "work-000.png"
    Image.new("RGB", (48, 48), (30, 200, 30)).save(changed)  # new content, same name
    touched = artists[1] / "work-001.png"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    (artists[2] / "work-002.png").unlink()  # removed
    encode_counter.clear()
    third = index_references(small_refs, db, PLAIN)
    assert third["embedded_new"] == 1 and third["embedded_changed"] == 1
    assert third["removed"] == 1 and third["unchanged"] == 7 and third["n_works"] == 9
    assert sum(encode_counter) == 2  # only the new and the changed file


def test_relabel_without_reembedding(tmp_path, encode_counter):
    Image.new("RGB", (32, 32), (1, 2, 3)).save(tmp_path / "a.png")
    Image.new("RGB", (32, 32), (9, 9, 9)).save(tmp_path / "b.png")
    manifest = tmp_path / "refs.csv"
    manifest.write_text("path,artist\na.png,x\nb.png,y\n")
    db = tmp_path / "db.sqlite"
    index_references(manifest, db, PLAIN)
    manifest.write_text("path,artist\na.png,z\nb.png,y\n")
    encode_counter.clear()
    result = index_references(manifest, db, PLAIN)
    assert result["relabelled"] == 1 and sum(encode_counter) == 0
    assert result["works_per_artist"] == {"y": 1, "z": 1}


def test_bad_files_are_skipped_and_dropped(tmp_path, small_refs):
    db = tmp_path / "db.sqlite"
    index_references(small_refs, db, PLAIN)
    victim = sorted(small_refs.glob("*/work-000.png"))[0]
    victim.write_bytes(victim.read_bytes()[:100])  # truncate an indexed file
    (small_refs / sorted(os.listdir(small_refs))[0] / "junk.webp").write_text("not an image")
    result = index_references(small_refs, db, PLAIN)
    reasons = {Path(s["path"]).name: s["reason"] for s in result["skipped"]}
    assert reasons["work-000.png"].startswith("corrupt or truncated")
    assert reasons["junk.webp"].startswith("not a readable image")
    assert result["removed"] == 1 and result["n_works"] == 8


def test_db_refuses_another_encoder(tmp_path, small_refs):
    db = tmp_path / "db.sqlite"
    index_references(small_refs, db, PLAIN)
    other = replace(encoder_info(StyleStatsEncoder()), spec="hf:/m", identity="hf/clip/abc")
    with StyleDB(db) as handle, pytest.raises(InputError) as info:
        handle.bind_encoder(other, StyleStatsEncoder().feature_names)
    assert "built with encoder stats" in info.value.what
    assert "--encoder stats" in info.value.fix


def test_db_of_an_older_encoder_version_is_refused(tmp_path, small_refs):
    db = tmp_path / "db.sqlite"
    index_references(small_refs, db, PLAIN)
    current = encoder_info(StyleStatsEncoder())
    older = replace(current, version="1", identity="style-stats/v1/side=160")
    with StyleDB(db) as handle, pytest.raises(InputError) as info:
        check_same_encoder(older, current, handle.path)
    assert f"version 1, this iclr25 computes version {current.version}" in info.value.what
    assert "new --db" in info.value.fix


def test_not_a_db_and_missing_db(tmp_path):
    fake = tmp_path / "fake.sqlite"
    fake.write_bytes(b"definitely not sqlite" * 100)
    with pytest.raises(InputError, match="not a style-check DB"):
        StyleDB(fake)
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(InputError, match="not a style-check DB"):
        StyleDB(other)
    with pytest.raises(InputError, match="no such DB"):
        StyleDB(tmp_path / "absent.sqlite")


def test_corrupt_embedding_rows_fail_loudly(tmp_path, small_refs):
    db = tmp_path / "db.sqlite"
    index_references(small_refs, db, PLAIN)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE works SET embedding = x'00000000' WHERE rowid = 1")
    with StyleDB(db) as handle, pytest.raises(RunFailure, match="dimension"):
        handle.load()


def test_db_moves_with_its_corpus(tmp_path, small_refs):
    project = tmp_path / "project"
    shutil.move(str(small_refs), str(project / "refs"))
    db = project / "index.sqlite"  # DB next to the corpus: paths stored relative
    index_references(project / "refs", db, PLAIN)
    moved = tmp_path / "moved"
    shutil.move(str(project), str(moved))
    with StyleDB(moved / "index.sqlite") as handle:
        ref = handle.load()
    assert all(Path(p).exists() and str(p).startswith(str(moved)) for p in ref.paths)


def test_every_kind_of_real_image_is_embedded_or_skipped_with_a_reason(tmp_path):
    """Photos and paintings as they come: odd sizes, grey, 16-bit, CMYK, palette with
    transparency, EXIF-rotated, animated; and broken files. None crashes the index."""
    import numpy as np

    rng = np.random.default_rng(0)
    base = Image.fromarray(rng.integers(0, 255, (30, 50, 3), dtype=np.uint8))
    ok, bad = tmp_path / "refs" / "ok", tmp_path / "refs" / "bad"
    ok.mkdir(parents=True)
    bad.mkdir()
    base.resize((1500, 37)).save(ok / "panorama.png")  # extreme aspect ratio
    base.resize((3, 2)).save(ok / "tiny.png")
    base.resize((1100, 1400)).save(ok / "photo.jpg", quality=80)  # decoded at scale 1/2
    base.convert("L").save(ok / "grey.png")
    Image.fromarray(np.asarray(base.convert("L"), dtype=np.uint16) * 257).save(ok / "deep.png")
    base.convert("CMYK").save(ok / "press.jpg")
    base.convert("CMYK").save(ok / "press.tif")
    base.convert("P").save(ok / "palette.png", transparency=3)
    base.convert("RGBA").save(ok / "alpha.webp")
    exif = Image.Exif()
    exif[0x0112] = 8
    base.save(ok / "rotated.jpg", exif=exif.tobytes())
    frames = [base, base.rotate(90), base.rotate(180)]
    frames[0].save(ok / "anim.gif", save_all=True, append_images=frames[1:], loop=0)
    frames[0].save(ok / "anim.webp", save_all=True, append_images=frames[1:])
    base.save(ok / "plain.bmp")
    (bad / "empty.png").write_bytes(b"")
    (bad / "text.jpg").write_text("<html>not an image</html>")
    data = (ok / "photo.jpg").read_bytes()
    (bad / "truncated.jpg").write_bytes(data[: len(data) // 3])
    (bad / "notes.txt").write_text("x")
    base.save(bad / "fine.png")  # the artist needs one readable work

    # with the SSL encoder: every image mode goes through its squares too
    res = index_references(tmp_path / "refs", tmp_path / "db.sqlite", IndexConfig())
    skipped = {Path(s["path"]).name: s["reason"] for s in res["skipped"]}
    assert set(skipped) == {"empty.png", "text.jpg", "truncated.jpg", "notes.txt"}
    assert skipped["empty.png"] == "empty file"
    assert skipped["text.jpg"].startswith("not a readable image")
    assert skipped["truncated.jpg"].startswith("corrupt or truncated")
    assert skipped["notes.txt"] == "not an image file type"
    assert res["works_per_artist"] == {"ok": 13, "bad": 1}
    with StyleDB(tmp_path / "db.sqlite") as handle:
        ref = handle.load()
        sizes = dict(
            handle.conn.execute("SELECT path, width || 'x' || height FROM works").fetchall()
        )
    assert np.isfinite(ref.embeddings).all() and np.isfinite(ref.attributes).all()
    assert sizes["refs/ok/photo.jpg"] == "1100x1400"  # the file's size, not the decoded one
    assert sizes["refs/ok/rotated.jpg"] == "30x50"  # upright after EXIF orientation 8


def test_no_readable_image_is_an_input_error_and_leaves_no_db(tmp_path):
    folder = tmp_path / "refs" / "artist"
    folder.mkdir(parents=True)
    (folder / "a.png").write_bytes(b"")
    (folder / "b.webp").write_text("nope")
    db = tmp_path / "db.sqlite"
    with pytest.raises(InputError) as info:
        index_references(tmp_path / "refs", db, IndexConfig())
    assert "no readable image, 2 file(s) skipped" in info.value.what
    assert "a.png: empty file" in info.value.what and not db.exists()


def test_the_ssl_encoder_is_trained_once_and_kept(tmp_path, small_refs):
    """A new DB trains the CNN and stores it; a later run embeds new works with the same
    weights; asking for the other setting than the DB has is refused."""
    from iclr25.errors import UsageError

    db = tmp_path / "db.sqlite"
    first = index_references(small_refs, db, IndexConfig())
    identity = first["second_encoder"]["identity"]
    assert identity.startswith("ssl-cnn/") and first["second_encoder"]["dim"] == 128
    artist = sorted(small_refs.iterdir())[0]
    Image.new("RGB", (48, 48), (10, 200, 90)).save(artist / "extra.png")
    again = index_references(small_refs, db, IndexConfig())
    assert again["second_encoder"]["identity"] == identity and again["embedded_new"] == 1
    with StyleDB(db) as handle:
        ref = handle.load()
    assert ref.second_embeddings.shape == (10, 128) and ref.second_weights
    with pytest.raises(UsageError, match="holds SSL-CNN embeddings"):
        index_references(small_refs, db, IndexConfig(ssl=False))
    plain = tmp_path / "plain.sqlite"
    index_references(small_refs, plain, IndexConfig(ssl=False))
    with pytest.raises(UsageError, match="made without the SSL encoder"):
        index_references(small_refs, plain, IndexConfig(ssl=True))


def test_an_interrupted_first_index_trains_the_ssl_encoder_next_time(tmp_path, small_refs):
    from iclr25.core.style_check import index as index_module

    db = tmp_path / "db.sqlite"
    original = index_module._train_second

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    index_module._train_second = interrupted
    try:
        with pytest.raises(KeyboardInterrupt):
            index_references(small_refs, db, IndexConfig())
    finally:
        index_module._train_second = original
    with StyleDB(db) as handle:  # the embedded works are kept, the encoder is pending
        assert handle.count() == 9 and handle.second_encoder() is None
        assert handle.meta("ssl_pending") == "1"
    done = index_references(small_refs, db, IndexConfig())
    assert done["second_encoder"] is not None and done["n_works"] == 9


@pytest.mark.slow  # > 10 s: run by `make test-slow`
def test_sharded_index_gives_the_same_db_with_two_workers(tmp_path, small_refs):
    from iclr25.parallel import Execution

    one, two = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    index_references(small_refs, one, IndexConfig(batch_size=2))
    index_references(
        small_refs, two, IndexConfig(batch_size=2), execution=Execution(workers=2, cache=False)
    )
    with StyleDB(one) as a, StyleDB(two) as b:
        ra, rb = a.load(), b.load()
    np.testing.assert_array_equal(ra.embeddings, rb.embeddings)
    np.testing.assert_array_equal(ra.attributes, rb.attributes)
    np.testing.assert_array_equal(ra.second_embeddings, rb.second_embeddings)
    assert ra.second_encoder.identity == rb.second_encoder.identity

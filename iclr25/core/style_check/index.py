"""Incremental indexing of a reference corpus into the embedding DB.

``index_references`` lists REFS, compares every file with the DB and embeds only what
is new or changed:

- unchanged: same size and modification time as recorded (no read at all);
- touched: size or time differ but the sha256 of the content is the recorded one (only
  the recorded state is updated; a changed artist label is updated too);
- new or changed content: decoded, embedded, stored (one transaction per batch);
- gone from REFS, or now unreadable: removed from the DB.

Unreadable, corrupt, truncated, oversized (decompression-bomb) and non-image files are
skipped and listed with their reason. Besides the encoder's embedding, every work gets
its style statistics (``encoders/stats.py``) as TagMatch attributes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25.core.style_check.corpus import WorkRef, list_references
from iclr25.core.style_check.encoders import encoder_info, load_encoder, parse_spec
from iclr25.core.style_check.encoders.stats import StyleStatsEncoder
from iclr25.core.style_check.imageio import DEFAULT_MAX_PIXELS, ImageSkip, file_sha256, load_image
from iclr25.core.style_check.store import StoredWork, StyleDB


@dataclass(frozen=True)
class IndexConfig:
    encoder: str = "stats"  # "stats" or "hf:PATH"
    batch_size: int = 32  # images decoded and embedded per step (and per DB transaction)
    max_pixels: int = DEFAULT_MAX_PIXELS  # larger images are skipped as decompression bombs


@dataclass
class _Plan:
    embed: list[WorkRef]
    touched: list[tuple[str, str, int, int]]  # (path, artist, size, mtime)
    unchanged: int
    relabelled: int


def _plan(works: list[WorkRef], states: dict) -> _Plan:
    plan = _Plan([], [], 0, 0)
    for work in works:
        key = str(work.path)
        stat = work.path.stat()
        old = states.get(key)
        if old is not None and (old[0], old[1]) == (stat.st_size, stat.st_mtime_ns):
            if old[3] != work.artist:
                plan.touched.append((key, work.artist, stat.st_size, stat.st_mtime_ns))
                plan.relabelled += 1
            else:
                plan.unchanged += 1
        elif old is not None and file_sha256(work.path) == old[2]:
            plan.touched.append((key, work.artist, stat.st_size, stat.st_mtime_ns))
            plan.relabelled += int(old[3] != work.artist)
        else:
            plan.embed.append(work)
    return plan


def attribute_encoder(encoder) -> StyleStatsEncoder:
    """The style-statistics encoder that provides the TagMatch attributes."""
    return encoder if isinstance(encoder, StyleStatsEncoder) else StyleStatsEncoder()


def embed_batch(encoder, works: list[WorkRef], max_pixels: int):
    """Decode and embed ``works``: (loaded works, embeddings, attributes, skips)."""
    loaded, skips = [], []
    for work in works:
        try:
            loaded.append((work, load_image(work.path, max_pixels)))
        except ImageSkip as exc:
            skips.append({"path": str(work.path), "reason": str(exc)})
    images = [item.image for _, item in loaded]
    if not images:
        return loaded, np.empty((0, 0), np.float32), np.empty((0, 0), np.float32), skips
    embeddings = encoder.encode(images)  # (b, d)
    attr_encoder = attribute_encoder(encoder)
    attributes = embeddings if attr_encoder is encoder else attr_encoder.encode(images)  # (b, a)
    return loaded, embeddings, attributes, skips


def _store_batch(db: StyleDB, encoder, batch: list[WorkRef], max_pixels: int) -> list[dict]:
    loaded, embeddings, attributes, skips = embed_batch(encoder, batch, max_pixels)
    rows = []
    for (work, item), emb, att in zip(loaded, embeddings, attributes, strict=True):
        stat = work.path.stat()
        rows.append(
            StoredWork(
                str(work.path),
                work.artist,
                stat.st_size,
                stat.st_mtime_ns,
                item.sha256,
                item.width,
                item.height,
                emb,
                att,
            )
        )
    db.upsert(rows)
    db.delete([s["path"] for s in skips])  # a file that became unreadable leaves the DB
    return skips


def index_references(
    refs: Path,
    db_path: Path,
    config: IndexConfig,
    device: str = "cpu",
    on_progress: Callable[..., None] | None = None,
) -> dict:
    """Bring the DB at ``db_path`` up to date with REFS; return what was done."""
    parse_spec(config.encoder)  # a bad --encoder fails before any listing
    listing = list_references(refs)
    encoder = load_encoder(config.encoder, device, config.batch_size)
    info = encoder_info(encoder)
    with StyleDB(db_path, create=True) as db:
        db.bind_encoder(info, attribute_encoder(encoder).feature_names)
        states = db.file_states()
        listed = {str(w.path) for w in listing.works}
        removed = sorted(set(states) - listed)
        db.delete(removed)
        plan = _plan(listing.works, states)
        db.update_states(plan.touched)
        skipped = list(listing.skipped)
        if on_progress is not None:
            on_progress(0, of=len(plan.embed))  # the bar's total is unknown until here
        for start in range(0, len(plan.embed), config.batch_size):
            batch = plan.embed[start : start + config.batch_size]
            skipped += _store_batch(db, encoder, batch, config.max_pixels)
            if on_progress is not None:
                on_progress(len(batch))
        artists = Counter(db.conn.execute("SELECT artist FROM works").fetchall())
        n_works = db.count()
    new_paths = {str(w.path) for w in plan.embed} - set(states)
    bad = {s["path"] for s in skipped}
    return {
        "db": str(db_path),
        "encoder": {"spec": info.spec, "identity": info.identity, "dim": info.dim},
        "listed": len(listing.works),
        "embedded_new": len(new_paths - bad),
        "embedded_changed": len({str(w.path) for w in plan.embed} - new_paths - bad),
        "unchanged": plan.unchanged + len(plan.touched) - plan.relabelled,
        "relabelled": plan.relabelled,
        "removed": len(removed) + len(bad & set(states)),
        "skipped": skipped,
        "empty_artists": listing.empty_artists,
        "n_works": n_works,
        "n_artists": len(artists),
        "works_per_artist": {name[0]: count for name, count in sorted(artists.items())},
    }

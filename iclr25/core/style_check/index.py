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

**Second encoder.** When ``ssl`` is on (the default for a new DB), every work is also
kept as a small square (``SSLConfig.size_px``) and, once the corpus is embedded, the
self-supervised CNN (``ssl.py``) is trained on those squares and embeds them; its
weights go into the DB (an interrupted first index is marked ``ssl_pending`` and
re-embeds its works the next time). Later runs embed new works with the stored CNN.

**Shards.** Works to embed are cut into shards of ``batch_size``; each shard is one task
of the execution layer (``iclr25/parallel.py``: in-process, ``--workers N`` local
processes, or Dask), a pure function of its file list, so the embeddings are the same
whatever the backend. Shards are run in groups of 8 per worker and each group is stored
in one transaction: Ctrl-C keeps the finished groups. (The DB is the resume store, so
the task cache is not used.)

**Nothing readable.** A run that ends with no work in the DB is an input error: a DB it
created is removed, and the message lists the skipped files.
"""

from __future__ import annotations

import base64
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from iclr25.core.style_check.corpus import WorkRef, list_references
from iclr25.core.style_check.encoders import encoder_info, load_encoder, parse_spec
from iclr25.core.style_check.encoders.stats import StyleStatsEncoder
from iclr25.core.style_check.imageio import DEFAULT_MAX_PIXELS, ImageSkip, file_sha256, load_image
from iclr25.core.style_check.ssl import SSLConfig
from iclr25.core.style_check.store import StoredWork, StyleDB
from iclr25.errors import InputError, UsageError
from iclr25.parallel import Execution, Task, run_tasks

SHARDS_PER_WORKER = 8  # shards per worker in one stored group


@dataclass(frozen=True)
class IndexConfig:
    encoder: str = "stats"  # "stats" or "hf:PATH"
    batch_size: int = 32  # images decoded and embedded per shard (and per progress step)
    max_pixels: int = DEFAULT_MAX_PIXELS  # larger images are skipped as decompression bombs
    ssl: bool | None = None  # train the SSL CNN; None: yes for a new DB, else as the DB has it
    ssl_config: SSLConfig = field(default_factory=SSLConfig)
    ssl_seed: int = 0


@dataclass
class _Plan:
    embed: list[WorkRef]
    touched: list[tuple[str, str, int, int]]  # (path, artist, size, mtime)
    unchanged: int
    relabelled: int


def _plan(works: list[WorkRef], states: dict, redo: bool = False) -> _Plan:
    plan = _Plan([], [], 0, 0)
    for work in works:
        key = str(work.path)
        stat = work.path.stat()
        old = None if redo else states.get(key)
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


# -- shards (tasks of the execution layer) ------------------------------------------------
@dataclass(frozen=True)
class ShardConfig:
    encoder: str  # the encoder spec
    device: str
    paths: tuple[str, ...]
    max_pixels: int
    square_px: int  # > 0: also return each work as a square of this side (for the SSL CNN)


_ENCODERS: dict[tuple[str, str], object] = {}  # per process: encoders already built


def _encoder(spec: str, device: str):
    key = (spec, device)
    if key not in _ENCODERS:
        _ENCODERS[key] = load_encoder(spec, device)
    return _ENCODERS[key]


def embed_shard(config: ShardConfig, seed: int) -> dict:
    """Decode and embed one shard; JSON-able (embeddings as float lists, squares base64)."""
    from iclr25.core.style_check.encoders.cnn import as_array
    from iclr25.threads import small_problem_threads

    works = [WorkRef(Path(p), None) for p in config.paths]
    with small_problem_threads(0):  # one thread: the same floats in every process
        loaded, emb, att, skips = embed_batch(
            _encoder(config.encoder, config.device), works, config.max_pixels
        )
    same = emb is att
    squares = (
        as_array([item.image for _, item in loaded], config.square_px) if config.square_px else None
    )
    return {
        "loaded": [
            {"path": str(w.path), "sha256": i.sha256, "width": i.width, "height": i.height}
            for w, i in loaded
        ],
        "embeddings": np.asarray(emb, np.float32).tolist(),
        "attributes": None if same else np.asarray(att, np.float32).tolist(),
        "squares": None if squares is None else base64.b64encode(squares.tobytes()).decode(),
        "skips": skips,
    }


def _shard_arrays(result: dict, square_px: int):
    emb = np.asarray(result["embeddings"], np.float32)
    att = emb if result["attributes"] is None else np.asarray(result["attributes"], np.float32)
    squares = None
    if result["squares"] is not None:
        raw = np.frombuffer(base64.b64decode(result["squares"]), np.uint8)
        squares = raw.reshape(-1, square_px, square_px, 3)  # (b, S, S, 3)
    return emb, att, squares


# -- the second encoder -------------------------------------------------------------------
@dataclass
class _Second:
    """The SSL state of this run: an encoder to embed with, or squares to train on."""

    encoder: object | None  # SSLCNNEncoder from the DB
    pending: bool  # train at the end of this run (new DB, or an interrupted first run)
    square_px: int
    squares: dict[str, np.ndarray] = field(default_factory=dict)  # path -> (S, S, 3)


def _second(db: StyleDB, config: IndexConfig, new_db: bool) -> _Second | None:
    from iclr25.core.style_check.encoders.cnn import SSLCNNEncoder

    stored, pending = db.second_encoder(), db.meta("ssl_pending") == "1"
    has = stored is not None or pending
    if config.ssl is True and not has and not new_db:
        raise UsageError(
            f"{db.path} was made without the SSL encoder (--no-ssl or an older iclr25)",
            "index into a new --db to have both encoders, or drop --ssl",
        )
    if config.ssl is False and has:
        raise UsageError(
            f"{db.path} holds SSL-CNN embeddings; --no-ssl would leave new works without them",
            "drop --no-ssl, or index into a new --db",
        )
    if not has and not (new_db and config.ssl is not False):
        return None
    if stored is not None:
        encoder = SSLCNNEncoder(db.second_weights())
        return _Second(encoder, False, encoder.config.size_px)
    if new_db:
        db.set_meta("ssl_pending", "1")
    return _Second(None, True, config.ssl_config.size_px)


def _ssl_steps(config: SSLConfig, n_works: int) -> int:
    """About 10 epochs, between 100 updates and ``config.steps``."""
    epochs = 10 * math.ceil(n_works / config.batch_size)
    return int(min(config.steps, max(100, epochs)))


def _train_second(db: StyleDB, second: _Second, config: IndexConfig, on_progress) -> None:
    """Train the CNN on every work's square, embed them, store weights and embeddings."""
    from dataclasses import replace

    from PIL import Image

    from iclr25.core.style_check.encoders.cnn import train_encoder

    paths = sorted(second.squares)
    if len(paths) < 2:  # nothing to contrast: the DB stays without the SSL encoder
        db.set_meta("ssl_pending", "0")
        return
    images = [Image.fromarray(second.squares[p]) for p in paths]
    cfg = replace(config.ssl_config, size_px=second.square_px)
    cfg = replace(cfg, steps=_ssl_steps(cfg, len(images)))
    if on_progress is not None:
        on_progress(0, of=cfg.steps, stage="training the SSL encoder")
    step = (lambda n, loss: on_progress(1)) if on_progress is not None else None
    encoder = train_encoder(images, cfg, config.ssl_seed, step)
    emb = encoder.encode(images)  # (n, 128)
    db.store_second(dict(zip(paths, emb, strict=True)), encoder_info(encoder), encoder.weights)


# -- storing --------------------------------------------------------------------------------
def _store(db: StyleDB, works: dict[str, WorkRef], result: dict, second: _Second | None):
    emb, att, squares = _shard_arrays(result, second.square_px if second else 0)
    second_emb = None
    if second is not None and second.encoder is not None and squares is not None and len(emb):
        from iclr25.core.style_check.ssl import embed

        second_emb = embed(second.encoder.model, squares)  # (b, 128)
    rows = []
    for i, item in enumerate(result["loaded"]):
        work = works[item["path"]]
        stat = work.path.stat()
        rows.append(
            StoredWork(
                str(work.path),
                work.artist,
                stat.st_size,
                stat.st_mtime_ns,
                item["sha256"],
                item["width"],
                item["height"],
                emb[i],
                att[i],
                None if second_emb is None else second_emb[i],
            )
        )
        if second is not None and second.pending and squares is not None:
            second.squares[str(work.path)] = squares[i]
    db.upsert(rows)
    db.delete([s["path"] for s in result["skips"]])  # a file that became unreadable leaves the DB
    return result["skips"]


def _embed_all(db, plan, config, device, second, execution, on_progress) -> list[dict]:
    works = {str(w.path): w for w in plan.embed}
    paths = [str(w.path) for w in plan.embed]
    shards = [
        ShardConfig(
            config.encoder,
            device,
            tuple(paths[i : i + config.batch_size]),
            config.max_pixels,
            second.square_px if second else 0,
        )
        for i in range(0, len(paths), config.batch_size)
    ]
    group = SHARDS_PER_WORKER * max(1, execution.workers)
    skipped = []
    for start in range(0, len(shards), group):
        tasks = [
            Task(embed_shard, s, 0, label=f"shard {start + i}")
            for i, s in enumerate(shards[start : start + group])
        ]
        outcome = run_tasks(tasks, execution, command="style-check index")
        for task, result in zip(tasks, outcome.results, strict=True):
            skipped += _store(db, works, result, second)
            if on_progress is not None:
                on_progress(len(task.config.paths))
    return skipped


def _remove_if_empty(db_path: Path) -> None:
    try:
        with StyleDB(db_path) as db:
            empty = db.count() == 0
    except Exception:  # noqa: BLE001 - a DB that cannot even be read is not worth keeping
        empty = True
    if empty:
        db_path.unlink(missing_ok=True)


def _nothing_readable(refs: Path, skipped: list[dict]) -> InputError:
    shown = "; ".join(f"{Path(s['path']).name}: {s['reason']}" for s in skipped[:3])
    more = f" (and {len(skipped) - 3} more)" if len(skipped) > 3 else ""
    return InputError(
        f"{refs}: no readable image, {len(skipped)} file(s) skipped — {shown}{more}",
        "fix or replace the files (jpg, png, webp, ...); nothing was indexed",
    )


def index_references(
    refs: Path,
    db_path: Path,
    config: IndexConfig,
    device: str = "cpu",
    on_progress: Callable[..., None] | None = None,
    execution: Execution | None = None,
) -> dict:
    """Bring the DB at ``db_path`` up to date with REFS; return what was done."""
    parse_spec(config.encoder)  # a bad --encoder fails before any listing
    listing = list_references(refs)
    db_path = Path(db_path).expanduser()
    new_db = not db_path.exists() or db_path.stat().st_size == 0
    execution = Execution(workers=1, cache=False) if execution is None else execution
    encoder = load_encoder(config.encoder, device, config.batch_size)
    _ENCODERS[(config.encoder, device)] = encoder
    info = encoder_info(encoder)
    try:
        with StyleDB(db_path, create=True) as db:
            report = _index_into(
                db, listing, config, device, execution, on_progress, info, encoder, new_db
            )
    except BaseException:
        if new_db:  # Ctrl-C keeps finished groups; a new DB with nothing in it goes
            _remove_if_empty(db_path)
        raise
    if report["n_works"] == 0:
        if new_db:
            db_path.unlink(missing_ok=True)
        raise _nothing_readable(Path(refs), report["skipped"])
    return report


def _index_into(db, listing, config, device, execution, on_progress, info, encoder, new_db):
    db.bind_encoder(info, attribute_encoder(encoder).feature_names)
    second = _second(db, config, new_db)
    states = db.file_states()
    listed = {str(w.path) for w in listing.works}
    removed = sorted(set(states) - listed)
    db.delete(removed)
    plan = _plan(listing.works, states, redo=bool(second and second.pending))
    db.update_states(plan.touched)
    if on_progress is not None:
        on_progress(0, of=len(plan.embed))  # the bar's total is unknown until here
    skipped = list(listing.skipped)
    skipped += _embed_all(db, plan, config, device, second, execution, on_progress)
    if second is not None and second.pending:
        _train_second(db, second, config, on_progress)
    artists = Counter(db.conn.execute("SELECT artist FROM works").fetchall())
    new_paths = {str(w.path) for w in plan.embed} - set(states)
    bad = {s["path"] for s in skipped}
    return {
        "db": str(db.path),
        "encoder": {"spec": info.spec, "identity": info.identity, "dim": info.dim},
        "second_encoder": _second_summary(db),
        "listed": len(listing.works),
        "embedded_new": len(new_paths - bad),
        "embedded_changed": len({str(w.path) for w in plan.embed} - new_paths - bad),
        "unchanged": plan.unchanged + len(plan.touched) - plan.relabelled,
        "relabelled": plan.relabelled,
        "removed": len(removed) + len(bad & set(states)),
        "skipped": skipped,
        "empty_artists": listing.empty_artists,
        "n_works": db.count(),
        "n_artists": len(artists),
        "works_per_artist": {name[0]: count for name, count in sorted(artists.items())},
    }


def _second_summary(db: StyleDB) -> dict | None:
    info = db.second_encoder()
    return None if info is None else {"spec": info.spec, "identity": info.identity, "dim": info.dim}

"""The embedding DB: one SQLite file (stdlib), transactional, incremental.

Tables::

    meta(key TEXT PRIMARY KEY, value TEXT)          format, schema, encoder (JSON), ...
    works(path TEXT PRIMARY KEY, artist TEXT, size_bytes INT, mtime_ns INT,
          sha256 TEXT, width INT, height INT,
          embedding BLOB,      -- float32 little-endian, encoder.dim values
          attributes BLOB)     -- float32, the style statistics (TagMatch attributes)
    second(path TEXT PRIMARY KEY, embedding BLOB)   -- the second encoder's embeddings
    blobs(key TEXT PRIMARY KEY, value BLOB)         -- the second encoder's weights

The *second encoder* is the self-supervised CNN (``encoders/cnn.py``) that ``index``
trains on the corpus when it fills a new DB (meta ``second_encoder``, weights in
``blobs``); DBs made with ``--no-ssl`` or by an older iclr25 have none.

Paths of works inside the DB's folder are stored relative to it, so a folder holding
both the corpus and its DB can be moved. Every batch of new embeddings is committed in
one transaction, so an interrupted ``index`` keeps what it finished and never leaves a
half-written row. The DB records
the encoder (spec, name, version, identity, dimension, feature names) at creation and
refuses embeddings from any other encoder or of another dimension.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iclr25 import __version__
from iclr25.core.style_check.encoders import EncoderInfo
from iclr25.errors import InputError, RunFailure

FORMAT = "iclr25-style-check-db"
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS works (
    path TEXT PRIMARY KEY, artist TEXT NOT NULL, size_bytes INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL, width INTEGER, height INTEGER,
    embedding BLOB NOT NULL, attributes BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS second (path TEXT PRIMARY KEY, embedding BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS blobs (key TEXT PRIMARY KEY, value BLOB NOT NULL);
"""


@dataclass
class StoredWork:
    path: str
    artist: str
    size_bytes: int
    mtime_ns: int
    sha256: str
    width: int
    height: int
    embedding: np.ndarray  # (d,) float32
    attributes: np.ndarray  # (a,) float32
    second: np.ndarray | None = None  # (d2,) float32, the second encoder's embedding


@dataclass
class ReferenceSet:
    """Everything downstream needs from the DB, as arrays in path order."""

    paths: list[str]
    artists: np.ndarray  # (n,) str
    embeddings: np.ndarray  # (n, d) float32
    attributes: np.ndarray  # (n, a) float32
    encoder: EncoderInfo
    attribute_names: list[str]
    second_encoder: EncoderInfo | None = None
    second_embeddings: np.ndarray | None = None  # (n, d2) float32
    second_weights: bytes | None = None

    @property
    def artist_names(self) -> list[str]:
        return sorted(set(self.artists.tolist()))


def _blob(vector: np.ndarray) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


class StyleDB:
    """A handle on the DB file; use as a context manager."""

    def __init__(self, path: Path, create: bool = False) -> None:
        self.path = Path(path).expanduser()
        if self.path.is_dir():
            raise InputError(
                f"{self.path}: is a folder", "pass a file path for --db, e.g. refs.sqlite"
            )
        if not self.path.exists() and not create:
            raise InputError(
                f"{self.path}: no such DB", "build it first: iclr25 style-check index REFS --db DB"
            )
        existed = self.path.exists() and self.path.stat().st_size > 0
        if self.path.exists() and not existed and not create:  # never write when reading
            raise InputError(
                f"{self.path}: is an empty file, not a style-check DB",
                "build it first: iclr25 style-check index REFS --db DB",
            )
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(self.path)
            if existed:
                self._check_format()
            else:
                self.conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(
                f"{self.path}: not a style-check DB ({exc})",
                "pass a DB made by 'iclr25 style-check index', or a new file name",
            ) from None

    def _check_format(self) -> None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key='format'").fetchone()
        except sqlite3.DatabaseError:
            row = None
        if row is None or row[0] != FORMAT:
            self.conn.close()
            raise InputError(
                f"{self.path}: exists but is not a style-check DB",
                "pass a DB made by 'iclr25 style-check index', or a new file name",
            )

    def __enter__(self) -> StyleDB:
        return self

    def __exit__(self, *exc) -> None:
        self.conn.close()

    # -- encoder ------------------------------------------------------------------------
    def encoder(self) -> EncoderInfo | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key='encoder'").fetchone()
        return EncoderInfo(**json.loads(row[0])) if row else None

    def _has_table(self, name: str) -> bool:
        query = "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?"
        return self.conn.execute(query, (name,)).fetchone() is not None

    def second_encoder(self) -> EncoderInfo | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key='second_encoder'").fetchone()
        return EncoderInfo(**json.loads(row[0])) if row and self._has_table("second") else None

    def second_weights(self) -> bytes | None:
        if not self._has_table("blobs"):
            return None
        row = self.conn.execute("SELECT value FROM blobs WHERE key='second_weights'").fetchone()
        return bytes(row[0]) if row else None

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def store_second(self, embeddings: dict, info: EncoderInfo, weights: bytes) -> None:
        """The second encoder, its weights and every work's embedding, in one transaction
        (which also clears ``ssl_pending``)."""
        rows = [(self._stored(p), _blob(v)) for p, v in embeddings.items()]
        with self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO second VALUES (?,?)", rows)
            self.conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('second_encoder', ?)",
                (json.dumps(info.as_dict()),),
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO blobs VALUES ('second_weights', ?)", (weights,)
            )
            self.conn.execute("DELETE FROM meta WHERE key='ssl_pending'")

    def attribute_names(self) -> list[str]:
        row = self.conn.execute("SELECT value FROM meta WHERE key='attribute_names'").fetchone()
        return json.loads(row[0]) if row else []

    def bind_encoder(self, info: EncoderInfo, attribute_names: list[str]) -> None:
        """Record ``info`` in a new DB; in an existing one, refuse a different encoder."""
        stored = self.encoder()
        if stored is None:
            with self.conn:
                rows = [
                    ("format", FORMAT),
                    ("schema_version", SCHEMA_VERSION),
                    ("created_by", f"iclr25 {__version__}"),
                    ("encoder", json.dumps(info.as_dict())),
                    ("attribute_names", json.dumps(list(attribute_names))),
                ]
                self.conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows)
            return
        check_same_encoder(stored, info, self.path)
        if self.attribute_names() != list(attribute_names):
            raise InputError(
                f"{self.path}: made by another version of the style statistics",
                "index into a new --db",
            )

    # -- paths ----------------------------------------------------------------------------
    def _stored(self, path: str) -> str:
        """Relative to the DB's folder when inside it, else absolute."""
        base = self.path.parent.resolve()
        try:
            return Path(path).relative_to(base).as_posix()
        except ValueError:
            return str(path)

    def _absolute(self, stored: str) -> str:
        path = Path(stored)
        return str(path if path.is_absolute() else self.path.parent.resolve() / path)

    # -- works ----------------------------------------------------------------------------
    def file_states(self) -> dict[str, tuple[int, int, str, str]]:
        """absolute path -> (size_bytes, mtime_ns, sha256, artist)."""
        rows = self.conn.execute("SELECT path, size_bytes, mtime_ns, sha256, artist FROM works")
        return {self._absolute(r[0]): (r[1], r[2], r[3], r[4]) for r in rows}

    def upsert(self, works: list[StoredWork]) -> None:
        rows = [
            (
                self._stored(w.path),
                w.artist,
                w.size_bytes,
                w.mtime_ns,
                w.sha256,
                w.width,
                w.height,
                _blob(w.embedding),
                _blob(w.attributes),
            )
            for w in works
        ]
        second = [(self._stored(w.path), _blob(w.second)) for w in works if w.second is not None]
        with self.conn:
            self.conn.executemany("INSERT OR REPLACE INTO works VALUES (?,?,?,?,?,?,?,?,?)", rows)
            if second:
                self.conn.executemany("INSERT OR REPLACE INTO second VALUES (?,?)", second)

    def update_states(self, updates: list[tuple[str, str, int, int]]) -> None:
        """(path, artist, size_bytes, mtime_ns) for files whose content did not change."""
        with self.conn:
            self.conn.executemany(
                "UPDATE works SET artist=?, size_bytes=?, mtime_ns=? WHERE path=?",
                [(a, s, m, self._stored(p)) for p, a, s, m in updates],
            )

    def delete(self, paths: list[str]) -> None:
        with self.conn:
            rows = [(self._stored(p),) for p in paths]
            self.conn.executemany("DELETE FROM works WHERE path=?", rows)
            if self._has_table("second"):
                self.conn.executemany("DELETE FROM second WHERE path=?", rows)

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM works").fetchone()[0])

    def load(self) -> ReferenceSet:
        info = self.encoder()
        if info is None or self.count() == 0:
            raise InputError(
                f"{self.path}: the DB holds no works", "run 'iclr25 style-check index' first"
            )
        rows = self.conn.execute(
            "SELECT path, artist, embedding, attributes FROM works ORDER BY path"
        ).fetchall()
        names = self.attribute_names()
        emb = b"".join(r[2] for r in rows)
        att = b"".join(r[3] for r in rows)
        n = len(rows)
        if len(emb) != n * info.dim * 4 or len(att) != n * len(names) * 4:
            raise RunFailure(
                f"{self.path}: stored embeddings do not match the encoder's dimension {info.dim}",
                "rebuild the DB with 'iclr25 style-check index' into a new file",
            )
        return ReferenceSet(
            paths=[self._absolute(r[0]) for r in rows],
            artists=np.array([r[1] for r in rows], dtype=object).astype(str),
            embeddings=np.frombuffer(emb, dtype="<f4").reshape(n, info.dim).copy(),  # (n, d)
            attributes=np.frombuffer(att, dtype="<f4").reshape(n, len(names)).copy(),  # (n, a)
            encoder=info,
            attribute_names=names,
            **self._load_second([r[0] for r in rows]),
        )

    def _load_second(self, stored_paths: list[str]) -> dict:
        """The second encoder's embeddings in the works' order (none when any is missing)."""
        info = self.second_encoder()
        if info is None:
            return {}
        found = dict(self.conn.execute("SELECT path, embedding FROM second").fetchall())
        if any(p not in found for p in stored_paths):
            return {}
        blob = b"".join(found[p] for p in stored_paths)
        if len(blob) != len(stored_paths) * info.dim * 4:
            return {}
        emb = np.frombuffer(blob, dtype="<f4").reshape(len(stored_paths), info.dim).copy()
        return {
            "second_encoder": info,
            "second_embeddings": emb,  # (n, d2)
            "second_weights": self.second_weights(),
        }


def check_same_encoder(stored: EncoderInfo, info: EncoderInfo, where: Path) -> None:
    if stored.name == info.name and stored.version != info.version:
        raise InputError(
            f"{where}: embeddings made by {stored.name} version {stored.version}, this "
            f"iclr25 computes version {info.version}",
            "index the corpus into a new --db (the versions' numbers are not comparable)",
        )
    if stored.identity != info.identity:
        raise InputError(
            f"{where}: built with encoder {stored.spec} ({stored.identity}), "
            f"not {info.spec} ({info.identity})",
            f"pass --encoder {stored.spec} (same weights), or index into a new --db",
        )
    if stored.dim != info.dim:
        raise InputError(
            f"{where}: embeddings have dimension {stored.dim}, the encoder gives {info.dim}",
            "index into a new --db",
        )

"""Shared synthetic corpora for the style-check tests (built once per session).

Small on purpose: 6 artists x 20 works at 96 px for the references, 4 new works per
artist from another works seed ("generated in their style"), and 4 unseen artists
(another seed) x 4 works. The ``hard_corpus`` has 6 *hard* artists: pairs sharing
palette and stroke shape with closeness 1.0 (the same generator twice), 0.9 and 0.8.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest

from iclr25.core.style_check.index import IndexConfig, index_references
from iclr25.core.style_check.store import ReferenceSet, StyleDB
from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus

N_ARTISTS, PER_ARTIST, SIZE = 6, 20, 96  # 20 works: the typicality test can reject


@dataclass
class Corpus:
    root: Path
    refs: Path
    db: Path
    generated: Path
    unseen: Path
    ref: ReferenceSet


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Corpus:
    root = tmp_path_factory.mktemp("style-corpus")
    refs, generated, unseen = root / "refs", root / "generated", root / "unseen"
    write_corpus(refs, SyntheticConfig(n_artists=N_ARTISTS, per_artist=PER_ARTIST, size=SIZE))
    write_corpus(
        generated, SyntheticConfig(n_artists=N_ARTISTS, per_artist=4, works_seed=1, size=SIZE)
    )
    write_corpus(unseen, SyntheticConfig(n_artists=4, per_artist=4, seed=99, size=SIZE))
    db = root / "index.sqlite"
    index_references(refs, db, IndexConfig())
    with StyleDB(db) as handle:
        ref = handle.load()
    return Corpus(root, refs, db, generated, unseen, ref)


@dataclass
class HardCorpus:
    db: Path
    generated: Path
    pairs: list[tuple[str, str, float]]  # (leader, follower, closeness)


@pytest.fixture(scope="session")
def hard_corpus(tmp_path_factory) -> HardCorpus:
    root = tmp_path_factory.mktemp("style-hard")
    config = SyntheticConfig(n_artists=6, per_artist=PER_ARTIST, size=SIZE, difficulty="hard")
    artists = write_corpus(root / "refs", config)
    write_corpus(root / "generated", replace(config, per_artist=4, works_seed=1))
    index_references(root / "refs", root / "index.sqlite", IndexConfig())
    pairs = [(a["follows"], a["name"], a["closeness"]) for a in artists if a["follows"]]
    return HardCorpus(root / "index.sqlite", root / "generated", pairs)


def embed_folder(folder: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(embeddings, attributes, made_for) of every image under ``folder``."""
    from iclr25.core.style_check.corpus import list_generated
    from iclr25.core.style_check.encoders.stats import StyleStatsEncoder
    from iclr25.core.style_check.index import embed_batch

    works = list_generated(folder).works
    loaded, emb, att, skips = embed_batch(StyleStatsEncoder(), works, 10**8)
    assert not skips
    return emb, att, [w.artist for w, _ in loaded]

"""Shared synthetic corpora for the style-check tests (built once per session).

Small on purpose: 6 artists x 20 works at 96 px for the references, 4 new works per
artist from another works seed ("generated in their style"), and 4 unseen artists
(another seed) x 4 works.
"""

from __future__ import annotations

from dataclasses import dataclass
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


def embed_folder(folder: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(embeddings, attributes, made_for) of every image under ``folder``."""
    from iclr25.core.style_check.corpus import list_generated
    from iclr25.core.style_check.encoders.stats import StyleStatsEncoder
    from iclr25.core.style_check.index import embed_batch

    works = list_generated(folder).works
    loaded, emb, att, skips = embed_batch(StyleStatsEncoder(), works, 10**8)
    assert not skips
    return emb, att, [w.artist for w, _ in loaded]

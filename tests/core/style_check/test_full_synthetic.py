"""The full-size synthetic study of the issue: 20 artists x 30 works (slow)."""

from __future__ import annotations

import pytest

from iclr25.core.style_check.check import CheckConfig
from iclr25.core.style_check.deepmatch import DeepMatchConfig
from iclr25.core.style_check.index import IndexConfig, index_references
from iclr25.core.style_check.pipeline import CheckRequest, run_check, run_explain, run_unique
from iclr25.core.style_check.synthetic import SyntheticConfig, write_corpus
from iclr25.core.style_check.tagmatch import TagMatchConfig


@pytest.mark.slow
def test_twenty_artists_thirty_works(tmp_path):
    write_corpus(tmp_path / "refs", SyntheticConfig(n_artists=20, per_artist=30))
    write_corpus(tmp_path / "gen", SyntheticConfig(n_artists=20, per_artist=5, works_seed=7))
    write_corpus(tmp_path / "unseen", SyntheticConfig(n_artists=10, per_artist=5, seed=123))
    db = tmp_path / "db.sqlite"
    index_references(tmp_path / "refs", db, IndexConfig())

    unique = run_unique(db, DeepMatchConfig(), seed=0, device="cpu")
    assert unique["mean_heldout_accuracy"] >= 0.9 and unique["n_unique"] >= 18

    explained = run_explain(db, TagMatchConfig(), "auto", seed=0, device="cpu")
    assert explained["n_distinct_signatures"] >= 18
    assert explained["tag_top5_accuracy"] >= 0.8

    same = run_check(CheckRequest(tmp_path / "gen", db), CheckConfig(), 0, "cpu")
    assert same["attribution_accuracy"] >= 0.9 and same["style_at_risk_share"] >= 0.9
    unseen = run_check(CheckRequest(tmp_path / "unseen", db), CheckConfig(), 0, "cpu")
    assert unseen["attributed_share"] <= 0.1

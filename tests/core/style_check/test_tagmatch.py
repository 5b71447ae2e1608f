"""TagMatch: the greedy signature (known answer and minimality), signatures that
separate synthetic artists, and zero-shot tagging with a fake text tower."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from iclr25.core.style_check.pipeline import run_explain
from iclr25.core.style_check.tagmatch import (
    TagMatchConfig,
    greedy_signature,
    precision_recall,
    rank_of_truth,
)
from iclr25.core.style_check.tags import ZeroShotTagger


def test_greedy_signature_known_answer():
    # 4 works of the artist (rows 0-3) and 4 others. Tag 0: all of the artist's works and
    # others 4, 5 (precision 4/6); tag 1: the artist's works and others 6, 7 (4/6); tag 2:
    # works 0, 1 only (precision 1, recall 0.5). Alone no tag reaches 0.9 with recall >= 0.75;
    # {0, 1} matches exactly the artist's works: precision 1, recall 1.
    present = np.zeros((8, 3), dtype=bool)
    present[[0, 1, 2, 3, 4, 5], 0] = True
    present[[0, 1, 2, 3, 6, 7], 1] = True
    present[[0, 1], 2] = True
    mine = np.arange(8) < 4
    sig = greedy_signature(present, mine, TagMatchConfig(min_recall=0.75))
    assert sorted(sig.tags) == [0, 1]
    assert (sig.precision, sig.recall) == (1.0, 1.0)
    # with recall 0.5 allowed, the single tag 2 is precise enough: the smallest signature
    assert greedy_signature(present, mine, TagMatchConfig(min_recall=0.5)).tags == [2]


@given(
    arrays(bool, st.tuples(st.integers(6, 30), st.integers(1, 8))),
    st.integers(0, 2**16),
)
def test_signature_invariants(present, salt):
    mine = np.random.default_rng(salt).random(len(present)) < 0.4
    if not mine.any():
        mine[0] = True
    config = TagMatchConfig(max_tags=3, target_precision=0.9, min_recall=0.5)
    sig = greedy_signature(present, mine, config)
    assert len(sig.tags) <= config.max_tags and len(set(sig.tags)) == len(sig.tags)
    if sig.tags:
        assert sig.recall >= config.min_recall
        assert sig.precision > mine.mean() - 1e-12  # every chosen tag raised the precision
    goal = min(config.target_precision, sig.precision)
    for t in sig.tags if len(sig.tags) > 1 else []:  # minimal with respect to removal
        p, r = precision_recall(present, mine, [x for x in sig.tags if x != t])
        assert p < goal - 1e-12 or r < config.min_recall


def test_rank_of_truth_known_answer():
    from iclr25.core.style_check.tagmatch import Signature

    sigs = [Signature([0, 1], 1, 1), Signature([2], 1, 1)]
    present = np.array([[1, 1, 0], [1, 0, 1], [1, 0, 0]], dtype=bool)
    loglik = np.array([[0.0, -1.0], [0.0, -1.0], [-5.0, -1.0]])
    # image 0 matches all of sig 0: rank 0 for truth 0; image 1 matches sig 1 fully (1.0)
    # and half of sig 0: truth 0 is ranked second; image 2: 0.5 vs 0.0 -> truth 1 second
    assert rank_of_truth(present, np.array([0, 0, 1]), sigs, loglik).tolist() == [0, 1, 1]


def test_signatures_separate_synthetic_artists(corpus):
    res = run_explain(corpus.db, TagMatchConfig(folds=3), "auto", seed=0, device="cpu")
    assert res["tag_source"] == "attributes"
    assert res["n_distinct_signatures"] == res["n_artists"]
    assert all(r["signature"] for r in res["artists"])
    assert res["mean_heldout_precision"] >= 0.8
    assert res["tag_top1_accuracy"] >= 0.7  # chance is 1/6
    for row in res["artists"]:
        assert row["closest_artist"] != row["name"]
        assert set(row["signature_tags_also_common_for"]) == set(row["signature"])


class FakeTextTower:
    """encode_texts maps each prompt to a one-hot direction of its term."""

    def __init__(self, terms: list[str]):
        self.terms = terms

    def encode_texts(self, prompts: list[str]) -> np.ndarray:
        out = np.zeros((len(prompts), len(self.terms)))
        for i, prompt in enumerate(prompts):
            out[i, next(j for j, t in enumerate(self.terms) if t in prompt)] = 1.0
        return out


def test_zero_shot_tags_pick_the_closest_term():
    vocabulary = {
        "templates": ["a painting with {}.", "art: {}"],
        "categories": {"medium": ["oil", "ink"], "mood": ["calm", "storm"]},
    }
    tagger = ZeroShotTagger.build(FakeTextTower(["oil", "ink", "calm", "storm"]), vocabulary)
    images = np.array([[0.9, 0.1, 0.0, 0.5], [0.0, 1.0, 0.8, 0.1]])
    tm = tagger.transform(images)
    assert tm.tags_of(0) == ["medium:oil", "mood:storm"]
    assert tm.tags_of(1) == ["medium:ink", "mood:calm"]


def test_tag_signatures_of_identical_twins_are_not_precise(hard_corpus):
    res = run_explain(hard_corpus.db, TagMatchConfig(folds=3), "auto", seed=0, device="cpu")
    rows = {r["name"]: r for r in res["artists"]}
    leader, follower, _ = hard_corpus.pairs[0]  # the same generator under two names
    for me, twin in ((leader, follower), (follower, leader)):
        assert rows[me]["closest_artist"] == twin
        assert rows[me]["heldout_precision"] < 0.7
    assert res["tag_top1_accuracy"] < 0.8 and res["tag_top5_accuracy"] >= 0.9

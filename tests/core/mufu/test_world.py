"""The synthetic language world: determinism, distances, regular sound changes."""

from __future__ import annotations

from collections import Counter

import numpy as np

from iclr25.core.mufu.world import (
    DISTANT,
    LANGUAGES,
    SISTERS,
    TARGET,
    UNRELATED,
    World,
    WorldConfig,
    family_distance,
)


def test_world_is_a_function_of_its_config():
    a, b = World(WorldConfig(seed=3)), World(WorldConfig(seed=3))
    assert all(a.languages[x] == b.languages[x] for x in LANGUAGES)
    sa = a.sample_many(np.random.default_rng(1), 50)
    sb = b.sample_many(np.random.default_rng(1), 50)
    assert sa == sb and [a.render(s, "tel") for s in sa] == [b.render(s, "tel") for s in sb]
    assert World(WorldConfig(seed=4)).languages["tel"] != a.languages["tel"]


def test_distance_order_sisters_distant_unrelated():
    """sisters < distant relatives < unrelated = 1 (the role URIEL plays in the paper)."""
    sis = [family_distance(TARGET, x) for x in SISTERS]
    far = [family_distance(TARGET, x) for x in DISTANT]
    unrel = [family_distance(TARGET, x) for x in UNRELATED]
    assert max(sis) < min(far) and max(far) < min(unrel)
    assert unrel == [1.0] * len(UNRELATED)
    assert sis == [0.25, 0.25]  # 3 shared nodes of 4: 1 - 3/4
    assert World().nearest(TARGET, 3) == ["sam", "ser", "dov"]


def test_sentences_are_distinct_and_exclusions_hold():
    w = World()
    pool = w.sample_many(np.random.default_rng(0), 100)
    more = w.sample_many(np.random.default_rng(0), 100, exclude=pool)
    assert len(set(pool)) == 100 and not set(pool) & set(more)


def test_sound_changes_are_regular_between_sisters():
    """Cognates differ by a syllable mapping: one tel syllable per sam syllable, mostly."""
    w = World()
    tel, sam = w.languages["tel"].lexicon, w.languages["sam"].lexicon
    pairs = Counter()
    for a, b in zip(sam, tel, strict=True):
        if len(a) == len(b):  # same syllable count (lexical replacements may differ)
            pairs.update((a[i : i + 2], b[i : i + 2]) for i in range(0, len(a), 2))
    by_source: dict[str, Counter] = {}
    for (s, t), n in pairs.items():
        by_source.setdefault(s, Counter())[t] += n
    regular = sum(c.most_common(1)[0][1] for c in by_source.values())
    assert regular / sum(pairs.values()) > 0.8  # the rest: lemmas replaced on either edge (~12 %)
    changed = sum(n for (s, t), n in pairs.items() if s != t)
    assert changed / sum(pairs.values()) > 0.3  # sisters really differ


def test_zipfian_lexicon_leaves_rare_words_unseen():
    w = World()
    rng = np.random.default_rng(0)
    seen = Counter(lemma for s in w.sample_many(rng, 787) for lemma, _ in s.words)
    assert len(seen) < w.config.n_lemmas  # many lemmas never occur in 787 sentences
    assert seen.most_common(1)[0][1] > 20 * np.median(list(seen.values()))

"""The KV-cache prefix tree gives the naive scores (to 1e-4) with fewer forward passes."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from iclr25.core.icl_order.prefix_cache import PrefixTreeScorer, score_prefix_tree
from iclr25.core.icl_order.scoring import score_naive
from iclr25.core.icl_order.search import cluster_orderings
from iclr25.testing import assert_close

CANDIDATES = [5, 17, 2, 40, 33]


def test_exhaustive_tree_equals_naive(lm, varied):
    encoded = varied
    orders = list(itertools.permutations(CANDIDATES, 3))  # P(5, 3) = 60
    naive = score_naive(lm, encoded, orders, [50])
    scorer = PrefixTreeScorer(lm, encoded)
    cached = scorer.score(orders, [50])
    assert cached.shape == (60, 1, 4)
    assert_close(cached, naive, rtol=1e-4, atol=1e-4)
    # forwards with batch 16: the BOS root (1); its 5 children (1 chunk); their 20
    # children (chunks of 16 and 4); the leaves under those chunks (48 -> 3, 12 -> 1)
    assert scorer.forwards == 1 + 1 + 2 + 4


def test_several_queries_share_the_tree(lm, varied):
    encoded = varied
    orders = list(itertools.permutations(CANDIDATES[:4], 3))
    queries = [50, 51, 63]
    assert_close(
        score_prefix_tree(lm, encoded, orders, queries),
        score_naive(lm, encoded, orders, queries),
        rtol=1e-4,
        atol=1e-4,
    )


def test_no_special_prefix_and_odd_batch(lm, varied):
    encoded = varied
    no_bos = replace(encoded, prefix=[])
    small = replace(lm, batch_size=3)
    orders = cluster_orderings(CANDIDATES, 4) + [(2, 5, 17, 40), (2, 5, 17, 40)]  # a duplicate
    assert_close(
        score_prefix_tree(small, no_bos, orders, [7]),
        score_naive(lm, no_bos, orders, [7]),
        rtol=1e-4,
        atol=1e-4,
    )


def test_llama_rotary_positions(llama, varied, encoded):
    orders = list(itertools.permutations(CANDIDATES[:4], 4))
    for task in (varied, encoded):
        assert_close(
            score_prefix_tree(llama, task, orders, [9, 10]),
            score_naive(llama, task, orders, [9, 10]),
            rtol=1e-4,
            atol=1e-4,
        )


def test_zero_shot_and_empty_inputs(lm, encoded):
    assert_close(
        score_prefix_tree(lm, encoded, [()], [3, 4]),
        score_naive(lm, encoded, [()], [3, 4]),
        rtol=1e-4,
        atol=1e-4,
    )
    assert score_prefix_tree(lm, encoded, [], [3]).shape == (0, 1, 4)


def test_mixed_lengths_are_refused(lm, encoded):
    with pytest.raises(ValueError, match="different lengths"):
        score_prefix_tree(lm, encoded, [(1, 2), (1,)], [3])


def test_tree_runs_fewer_tokens_than_naive(lm, varied):
    encoded = varied
    """Count the tokens each path feeds the model (the speed-up's cause)."""
    orders = list(itertools.permutations(CANDIDATES, 4))
    fed = []
    original = lm.model.forward

    def counting(input_ids=None, **kwargs):
        fed.append(int(input_ids.numel()))
        return original(input_ids=input_ids, **kwargs)

    lm.model.forward = counting
    try:
        score_naive(lm, encoded, orders, [3])
        naive_tokens = sum(fed)
        fed.clear()
        score_prefix_tree(lm, encoded, orders, [3])
        tree_tokens = sum(fed)
    finally:
        del lm.model.forward
    assert tree_tokens < 0.6 * naive_tokens, (tree_tokens, naive_tokens)


def test_token_work_known_answer_and_engine_choice(lm):
    """Three demonstrations of 3 tokens, BOS, queries of 1 token. All P(3, 2) = 6
    orderings, one query: the tree runs BOS (1) + 3 first segments (9) + 6 leaves of the
    last segment and the query (6 * 4 = 24) = 34 tokens; naive runs 6 * (1 + 3 + 3 + 1)
    = 48. Two queries: the depth-2 prefixes are cached (6 * 3 more) and each (ordering,
    query) costs the query only: 1 + 9 + 18 + 12 = 40 vs 96."""
    from types import SimpleNamespace

    from iclr25.core.icl_order.prefix_cache import TREE_WORTH, token_work

    encoded = SimpleNamespace(prefix=[2], demos=[[7, 8, 9]] * 3, queries=[[1], [1]])
    orders = list(itertools.permutations(range(3), 2))
    assert token_work(encoded, orders, [0]) == (34, 48)
    assert token_work(encoded, orders, [0, 1]) == (40, 96)
    assert token_work(encoded, [], [0]) == (0, 0)
    assert TREE_WORTH == 0.5  # 34/48 -> naive; 40/96 -> the tree


def test_engine_choice_gives_the_naive_scores(lm, varied):
    from iclr25.core.icl_order.prefix_cache import score_organisations

    for orders in (list(itertools.permutations(CANDIDATES, 3)), cluster_orderings(CANDIDATES, 3)):
        naive = score_naive(lm, varied, orders, [50, 51])
        assert_close(score_organisations(lm, varied, orders, [50, 51]), naive, rtol=1e-4, atol=1e-4)

"""Rank, percentile and regret of a pick among the exhaustive organisations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from iclr25.core.icl_order.regret import annotate, rank_in_exhaustive, summarise
from iclr25.core.icl_order.search import SearchConfig, sample_orderings
from iclr25.core.icl_order.search_report import run_search

ORDERS = [(0, 1), (1, 0), (0, 2), (2, 0)]
H = np.array([0.5, 0.2, 0.9, 0.2])


def test_known_answers():
    # (0, 1) has H = 0.5: two organisations lower (0.2, 0.2) -> rank 3, 2/4 below,
    # regret 0.5 - 0.2 = 0.3; ties count as not below: (2, 0) is an optimum, rank 1
    assert rank_in_exhaustive((0, 1), (ORDERS, H)) == pytest.approx(
        {"rank": 3, "percentile": 0.5, "regret_nats": 0.3}
    )
    assert rank_in_exhaustive([2, 0], (ORDERS, H))["rank"] == 1
    with pytest.raises(ValueError, match="not among"):
        rank_in_exhaustive((1, 2), (ORDERS, H))


def test_summarise_means_and_shares():
    picks = [
        {"order": [0, 1], "predicted": 1},
        {"order": [2, 0], "predicted": 0},
    ]
    best = [{"order": [1, 0], "predicted": 1}, {"order": [2, 0], "predicted": 1}]
    annotate(picks, [(ORDERS, H), (ORDERS, H)])
    s = summarise(picks, best, 4)
    assert s == pytest.approx(
        {
            "organisations_per_query": 4,
            "mean_percentile": 0.25,  # (2/4 + 0) / 2
            "median_rank": 2.0,  # ranks 3 and 1
            "mean_regret_nats": 0.15,
            "optimum_found": 0.5,
            "same_first_last": 0.5,  # (0, 1) vs (1, 0) differ; (2, 0) = (2, 0)
            "same_prediction": 0.5,
        }
    )
    assert picks[0]["exhaustive_rank"] == 3 and picks[1]["regret_nats"] == 0


def test_sample_orderings_are_distinct_uniform_draws():
    rng = np.random.default_rng(0)
    pool = [10, 11, 12, 13, 14, 15]
    drawn = sample_orderings(pool, 3, 30, rng)  # 30 of P(6, 3) = 120
    assert len(drawn) == len(set(drawn)) == 30
    assert set(drawn) <= set(itertools.permutations(pool, 3))
    assert drawn == sample_orderings(pool, 3, 30, np.random.default_rng(0))
    everything = sample_orderings(pool[:3], 3, 6, rng)  # the whole space, shuffled
    assert sorted(everything) == sorted(itertools.permutations(pool[:3], 3))


def test_search_ranks_every_method_against_exhaustive(lm, encoded):
    cfg = SearchConfig(method="cluster", k=3, n_candidates=5, queries=4, seeds=1)
    r = run_search(lm, encoded, cfg, seed=4, compare=("exhaustive", "sample", "random")).results
    assert set(r["rank_vs_exhaustive"]) == {"cluster", "sample", "random"}
    assert r["comparison"]["sample"]["evaluations"] == 4 * 20  # n(n-1), as cluster
    best = {q["query"]: q["entropy"] for q in run_search(
        lm, encoded, SearchConfig(method="exhaustive", k=3, n_candidates=5, queries=4, seeds=1),
        seed=4, compare=(),
    ).results["per_query"]}  # fmt: skip
    for q in r["per_query"]:  # cluster's picks
        assert 1 <= q["exhaustive_rank"] <= 60 and 0 <= q["exhaustive_percentile"] < 1
        # the regret is the entropy above the exhaustive optimum (two scorings: 1e-4)
        assert q["regret_nats"] == pytest.approx(q["entropy"] - best[q["query"]], abs=1e-4)
        assert (q["exhaustive_rank"] == 1) == (q["regret_nats"] == 0)
    rank = r["rank_vs_exhaustive"]["cluster"]
    assert rank["optimum_found"] == np.mean([q["exhaustive_rank"] == 1 for q in r["per_query"]])

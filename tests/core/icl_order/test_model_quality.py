"""The embedded model really learns in context: well above chance, better with more k.

The measured accuracies are in the training log and the benchmark
(``benchmarks/results/icl-order.json``, ``random_order_accuracy_by_k``); the thresholds
below leave room for float differences across platforms, not for a model that stopped
learning in context.
"""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.icl_order.scoring import score_naive
from iclr25.core.icl_order.search import SearchConfig
from iclr25.core.icl_order.search_report import run_search


def _accuracy(lm, encoded, k: int, queries: int = 200) -> float:
    cfg = SearchConfig(method="random", k=k, n_candidates=max(k, 8), queries=queries, seeds=1)
    return run_search(lm, encoded, cfg, seed=0, compare=()).results["accuracy"]


def test_beats_chance_clearly_at_k4_and_rises_with_k(lm, task, encoded):
    zero = score_naive(lm, encoded, [()], list(range(200)))[0]  # (Q, L)
    acc = {0: float((zero.argmax(axis=1) == np.asarray(encoded.labels[:200])).mean())}
    acc.update({k: _accuracy(lm, encoded, k) for k in (1, 2, 4)})
    assert acc[4] >= task.chance + 0.4, acc  # chance: the majority label
    assert acc[0] < task.chance + 0.1, acc  # no demonstrations: the mapping is unknowable
    assert acc[0] + 0.1 < acc[1] < acc[2] < acc[4], acc


@pytest.mark.slow
def test_search_on_the_embedded_model_keeps_exhaustive_accuracy(lm, encoded):
    """Cluster-based search vs exhaustive at the paper's n = 8, k = 4 (100 queries)."""
    cfg = SearchConfig(method="cluster", k=4, n_candidates=8, queries=100, seeds=1)
    r = run_search(lm, encoded, cfg, seed=0, compare=("exhaustive",)).results
    assert r["accuracy"] >= r["comparison"]["exhaustive"]["accuracy"] - 0.05, r["comparison"]
    assert r["evaluations"] * 30 == r["comparison"]["exhaustive"]["evaluations"]  # 56 vs 1680

"""The whole ``icl-order`` analysis: the clustering property, whether order matters, and
cluster-based search against its controls on the same queries and candidates.

This is what a bare ``iclr25 icl-order [--model PATH]`` runs: one report that answers
"do this model's prompt embeddings cluster by first/last demonstration, does the order
of demonstrations change its predictions at all, and does searching only (first, last)
pairs keep the accuracy of searching every order — better than the same budget spent at
random?". When order changes few predictions, the report says that the search results
are about selection, not ordering (``sensitivity.order_verdict``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.icl_order import sensitivity
from iclr25.core.icl_order.cluster_analysis import (
    ClusterConfig,
    analyze_clustering,
    planned_embeddings,
)
from iclr25.core.icl_order.models import LoadedModel
from iclr25.core.icl_order.prompts import EncodedTask
from iclr25.core.icl_order.search import CONTROLS, SearchConfig, planned_evaluations
from iclr25.core.icl_order.search_report import ShardRunner, run_search

CLUSTER_KEYS = (
    "silhouette",
    "purity",
    "distance_ratio",
    "silhouette_ci95",
    "purity_ci95",
    "distance_ratio_ci95",
    "by_position",
    "chance_purity",
    "pattern",
    "pattern_differences",
    "orderings_per_draw",
    "draws",
    "draw_examples",
)
SEARCH_KEYS = (
    "k",
    "candidates",
    "queries",
    "seeds",
    "selection",
    "middle",
    "comparison",
    "paired",
    "hypothesis",
    "pass_conditions",
    "verdict",
    "exhaustive_evaluations_per_query",
    "cluster_evaluations_per_query",
    "evaluations_saved_vs_exhaustive",
    "accuracy_difference_vs_exhaustive",
    "rank_vs_exhaustive",
)


@dataclass(frozen=True)
class AnalysisConfig:
    cluster: ClusterConfig
    sensitivity: sensitivity.SensitivityConfig
    search: SearchConfig  # its method is the one reported first ("cluster")
    compare: tuple[str, ...] = CONTROLS


def planned_work(cfg: AnalysisConfig) -> int:
    """Embeddings plus evaluations of the whole analysis; checks the options first."""
    methods = (cfg.search.method, *cfg.compare)
    return (
        planned_embeddings(cfg.cluster)
        + sensitivity.planned_evaluations(cfg.sensitivity)
        + planned_evaluations(cfg.search, methods)
    )


@dataclass
class AnalysisOutcome:
    results: dict
    timings: dict
    projection: dict
    search_results: dict
    dropped: list[str]  # controls left out for the budget


def run_analysis(
    lm: LoadedModel,
    encoded: EncodedTask,
    cfg: AnalysisConfig,
    seed: int,
    device: str = "cpu",
    on_progress: Callable[[float], None] | None = None,
    on_estimate: Callable[[str], None] | None = None,
    run_shards: ShardRunner | None = None,
) -> AnalysisOutcome:
    rng = np.random.default_rng([seed, 0])
    clustering = analyze_clustering(lm, encoded, cfg.cluster, rng, device, on_progress)
    order = sensitivity.measure_sensitivity(lm, encoded, cfg.sensitivity, seed, on_progress)
    outcome = run_search(
        lm, encoded, cfg.search, seed, cfg.compare, on_progress, on_estimate, run_shards
    )
    search = outcome.results
    results = {
        "k": cfg.cluster.k,
        **{key: clustering.results[key] for key in CLUSTER_KEYS},
        "sensitivity": order,
        "order_verdict": sensitivity.order_verdict(order),
        "search": {key: search[key] for key in SEARCH_KEYS if key in search},
    }
    return AnalysisOutcome(results, outcome.timings, clustering.projection, search, outcome.dropped)

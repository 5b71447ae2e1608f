"""The whole ``icl-order`` analysis: the clustering property, then cluster-based search
against exhaustive search (and a random order) on the same queries and candidates.

This is what a bare ``iclr25 icl-order [--model PATH]`` runs: one report that answers
"do this model's prompt embeddings cluster by first/last demonstration, and does
searching only (first, last) pairs keep the accuracy of searching every order?".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.icl_order.cluster_analysis import (
    ClusterConfig,
    analyze_clustering,
    planned_embeddings,
)
from iclr25.core.icl_order.models import LoadedModel
from iclr25.core.icl_order.prompts import EncodedTask
from iclr25.core.icl_order.search import SearchConfig, planned_evaluations, run_search


@dataclass(frozen=True)
class AnalysisConfig:
    cluster: ClusterConfig
    search: SearchConfig  # its method is the one reported first ("cluster")
    compare: tuple[str, ...] = ("exhaustive", "random")


def planned_work(cfg: AnalysisConfig) -> int:
    """Embeddings plus evaluations of the whole analysis; checks the options first."""
    methods = (cfg.search.method, *cfg.compare)
    return planned_embeddings(cfg.cluster) + planned_evaluations(cfg.search, methods)


@dataclass
class AnalysisOutcome:
    results: dict
    timings: dict
    projection: dict
    search_results: dict


def run_analysis(
    lm: LoadedModel,
    encoded: EncodedTask,
    cfg: AnalysisConfig,
    seed: int,
    device: str = "cpu",
    on_progress: Callable[[int], None] | None = None,
    on_estimate: Callable[[str], None] | None = None,
) -> AnalysisOutcome:
    rng = np.random.default_rng([seed, 0])
    clustering = analyze_clustering(lm, encoded, cfg.cluster, rng, device, on_progress)
    outcome = run_search(lm, encoded, cfg.search, seed, cfg.compare, on_progress, on_estimate)
    search = outcome.results
    keep = (
        "silhouette",
        "purity",
        "distance_ratio",
        "silhouette_ci95",
        "purity_ci95",
        "distance_ratio_ci95",
        "by_position",
        "chance_purity",
        "pattern",
        "orderings_per_draw",
        "draws",
        "draw_examples",
    )
    results = {
        "k": cfg.cluster.k,
        **{key: clustering.results[key] for key in keep},
        "search": {
            key: search[key]
            for key in (
                "k",
                "candidates",
                "queries",
                "selection",
                "comparison",
                "exhaustive_evaluations_per_query",
                "cluster_evaluations_per_query",
                "evaluations_saved_vs_exhaustive",
                "accuracy_difference_vs_exhaustive",
                "rank_vs_exhaustive",
                "middle",
            )
            if key in search
        },
    }
    return AnalysisOutcome(results, outcome.timings, clustering.projection, search)

"""Run a search with its controls over seeds and turn the shards into one report.

:func:`run_search` plans the shards (``search.plan_shards``), checks the budget, scores
every shard with every method (in-process by default; the command hands in a runner
that goes through ``iclr25.parallel.run_tasks``), and :func:`search_results` merges the
shards in plan order into the JSON results: the main method's accuracy and per-query
choices, every method's accuracy with its interval over queries, the paired tests and
pass conditions of ``controls.py``, and the rank of each pick among all exhaustive
organisations (``regret.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.icl_order import controls
from iclr25.core.icl_order.cluster_search import cluster_count
from iclr25.core.icl_order.models import LoadedModel
from iclr25.core.icl_order.prompts import EncodedTask, check_length
from iclr25.core.icl_order.regret import summarise as summarise_ranks
from iclr25.core.icl_order.search import (
    CONTROLS,
    SearchConfig,
    Shard,
    affordable_methods,
    check_budget,
    exhaustive_count,
    plan_shards,
    search_shard,
    validate,
)

ShardRunner = Callable[[list[Shard], tuple[str, ...]], list[dict]]


@dataclass
class SearchOutcome:
    results: dict
    timings: dict = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)  # controls over the budget


def in_process(lm, encoded, cfg, on_progress=None) -> ShardRunner:
    """Score the shards one after the other in this process."""
    return lambda shards, methods: [
        search_shard(lm, encoded, cfg, methods, s, on_progress) for s in shards
    ]


def run_search(
    lm: LoadedModel,
    encoded: EncodedTask,
    cfg: SearchConfig,
    seed: int,
    compare: Sequence[str] = CONTROLS,
    on_progress: Callable[[float], None] | None = None,
    on_estimate: Callable[[str], None] | None = None,
    run_shards: ShardRunner | None = None,
) -> SearchOutcome:
    """``cfg.method`` and its ``compare`` controls on the same queries and candidates."""
    validate(cfg, len(encoded.demos))
    check_length(encoded, cfg.k, getattr(lm.model.config, "max_position_embeddings", None))
    methods, dropped = affordable_methods(cfg, compare)
    estimate = check_budget(lm, encoded, cfg, methods)
    if on_estimate is not None:
        on_estimate(f"search: {estimate.describe(cfg.queries * cfg.seeds)}")
    shards = plan_shards(lm, encoded, cfg, seed)
    runner = run_shards or in_process(lm, encoded, cfg, on_progress)
    outputs = runner(shards, methods)
    results, timings = search_results(cfg, methods, outputs, seed)
    return SearchOutcome(results, timings, dropped)


def _merge(outputs: list[dict], methods: Sequence[str]) -> tuple[dict, dict, dict]:
    records = {m: [r for out in outputs for r in out["records"][m]] for m in methods}
    seconds = {m: float(sum(out["seconds"][m] for out in outputs)) for m in methods}
    evaluations = {m: int(sum(out["evaluations"][m] for out in outputs)) for m in methods}
    return records, seconds, evaluations


def search_results(
    cfg: SearchConfig, methods: Sequence[str], outputs: list[dict], seed: int
) -> tuple[dict, dict]:
    """(JSON results, timings) of the merged shards; ``methods[0]`` is the main one."""
    records, seconds, evaluations = _merge(outputs, methods)
    main = methods[0]
    per_query = records[main]
    n = len(per_query)
    exhaustive_per_query = exhaustive_count(cfg.n_candidates, cfg.k, cfg.fixed_set)
    has_ex = "exhaustive" in methods
    comparison = controls.compare_methods(
        {m: [r["correct"] for r in records[m]] for m in methods},
        [r["seed"] for r in per_query],
        _percentiles(records, methods) if has_ex else None,
        cfg.bootstrap,
        seed,
        main,
    )
    results = {
        "method": main,
        "k": cfg.k,
        "candidates": cfg.n_candidates,
        "queries": cfg.queries,
        "seeds": cfg.seeds,
        "selection": cfg.selection,
        "fixed_set": cfg.fixed_set,
        "middle": cfg.middle,
        "accuracy": comparison["methods"][main]["accuracy"],
        "accuracy_interval": comparison["methods"][main]["interval"],
        "evaluations": evaluations[main],
        "evaluations_per_query": evaluations[main] / n,
        "exhaustive_evaluations_per_query": exhaustive_per_query,
        "cluster_evaluations_per_query": cluster_count(cfg.n_candidates, cfg.k, cfg.fixed_set),
        "evaluations_saved_vs_exhaustive": 1 - evaluations[main] / (n * exhaustive_per_query),
        "mean_entropy": float(np.mean([r["entropy"] for r in per_query])),
        "comparison": _comparison_table(comparison, records, evaluations),
        "paired": comparison["paired"],
        "per_query": per_query,
    }
    if len(methods) > 1:
        results["verdict"] = controls.verdict_line(comparison, main)
    if len(methods) > 1 and main == "cluster":  # the paper's claim and its pass conditions
        results["hypothesis"] = controls.HYPOTHESIS
        results["pass_conditions"] = controls.pass_conditions(comparison, evaluations, main)
    if has_ex and main != "exhaustive":
        results["accuracy_difference_vs_exhaustive"] = (
            results["accuracy"] - comparison["methods"]["exhaustive"]["accuracy"]
        )
        results["rank_vs_exhaustive"] = {
            m: summarise_ranks(records[m], records["exhaustive"], exhaustive_per_query)
            for m in methods
            if m != "exhaustive"
        }
    return results, _timings(main, seconds)


def _percentiles(records: dict, methods: Sequence[str]) -> dict:
    out = {
        m: [r["exhaustive_percentile"] for r in records[m]] for m in methods if m != "exhaustive"
    }
    out["exhaustive"] = [0.0] * len(records["exhaustive"])  # the optimum, by definition
    return out


def _comparison_table(comparison: dict, records: dict, evaluations: dict) -> dict:
    table = {}
    for m, summary in comparison["methods"].items():
        table[m] = {
            **summary,
            "correct": int(sum(r["correct"] for r in records[m])),
            "evaluations": evaluations[m],
            "mean_entropy": float(np.mean([r["entropy"] for r in records[m]])),
        }
    return table


def _timings(main: str, seconds: dict) -> dict:
    timings = {f"scoring_{m}_s": s for m, s in seconds.items()}
    timings["scoring_s"] = seconds[main]
    if "exhaustive" in seconds and main != "exhaustive":
        timings["time_saved_vs_exhaustive"] = 1 - seconds[main] / max(seconds["exhaustive"], 1e-12)
    return timings

"""icl-order: order sensitivity of the shipped setting, Cluster-based Search against its
controls, the middle rule, and prefix-cached against naive scoring.

1. **The setting.** On the embedded model and the default task (``symbolic-noisy``),
   k = 4: the mean over demonstration subsets of (max - min accuracy across the 24
   orderings of a subset) and the share of queries whose prediction flips with order
   (``sensitivity.py``, 20 subsets x 40 test queries), with bootstrap intervals (the
   easy tasks are in the studies ``icl-order-sensitivity-*``). Targets from issue 15: spread >= 15
   points, flip rate >= 20 % (point values; intervals recorded).
2. **The paper's headline** (Pham et al., ICLR 2025): searching only the n(n-1) (first,
   last) choices instead of all P(n, k) ordered k-subsets saves 92 % to ~100 % of the
   search time at comparable accuracy. n = 8, k = 4, 3 seeds x 12 queries through
   ``search_report.run_search`` (the CLI's code path) with the controls exhaustive,
   ``sample`` (best of 56 random organisations: the same budget without the structure)
   and ``random``, plus cluster search with each other middle rule. Accuracy with
   bootstrap intervals over queries, paired differences. Time saved is timed through
   the harness (cluster vs exhaustive on the same 2 queries, interleaved).
3. **The middle rule.** Each rule's picks ranked among all 1,680 organisations by
   entropy (mean percentile); the default (``cluster_search.DEFAULT_MIDDLE``) must be
   the best-measured rule.
4. **Beyond the paper:** exhaustive scoring through the KV-cache prefix tree against
   the naive one-forward-per-prompt scoring that ICL toolkits (e.g. OpenICL's PPL
   inferencer) use, on the same orderings, timed interleaved; scores equal to 1e-4.

Torch runs on one thread (the benchmark machine is shared; spinning threads of
oversubscribed processes distort ratios measured in the same run).

Size: the committed result was run on 2 CPU cores shared by many jobs (load ~25), so the
search uses 12 queries per seed (36 in all; ``SEARCH_QUERIES``), the search timing 2
queries and the prefix-cache timing 1 query of 1,680 orderings: the paired intervals are
about 4.5x wider than 250 queries per seed would give, and the "within 2 points" target
can only be met at a larger size. Exhaustive search costs 1,680 evaluations per query.
"""

from __future__ import annotations

import itertools

import numpy as np

from benchmarks.harness import Report, Target

NAME = "icl-order"
TARGETS = {
    "order_accuracy_spread": Target(
        ">=", 0.15, "issue 15: order must matter in the shipped setting (k = 4)"
    ),
    "order_flip_rate": Target(">=", 0.20, "issue 15: >= 20% of queries flip with order"),
    "time_saved_cluster_vs_exhaustive": Target(">=", 0.92, "the paper's lower figure"),
    "accuracy_cluster_minus_exhaustive": Target(
        ">=", -0.02, "issue 15: within 2 points of exhaustive (whole 95% interval)"
    ),
    "accuracy_cluster_minus_sample": Target(
        ">=", 0.0, "issue 15: cluster >= the equal-budget sample control"
    ),
    "default_middle_percentile_minus_best": Target(
        "<=", 0.0, "issue 15: the default middle rule is the one that measures best"
    ),
    "speedup_prefix_cache_vs_naive": Target(">=", 2.0, "worth its code over naive scoring"),
    "max_abs_logit_diff_prefix_cache": Target("<=", 1e-4, "same scores as naive scoring"),
}
OTHER_RULES = ("rank", "labels", "rotate")
SEARCH_QUERIES = 12  # per seed, 3 seeds (module docstring: the size and why)


def _setup(task_name: str):
    import torch

    from iclr25.core.icl_order.models import ModelConfig, load_model
    from iclr25.core.icl_order.prompts import encode_task
    from iclr25.core.icl_order.tasks import builtin_task

    torch.set_num_threads(1)
    lm = load_model(ModelConfig(batch_size=64))
    task = builtin_task(task_name, seed=0)
    return lm, task, encode_task(lm.tokenizer, task)


def _sensitivity(report: Report) -> None:
    from iclr25.core.icl_order.sensitivity import SensitivityConfig, measure_sensitivity
    from iclr25.core.icl_order.tasks import DEFAULT_TASK

    cfg = SensitivityConfig(k=4, draws=8 if report.quick else 20, queries=40)
    by_task = {}
    for name in (DEFAULT_TASK,):  # the easy tasks: studies icl-order-sensitivity-*
        lm, task, encoded = _setup(name)
        by_task[name] = {**measure_sensitivity(lm, encoded, cfg, seed=0), "chance": task.chance}
    report.figure("sensitivity", by_task)
    main = by_task[DEFAULT_TASK]
    for target, key in (
        ("order_accuracy_spread", "accuracy_spread"),
        ("order_flip_rate", "flip_rate"),
    ):
        low, high = main[key]["interval"]
        report.check(
            target,
            main[key]["value"],
            note=f"{DEFAULT_TASK}, 95% bootstrap interval over subsets [{low:.3f}, {high:.3f}]",
        )


def _search(report: Report, lm, encoded) -> None:
    from iclr25.core.icl_order.cluster_search import DEFAULT_MIDDLE
    from iclr25.core.icl_order.search import SearchConfig
    from iclr25.core.icl_order.search_report import run_search

    queries = 12 if report.quick else SEARCH_QUERIES
    cfg = SearchConfig(k=4, n_candidates=8, queries=queries, seeds=3, max_evaluations=10**8)
    rules = tuple(f"cluster@{r}" for r in OTHER_RULES if r != DEFAULT_MIDDLE)
    outcome = run_search(lm, encoded, cfg, 0, ("exhaustive", "sample", "random", *rules))
    r = outcome.results
    report.figure("search", {k: v for k, v in r.items() if k != "per_query"})
    ex = r["paired"]["cluster_vs_exhaustive"]
    report.check(
        "accuracy_cluster_minus_exhaustive",
        ex["difference"],
        interval=tuple(ex["interval"]),
        note=f"paired bootstrap over {3 * queries} queries; McNemar p = {ex['p_value']:.3g}",
    )
    sample = r["paired"]["cluster_vs_sample"]
    low, high = sample["interval"]
    report.check(
        "accuracy_cluster_minus_sample",
        sample["difference"],
        note=f"point value; 95% interval [{low:.3f}, {high:.3f}], McNemar p = "
        f"{sample['p_value']:.3g} ({'' if sample['significant'] else 'not '}significant)",
    )
    percentiles = {DEFAULT_MIDDLE: r["rank_vs_exhaustive"]["cluster"]["mean_percentile"]}
    for rule in rules:
        percentiles[rule.split("@")[1]] = r["rank_vs_exhaustive"][rule]["mean_percentile"]
    percentiles["sample"] = r["rank_vs_exhaustive"]["sample"]["mean_percentile"]
    report.figure("middle_rule_mean_percentile", percentiles)
    best = min(v for k, v in percentiles.items() if k != "sample")
    report.check(
        "default_middle_percentile_minus_best",
        percentiles[DEFAULT_MIDDLE] - best,
        note=f"default {DEFAULT_MIDDLE}; mean percentile of the picks among 1,680 "
        f"organisations: {', '.join(f'{k} {v:.4f}' for k, v in percentiles.items())}",
    )


def _search_time(report: Report, lm, encoded) -> None:
    """Cluster vs exhaustive search of the same 2 queries, interleaved through the harness."""
    from iclr25.core.icl_order.search import SearchConfig, plan_shards, search_shard

    cfg = SearchConfig(k=4, n_candidates=8, queries=2, seeds=1)
    (shard,) = plan_shards(lm, encoded, cfg, seed=1)
    timed = report.time(
        "search_cluster_vs_exhaustive",
        {
            "cluster": lambda: search_shard(lm, encoded, cfg, ("cluster",), shard),
            "exhaustive": lambda: search_shard(lm, encoded, cfg, ("exhaustive",), shard),
        },
    )
    report.check(
        "time_saved_cluster_vs_exhaustive",
        1 - timed.ratio("cluster", "exhaustive"),
        note=f"{len(shard.queries)} queries, median of interleaved rounds; evaluations "
        "saved 1 - 56/1680 = 0.967",
    )


def _prefix_cache(report: Report, lm, encoded) -> None:
    from iclr25.core.icl_order.prefix_cache import score_prefix_tree
    from iclr25.core.icl_order.scoring import score_naive

    rng = np.random.default_rng(1)
    size = len(encoded.demos)
    queries = [int(q) for q in rng.choice(size, 1, replace=False)]
    pool = [i for i in range(size) if i not in queries]
    per_query = [
        (
            list(
                itertools.permutations(
                    [pool[i] for i in rng.choice(len(pool), 8, replace=False)], 4
                )
            ),
            q,
        )
        for q in queries
    ]  # P(8, 4) = 1680 orderings per query
    naive = [score_naive(lm, encoded, orders, [q]) for orders, q in per_query]
    cached = [score_prefix_tree(lm, encoded, orders, [q]) for orders, q in per_query]
    worst = max(float(np.abs(a - b).max()) for a, b in zip(naive, cached, strict=True))
    timed = report.time(
        "exhaustive_scoring_prefix_cache_vs_naive",
        {
            "prefix_cache": lambda: [score_prefix_tree(lm, encoded, o, [q]) for o, q in per_query],
            "naive": lambda: [score_naive(lm, encoded, o, [q]) for o, q in per_query],
        },
    )
    report.check(
        "speedup_prefix_cache_vs_naive",
        timed.ratio("naive", "prefix_cache"),
        note="1 query x 1,680 orderings per call",
    )
    report.check("max_abs_logit_diff_prefix_cache", worst, note="largest |score| difference")


def _accuracy_by_k(report: Report, lm, encoded) -> None:
    """Random-order accuracy at k = 1, 2, 4, 8 (the model learns in context)."""
    from iclr25.core.icl_order.search import SearchConfig
    from iclr25.core.icl_order.search_report import run_search

    out = {}
    for k in (1, 2, 4, 8):
        cfg = SearchConfig(
            method="random", k=k, n_candidates=8, queries=50 if report.quick else 200, seeds=1
        )
        out[k] = run_search(lm, encoded, cfg, 0, compare=()).results["accuracy"]
    report.figure("random_order_accuracy_by_k", out)


def run(report: Report) -> None:
    from iclr25.core.icl_order.tasks import DEFAULT_TASK

    report.seeds = [0, 1]
    _sensitivity(report)
    lm, task, encoded = _setup(DEFAULT_TASK)
    report.figure("task", {"name": DEFAULT_TASK, "chance": task.chance})
    _search(report, lm, encoded)
    _search_time(report, lm, encoded)
    _prefix_cache(report, lm, encoded)
    _accuracy_by_k(report, lm, encoded)

"""Choosing and ordering k of n candidate demonstrations: random, exhaustive, cluster.

Paper: Pham, Le, Ngo, Tran (ICLR 2025), Sec. 4 "Cluster-based Search", plugged into the
select-then-rank search of self-adaptive ICL (Wu et al., ACL 2023). For each test query:

1. *Select* n candidates from the pool (``selection``): ``random`` per query, ``similar``
   (top-n cosine similarity of the model's own last-token embeddings of the bare
   inputs), or ``shared`` (one random candidate set for every query, so one prefix tree
   serves them all).
2. *Rank* organisations by the entropy of the model's label distribution
   (``scoring.entropy``; lower is better) and predict with the best one:

   * ``exhaustive``: every ordered k-subset, P(n, k) = n!/(n-k)! organisations (or the
     k! orders of the first k candidates with ``fixed_set``);
   * ``cluster``: only the n(n-1) choices of (first, last) demonstration — the positions
     whose demonstrations the prompt embeddings cluster by. The paper does not say how
     the middle is filled; our rule: the k-2 best-ranked remaining candidates (selection
     rank: similarity, or the random draw order), in rank order. With ``fixed_set``,
     k(k-1) choices over the first k candidates, the middle in rank order;
   * ``random``: one random ordered k-subset, no search (the baseline).

Symbols: ``n`` -> n candidates, ``k`` -> k demonstrations, ``P(n, k)`` ->
``exhaustive_count``, ``n(n-1)`` -> ``cluster_count``, ``H`` -> ``entropy``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.icl_order.models import LoadedModel
from iclr25.core.icl_order.prompts import EncodedTask, check_length
from iclr25.core.icl_order.scoring import entropy, score_naive
from iclr25.errors import UsageError

METHODS = ("random", "exhaustive", "cluster")
SELECTIONS = ("random", "similar", "shared")


@dataclass(frozen=True)
class SearchConfig:
    method: str = "cluster"
    k: int = 4  # demonstrations per prompt (the paper's main setting)
    n_candidates: int = 8  # pre-selected candidates per query (n)
    queries: int = 50  # test queries
    selection: str = "random"
    fixed_set: bool = False  # order a fixed set of k instead of choosing k of n
    max_evaluations: int = 2_000_000  # refuse bigger searches (generous for the embedded model)
    prefix_cache: bool = True  # score through the KV-cache prefix tree


@dataclass
class SearchOutcome:
    results: dict
    timings: dict = field(default_factory=dict)


def exhaustive_count(n: int, k: int, fixed_set: bool = False) -> int:
    """P(n, k) = n!/(n-k)! ordered k-subsets (k! with a fixed set)."""
    return math.factorial(k) if fixed_set else math.perm(n, k)


def cluster_count(n: int, k: int, fixed_set: bool = False) -> int:
    """n(n-1) (first, last) pairs (k(k-1) with a fixed set; n when k = 1)."""
    m = k if fixed_set else n
    return m if k == 1 else m * (m - 1)


def evaluations_per_query(cfg: SearchConfig) -> int:
    if cfg.method == "random":
        return 1
    if cfg.method == "exhaustive":
        return exhaustive_count(cfg.n_candidates, cfg.k, cfg.fixed_set)
    return cluster_count(cfg.n_candidates, cfg.k, cfg.fixed_set)


def cluster_orderings(ranked: list[int], k: int) -> list[tuple[int, ...]]:
    """Every (first, last) pair of ``ranked`` candidates; the middle is the k-2
    best-ranked of the rest, in rank order."""
    if k == 1:
        return [(c,) for c in ranked]
    out = []
    for first, last in itertools.permutations(ranked, 2):
        middle = [c for c in ranked if c != first and c != last][: k - 2]
        out.append((first, *middle, last))
    return out


def candidate_orderings(
    method: str, ranked: list[int], k: int, fixed_set: bool, rng: np.random.Generator
) -> list[tuple[int, ...]]:
    """The organisations a method scores for one query (candidates best-ranked first)."""
    pool = ranked[:k] if fixed_set else ranked
    if method == "exhaustive":
        return list(itertools.permutations(pool, k))
    if method == "cluster":
        return cluster_orderings(pool, k)
    if method == "random":
        chosen = rng.choice(len(pool), size=k, replace=False)
        return [tuple(pool[i] for i in chosen)]
    raise UsageError(f"unknown --method {method!r}", f"use one of {', '.join(METHODS)}")


def validate(cfg: SearchConfig, pool_size: int | None = None) -> None:
    """Check the options (and, given the pool size, that the task is large enough)."""
    if cfg.method not in METHODS:
        raise UsageError(f"unknown --method {cfg.method!r}", f"use one of {', '.join(METHODS)}")
    if cfg.selection not in SELECTIONS:
        raise UsageError(
            f"unknown --selection {cfg.selection!r}", f"use one of {', '.join(SELECTIONS)}"
        )
    if cfg.k < 1 or cfg.n_candidates < 1 or cfg.queries < 1:
        raise UsageError("--k, --candidates and --queries must be positive", "use 1 or more")
    if cfg.k > cfg.n_candidates:
        raise UsageError(
            f"--k {cfg.k} is larger than --candidates {cfg.n_candidates}",
            "choose k <= n candidates",
        )
    if pool_size is not None and cfg.n_candidates + 1 > pool_size:
        raise UsageError(
            f"--candidates {cfg.n_candidates} needs {cfg.n_candidates + 1} examples "
            f"(candidates and a query), the task has {pool_size}",
            "lower --candidates or add examples to the task file",
        )


def total_evaluations(cfg: SearchConfig) -> int:
    return evaluations_per_query(cfg) * cfg.queries


# -- planning: test queries and their candidates ---------------------------------------
@dataclass
class Plan:
    queries: list[int]  # pool indices of the test queries
    candidates: list[list[int]]  # per query, best-ranked first (one shared list if shared)
    shared: bool


def _similar_candidates(
    lm: LoadedModel, encoded: EncodedTask, queries: list[int], pool: list[int], n: int
) -> list[list[int]]:
    """Top-n cosine similarity between last-token embeddings of the bare inputs."""
    from iclr25.core.icl_order.embeddings import embed_prompts

    needed = sorted(set(queries) | set(pool))
    x = embed_prompts(lm, [encoded.prefix + encoded.queries[i] for i in needed])  # (M, d)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    row = {idx: r for r, idx in enumerate(needed)}
    pool_x = x[[row[i] for i in pool]]  # (P, d)
    ranked = []
    for q in queries:
        sims = pool_x @ x[row[q]]  # (P,)
        order = np.lexsort((np.arange(len(pool)), -sims))[:n]  # ties by pool position
        ranked.append([pool[i] for i in order])
    return ranked


def plan_queries(lm: LoadedModel, encoded: EncodedTask, cfg: SearchConfig, seed: int) -> Plan:
    """Split the pool into test queries and demonstration pool; pre-select candidates."""
    size = len(encoded.demos)
    validate(cfg, size)
    if cfg.queries + cfg.n_candidates > size:
        raise UsageError(
            f"--queries {cfg.queries} plus --candidates {cfg.n_candidates} exceed the "
            f"task's {size} examples (queries are held out of the demonstration pool)",
            f"lower --queries to {size - cfg.n_candidates} or less",
        )
    rng = np.random.default_rng([seed, 1])
    perm = [int(i) for i in rng.permutation(size)]
    queries, pool = perm[: cfg.queries], perm[cfg.queries :]
    if cfg.selection == "similar":
        return Plan(
            queries, _similar_candidates(lm, encoded, queries, pool, cfg.n_candidates), False
        )
    if cfg.selection == "shared":
        shared = [pool[i] for i in rng.choice(len(pool), cfg.n_candidates, replace=False)]
        return Plan(queries, [shared], True)
    picks = [rng.choice(len(pool), cfg.n_candidates, replace=False) for _ in queries]
    return Plan(queries, [[pool[i] for i in p] for p in picks], False)


# -- scoring and choosing ---------------------------------------------------------------
def _scorer(lm: LoadedModel, encoded: EncodedTask, prefix_cache: bool, on_batch):
    if prefix_cache and lm.cache_keyword is not None:
        from iclr25.core.icl_order.prefix_cache import score_prefix_tree

        return lambda orders, queries: score_prefix_tree(lm, encoded, orders, queries, on_batch)
    return lambda orders, queries: score_naive(lm, encoded, orders, queries, on_batch)


def _choose(orders: list[tuple[int, ...]], label_logits: np.ndarray, query: int, gold: int):
    """The lowest-entropy organisation (first on ties) and its prediction."""
    h = entropy(label_logits)  # (O,)
    best = int(np.argmin(h))
    predicted = int(np.argmax(label_logits[best]))
    return {
        "query": query,
        "order": list(orders[best]),
        "entropy": float(h[best]),
        "predicted": predicted,
        "gold": gold,
        "correct": predicted == gold,
    }


def search_method(
    lm: LoadedModel,
    encoded: EncodedTask,
    plan: Plan,
    cfg: SearchConfig,
    method: str,
    seed: int,
    on_progress: Callable[[int], None] | None = None,
) -> tuple[dict, float]:
    """Run one method on the plan: (results, scoring seconds)."""
    rng = np.random.default_rng([seed, 2])
    score = _scorer(lm, encoded, cfg.prefix_cache, on_progress)
    records, evaluations, scoring_s = [], 0, 0.0
    groups = (
        [(plan.queries, plan.candidates[0])]
        if plan.shared
        else [([q], c) for q, c in zip(plan.queries, plan.candidates, strict=True)]
    )
    for queries, ranked in groups:
        if plan.shared and method == "random":  # a fresh random organisation per query
            orders_per_q = [
                candidate_orderings(method, ranked, cfg.k, cfg.fixed_set, rng) for _ in queries
            ]
        else:
            orders = candidate_orderings(method, ranked, cfg.k, cfg.fixed_set, rng)
            orders_per_q = None
        t0 = time.perf_counter()
        if orders_per_q is None:
            logits = score(orders, queries)  # (O, Q, L)
            per_q = [(orders, logits[:, j]) for j in range(len(queries))]
        else:
            per_q = [(o, score(o, [q])[:, 0]) for o, q in zip(orders_per_q, queries, strict=True)]
        scoring_s += time.perf_counter() - t0
        for (orders_q, logits_q), q in zip(per_q, queries, strict=True):
            evaluations += len(orders_q)
            records.append(_choose(orders_q, logits_q, q, encoded.labels[q]))
    correct = sum(r["correct"] for r in records)
    results = {
        "accuracy": correct / len(records),
        "correct": correct,
        "evaluations": evaluations,
        "evaluations_per_query": evaluations / len(records),
        "mean_entropy": float(np.mean([r["entropy"] for r in records])),
        "per_query": records,
    }
    return results, scoring_s


def estimate_seconds_per_evaluation(lm: LoadedModel, encoded: EncodedTask, k: int) -> float:
    """Time one naive batch of k-demonstration prompts (an upper bound per evaluation)."""
    count = max(1, min(lm.batch_size, 32))
    rng = np.random.default_rng(0)
    size = len(encoded.demos)
    prompts = [
        (tuple(int(i) for i in rng.choice(size - 1, k, replace=False)), size - 1)
        for _ in range(count)
    ]
    t0 = time.perf_counter()
    score_naive(lm, encoded, [p for p, _ in prompts], [size - 1])
    return (time.perf_counter() - t0) / count


@dataclass(frozen=True)
class Estimate:
    evaluations: int
    breakdown: str  # e.g. "56 cluster + 1,680 exhaustive per query"
    seconds: float  # upper bound: naive scoring at the measured rate

    def describe(self, queries: int) -> str:
        from iclr25.core.icl_order.embeddings import format_count

        return (
            f"{format_count(self.evaluations)} model evaluations ({queries} queries; "
            f"{self.breakdown}), "
            f"about {self.seconds / 60:,.1f} min at most (naive scoring at the measured "
            f"{self.evaluations / max(self.seconds, 1e-12):,.0f} evaluations/s)"
        )


def estimate_search(lm: LoadedModel, encoded: EncodedTask, cfg: SearchConfig, methods) -> Estimate:
    """Evaluations of ``methods`` and an upper bound of their time (one timed batch)."""
    total = sum(total_evaluations(_with(cfg, method=m)) for m in methods)
    from iclr25.core.icl_order.embeddings import format_count

    parts = " + ".join(
        f"{format_count(evaluations_per_query(_with(cfg, method=m)))} {m}" for m in methods
    )
    per_eval = estimate_seconds_per_evaluation(lm, encoded, cfg.k)
    return Estimate(total, parts + " per query", total * per_eval)


def check_budget(lm: LoadedModel, encoded: EncodedTask, cfg: SearchConfig, methods) -> Estimate:
    """The estimate of ``methods``; refuse (saying the estimate) above the budget."""
    estimate = estimate_search(lm, encoded, cfg, methods)
    if estimate.evaluations > cfg.max_evaluations:
        raise UsageError(
            f"this search needs {estimate.describe(cfg.queries)}, above --max-evaluations "
            f"{cfg.max_evaluations:,}",
            "raise --max-evaluations, lower --queries/--candidates/--k, or use --method cluster",
        )
    return estimate


def _with(cfg: SearchConfig, **changes) -> SearchConfig:
    from dataclasses import replace

    return replace(cfg, **changes)


def run_search(
    lm: LoadedModel,
    encoded: EncodedTask,
    cfg: SearchConfig,
    seed: int,
    compare: tuple[str, ...] = (),
    on_progress: Callable[[int], None] | None = None,
    on_estimate: Callable[[str], None] | None = None,
) -> SearchOutcome:
    """``cfg.method`` (and the ``compare`` methods on the same queries and candidates)."""
    validate(cfg, len(encoded.demos))
    check_length(encoded, cfg.k, getattr(lm.model.config, "max_position_embeddings", None))
    methods = tuple(dict.fromkeys((cfg.method, *compare)))
    for m in methods:
        validate(_with(cfg, method=m), len(encoded.demos))
    estimate = check_budget(lm, encoded, cfg, methods)
    if on_estimate is not None:
        on_estimate(f"search: {estimate.describe(cfg.queries)}")
    plan = plan_queries(lm, encoded, cfg, seed)
    by_method, timings = {}, {}
    for m in methods:
        by_method[m], timings[f"scoring_{m}_s"] = search_method(
            lm, encoded, plan, cfg, m, seed, on_progress
        )
    main = by_method[cfg.method]
    results = {
        "method": cfg.method,
        "k": cfg.k,
        "candidates": cfg.n_candidates,
        "queries": cfg.queries,
        "selection": cfg.selection,
        "fixed_set": cfg.fixed_set,
        "accuracy": main["accuracy"],
        "evaluations": main["evaluations"],
        "evaluations_per_query": main["evaluations_per_query"],
        "exhaustive_evaluations_per_query": exhaustive_count(
            cfg.n_candidates, cfg.k, cfg.fixed_set
        ),
        "cluster_evaluations_per_query": cluster_count(cfg.n_candidates, cfg.k, cfg.fixed_set),
        "mean_entropy": main["mean_entropy"],
        "per_query": main["per_query"],
    }
    results["evaluations_saved_vs_exhaustive"] = 1 - (
        results["evaluations_per_query"] / results["exhaustive_evaluations_per_query"]
    )
    if len(methods) > 1:
        results["comparison"] = {
            m: {key: r[key] for key in ("accuracy", "correct", "evaluations", "mean_entropy")}
            for m, r in by_method.items()
        }
        if "exhaustive" in by_method:
            results["accuracy_difference_vs_exhaustive"] = (
                main["accuracy"] - by_method["exhaustive"]["accuracy"]
            )
    timings["scoring_s"] = timings[f"scoring_{cfg.method}_s"]
    if "exhaustive" in by_method and cfg.method != "exhaustive":
        timings["time_saved_vs_exhaustive"] = 1 - timings["scoring_s"] / max(
            timings["scoring_exhaustive_s"], 1e-12
        )
    return SearchOutcome(results, timings)

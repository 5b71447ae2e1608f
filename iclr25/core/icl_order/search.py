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
     whose demonstrations the prompt embeddings cluster by (``cluster_search.py``, which
     also documents the rules filling the middle); with ``fixed_set``, k(k-1) choices;
   * ``sample``: the best of n(n-1) ordered k-subsets drawn at random — cluster search's
     budget without its structure, the control that says what the (first, last)
     structure adds (beyond the paper);
   * ``random``: one random ordered k-subset, no search (the baseline).

Symbols: ``n`` -> n candidates, ``k`` -> k demonstrations, ``P(n, k)`` ->
``exhaustive_count``, ``n(n-1)`` -> ``cluster_count``, ``H`` -> ``entropy``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.icl_order.cluster_search import MIDDLE_RULES, cluster_count, cluster_orderings
from iclr25.core.icl_order.models import LoadedModel
from iclr25.core.icl_order.prompts import EncodedTask, check_length
from iclr25.core.icl_order.regret import summarise as summarise_ranks
from iclr25.core.icl_order.scoring import entropy, score_naive
from iclr25.errors import UsageError

METHODS = ("random", "exhaustive", "cluster", "sample")
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
    middle: str = "rotate"  # how cluster search fills the middle (cluster_search.MIDDLE_RULES)


@dataclass
class SearchOutcome:
    results: dict
    timings: dict = field(default_factory=dict)


def exhaustive_count(n: int, k: int, fixed_set: bool = False) -> int:
    """P(n, k) = n!/(n-k)! ordered k-subsets (k! with a fixed set)."""
    return math.factorial(k) if fixed_set else math.perm(n, k)


def evaluations_per_query(cfg: SearchConfig) -> int:
    if cfg.method == "random":
        return 1
    if cfg.method == "exhaustive":
        return exhaustive_count(cfg.n_candidates, cfg.k, cfg.fixed_set)
    return cluster_count(cfg.n_candidates, cfg.k, cfg.fixed_set)  # cluster and sample


def candidate_orderings(
    method: str,
    ranked: list[int],
    k: int,
    fixed_set: bool,
    rng: np.random.Generator | None,
    middle: str = "rank",
    labels: Sequence[int] | None = None,
) -> list[tuple[int, ...]]:
    """The organisations a method scores for one query (candidates best-ranked first)."""
    pool = ranked[:k] if fixed_set else ranked
    if method == "exhaustive":
        return list(itertools.permutations(pool, k))
    if method == "cluster":
        return cluster_orderings(pool, k, middle, labels)
    if method == "random":
        chosen = rng.choice(len(pool), size=k, replace=False)
        return [tuple(pool[i] for i in chosen)]
    if method == "sample":
        return sample_orderings(pool, k, cluster_count(len(pool), k), rng)
    raise UsageError(f"unknown --method {method!r}", f"use one of {', '.join(METHODS)}")


def sample_orderings(
    pool: list[int], k: int, count: int, rng: np.random.Generator
) -> list[tuple[int, ...]]:
    """``count`` distinct ordered k-subsets of ``pool``, uniformly at random."""
    total = math.perm(len(pool), k)
    if 2 * count >= total:  # small space: shuffle all of it
        everything = list(itertools.permutations(pool, k))
        return [everything[i] for i in rng.permutation(total)[:count]]
    seen: dict[tuple[int, ...], None] = {}
    while len(seen) < count:
        seen[tuple(pool[i] for i in rng.choice(len(pool), size=k, replace=False))] = None
    return list(seen)


def validate(cfg: SearchConfig, pool_size: int | None = None) -> None:
    """Check the options (and, given the pool size, that the task is large enough)."""
    if cfg.method not in METHODS:
        raise UsageError(f"unknown --method {cfg.method!r}", f"use one of {', '.join(METHODS)}")
    if cfg.middle not in MIDDLE_RULES:
        rules = ", ".join(MIDDLE_RULES)
        raise UsageError(f"unknown --middle {cfg.middle!r}", f"use one of {rules}")
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


def _choose(orders, h: np.ndarray, label_scores: np.ndarray, query: int, gold: int) -> dict:
    """The lowest-entropy organisation (first on ties) and its prediction."""
    best = int(np.argmin(h))
    predicted = int(np.argmax(label_scores[best]))
    return {
        "query": query,
        "order": list(orders[best]),
        "entropy": float(h[best]),
        "predicted": predicted,
        "gold": gold,
        "correct": predicted == gold,
    }


@dataclass
class MethodRun:
    """One method on a plan: its summary, scoring seconds, and every organisation it
    scored with its entropy (per query, for the ranking against exhaustive search)."""

    results: dict
    scoring_s: float
    scored: list[tuple[list[tuple[int, ...]], np.ndarray]]  # per query: (orders, H (O,))


def _groups(plan: Plan) -> list[tuple[list[int], list[int]]]:
    """(queries, ranked candidates) scored together: all queries when shared, else one."""
    if plan.shared:
        return [(plan.queries, plan.candidates[0])]
    return [([q], c) for q, c in zip(plan.queries, plan.candidates, strict=True)]


def _score_group(score, method, queries, ranked, cfg, rng, labels):
    """[(orders, label scores (O, L))] per query of one group."""
    if method == "random" and len(queries) > 1:  # a fresh random organisation per query
        pairs = []
        for q in queries:
            orders = candidate_orderings(method, ranked, cfg.k, cfg.fixed_set, rng)
            pairs.append((orders, score(orders, [q])[:, 0]))
        return pairs
    orders = candidate_orderings(
        method, ranked, cfg.k, cfg.fixed_set, rng, middle=cfg.middle, labels=labels
    )
    scores = score(orders, queries)  # (O, Q, L)
    return [(orders, scores[:, j]) for j in range(len(queries))]


def search_method(
    lm: LoadedModel,
    encoded: EncodedTask,
    plan: Plan,
    cfg: SearchConfig,
    method: str,
    seed: int,
    on_progress: Callable[[float], None] | None = None,
) -> MethodRun:
    """Run one method on the plan."""
    rng = np.random.default_rng([seed, 2])
    score = _scorer(lm, encoded, cfg.prefix_cache, on_progress)
    records, scored, scoring_s = [], [], 0.0
    for queries, ranked in _groups(plan):
        t0 = time.perf_counter()
        pairs = _score_group(score, method, queries, ranked, cfg, rng, encoded.labels)
        scoring_s += time.perf_counter() - t0
        for (orders, label_scores), q in zip(pairs, queries, strict=True):
            h = entropy(label_scores)  # (O,)
            scored.append((orders, h))
            records.append(_choose(orders, h, label_scores, q, encoded.labels[q]))
    correct = sum(r["correct"] for r in records)
    evaluations = sum(len(orders) for orders, _ in scored)
    results = {
        "accuracy": correct / len(records),
        "correct": correct,
        "evaluations": evaluations,
        "evaluations_per_query": evaluations / len(records),
        "mean_entropy": float(np.mean([r["entropy"] for r in records])),
        "per_query": records,
    }
    return MethodRun(results, scoring_s, scored)


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


def planned_evaluations(cfg: SearchConfig, methods: Sequence[str]) -> int:
    """Model evaluations of ``methods`` on ``cfg.queries`` queries (for progress bars);
    checks the options of every method first."""
    for m in methods:
        validate(_with(cfg, method=m))
    return sum(total_evaluations(_with(cfg, method=m)) for m in methods)


def run_search(
    lm: LoadedModel,
    encoded: EncodedTask,
    cfg: SearchConfig,
    seed: int,
    compare: tuple[str, ...] = (),
    on_progress: Callable[[float], None] | None = None,
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
    runs = {m: search_method(lm, encoded, plan, cfg, m, seed, on_progress) for m in methods}
    timings = {f"scoring_{m}_s": r.scoring_s for m, r in runs.items()}
    timings["scoring_s"] = timings[f"scoring_{cfg.method}_s"]
    if "exhaustive" in runs and cfg.method != "exhaustive":
        timings["time_saved_vs_exhaustive"] = 1 - timings["scoring_s"] / max(
            timings["scoring_exhaustive_s"], 1e-12
        )
    return SearchOutcome(_results(cfg, runs), timings)


def _results(cfg: SearchConfig, runs: dict[str, MethodRun]) -> dict:
    """The JSON results of ``cfg.method`` with the comparison and exhaustive ranking."""
    main = runs[cfg.method].results
    exhaustive_per_query = exhaustive_count(cfg.n_candidates, cfg.k, cfg.fixed_set)
    results = {
        "method": cfg.method,
        "k": cfg.k,
        "candidates": cfg.n_candidates,
        "queries": cfg.queries,
        "selection": cfg.selection,
        "fixed_set": cfg.fixed_set,
        "middle": cfg.middle,
        "accuracy": main["accuracy"],
        "evaluations": main["evaluations"],
        "evaluations_per_query": main["evaluations_per_query"],
        "exhaustive_evaluations_per_query": exhaustive_per_query,
        "cluster_evaluations_per_query": cluster_count(cfg.n_candidates, cfg.k, cfg.fixed_set),
        "evaluations_saved_vs_exhaustive": 1 - main["evaluations_per_query"] / exhaustive_per_query,
        "mean_entropy": main["mean_entropy"],
        "per_query": main["per_query"],
    }
    if len(runs) > 1:
        keys = ("accuracy", "correct", "evaluations", "mean_entropy")
        results["comparison"] = {m: {k: r.results[k] for k in keys} for m, r in runs.items()}
    if "exhaustive" in runs:
        ex = runs["exhaustive"]
        results["accuracy_difference_vs_exhaustive"] = main["accuracy"] - ex.results["accuracy"]
        results["rank_vs_exhaustive"] = {
            m: summarise_ranks(r.results["per_query"], ex.results["per_query"], ex.scored)
            for m, r in runs.items()
            if m != "exhaustive"
        }
    return results

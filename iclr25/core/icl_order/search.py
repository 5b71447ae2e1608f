"""Choosing and ordering k of n candidate demonstrations: cluster search and its controls.

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

Seeds: ``seeds`` independent plans (test queries and their candidates), each from
``derive_seed(seed, "search", s)``; the random draws of ``random`` and ``sample`` come
from a generator per (plan, method, query), so a query's result does not depend on which
other queries are scored with it. Queries are scored in fixed shards of
``shard_queries`` (the tasks of ``iclr25.parallel``): the same shards in-process and in
workers, hence the same floating-point batches and the same results.

Symbols: ``n`` -> n candidates, ``k`` -> k demonstrations, ``P(n, k)`` ->
``exhaustive_count``, ``n(n-1)`` -> ``cluster_count``, ``H`` -> ``entropy``.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from iclr25.core.icl_order.cluster_search import (
    DEFAULT_MIDDLE,
    MIDDLE_RULES,
    cluster_count,
    cluster_orderings,
)
from iclr25.core.icl_order.models import LoadedModel
from iclr25.core.icl_order.prompts import EncodedTask
from iclr25.core.icl_order.regret import annotate
from iclr25.core.icl_order.scoring import entropy, score_naive
from iclr25.errors import UsageError
from iclr25.parallel import derive_seed

METHODS = ("random", "exhaustive", "cluster", "sample")
CONTROLS = ("exhaustive", "sample", "random")  # what every search is compared with
SELECTIONS = ("random", "similar", "shared")


@dataclass(frozen=True)
class SearchConfig:
    method: str = "cluster"
    k: int = 4  # demonstrations per prompt (the paper's main setting)
    n_candidates: int = 8  # pre-selected candidates per query (n)
    queries: int = 50  # test queries per seed
    seeds: int = 3  # independent draws of queries and candidates, pooled for intervals
    selection: str = "random"
    fixed_set: bool = False  # order a fixed set of k instead of choosing k of n
    max_evaluations: int = 2_000_000  # refuse bigger searches (generous for the embedded model)
    prefix_cache: bool = True  # the KV-cache prefix tree where it saves work (prefix_cache.py)
    middle: str = DEFAULT_MIDDLE  # how cluster search fills the middle (cluster_search.py)
    shard_queries: int = 10  # queries per parallel task (fixed: results ignore --workers)
    bootstrap: int = 2000  # bootstrap resamples for the intervals over queries


def split_method(name: str) -> tuple[str, str | None]:
    """``"cluster@rank"`` -> ("cluster", "rank"): cluster search with another middle rule
    (to compare rules on the same queries); a plain name has no rule of its own."""
    base, _, rule = name.partition("@")
    return base, rule or None


def exhaustive_count(n: int, k: int, fixed_set: bool = False) -> int:
    """P(n, k) = n!/(n-k)! ordered k-subsets (k! with a fixed set)."""
    return math.factorial(k) if fixed_set else math.perm(n, k)


def evaluations_per_query(cfg: SearchConfig, method: str | None = None) -> int:
    method, _ = split_method(method or cfg.method)
    if method == "random":
        return 1
    if method == "exhaustive":
        return exhaustive_count(cfg.n_candidates, cfg.k, cfg.fixed_set)
    return cluster_count(cfg.n_candidates, cfg.k, cfg.fixed_set)  # cluster and sample


def total_evaluations(cfg: SearchConfig, method: str | None = None) -> int:
    return evaluations_per_query(cfg, method) * cfg.queries * cfg.seeds


def candidate_orderings(
    method: str,
    ranked: Sequence[int],
    k: int,
    fixed_set: bool,
    rng: np.random.Generator | None,
    middle: str = DEFAULT_MIDDLE,
    labels: Sequence[int] | None = None,
) -> list[tuple[int, ...]]:
    """The organisations a method scores for one query (candidates best-ranked first)."""
    pool = list(ranked[:k] if fixed_set else ranked)
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
    base, rule = split_method(cfg.method)
    if rule is not None and (base != "cluster" or rule not in MIDDLE_RULES):
        raise UsageError(
            f"unknown method {cfg.method!r}",
            f"a middle rule goes with cluster only: cluster@{'|'.join(MIDDLE_RULES)}",
        )
    for name, value, allowed in (
        ("--method", base, METHODS),
        ("--middle", cfg.middle, MIDDLE_RULES),
        ("--selection", cfg.selection, SELECTIONS),
    ):
        if value not in allowed:
            raise UsageError(f"unknown {name} {value!r}", f"use one of {', '.join(allowed)}")
    if min(cfg.k, cfg.n_candidates, cfg.queries, cfg.seeds, cfg.shard_queries) < 1:
        raise UsageError(
            "--k, --candidates, --queries and --seeds must be positive", "use 1 or more"
        )
    if cfg.k > cfg.n_candidates:
        raise UsageError(
            f"--k {cfg.k} is larger than --candidates {cfg.n_candidates}",
            "choose k <= n candidates",
        )
    if pool_size is not None and cfg.queries + cfg.n_candidates > pool_size:
        raise UsageError(
            f"--queries {cfg.queries} plus --candidates {cfg.n_candidates} exceed the "
            f"task's {pool_size} examples (queries are held out of the demonstration pool)",
            f"lower --queries to {max(1, pool_size - cfg.n_candidates)} or less",
        )


# -- planning: test queries, their candidates, and the shards -------------------------
@dataclass(frozen=True)
class Shard:
    """Queries scored together (one parallel task): per query its candidates, or one
    list for all when ``shared``."""

    seed_index: int
    plan_seed: int
    queries: tuple[int, ...]
    candidates: tuple[tuple[int, ...], ...]
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


def select_candidates(
    lm: LoadedModel | None,
    encoded: EncodedTask,
    selection: str,
    queries: list[int],
    pool: list[int],
    n: int,
    rng: np.random.Generator,
) -> tuple[list[list[int]], bool]:
    """(candidates per query best-ranked first, or one shared list; shared?)."""
    if selection == "similar":
        return _similar_candidates(lm, encoded, queries, pool, n), False
    if selection == "shared":
        return [[pool[i] for i in rng.choice(len(pool), n, replace=False)]], True
    picks = [rng.choice(len(pool), n, replace=False) for _ in queries]
    return [[pool[i] for i in p] for p in picks], False


def plan_shards(
    lm: LoadedModel | None, encoded: EncodedTask, cfg: SearchConfig, seed: int
) -> list[Shard]:
    """Per seed: split the pool into test queries and demonstrations, pre-select the
    candidates, cut the queries into shards of ``cfg.shard_queries``."""
    validate(cfg, len(encoded.demos))
    shards = []
    for s in range(cfg.seeds):
        plan_seed = derive_seed(seed, "search", s)
        rng = np.random.default_rng([plan_seed, 1])
        perm = [int(i) for i in rng.permutation(len(encoded.demos))]
        queries, pool = perm[: cfg.queries], perm[cfg.queries :]
        candidates, shared = select_candidates(
            lm, encoded, cfg.selection, queries, pool, cfg.n_candidates, rng
        )
        for start in range(0, len(queries), cfg.shard_queries):
            part = slice(start, start + cfg.shard_queries)
            cands = candidates if shared else candidates[part]
            shards.append(
                Shard(s, plan_seed, tuple(queries[part]), tuple(map(tuple, cands)), shared)
            )
    return shards


# -- scoring one shard with every method ----------------------------------------------
def make_scorer(lm: LoadedModel, encoded: EncodedTask, prefix_cache: bool, on_batch=None):
    """``score(orderings, queries)`` -> label scores (O, Q, L): through the prefix tree
    where it saves enough work (exhaustive search), else naive (``prefix_cache.py``)."""
    from iclr25.core.icl_order.prefix_cache import score_organisations

    return lambda orders, queries: score_organisations(
        lm, encoded, orders, queries, prefix_cache, on_batch
    )


def _rng(plan_seed: int, method: str, key: int) -> np.random.Generator:
    """The generator of one (plan, method, query); key -1 = a shared candidate group."""
    return np.random.default_rng([plan_seed, METHODS.index(method), key + 1])


def _groups(shard: Shard):
    """(queries, ranked candidates, rng key) scored together."""
    if shard.shared:
        return [(list(shard.queries), list(shard.candidates[0]), -1)]
    return [([q], list(c), q) for q, c in zip(shard.queries, shard.candidates, strict=True)]


def _score_group(score, method, queries, ranked, key, cfg, plan_seed, labels):
    """[(organisations, label scores (O, L))] per query of one group."""
    method, rule = split_method(method)
    if method == "random":  # a fresh random organisation per query
        pairs = []
        for q in queries:
            rng = _rng(plan_seed, method, q)
            orders = candidate_orderings(method, ranked, cfg.k, cfg.fixed_set, rng)
            pairs.append((orders, score(orders, [q])[:, 0]))
        return pairs
    rng = _rng(plan_seed, method, key)
    middle = rule or cfg.middle
    orders = candidate_orderings(method, ranked, cfg.k, cfg.fixed_set, rng, middle, labels)
    scores = score(orders, queries)  # (O, Q, L)
    return [(orders, scores[:, j]) for j in range(len(queries))]


def choose(orders, label_scores: np.ndarray) -> dict:
    """The lowest-entropy organisation (first on ties), its prediction and distribution."""
    from iclr25.core.icl_order.scoring import label_distribution

    h = entropy(label_scores)  # (O,)
    best = int(np.argmin(h))
    return {
        "order": [int(i) for i in orders[best]],
        "entropy": float(h[best]),
        "predicted": int(np.argmax(label_scores[best])),
        "probabilities": [float(p) for p in label_distribution(label_scores[best])],
        "entropies": h,
    }


def search_shard(
    lm: LoadedModel,
    encoded: EncodedTask,
    cfg: SearchConfig,
    methods: Sequence[str],
    shard: Shard,
    on_progress: Callable[[float], None] | None = None,
) -> dict:
    """Every method on the shard's queries: {"records": {method: [per query]},
    "seconds": {method: scoring s}, "evaluations": {method: n}}; with exhaustive among
    the methods each record also has its rank among the exhaustive organisations."""
    score = make_scorer(lm, encoded, cfg.prefix_cache, on_progress)
    out: dict = {"records": {}, "seconds": {}, "evaluations": {}}
    scored: dict[str, list] = {}
    for method in methods:
        records, scored[method], t0 = [], [], time.perf_counter()
        for queries, ranked, key in _groups(shard):
            pairs = _score_group(
                score, method, queries, ranked, key, cfg, shard.plan_seed, encoded.labels
            )
            for (orders, label_scores), q in zip(pairs, queries, strict=True):
                pick = choose(orders, label_scores)
                scored[method].append((orders, pick.pop("entropies")))
                gold = encoded.answer(q)
                pick.update(query=q, gold=gold, correct=pick["predicted"] == gold)
                records.append({"seed": shard.seed_index, **pick})
        out["seconds"][method] = time.perf_counter() - t0
        out["evaluations"][method] = sum(len(orders) for orders, _ in scored[method])
        out["records"][method] = records
    if "exhaustive" in methods:
        for method in methods:
            if method != "exhaustive":
                annotate(out["records"][method], scored["exhaustive"])
    return out


# -- budget ----------------------------------------------------------------------------
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
    from iclr25.core.icl_order.embeddings import format_count

    total = sum(total_evaluations(cfg, m) for m in methods)
    parts = " + ".join(f"{format_count(evaluations_per_query(cfg, m))} {m}" for m in methods)
    per_eval = estimate_seconds_per_evaluation(lm, encoded, cfg.k)
    return Estimate(total, parts + " per query", total * per_eval)


def affordable_methods(
    cfg: SearchConfig, compare: Sequence[str]
) -> tuple[tuple[str, ...], list[str]]:
    """(methods to run, controls dropped): ``cfg.method`` first, then the ``compare``
    methods; a control (not ``cfg.method``) that would take the search above
    ``max_evaluations`` is dropped, most expensive first, and named in the second list."""
    methods = list(dict.fromkeys((cfg.method, *compare)))
    for m in methods:
        validate(replace(cfg, method=m))
    dropped = []
    while sum(total_evaluations(cfg, m) for m in methods) > cfg.max_evaluations:
        costly = max(methods[1:], key=lambda m: total_evaluations(cfg, m), default=None)
        if costly is None or total_evaluations(cfg, costly) <= total_evaluations(cfg, "random"):
            break
        methods.remove(costly)
        dropped.append(costly)
    return tuple(methods), dropped


def check_budget(lm: LoadedModel, encoded: EncodedTask, cfg: SearchConfig, methods) -> Estimate:
    """The estimate of ``methods``; refuse (saying the estimate) above the budget."""
    estimate = estimate_search(lm, encoded, cfg, methods)
    if estimate.evaluations > cfg.max_evaluations:
        raise UsageError(
            f"this search needs {estimate.describe(cfg.queries * cfg.seeds)}, above "
            f"--max-evaluations {cfg.max_evaluations:,}",
            "raise --max-evaluations, lower --queries/--seeds/--candidates/--k, or use "
            "--method cluster",
        )
    return estimate


def planned_evaluations(cfg: SearchConfig, methods: Sequence[str]) -> int:
    """Model evaluations of ``methods`` (for progress bars); checks every method first."""
    for m in methods:
        validate(replace(cfg, method=m))
    return sum(total_evaluations(cfg, m) for m in methods)

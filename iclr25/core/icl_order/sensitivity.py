"""How much the order of a fixed set of demonstrations changes what the model predicts.

The premise of the paper (Pham et al., ICLR 2025, Sec. 1; after Lu et al., ACL 2022,
"Fantastically ordered prompts"): in-context accuracy depends on the order of the k
demonstrations. Before searching orders it is worth measuring whether they matter for the
model and task at hand. Design (one fixed test set, many demonstration subsets):

1. ``queries`` test examples are held out; they are the same for every draw;
2. each of ``draws`` draws picks a subset S_d of k demonstrations from the rest;
3. every ordering π of S_d (all k!, or a seeded sample) is scored on every test query
   (``score_prefix_tree``: the depth-k prefixes are cached, each (π, query) costs only
   the query's tokens); prediction = argmax of the label distribution.

Measured (a[d, π] = accuracy of ordering π of S_d over the test queries):

* ``accuracy_spread``: mean over draws of max_π a[d, π] - min_π a[d, π];
* ``flip_rate``: share of (draw, query) pairs whose prediction is not the same under
  every ordering;
* ``variance_between_subsets``: Var_d(mean_π a[d, π]) (sample variance over draws) —
  what choosing a different subset changes;
* ``variance_between_orders``: mean_d Var_π(a[d, π]) (over all orderings of a subset) —
  what reordering one subset changes;
* ``position_bias``: for each position p, the share of predictions equal to the label of
  the demonstration at p minus the same share for the gold labels (> 0: the model copies
  that position's label more often than the truth warrants; a recency bias shows as the
  last position's excess above the others);
* ``accuracy``: mean of a[d, π] (with the task's chance, the majority-label share).

Intervals: 95 % percentile bootstrap over draws (the draws are the independent units;
the test queries are fixed), ``bootstrap`` resamples from a seeded generator.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from iclr25.core.icl_order.embeddings import all_orderings
from iclr25.core.icl_order.models import LoadedModel
from iclr25.core.icl_order.prompts import EncodedTask, check_length
from iclr25.errors import UsageError

#: below this flip rate (upper end of its interval) order is reported as not mattering
ORDER_MATTERS_FLIP_RATE = 0.05
STATISTICS = (
    "accuracy_spread",
    "flip_rate",
    "variance_between_subsets",
    "variance_between_orders",
    "accuracy",
)


@dataclass(frozen=True)
class SensitivityConfig:
    k: int = 4  # demonstrations per prompt (the paper's main setting)
    draws: int = 20  # demonstration subsets S_d
    queries: int = 40  # test queries, shared by every draw
    max_orderings: int = 5040  # 7!: above it, ``sample`` scores a seeded sample
    sample: bool = False
    bootstrap: int = 2000  # bootstrap resamples over draws for the intervals
    prefix_cache: bool = True  # score through the KV-cache prefix tree


def validate(cfg: SensitivityConfig, pool_size: int | None = None) -> None:
    if cfg.k < 2:
        raise UsageError(f"--k {cfg.k} is below 2", "order needs k >= 2 demonstrations")
    if cfg.draws < 2:
        raise UsageError(f"--draws {cfg.draws} is below 2", "use 2 or more (20 by default)")
    if cfg.queries < 1:
        raise UsageError(f"--queries {cfg.queries} is not positive", "use 1 or more")
    if cfg.bootstrap < 100:
        raise UsageError(f"--bootstrap {cfg.bootstrap} is below 100", "use 1000 or more")
    all_orderings(cfg.k, cfg.max_orderings, cfg.sample, np.random.default_rng(0))  # checks k
    if pool_size is not None and cfg.queries + cfg.k > pool_size:
        raise UsageError(
            f"--queries {cfg.queries} plus --k {cfg.k} exceed the task's {pool_size} "
            "examples (test queries are held out of the demonstrations)",
            f"lower --queries to {max(1, pool_size - cfg.k)} or less",
        )


def planned_evaluations(cfg: SensitivityConfig) -> int:
    validate(cfg)
    per_draw = min(math.factorial(cfg.k), cfg.max_orderings)
    return cfg.draws * per_draw * cfg.queries


@dataclass(frozen=True)
class DrawPlan:
    queries: list[int]  # test queries (pool indices), shared by every draw
    subsets: list[list[int]]  # per draw, the k demonstrations
    orderings: list[tuple[int, ...]]  # permutations of range(k)


def plan_draws(encoded: EncodedTask, cfg: SensitivityConfig, seed: int) -> DrawPlan:
    size = len(encoded.demos)
    validate(cfg, size)
    rng = np.random.default_rng([seed, 3])
    perm = [int(i) for i in rng.permutation(size)]
    queries, pool = perm[: cfg.queries], perm[cfg.queries :]
    subsets = [
        [pool[i] for i in rng.choice(len(pool), cfg.k, replace=False)] for _ in range(cfg.draws)
    ]
    orderings = all_orderings(cfg.k, cfg.max_orderings, cfg.sample, rng)
    return DrawPlan(queries, subsets, orderings)


def score_draw(lm, encoded, subset, orderings, queries, prefix_cache=True, on_batch=None):
    """Label scores (O, Q, L) of every ordering of ``subset`` on every query."""
    from iclr25.core.icl_order.prefix_cache import score_organisations

    orders = [tuple(subset[i] for i in o) for o in orderings]
    return score_organisations(lm, encoded, orders, queries, prefix_cache, on_batch)


# -- statistics of predictions (pure numpy; tested on hand-computed cases) -------------
def draw_statistics(
    predicted: np.ndarray, gold: np.ndarray, demo_labels: np.ndarray
) -> dict[str, np.ndarray | float]:
    """Statistics of one draw from predictions (O, Q), gold labels (Q,) and the labels of
    each ordering's demonstrations by position (O, k)."""
    correct = predicted == gold[None, :]  # (O, Q)
    acc = correct.mean(axis=1)  # (O,)
    flips = (predicted != predicted[:1]).any(axis=0)  # (Q,)
    copies = (predicted[:, :, None] == demo_labels[:, None, :]).mean(axis=(0, 1))  # (k,)
    truth = (gold[None, :, None] == demo_labels[:, None, :]).mean(axis=(0, 1))  # (k,)
    return {
        "spread": float(acc.max() - acc.min()),
        "flip_rate": float(flips.mean()),
        "mean_accuracy": float(acc.mean()),
        "order_variance": float(acc.var()),
        "position_excess": copies - truth,
    }


def aggregate(per_draw: list[dict]) -> dict[str, float]:
    """The point statistics over draws (module docstring)."""
    means = np.array([d["mean_accuracy"] for d in per_draw])
    return {
        "accuracy_spread": float(np.mean([d["spread"] for d in per_draw])),
        "flip_rate": float(np.mean([d["flip_rate"] for d in per_draw])),
        "variance_between_subsets": float(means.var(ddof=1)) if len(means) > 1 else 0.0,
        "variance_between_orders": float(np.mean([d["order_variance"] for d in per_draw])),
        "accuracy": float(means.mean()),
    }


def bootstrap_intervals(
    per_draw: list[dict], resamples: int, rng: np.random.Generator, level: float = 0.95
) -> dict[str, list[float]]:
    """Percentile intervals of every statistic of :func:`aggregate`, resampling draws."""
    n = len(per_draw)
    samples = {key: np.empty(resamples) for key in STATISTICS}
    for b in range(resamples):
        picked = [per_draw[i] for i in rng.integers(n, size=n)]
        for key, value in aggregate(picked).items():
            samples[key][b] = value
    tail = 100 * (1 - level) / 2
    return {
        key: [float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail))]
        for key, v in samples.items()
    }


def summarise(per_draw: list[dict], resamples: int, seed: int) -> dict:
    point = aggregate(per_draw)
    intervals = bootstrap_intervals(per_draw, resamples, np.random.default_rng([seed, 4]))
    excess = np.stack([d["position_excess"] for d in per_draw])  # (D, k)
    rng = np.random.default_rng([seed, 6])
    means = excess[rng.integers(len(excess), size=(resamples, len(excess)))].mean(axis=1)
    return {
        **{key: {"value": point[key], "interval": intervals[key]} for key in STATISTICS},
        "position_bias": [float(v) for v in excess.mean(axis=0)],
        "position_bias_interval": [
            [float(lo), float(hi)]
            for lo, hi in zip(*np.percentile(means, [2.5, 97.5], axis=0), strict=True)
        ],  # (k, 2): 95 % bootstrap interval over draws, per position
        "spread_by_draw": [d["spread"] for d in per_draw],
    }


def order_verdict(results: dict) -> str:
    """One line: does order matter here? (the bare analysis prints it before search)."""
    high = results["flip_rate"]["interval"][1]
    if high <= ORDER_MATTERS_FLIP_RATE:
        return (
            f"order changes ≤ {100 * high:.1f}% of predictions: search results below are "
            "about selection, not ordering"
        )
    low = results["flip_rate"]["interval"][0]
    return (
        f"order matters: it changes {100 * low:.0f}-{100 * high:.0f}% of predictions; "
        f"accuracy spread across orderings of one set "
        f"{100 * results['accuracy_spread']['value']:.1f} points on average"
    )


def measure_sensitivity(
    lm: LoadedModel,
    encoded: EncodedTask,
    cfg: SensitivityConfig,
    seed: int,
    on_progress: Callable[[float], None] | None = None,
) -> dict:
    check_length(encoded, cfg.k, getattr(lm.model.config, "max_position_embeddings", None))
    plan = plan_draws(encoded, cfg, seed)
    gold = np.asarray([encoded.answer(q) for q in plan.queries])
    per_draw = []
    for subset in plan.subsets:
        scores = score_draw(
            lm, encoded, subset, plan.orderings, plan.queries, cfg.prefix_cache, on_progress
        )
        predicted = scores.argmax(axis=-1)  # (O, Q)
        demo_labels = np.array([[encoded.labels[subset[i]] for i in o] for o in plan.orderings])
        per_draw.append(draw_statistics(predicted, gold, demo_labels))
    out = summarise(per_draw, cfg.bootstrap, seed)
    out.update(
        k=cfg.k, draws=cfg.draws, queries=cfg.queries, orderings_per_draw=len(plan.orderings)
    )
    return out

"""Measure the clustering property over many (query, demonstration set) draws.

Paper: Pham, Le, Ngo, Tran, "Rapid Selection and Ordering of In-Context Demonstrations
via Prompt Embedding Clustering", ICLR 2025, Sec. 3 (the clustering property, Fig. 1 and
3a). Per draw: k demonstrations and a query are drawn from the task's pool (distinct
examples); all k! orderings (or a seeded sample) are embedded as the last token's hidden
state; the partitions by each position are scored (``clustering.py``). Over draws we
report the mean and a 95 % t-interval half-width.

Symbols: ``k`` -> k (demonstrations per prompt), ``orderings`` -> the permutations σ of
the demonstration set, ``x`` -> the prompt embeddings e(σ) stacked (N, d).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from iclr25.core.icl_order.clustering import position_metrics, project_2d, summarise_positions
from iclr25.core.icl_order.embeddings import all_orderings, embed_orderings
from iclr25.core.icl_order.models import LoadedModel
from iclr25.core.icl_order.prompts import EncodedTask, check_length
from iclr25.errors import UsageError

METRICS = ("silhouette", "purity", "distance_ratio")
MAX_ORDERINGS_LIMIT = 40_320  # 8!: silhouettes need N^2 distances per draw


@dataclass(frozen=True)
class ClusterConfig:
    k: int = 4  # demonstrations per prompt (the paper's main setting)
    draws: int = 20  # (query, demonstration set) draws averaged over
    max_orderings: int = 5040  # 7!: above it, --sample embeds a seeded sample
    sample: bool = False
    layer: int = -1  # hidden_states index: -1 = final layer
    projection: str = "auto"  # plot: "umap" when installed ("auto"), else "pca"


@dataclass
class ClusterResult:
    results: dict
    projection: dict = field(default_factory=dict)  # first draw's 2-D view (for the plot)


def mean_ci95(values: list[float]) -> tuple[float, float]:
    """Mean and 95 % t-interval half-width of the finite values (NaN when none)."""
    from scipy import stats

    arr = np.asarray([v for v in values if np.isfinite(v)], dtype=np.float64)
    if arr.size == 0:
        return float("nan"), float("nan")
    if arr.size == 1:
        return float(arr[0]), float("nan")
    half = stats.t.ppf(0.975, arr.size - 1) * arr.std(ddof=1) / np.sqrt(arr.size)
    return float(arr.mean()), float(half)


def validate(cfg: ClusterConfig, pool_size: int | None = None) -> None:
    """Check the options (and, given the pool size, that the task is large enough)."""
    if cfg.k < 2:
        raise UsageError(f"--k {cfg.k} is below 2", "clustering needs k >= 2 demonstrations")
    if pool_size is not None and cfg.k + 1 > pool_size:
        raise UsageError(
            f"--k {cfg.k} needs {cfg.k + 1} distinct examples (k demonstrations and a query), "
            f"the task has {pool_size}",
            "lower --k or add examples to the task file",
        )
    if cfg.draws < 1:
        raise UsageError(f"--draws {cfg.draws} is not positive", "use 1 or more (20 by default)")
    if not 2 <= cfg.max_orderings <= MAX_ORDERINGS_LIMIT:
        raise UsageError(
            f"--max-orderings {cfg.max_orderings:,} is outside 2..{MAX_ORDERINGS_LIMIT:,} "
            "(8!; silhouettes need the distances of every pair of orderings)",
            f"use at most {MAX_ORDERINGS_LIMIT:,}, with --sample for k > 8",
        )
    if not cfg.sample and (cfg.k > 20 or math.factorial(cfg.k) > cfg.max_orderings):
        all_orderings(cfg.k, cfg.max_orderings, cfg.sample, np.random.default_rng(0))  # raises


def planned_embeddings(cfg: ClusterConfig) -> int:
    """Prompts embedded over all draws (for progress bars); checks the options first."""
    validate(cfg)
    per_draw = math.factorial(cfg.k) if cfg.k <= 20 else math.inf
    return cfg.draws * int(min(per_draw, cfg.max_orderings))


def _aggregate(per_draw: list[dict], k: int) -> dict:
    """Summary (first/last/middle) of each metric, CIs, and per-position means."""
    out: dict = {}
    for metric in METRICS:
        summaries = [summarise_positions(d[metric]) for d in per_draw]
        out[metric] = {}
        out[f"{metric}_ci95"] = {}
        for part in ("first", "last", "middle"):
            mean, half = mean_ci95([s[part] for s in summaries])
            out[metric][part] = mean
            out[f"{metric}_ci95"][part] = half
    out["by_position"] = {
        metric: [mean_ci95([d[metric][p] for d in per_draw])[0] for p in range(k)]
        for metric in METRICS
    }
    return out


def pair_differences(per_draw: list[dict], metric: str = "silhouette") -> dict:
    """Paired per-draw differences of the first/last/middle summaries: for each pair
    ``"a-b"`` the mean of a - b over draws and its 95 % t-interval (NaN with < 2 draws)."""
    summaries = [summarise_positions(d[metric]) for d in per_draw]
    out = {}
    for a, b in (("first", "last"), ("first", "middle"), ("last", "middle")):
        diffs = [s[a] - s[b] for s in summaries]
        mean, half = mean_ci95(diffs)
        out[f"{a}-{b}"] = {"difference": mean, "interval": [mean - half, mean + half]}
    return out


def measured_pattern(silhouette: dict, differences: dict | None = None) -> str:
    """The measured order of first / last / middle, e.g. ``"first > last ≈ middle"``:
    ``>`` only where the paired interval of the difference excludes zero, else ``≈``."""
    items = [(name, v) for name, v in silhouette.items() if np.isfinite(v)]
    items.sort(key=lambda item: -item[1])
    if not items:
        return ""
    text = items[0][0]
    for (upper, _), (lower, _) in itertools.pairwise(items):
        text += f" {_relation(upper, lower, differences)} {lower}"
    return text


def _relation(upper: str, lower: str, differences: dict | None) -> str:
    if differences is None:
        return ">"
    key, sign = (
        (f"{upper}-{lower}", 1)
        if f"{upper}-{lower}" in differences
        else (
            f"{lower}-{upper}",
            -1,
        )
    )
    low, high = (sign * v for v in differences[key]["interval"])
    low, high = min(low, high), max(low, high)
    return ">" if np.isfinite(low) and low > 0 else "≈"


def analyze_clustering(
    lm: LoadedModel,
    encoded: EncodedTask,
    cfg: ClusterConfig,
    rng: np.random.Generator,
    device: str = "cpu",
    on_progress: Callable[[int], None] | None = None,
) -> ClusterResult:
    """Embed every ordering of ``cfg.draws`` random draws and score the partitions."""
    validate(cfg, len(encoded.demos))
    check_length(encoded, cfg.k, getattr(lm.model.config, "max_position_embeddings", None))
    orderings = all_orderings(cfg.k, cfg.max_orderings, cfg.sample, rng)
    order_arr = np.asarray(orderings)  # (N, k)
    per_draw, projection, draws = [], {}, []
    for draw in range(cfg.draws):
        picked = rng.choice(len(encoded.demos), size=cfg.k + 1, replace=False)
        demos, query = [int(i) for i in picked[:-1]], int(picked[-1])
        x = embed_orderings(lm, encoded, demos, query, orderings, cfg.layer, on_progress)
        per_draw.append(position_metrics(x, order_arr, device))
        draws.append({"query": query, "demonstrations": demos})
        if draw == 0:
            coords, method = project_2d(x, cfg.projection, seed=int(rng.integers(2**31)))
            projection = {
                "coords": coords,
                "first": order_arr[:, 0],
                "last": order_arr[:, -1],
                "method": method,
                "demonstrations": demos,
            }
    results = {
        "k": cfg.k,
        "draws": cfg.draws,
        "orderings_per_draw": len(orderings),
        "layer": cfg.layer,
        **_aggregate(per_draw, cfg.k),
        "chance_purity": 1.0 / cfg.k,
        "draw_examples": draws,
    }
    results["pattern_differences"] = pair_differences(per_draw)
    results["pattern"] = measured_pattern(results["silhouette"], results["pattern_differences"])
    return ClusterResult(results, projection)

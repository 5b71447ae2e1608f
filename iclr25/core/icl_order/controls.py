"""Cluster-based Search against its controls: intervals, paired tests, pass conditions.

The paper's claim (Pham et al., ICLR 2025, Sec. 4-5): searching only the n(n-1) (first,
last) choices saves 92 % to ~100 % of the search time at accuracy comparable to the
exhaustive search. Two things can make such a claim empty, so every search is read
against controls run on the *same* queries and candidates:

* ``exhaustive``: all P(n, k) organisations — the accuracy to keep;
* ``sample``: the best (lowest entropy) of n(n-1) organisations drawn at random — the
  same budget as cluster search without the (first, last) structure. If cluster search
  is no better than ``sample``, the structure adds nothing;
* ``random``: one random organisation, no search.

Over S seeds (each a fresh draw of test queries and candidates) the queries are pooled:
accuracy with a 95 % percentile bootstrap interval over queries, and per method pair
(cluster vs sample, vs exhaustive, vs random) the paired difference with its bootstrap
interval and the exact McNemar test on the queries where exactly one of the two is
right (two-sided binomial test of the discordant pairs). Where exhaustive ran, the mean
rank percentile of each pick among all P(n, k) organisations (``regret.py``) is compared
the same way (paired bootstrap).

Pass conditions, fixed here before any run (:data:`PASS_CONDITIONS`):

* ``keeps_exhaustive_accuracy``: the interval of accuracy(cluster) - accuracy(exhaustive)
  lies above -0.02 (within 2 points);
* ``beats_equal_budget_control``: accuracy(cluster) - accuracy(sample) >= 0 (the
  verdict line also says whether the difference is significant, p < 0.05);
* ``saves_evaluations``: 1 - evaluations(cluster) / evaluations(exhaustive) >= 0.92.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ALPHA = 0.05  # significance level of the paired tests
PASS_CONDITIONS = {
    "keeps_exhaustive_accuracy": (
        "accuracy(cluster) - accuracy(exhaustive): 95% interval above -0.02",
        -0.02,
    ),
    "beats_equal_budget_control": ("accuracy(cluster) - accuracy(sample) >= 0", 0.0),
    "saves_evaluations": ("1 - evaluations(cluster) / evaluations(exhaustive) >= 0.92", 0.92),
}
HYPOTHESIS = (
    "searching only the (first, last) demonstration pairs keeps the accuracy of searching "
    "every organisation, and beats the best of as many random organisations"
)


def bootstrap_mean(
    values: np.ndarray, resamples: int, rng: np.random.Generator, level: float = 0.95
) -> list[float]:
    """Percentile interval of the mean of ``values`` (N,) over resampled rows."""
    n = len(values)
    idx = rng.integers(n, size=(resamples, n))  # (B, N)
    means = values[idx].mean(axis=1)
    tail = 100 * (1 - level) / 2
    return [float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))]


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> dict:
    """Exact McNemar test of paired 0/1 outcomes: counts of discordant pairs and the
    two-sided binomial p-value (1.0 when no pair disagrees)."""
    from scipy.stats import binomtest

    only_a = int(np.sum(a & ~b))
    only_b = int(np.sum(~a & b))
    n = only_a + only_b
    p = 1.0 if n == 0 else float(binomtest(only_a, n, 0.5).pvalue)
    return {"only_first_right": only_a, "only_second_right": only_b, "p_value": p}


def compare_pair(
    first: np.ndarray, second: np.ndarray, resamples: int, rng: np.random.Generator
) -> dict:
    """Paired accuracy difference (first - second), its interval and McNemar's test."""
    diff = first.astype(float) - second.astype(float)
    out = {
        "difference": float(diff.mean()),
        "interval": bootstrap_mean(diff, resamples, rng),
        **mcnemar_exact(first, second),
    }
    out["significant"] = out["p_value"] < ALPHA
    return out


def method_summaries(
    correct: dict[str, np.ndarray], seeds: np.ndarray, resamples: int, rng
) -> dict[str, dict]:
    """Accuracy, its interval, and the accuracy of each seed, per method."""
    out = {}
    for method, hits in correct.items():
        out[method] = {
            "accuracy": float(hits.mean()),
            "interval": bootstrap_mean(hits.astype(float), resamples, rng),
            "accuracy_by_seed": [float(hits[seeds == s].mean()) for s in np.unique(seeds)],
        }
    return out


def compare_methods(
    correct: dict[str, Sequence[bool]],
    seeds: Sequence[int],
    percentiles: dict[str, Sequence[float]] | None = None,
    resamples: int = 2000,
    seed: int = 0,
    main: str = "cluster",
) -> dict:
    """Summaries of every method and paired comparisons of ``main`` with the others."""
    rng = np.random.default_rng([seed, 5])
    hits = {m: np.asarray(v, dtype=bool) for m, v in correct.items()}
    seed_arr = np.asarray(seeds)
    out = {"methods": method_summaries(hits, seed_arr, resamples, rng), "paired": {}}
    for other in (m for m in hits if m != main):
        out["paired"][f"{main}_vs_{other}"] = compare_pair(hits[main], hits[other], resamples, rng)
    if percentiles:
        pct = {m: np.asarray(v, dtype=float) for m, v in percentiles.items()}
        for method, values in pct.items():
            out["methods"][method]["mean_percentile"] = float(values.mean())
            out["methods"][method]["percentile_interval"] = bootstrap_mean(values, resamples, rng)
        for other in (m for m in pct if m != main):
            diff = pct[main] - pct[other]
            out["paired"][f"{main}_vs_{other}"]["percentile_difference"] = {
                "difference": float(diff.mean()),
                "interval": bootstrap_mean(diff, resamples, rng),
            }
    return out


def pass_conditions(comparison: dict, evaluations: dict[str, int], main: str = "cluster") -> list:
    """Each condition of :data:`PASS_CONDITIONS` with its measured value and verdict
    (``not measured`` when its control did not run)."""
    paired = comparison["paired"]
    rows = []
    ex = paired.get(f"{main}_vs_exhaustive")
    rows.append(
        _row(
            "keeps_exhaustive_accuracy",
            ex and ex["difference"],
            ex and ex["interval"],
            ex is not None and ex["interval"][0] >= PASS_CONDITIONS["keeps_exhaustive_accuracy"][1],
        )
    )
    sample = paired.get(f"{main}_vs_sample")
    rows.append(
        _row(
            "beats_equal_budget_control",
            sample and sample["difference"],
            sample and sample["interval"],
            sample is not None and sample["difference"] >= 0,
        )
    )
    saved = None
    if "exhaustive" in evaluations and main in evaluations:
        saved = 1 - evaluations[main] / evaluations["exhaustive"]
    rows.append(_row("saves_evaluations", saved, None, saved is not None and saved >= 0.92))
    return rows


def _row(name: str, value, interval, passed: bool) -> dict:
    statement, _ = PASS_CONDITIONS[name]
    verdict = "not measured" if value is None else ("met" if passed else "not met")
    return {
        "name": name,
        "condition": statement,
        "measured": value,
        "interval": interval,
        "verdict": verdict,
    }


def verdict_line(comparison: dict, main: str = "cluster") -> str:
    """Which paired differences are significant, in one line."""
    parts = []
    for name, pair in comparison["paired"].items():
        other = name.split("_vs_", 1)[1]
        low, high = pair["interval"]
        state = "significant" if pair["significant"] else "not significant"
        parts.append(
            f"{main} vs {other}: {100 * pair['difference']:+.1f} points "
            f"[{100 * low:+.1f}, {100 * high:+.1f}], McNemar p = {pair['p_value']:.3g} "
            f"({state})"
        )
    if not parts:
        return f"{main} was compared with no control"
    if not any(p["significant"] for p in comparison["paired"].values()):
        parts.append("no significant difference at this size")
    return "; ".join(parts)

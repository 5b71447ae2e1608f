"""Statistics of the embedded experiment: gains with intervals, pass conditions, verdict.

Metric: corpus chrF (sacrebleu's) of each arm on each seed's 200 test sentences. A gain
``a − b`` is the mean over seeds of chrF_a − chrF_b; its 95 % interval comes from a
two-level paired bootstrap: draw the seeds with replacement, then within each drawn
seed the test sentences with replacement (the same sentences for both arms), score
both arms on the resampled sentences and average the differences over the drawn seeds;
2.5 / 97.5 percentiles of ``n_boot`` such draws.

Pass conditions (fixed here, before any run — issue 22):

1. ``mufu_beats_plain``: the lower bound of mufu − plain is above 0;
2. ``mufu_beats_teacher``: the lower bound of mufu − teacher is above 0;
3. ``shuffled_control``: shuffled − plain ≤ half of mufu − plain (means), and the lower
   bound of mufu − shuffled is above 0 (the candidates help because they match the
   sentence, not because prompts are longer).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from iclr25.core.mufu.chrf import ChrfParams
from iclr25.gpu.kernels.chrf_stats import bootstrap_sums

GAINS = {
    "mufu_vs_plain": ("mufu", "plain"),
    "mufu_vs_teacher": ("mufu", "teacher"),
    "mufu_vs_shuffled": ("mufu", "shuffled"),
    "shuffled_vs_plain": ("shuffled", "plain"),
    "unrelated_vs_plain": ("unrelated", "plain"),
}
CONDITIONS = {
    "mufu_beats_plain": "lower bound of mufu − plain > 0",
    "mufu_beats_teacher": "lower bound of mufu − teacher > 0",
    "shuffled_control": "shuffled − plain ≤ ½ (mufu − plain) and "
    "lower bound of mufu − shuffled > 0",
}


def corpus_chrf(stats: np.ndarray) -> float:
    compute = ChrfParams().metric()._compute_score_from_stats
    return float(compute(np.asarray(stats).sum(axis=0).tolist()).score)


def _scores(sums: np.ndarray) -> np.ndarray:
    compute = ChrfParams().metric()._compute_score_from_stats
    return np.array([compute(row).score for row in sums.tolist()])


def gain(
    stats: Mapping[str, list[np.ndarray]], a: str, b: str, n_boot: int, seed: int, device="cpu"
) -> dict:
    """Mean over seeds of chrF_a − chrF_b and its two-level bootstrap 95 % interval."""
    sa, sb = stats[a], stats[b]
    per_seed = [corpus_chrf(x) - corpus_chrf(y) for x, y in zip(sa, sb, strict=True)]
    rng = np.random.default_rng(seed)
    n_seeds = len(sa)
    seed_draws = rng.integers(0, n_seeds, size=(n_boot, n_seeds))  # (R, S)
    diffs = np.zeros((n_boot, n_seeds))
    for j in range(n_seeds):
        n = len(sa[j])
        idx = rng.integers(0, n, size=(n_boot, n_seeds, n))  # every (r, s) slot, used if drawn
        slots = np.argwhere(seed_draws == j)  # (m, 2): resample r, slot s that drew seed j
        if len(slots) == 0:
            continue
        rows = idx[slots[:, 0], slots[:, 1]]  # (m, n)
        da = _scores(bootstrap_sums(sa[j], rows, device))
        db = _scores(bootstrap_sums(sb[j], rows, device))
        diffs[slots[:, 0], slots[:, 1]] = da - db
    means = diffs.mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return {"mean": float(np.mean(per_seed)), "ci95": [float(lo), float(hi)], "per_seed": per_seed}


def conditions(gains: Mapping[str, dict | None]) -> dict[str, bool | None]:
    """Each condition met (True) or not (False); None: not evaluated, its arm was not run
    (``--arms`` without ``shuffled``). A run passes only when every condition is True."""
    mp, mt = gains["mufu_vs_plain"], gains["mufu_vs_teacher"]
    ms, sp = gains.get("mufu_vs_shuffled"), gains.get("shuffled_vs_plain")
    control = None
    if ms is not None and sp is not None:
        control = bool(sp["mean"] <= 0.5 * mp["mean"] and ms["ci95"][0] > 0)
    return {
        "mufu_beats_plain": bool(mp["ci95"][0] > 0),
        "mufu_beats_teacher": bool(mt["ci95"][0] > 0),
        "shuffled_control": control,
    }


def fmt_gain(name: str, g: Mapping) -> str:
    a, b = GAINS.get(name, (name, ""))
    lo, hi = g["ci95"]
    return f"{a} − {b} = {g['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}] chrF"


def verdict(gains: Mapping[str, dict], passed: Mapping[str, bool]) -> str:
    """One plain sentence: reproduced, or which condition failed with its numbers."""
    skipped = [n for n, ok in passed.items() if ok is None]
    note = f" ({', '.join(skipped)} not evaluated: its arm was not run)" if skipped else ""
    if all(ok is not False for ok in passed.values()):
        shown = ("mufu_vs_plain", "mufu_vs_teacher", "mufu_vs_shuffled")
        head = "effect reproduced" if not skipped else "no condition failed"
        return f"{head}{note}: " + "; ".join(
            fmt_gain(n, gains[n]) for n in shown if gains.get(n) is not None
        )
    failed = []
    if not passed["mufu_beats_plain"]:
        failed.append(fmt_gain("mufu_vs_plain", gains["mufu_vs_plain"]))
    if not passed["mufu_beats_teacher"]:
        failed.append(fmt_gain("mufu_vs_teacher", gains["mufu_vs_teacher"]))
    if passed["shuffled_control"] is False:
        failed.append(
            fmt_gain("shuffled_vs_plain", gains["shuffled_vs_plain"])
            + " against half of mufu − plain "
            + f"({0.5 * gains['mufu_vs_plain']['mean']:+.2f}); "
            + fmt_gain("mufu_vs_shuffled", gains["mufu_vs_shuffled"])
        )
    names = ", ".join(n for n, ok in passed.items() if ok is False)
    return f"effect not reproduced ({names}){note}: " + "; ".join(failed)


def headline(results: Mapping) -> str:
    """The one line the demo and the docs show for an experiment run."""
    g = results["gain"]["mufu_vs_plain"]
    lo, hi = g["ci95"]
    chrf = results["chrf"]
    text = (
        f"mufu {chrf['mufu']['mean']:.1f} vs plain {chrf['plain']['mean']:.1f} chrF "
        f"(+{g['mean']:.2f} [{lo:+.2f}, {hi:+.2f}]), teacher {chrf['teacher']['mean']:.1f}"
    ).replace("+-", "−")
    if results["passed"]:
        return text + f"; all {len(results['conditions'])} conditions met"
    missed = ", ".join(n for n, ok in results["conditions"].items() if ok is False)
    skipped = ", ".join(n for n, ok in results["conditions"].items() if ok is None)
    if not missed:
        return text + f"; no condition failed ({skipped} not evaluated)"
    return text + f"; NOT reproduced: {missed}" + (f" ({skipped} not evaluated)" if skipped else "")

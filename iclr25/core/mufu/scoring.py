"""Scoring translations: corpus chrF / chrF++, sacrebleu's paired bootstrap, copy analysis.

Every score is sacrebleu's: statistics from :mod:`chrf` (equal to sacrebleu's integers),
scores from sacrebleu's ``_compute_score_from_stats``, the confidence interval from
``sacrebleu.significance.estimate_ci`` and the p-value from its ``_compute_p_value``.

**Paired bootstrap** (sacrebleu's ``_paired_bs_test``, Koehn 2004): resample indices
``np.random.default_rng(seed).choice(n, (n_samples, n))`` (seed 12345 unless
``SACREBLEU_SEED`` says otherwise, as sacrebleu), each resample's statistics summed
(exactly, in integers: :func:`iclr25.gpu.kernels.chrf_stats.bootstrap_sums`) and scored.
sacrebleu scores the float32 sums; :func:`f32_scores` evaluates its
``_compute_f_score`` with the same float32 operations in the same order for all
resamples at once, and every run checks it against sacrebleu's function on the first
resamples (any difference: sacrebleu's function scores them all). The result equals
sacrebleu's whenever each resample's summed counts stay below 2^24 (float32 integers).

**Copy analysis**: for each output, the input (auxiliary candidate or draft) with the
highest sentence chrF, and the share of its character n-grams (orders 1..6 pooled, as
chrF pools them) that occur in no input.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from iclr25.core.mufu.chrf import (
    ChrfParams,
    char_symbols,
    score,
    segment_statistics,
    sentence_scores,
    signature,
)

SACREBLEU_DEFAULT_SEED = 12345
CHECKED_RESAMPLES = 16  # resamples scored by sacrebleu's function to check f32_scores
CHRF2 = ChrfParams()  # sacrebleu's default chrF


def corpus(hyps: Sequence[str], refs: Sequence[str], device: str = "cpu") -> dict:
    """chrF, chrF++ (sacrebleu's numbers), their signatures, n and per-sentence chrF."""
    chrf_p, pp_p = ChrfParams(), ChrfParams(word_order=2)
    stats_pp = segment_statistics(hyps, refs, pp_p, device)  # chars then words
    stats = stats_pp[:, : 3 * chrf_p.char_order]
    return {
        "chrf": score(stats, chrf_p),
        "chrf_pp": score(stats_pp, pp_p),
        "signature": signature(chrf_p),
        "signature_pp": signature(pp_p),
        "n": len(hyps),
        "per_sentence": sentence_scores(stats, chrf_p).tolist(),
        "_stats": stats,
    }


# ---------------------------------------------------------------------------------------
# sacrebleu's float32 scoring of resamples, vectorised
# ---------------------------------------------------------------------------------------
def f32_scores(sums: np.ndarray, params: ChrfParams = CHRF2) -> list:
    """sacrebleu's ``_compute_f_score`` of float32 statistics rows (R, 3*orders), as the
    list of its return values (np.float32, or the float 0.0 when it returns that)."""
    if params.eps_smoothing:
        raise ValueError("f32_scores transcribes the default (effective order) path only")
    s = np.asarray(sums, dtype=np.float32)
    factor = np.float32(params.beta**2)
    avg_p = np.zeros(len(s), dtype=np.float32)
    avg_r = np.zeros(len(s), dtype=np.float32)
    eff = np.zeros(len(s), dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(params.orders):
            h, r, m = s[:, 3 * i], s[:, 3 * i + 1], s[:, 3 * i + 2]
            both = (h > 0) & (r > 0)
            avg_p = np.where(both, avg_p + m / h, avg_p)
            avg_r = np.where(both, avg_r + m / r, avg_r)
            eff += both
        e = np.maximum(eff, 1).astype(np.float32)
        avg_p = np.where(eff > 0, avg_p / e, np.float32(0))
        avg_r = np.where(eff > 0, avg_r / e, np.float32(0))
        num = (np.float32(1) + factor) * avg_p * avg_r
        out = np.float32(100) * (num / (factor * avg_p + avg_r))
    nonzero = (avg_p + avg_r) != 0
    return [np.float32(v) if ok else 0.0 for v, ok in zip(out, nonzero, strict=True)]


def resample_scores(sums: np.ndarray, params: ChrfParams = CHRF2) -> np.ndarray:
    """Scores of integer resample sums as sacrebleu computes them from float32 sums."""
    compute = params.metric()._compute_score_from_stats
    f32 = sums.astype(np.float32)
    if params.eps_smoothing:
        return np.array([compute(row).score for row in f32])
    fast = f32_scores(f32, params)
    check = [compute(row).score for row in f32[:CHECKED_RESAMPLES]]
    if any(not _same(a, b) for a, b in zip(fast, check, strict=False)):
        return np.array([compute(row).score for row in f32])
    return np.array(fast)


def _same(a, b) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b))


def sacrebleu_seed() -> int | None:
    """sacrebleu's bootstrap seed: ``SACREBLEU_SEED`` (``none`` = unseeded) or 12345."""
    value = os.environ.get("SACREBLEU_SEED", str(SACREBLEU_DEFAULT_SEED))
    return None if value.lower() == "none" else int(value)


def resample_indices(n: int, n_samples: int, seed: int | None) -> np.ndarray:
    """sacrebleu's resample indices (R, n), drawn exactly as ``_paired_bs_test`` does."""
    return np.random.default_rng(seed).choice(n, size=(n_samples, n), replace=True)


# ---------------------------------------------------------------------------------------
# Bootstrap
# ---------------------------------------------------------------------------------------
def bootstrap(
    stats: np.ndarray,
    baseline_stats: np.ndarray | None = None,
    params: ChrfParams = CHRF2,
    n_samples: int = 1000,
    seed: int | None = SACREBLEU_DEFAULT_SEED,
    device: str = "cpu",
) -> dict:
    """sacrebleu's bootstrap of one system (``corpus_score(n_bootstrap=...)``), or its
    paired bootstrap against a baseline (``paired-bs``): mean, 95 % interval, p-value."""
    from sacrebleu.significance import _compute_p_value, estimate_ci

    n = len(stats)
    if n == 0:
        raise ValueError("bootstrap of an empty corpus")
    if baseline_stats is not None and len(baseline_stats) != n:
        raise ValueError(f"{n} system segments but {len(baseline_stats)} baseline segments")
    idx = resample_indices(n, n_samples, seed)
    sys_sums, base_sums = _resample_sums(stats, baseline_stats, idx, device)
    sys_scores = resample_scores(sys_sums, params)
    mean, half = estimate_ci(sys_scores)
    ordered = np.sort(sys_scores)
    lo, hi = ordered[n_samples // 40], ordered[n_samples - n_samples // 40 - 1]
    out = {
        "score": score(stats, params),
        "mean": float(mean),
        "ci95": [float(lo), float(hi)],
        "ci95_half": float(half),
        "n_samples": n_samples,
        "seed": seed,
        "p_value": None,
    }
    if baseline_stats is not None:
        base_scores = resample_scores(base_sums, params)
        base_score = score(baseline_stats, params)
        diffs = np.abs(sys_scores - base_scores)
        out["p_value"] = float(
            _compute_p_value(diffs - diffs.mean(), abs(base_score - out["score"]))
        )
        out["baseline_score"] = base_score
        out["baseline_mean"] = float(estimate_ci(base_scores)[0])
    return out


def _resample_sums(stats, baseline_stats, idx, device: str):
    """(R, S) resample sums of the system and of the baseline (None without one); on the
    CPU both in one pass over the draws (the kernel takes at most ``MAX_STATS`` columns)."""
    from iclr25.gpu.kernels.chrf_stats import bootstrap_sums

    if baseline_stats is None:
        return bootstrap_sums(stats, idx, device), None
    if device == "cuda":
        return bootstrap_sums(stats, idx, device), bootstrap_sums(baseline_stats, idx, device)
    width = np.shape(stats)[1]
    sums = bootstrap_sums(np.hstack([stats, baseline_stats]), idx, device)  # (R, 2S)
    return sums[:, :width], sums[:, width:]


# ---------------------------------------------------------------------------------------
# Copy analysis
# ---------------------------------------------------------------------------------------
def copy_analysis(
    outputs: Sequence[str], inputs: Mapping[str, Sequence[str]], device: str = "cpu"
) -> dict:
    """Closest input per output (sentence chrF) and the share of novel character n-grams."""
    from iclr25.gpu.kernels.chrf_stats import match_counts

    params = ChrfParams()
    names = list(inputs)
    n = len(outputs)
    if n == 0 or not names:
        return {"closest": [], "closest_share": {}, "novel_share": [], "novel_share_mean": None}
    # (n, k) sentence chrF of each output against each input
    flat_h = [o for o in outputs for _ in names]
    flat_r = [inputs[name][i] for i in range(n) for name in names]
    chrf_nk = sentence_scores(segment_statistics(flat_h, flat_r, params, device), params)
    chrf_nk = chrf_nk.reshape(n, len(names))
    closest = [names[j] for j in np.argmax(chrf_nk, axis=1)]
    # novelty: the inputs of a sentence joined with N-1 zero symbols between them
    gap = params.char_order - 1
    out_sym, out_len = char_symbols(outputs, params)
    pieces, lengths = [], np.zeros(n, dtype=np.int64)
    for i in range(n):
        sym, lens = char_symbols([inputs[name][i] for name in names], params)
        parts = np.split(sym, np.cumsum(lens)[:-1])
        joined = np.concatenate([np.concatenate([p, np.zeros(gap, np.int64)]) for p in parts])
        pieces.append(joined)
        lengths[i] = len(joined)
    ref = np.concatenate(pieces) if pieces else np.zeros(0, np.int64)
    _, covered = match_counts(out_sym, out_len, ref, lengths, params.char_order, True, device)
    total = np.maximum(out_len[:, None] - np.arange(params.char_order)[None, :], 0).sum(axis=1)
    novel = np.where(total > 0, 1.0 - covered.sum(axis=1) / np.maximum(total, 1), 0.0)
    share = {name: closest.count(name) / n for name in names}
    return {
        "closest": closest,
        "closest_chrf": chrf_nk.max(axis=1).tolist(),
        "closest_share": share,
        "novel_share": novel.tolist(),
        "novel_share_mean": float(novel.mean()),
    }

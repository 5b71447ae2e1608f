"""Scoring: the paired bootstrap against sacrebleu's own, for the same seed."""

from __future__ import annotations

import numpy as np

from iclr25.core.mufu.chrf import segment_statistics
from iclr25.core.mufu.scoring import bootstrap


def _texts(rng, n: int):
    words = ["kede", "ñu", "mépa", "wuna", "ta", "jé", "fuwe", "今天", "天气", "好", "नमस्ते"]
    refs = [" ".join(rng.choice(words, size=int(rng.integers(2, 9)))) for _ in range(n)]

    def edit(line: str) -> str:
        toks = line.split()
        toks[int(rng.integers(len(toks)))] = str(rng.choice(words))
        return " ".join(toks)

    return [edit(r) for r in refs], [edit(edit(r)) for r in refs], refs


def test_paired_bootstrap_equals_sacrebleus_paired_bs_test():
    """Mean, 95 % half-width and p-value are sacrebleu's numbers exactly (seed 12345)."""
    from sacrebleu.metrics import CHRF
    from sacrebleu.significance import Result, _paired_bs_test

    system, baseline, refs = _texts(np.random.default_rng(0), 60)
    ours = bootstrap(
        segment_statistics(system, refs), segment_statistics(baseline, refs), n_samples=200
    )
    metric = CHRF()
    base_stats = metric._extract_corpus_statistics(baseline, [refs])
    base = Result(metric._aggregate_and_compute(base_stats).score)
    _, res = _paired_bs_test(
        {"chrF2": (base_stats, base)}, "sys", system, [refs], {"chrF2": metric}, 200, -1, 12345
    )
    peer = res["chrF2"]
    assert (ours["mean"], ours["ci95_half"], ours["p_value"]) == (
        float(peer.mean),
        float(peer.ci),
        float(peer.p_value),
    )
    assert ours["baseline_score"] == base.score

"""Measured sections of docs/mufu.md (`<!-- generated: mufu.<name> -->`).

- ``benchmark``: the chrF statistics and paired-bootstrap comparisons with sacrebleu
  (sizes, per-pair times, equality of the results), from benchmarks/results/mufu.json;
- ``score_demo``: the demo's scoring study (experiments/results/mufu-score-demo.json).
"""

from __future__ import annotations

from docs.sections import num

BENCH = "benchmarks/results/mufu.json"
SCORE_DEMO = "experiments/results/mufu-score-demo.json"


def _timing(doc: dict, label: str) -> dict:
    return (doc.get("timings") or {}).get(label) or {}


def render_benchmark(sources) -> str:
    doc = sources.load(BENCH)
    f = doc["figures"]
    boot_ours, boot_peer = f["bootstrap_ours"], f["bootstrap_sacrebleu"]
    same = "identical" if list(boot_ours) == list(boot_peer) else "**different**"
    lines = [
        f"- statistics: {num(f['statistics_pairs'])} pairs, "
        f"{num(f['statistics_chars_per_sentence'])} characters per reference on average; "
        f"sacrebleu {num(f['sacrebleu_ms_per_pair'])} ms per pair, ours "
        f"{num(f['ours_us_per_pair'])} µs per pair (median wall); CPU-time ratio "
        f"{num(f['statistics_cpu_speedup'])}; the two (n, 18) integer arrays are "
        f"{'equal' if f['statistics_equal'] else '**not equal**'};",
        f"- paired bootstrap: {num(f['bootstrap_sentences'])} sentences, 1,000 resamples; "
        f"mean, 95 % half-width and p-value {same}: ours "
        f"({', '.join(num(x, 6) for x in boot_ours)}), sacrebleu "
        f"({', '.join(num(x, 6) for x in boot_peer)}).",
    ]
    return "\n".join(lines)


def render_score_demo(sources) -> str:
    res = sources.load(SCORE_DEMO)["document"]["results"]
    boot = res["bootstrap"]
    lo, hi = boot["ci95"]
    diff = res["chrf"] - res["baseline_chrf"]
    significant = "significant" if boot["p_value"] < 0.05 else "not significant"
    return (
        f"Drafts: chrF {num(res['chrf'])} (sacrebleu's bootstrap 95 % interval "
        f"[{num(lo)}, {num(hi)}], {boot['n_samples']:,} resamples, seed {boot['seed']}), "
        f"chrF++ {num(res['chrf_pp'])}, on {res['n']} sentences. Copying the sister's "
        f"candidate: chrF {num(res['baseline_chrf'])}. Difference {diff:+.1f} chrF, paired "
        f"bootstrap p = {num(boot['p_value'])} ({significant} at 0.05). Signature "
        f"`{res['signature']}`."
    )


SECTIONS = {"benchmark": render_benchmark, "score_demo": render_score_demo}

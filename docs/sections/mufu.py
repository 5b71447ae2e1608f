"""Measured sections of docs/mufu.md (`<!-- generated: mufu.<name> -->`).

- ``benchmark``: the chrF statistics and paired-bootstrap comparisons with sacrebleu
  (sizes, per-pair times, equality of the results), from benchmarks/results/mufu.json;
- ``score_demo``: the demo's scoring study (experiments/results/mufu-score-demo.json);
- ``model``: the last base-model training run (its training_log.json, written by
  scripts/train_mufu_model.py, copied to experiments/results/mufu-base-model.json):
  schedule, time, sha256 and chrF into every language against the issue's requirement.
"""

from __future__ import annotations

from docs.sections import md_table, num

BENCH = "benchmarks/results/mufu.json"
SCORE_DEMO = "experiments/results/mufu-score-demo.json"
MODEL_LOG = "experiments/results/mufu-base-model.json"  # a copy of the last training_log.json


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


def render_model(sources) -> str:
    log = sources.load(MODEL_LOG)
    cfg = log["config"]
    met = "met" if log["requirement_met"] else "**not met**"
    high = "met" if log["high_resource_met"] else "**not met**"
    gap = "met" if log["target_gap_met"] else "**not met**"
    scores = log["eval_chrf"]
    langs = sorted(scores, key=lambda lang: (lang == "tel", lang))
    rows = [
        [f"`{lang}`" + (" (target)" if lang == "tel" else ""), f"{scores[lang]:.1f}"]
        for lang in langs
    ]
    table = md_table(rows, ["chrF into", f"{cfg['eval_sentences']} held-out sentences"])
    return "\n".join(
        [
            f"Schedule: {num(cfg['steps'])} steps, {num(cfg['warmup'])} of them warm-up (the "
            "recipe's default: 5,000 and 300), "
            f"{num(log['tokens'])} tokens, {num(log['parameters'])} parameters; "
            f"{log['cpu_s'] / 60:.1f} CPU minutes, {log['wall_s'] / 60:.1f} minutes wall "
            f"({log['threads']} torch thread, shared machine); loss "
            + ", ".join(f"{h['loss']:.2f} (step {h['step']})" for h in log["history"])
            + f". Weights `model.safetensors` sha256 "
            f"`{log['sha256']}`.",
            "",
            f"Requirement: high-resource minimum {log['high_resource_min_chrf']:.1f} "
            f"(≥ 80: {high}); `tel` {log['target_chrf']:.1f}, "
            f"{log['target_gap_chrf']:.1f} below it (≥ 20 below: {gap}); overall {met}.",
            "",
            table,
        ]
    )


SECTIONS = {
    "benchmark": render_benchmark,
    "score_demo": render_score_demo,
    "model": render_model,
}

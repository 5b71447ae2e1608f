"""Measured sections of docs/mufu.md (`<!-- generated: mufu.<name> -->`).

- ``benchmark``: the chrF statistics and paired-bootstrap comparisons with sacrebleu
  (sizes, per-pair times, equality of the results), from benchmarks/results/mufu.json;
- ``score_demo``: the demo's scoring study (experiments/results/mufu-score-demo.json);
- ``model``: the last base-model training run (its training_log.json, written by
  scripts/train_mufu_model.py, copied to experiments/results/mufu-base-model.json):
  schedule, time, sha256 and chrF into every language against the issue's requirement;
- ``experiment_quick``: ``iclr25 mufu experiment --quick`` (2 seeds, plain / mufu /
  shuffled; experiments/results/mufu-experiment-quick.json): chrF per arm, gains with
  intervals, the pass conditions and the verdict as measured;
- ``experiment_3seeds``: the same arms on 3 seeds (experiments/results/mufu-experiment-3seeds.json);
- ``experiment_full``: 5 seeds, every arm (experiments/results/mufu-experiment.json);
- ``k_sweep``: gain vs k (``--arms plain,mufu --k 1,3,5``, 3 seeds;
  experiments/results/mufu-k-sweep.json);
- ``budget``: plain and mufu at 3x the default epochs, 2 seeds, with the per-epoch
  validation curve and the same seeds at the default budget from the 5-seed run
  (experiments/results/mufu-budget.json);
- ``word_exposure``: which words the base model knows against how often it saw them
  (scripts/mufu_word_exposure.py, experiments/results/mufu-word-exposure.json).
"""

from __future__ import annotations

from docs.sections import md_table, num

BENCH = "benchmarks/results/mufu.json"
SCORE_DEMO = "experiments/results/mufu-score-demo.json"
MODEL_LOG = "experiments/results/mufu-base-model.json"  # a copy of the last training_log.json
EXPERIMENT_QUICK = "experiments/results/mufu-experiment-quick.json"
EXPERIMENT_3SEEDS = "experiments/results/mufu-experiment-3seeds.json"
EXPERIMENT_FULL = "experiments/results/mufu-experiment.json"
WORD_EXPOSURE = "experiments/results/mufu-word-exposure.json"
K_SWEEP = "experiments/results/mufu-k-sweep.json"
BUDGET = "experiments/results/mufu-budget.json"


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
        f"- paired bootstrap: {num(f['bootstrap_sentences'])} sentences, 1,000 resamples"
        + _boot_timing(doc)
        + f"; mean, 95 % half-width and p-value {same}: ours "
        f"({', '.join(num(x, 6) for x in boot_ours)}), sacrebleu "
        f"({', '.join(num(x, 6) for x in boot_peer)}).",
    ]
    return "\n".join(lines)


def _boot_timing(doc: dict) -> str:
    """Rounds, median times and the CPU-time ratio with its interval (when recorded)."""
    f, t = doc["figures"], _timing(doc, "paired_bootstrap")
    if "bootstrap_cpu_speedup" not in f or not t:
        return ""
    lo, hi = f["bootstrap_cpu_speedup_interval"]
    return (
        f", {f['bootstrap_rounds']} interleaved rounds: ours {num(t['ours']['median_s'])} s "
        f"wall / {num(t['ours']['cpu_median_s'])} s CPU, sacrebleu "
        f"{num(t['sacrebleu']['median_s'])} s / {num(t['sacrebleu']['cpu_median_s'])} s "
        f"(median per call); CPU-time ratio {num(f['bootstrap_cpu_speedup'])} "
        f"[{num(lo)}, {num(hi)}]"
    )


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


def _ranks(log: dict) -> str:
    """Under torchrun the CPU time is rank 0's; say how many processes shared the work."""
    ranks = (log.get("distributed") or {}).get("world_size", 1)
    return f" (rank 0 of {ranks} data-parallel processes, torchrun)" if ranks > 1 else ""


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
    losses = [h for h in log["history"] if "loss" in h]
    if len(losses) > 12:  # every 500th step and the last
        losses = [h for h in losses if h["step"] % 500 == 0 or h is losses[-1]]
    probes = [h for h in log["history"] if "probe" in h]
    return "\n".join(
        [
            f"Schedule: {num(cfg['steps'])} steps, {num(cfg['warmup'])} of them warm-up, "
            f"learning rate {cfg['lr']:g}, batch {cfg['plain_batch']} plain / "
            f"{cfg['mufu_batch']} mufu prompts, "
            f"{num(log['tokens'])} tokens, {num(log['parameters'])} parameters; "
            f"{log['cpu_s'] / 60:.1f} CPU minutes{_ranks(log)}, {log['wall_s'] / 60:.1f} "
            f"minutes wall ({log['threads']} torch thread per process, shared machine); loss "
            + ", ".join(f"{h['loss']:.2f} (step {h['step']})" for h in losses)
            + f". Weights `model.safetensors` sha256 "
            f"`{log['sha256']}`.",
            "",
            *_curve(probes),
            f"Requirement: high-resource minimum {log['high_resource_min_chrf']:.1f} "
            f"(≥ 80: {high}); `tel` {log['target_chrf']:.1f}, "
            f"{log['target_gap_chrf']:.1f} below it (≥ 20 below: {gap}); overall {met}.",
            "",
            table,
        ]
    )


def _curve(probes: list[dict]) -> list[str]:
    """The learning curve: chrF on validation sentences (not the held-out check's)."""
    if not probes:
        return []
    langs = sorted(probes[0]["probe"], key=lambda lang: (lang == "tel", lang))
    high = [lang for lang in langs if lang != "tel"]
    rows = [
        [
            num(h["step"]),
            f"{min(h['probe'][x] for x in high):.1f}",
            f"{sum(h['probe'][x] for x in high) / len(high):.1f}",
            f"{h['probe'].get('tel', float('nan')):.1f}",
        ]
        for h in probes
    ]
    head = ["step", "high-resource min chrF", "high-resource mean", "`tel`"]
    return ["Learning curve (validation sentences, greedy):", "", md_table(rows, head), ""]


def render_experiment_quick(sources) -> str:
    return _experiment(sources.load(EXPERIMENT_QUICK)["document"]["results"])


def render_experiment_3seeds(sources) -> str:
    return _experiment(sources.load(EXPERIMENT_3SEEDS)["document"]["results"])


def render_experiment_full(sources) -> str:
    return _experiment(sources.load(EXPERIMENT_FULL)["document"]["results"])


def _experiment(res: dict) -> str:
    chrf = res["chrf"]
    rows = [
        [f"`{arm}`", v["mean"], ", ".join(f"{x:.1f}" for x in v["per_seed"])]
        for arm, v in chrf.items()
    ]
    gains = [
        [f"`{name}`", g["mean"], f"[{g['ci95'][0]:+.2f}, {g['ci95'][1]:+.2f}]"]
        for name, g in res["gain"].items()
        if g is not None
    ]
    state = {True: "met", False: "**not met**", None: "not evaluated (arm not run)"}
    conditions = [
        f"- {state[ok]}: `{name}` ({res['pass_conditions'][name]})"
        for name, ok in res["conditions"].items()
    ]
    budget = res["budget"]
    first = next(iter(budget.values()))
    teacher = ", ".join(f"`{k}` {v:.1f}" for k, v in res["teacher_chrf_by_lang"].items())
    copy = "; ".join(
        f"`{arm}`: closest to "
        + ", ".join(f"{k} {v:.0%}" for k, v in c["closest_share"].items())
        + f", novel n-grams {c['novel_share_mean']:.0%}"
        for arm, c in res.get("copy", {}).items()
    )
    return "\n".join(
        [
            f"{len(res['seeds'])} seeds; {res['sizes']['train']} / {res['sizes']['valid']} / "
            f"{res['sizes']['test']} `tel` pairs per seed; auxiliary languages "
            f"{', '.join(res['aux_langs'])}; every arm {num(first['steps'])} optimizer steps "
            f"({num(first['epochs'])} epochs, batch {num(first['batch_size'])}, learning rate "
            f"{first['lr']:g}; asserted equal across arms).",
            "",
            md_table(rows, ["arm", "test chrF (mean over seeds)", "per seed"]),
            "",
            md_table(gains, ["gain", "mean chrF", "95 % interval (seeds × sentences)"]),
            "",
            *conditions,
            "",
            f"Verdict: {res['verdict']}.",
            "",
            f"Teacher (base model, plain prompt) chrF on the test sentences: {teacher}. "
            f"Copy analysis: {copy or '—'}.",
        ]
    )


def render_k_sweep(sources) -> str:
    doc = sources.load(K_SWEEP)
    res = doc["document"]["results"]
    chrf, copy = res["chrf"], res.get("copy", {})
    rows = []
    for k, g in sorted(res["gain_vs_k"].items(), key=lambda kv: int(kv[0])):
        arm = "mufu" if f"mufu_k{k}" not in chrf else f"mufu_k{k}"
        c = copy.get(arm, {})
        aux = [x for x in c.get("closest_share", {}) if x != "draft"]
        rows.append(
            [
                k,
                ", ".join(f"`{x}`" for x in aux),
                f"{chrf[arm]['mean']:.1f}",
                f"{g['mean']:+.2f} [{g['ci95'][0]:+.2f}, {g['ci95'][1]:+.2f}]",
                f"{c['closest_share'].get('draft', float('nan')):.0%}" if c else "—",
                f"{c['novel_share_mean']:.0%}" if c else "—",
            ]
        )
    head = [
        "k",
        "auxiliary languages",
        "test chrF",
        "gain vs plain [95 % interval]",
        "outputs closest to the draft",
        "novel n-grams",
    ]
    budget = next(iter(res["budget"].values()))
    return "\n".join(
        [
            f"{len(res['seeds'])} seeds; plain {chrf['plain']['mean']:.1f}, teacher "
            f"{chrf['teacher']['mean']:.1f} chrF; every arm {num(budget['steps'])} optimizer "
            f"steps ({num(budget['epochs'])} epochs; asserted equal across arms); "
            f"{doc['seconds'] / 60:.1f} minutes wall.",
            "",
            md_table(rows, head),
        ]
    )


def render_budget(sources) -> str:
    """The longer budget against the same seeds at the default one (the 5-seed run's
    first seeds: the seeds are derived from --seed 0 alike), and the validation curve."""
    doc = sources.load(BUDGET)
    res = doc["document"]["results"]
    base = sources.load(EXPERIMENT_FULL)["document"]["results"]
    n = len(res["seeds"])
    same = base["seeds"][:n] == res["seeds"]
    epochs = next(iter(res["budget"].values()))["epochs"]
    base_epochs = next(iter(base["budget"].values()))["epochs"]
    arms = [a for a in ("plain", "mufu") if a in res["chrf"]]
    rows = []
    for arm in [*arms, "teacher"]:
        short = base["chrf"][arm]["per_seed"][:n]
        long = res["chrf"][arm]["per_seed"]
        rows.append(
            [
                f"`{arm}`",
                ", ".join(f"{x:.1f}" for x in short),
                ", ".join(f"{x:.1f}" for x in long),
                ", ".join(str(b) for b in res["best_epoch"].get(arm, [])) or "—",
            ]
        )
    head = [
        "arm",
        f"test chrF, {base_epochs} epochs (per seed)",
        f"test chrF, {epochs} epochs (per seed)",
        "best epoch (kept)",
    ]
    curve = []
    hist = {arm: res["validation"][arm] for arm in arms}
    last = len(hist[arms[0]][0]) - 1
    for e in range(last + 1):
        if e > 3 and e % 3 and e != last:
            continue
        row = [e]
        for arm in arms:
            vals = [h[e]["valid_chrf"] for h in hist[arm]]
            loss = [h[e]["loss"] for h in hist[arm]]
            row.append(f"{sum(vals) / len(vals):.1f}")
            row.append("—" if loss[0] is None else f"{sum(loss) / len(loss):.3f}")
        curve.append(row)
    chead = ["epoch"]
    for arm in arms:
        chead += [f"`{arm}` validation chrF", f"`{arm}` training loss"]
    gain, teach = res["gain"]["mufu_vs_plain"], res["gain"]["mufu_vs_teacher"]
    budget = res["budget"]
    origin = f"the 5-seed run's first {n}" if same else "not the 5-seed run's seeds"
    return "\n".join(
        [
            f"{n} seeds ({origin}); "
            f"every arm {num(budget[arms[0]]['steps'])} optimizer steps ({epochs} epochs, "
            f"batch {budget[arms[0]]['batch_size']}, learning rate {budget[arms[0]]['lr']:g}; "
            f"asserted equal across arms: {res['budget_equal']}); "
            f"{doc['seconds'] / 60:.1f} minutes wall. mufu − plain at {epochs} epochs: "
            f"{gain['mean']:+.2f} [{gain['ci95'][0]:+.2f}, {gain['ci95'][1]:+.2f}] chrF; "
            f"mufu − teacher {teach['mean']:+.2f} [{teach['ci95'][0]:+.2f}, "
            f"{teach['ci95'][1]:+.2f}] chrF.",
            "",
            md_table(rows, head),
            "",
            "Validation chrF (100 sentences, mean over seeds) and training loss per epoch "
            "(epoch 0: before finetuning; every third epoch after the third):",
            "",
            md_table(curve, chead),
        ]
    )


def render_word_exposure(sources) -> str:
    res = sources.load(WORD_EXPOSURE)
    rows = [
        [
            f"{num(b['exposures'][0])}–{num(b['exposures'][1])}",
            num(b["words"]),
            f"{b['known']:.0%}",
            f"{b['char_share']:.0%}",
        ]
        for b in res["bins"]
    ]
    head = ["expected exposures per language", "words", "known", "share of characters"]
    return "\n".join(
        [
            f"Model after {num(res['steps'])} steps (sha256 `{str(res['model_sha256'])[:12]}…`); "
            f"{num(res['sentences'])} validation sentences into "
            f"{', '.join(f'`{x}`' for x in res['languages'])}:",
            "",
            md_table(rows, head),
            "",
            f"Known: {res['known_words']:.0%} of the words, {res['known_chars']:.0%} of "
            "their characters.",
        ]
    )


SECTIONS = {
    "benchmark": render_benchmark,
    "score_demo": render_score_demo,
    "model": render_model,
    "experiment_quick": render_experiment_quick,
    "experiment_3seeds": render_experiment_3seeds,
    "experiment_full": render_experiment_full,
    "word_exposure": render_word_exposure,
    "k_sweep": render_k_sweep,
    "budget": render_budget,
}

"""Measured sections of docs/mim-refine.md (`<!-- generated: mim_refine.<name> -->`).

- ``profile``: experiments/results/mim-refine-profile.json (per-block k-NN and probe);
- ``headline``: benchmarks/results/mim-refine.json (scripts/mim_refine_experiment.py: the
  arms per seed, paired comparisons, verdicts, the size run against the issue's);
- ``bench``: benchmarks/results/mim_refine.json (k-NN and extraction speed vs peers);
- ``bundled``: iclr25/data/mim_refine/train_log.json (how the bundled MAE was trained).
"""

from __future__ import annotations

from docs.sections import interval, md_table, num, pct, targets_table

PROFILE = "experiments/results/mim-refine-profile.json"
HEADLINE = "benchmarks/results/mim-refine.json"
BENCH = "benchmarks/results/mim_refine.json"
TRAIN_LOG = "iclr25/data/mim_refine/train_log.json"


def render_profile(sources) -> str:
    res = sources.load(PROFILE)["document"]["results"]
    probe = res["probe_accuracy"] or [None] * len(res["blocks"])
    rows = [
        [b, num(a), num(v), num(p)]
        for b, a, v, p in zip(
            res["blocks"], res["knn_accuracy"], res["knn_val_accuracy"], probe, strict=True
        )
    ]
    d = res["peak_minus_last"]
    return "\n".join(
        [
            f"{res['data']}, model {res['model']['path']} (depth {res['model']['depth']}, "
            f"dim {res['model']['dim']}):",
            "",
            md_table(rows, ["block", "k-NN (test)", "k-NN (validation)", "logistic probe"]),
            "",
            f"Chance {num(res['chance'])}. Peak block (validation) {res['peak_block']} of "
            f"{res['last_block']}; test accuracy peak − last "
            f"{interval(d['mean'], d['ci_low'], d['ci_high'])} (bootstrap 95 %). "
            f"**Verdict: {res['verdict']}**.",
        ]
    )


def _arms_and_comparisons(res: dict) -> list[str]:
    rows = []
    for arm, vals in res["arms"].items():
        per_seed = [", ".join(num(v) for v in vals[key]) for key in ("knn_last", "probe_last")]
        best = ", ".join(num(v) for v in vals.get("knn_best", [])) or "—"
        wall = num(sum(vals["wall_s"]) / len(vals["wall_s"]))
        rows.append([arm, *per_seed, best, wall])
    comps = [
        [c["treatment"], c["control"], c["metric"],
         interval(c["mean_diff"], c["ci_low"], c["ci_high"]), c["verdict"]]
        for c in res["comparisons"]
    ]  # fmt: skip
    return [
        md_table(rows, ["arm", "k-NN last (per seed)", "probe last (per seed)",
                        "k-NN best block (per seed)", "train wall s (mean)"]),
        "",
        md_table(comps, ["treatment", "control", "metric", "mean diff [95 % t-CI]", "verdict"]),
    ]  # fmt: skip


def render_headline(sources) -> str:
    doc = sources.load(HEADLINE)
    res, sizing, raw = doc["document"]["results"], doc["sizing"], doc["raw_pixel_knn"]
    b, prof, run = res["budget"], res["profile"], sizing["run"]
    issue = sizing["issue"]
    size_line = (
        f"Size run: {b['steps_per_arm']} steps per arm ({b['head_only_steps']} heads-only), "
        f"batch {b['batch_size']}, {b['n_train']} train / {b['n_test']} test images = "
        f"{num(b['epochs'])} epochs per arm, {run['seeds']} seeds, "
        f"{run['workers']} worker{'s' if run['workers'] != 1 else ''}. "
        f"Issue 25 asks for ≥ {issue['epochs_per_arm_min']} epochs per arm on "
        f"{num(issue['n_train'])} training images and ≥ {issue['seeds_min']} seeds: "
        + ("met." if sizing["meets_issue_size"] else f"**not met** ({sizing['why']}).")
    )
    d = prof["peak_minus_last"]
    sel = res.get("mae_lr_selection")
    lr_line = (
        f"mae_continued lr (rule fixed before the run: {sel['rule']}): grid "
        + ", ".join(
            f"{lr:g} → {num(acc)}" for lr, acc in zip(sel["grid"], sel["val_knn"], strict=True)
        )
        + f" (validation k-NN, same budget per lr); **chosen {sel['chosen']:g}** (NNA arms: "
        f"{b.get('nna_lr', 1e-3):g}, untuned)."
        if sel
        else f"mae_continued lr {b.get('mae_lr') or 1e-3:g} (no sweep in this run)."
    )
    return "\n".join(
        [
            size_line,
            "",
            lr_line,
            "",
            f"Profile of the bundled MAE on this split: k-NN per block "
            f"{', '.join(num(v) for v in prof['knn_accuracy'])}; peak (validation) block "
            f"{prof['peak_block']} of {prof['last_block']}, peak − last "
            f"{interval(d['mean'], d['ci_low'], d['ci_high'])}: {prof['verdict']}. Raw "
            f"pixels of the same split: {num(raw['protocol_k10_tau0.07'])} with this "
            f"protocol, {num(raw['euclidean_uniform_k10'])} with plain Euclidean 10-NN "
            f"(uniform votes), {num(raw['cosine_uniform_k10'])} with plain cosine 10-NN.",
            "",
            *_arms_and_comparisons(res),
            "",
            f"**headline_holds: {res['headline_holds']}** — {res['headline']}.",
        ]
    )


def render_bench(sources) -> str:
    doc = sources.load(BENCH)
    fig = doc["figures"]
    size, issue = fig["sizes"], fig["issue_sizes"]
    secs = ", ".join(f"{k} {num(v)} s" for k, v in fig["seconds"].items())
    walls = fig.get("wall_seconds")  # newer files: ratios of CPU time, wall times beside
    cpu_or_wall = "CPU time" if walls else "wall time"
    wall = (
        " (median wall: " + ", ".join(f"{k} {num(v)} s" for k, v in walls.items()) + ")"
        if walls
        else ""
    )
    return "\n".join(
        [
            targets_table(doc),
            "",
            f"k-NN over {size['blocks']} blocks, bank {num(size['bank'])} × {size['dim']}, "
            f"{num(size['queries'])} queries, k 10 (issue: {issue['blocks']} blocks, "
            f"{num(issue['queries'])} queries); median {cpu_or_wall} per run of all blocks: "
            f"{secs}{wall}. Predictions agree with ours on "
            f"{pct(fig['agreement']['sklearn'], 2)} (scikit-learn) and "
            f"{pct(fig['agreement']['torch_loop'], 2)} (torch loop) of the queries. "
            f"Extraction: {num(size['images'])} images (issue: {num(issue['images'])}).",
        ]
    )


def render_bundled(sources) -> str:
    log = sources.load(TRAIN_LOG)
    cfg = log["config"]
    rows = [[f"`{name}`", f"`{digest}`"] for name, digest in log["sha256"].items()]
    first, last = log["loss_first_last"]
    return "\n".join(
        [
            f"{cfg['steps']} steps at batch {cfg['batch_size']} ({log['data']}), "
            f"{log['torch_threads']} torch thread, AdamW lr {log['optimizer']['lr']}, "
            f"{log['warmup_steps']} warm-up steps then cosine; training wall time "
            f"{num(log['train_wall_s'])} s ({num(log['train_wall_s'] / 60)} min) on the shared "
            f"machine; loss {num(first)} → {num(last)}.",
            "",
            md_table(rows, ["file (iclr25/data/mim_refine/)", "sha256"]),
        ]
    )


SECTIONS = {
    "profile": render_profile,
    "headline": render_headline,
    "bench": render_bench,
    "bundled": render_bundled,
}

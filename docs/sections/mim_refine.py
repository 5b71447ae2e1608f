"""Measured sections of docs/mim-refine.md (`<!-- generated: mim_refine.<name> -->`).

- ``profile``: experiments/results/mim-refine-profile.json (per-block k-NN and probe);
- ``quick``: experiments/results/mim-refine-experiment-quick.json (the smoke run's arms,
  comparisons and headline; not evidence).
"""

from __future__ import annotations

from docs.sections import interval, md_table, num

PROFILE = "experiments/results/mim-refine-profile.json"
QUICK = "experiments/results/mim-refine-experiment-quick.json"


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


def render_quick(sources) -> str:
    res = sources.load(QUICK)["document"]["results"]
    rows = []
    for arm, vals in res["arms"].items():
        per_seed = [", ".join(num(v) for v in vals[key]) for key in ("knn_last", "probe_last")]
        best = ", ".join(num(v) for v in vals.get("knn_best", [])) or "—"
        rows.append([arm, *per_seed, best])
    comps = [
        [c["treatment"], c["control"], c["metric"],
         interval(c["mean_diff"], c["ci_low"], c["ci_high"]), c["verdict"]]
        for c in res["comparisons"]
    ]  # fmt: skip
    b = res["budget"]
    return "\n".join(
        [
            f"Smoke run (not evidence): {b['steps_per_arm']} steps per arm "
            f"({b['head_only_steps']} heads-only), batch {b['batch_size']}, "
            f"{b['n_train']} train / {b['n_test']} test images, {num(b['epochs'])} epochs.",
            "",
            md_table(rows, ["arm", "k-NN last (per seed)", "probe last (per seed)", "k-NN best"]),
            "",
            md_table(comps, ["treatment", "control", "metric", "mean diff [95 % t-CI]", "verdict"]),
            "",
            f"headline_holds: {res['headline_holds']}; {res['headline']}.",
        ]
    )


SECTIONS = {"profile": render_profile, "quick": render_quick}

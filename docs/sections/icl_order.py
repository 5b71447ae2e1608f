"""Measured sections of docs/icl-order.md (``<!-- generated: icl_order.<name> -->``).

Sources: the embedded model's ``training_log.json`` (written by
``scripts/train_icl_model.py``), the studies ``experiments/results/icl-order-*.json``
(the CLI's own documents) and the benchmark ``benchmarks/results/icl-order.json``.
"""

from __future__ import annotations

from docs.sections import interval, md_table, num, pct

BENCH = "benchmarks/results/icl-order.json"
TRAINING = "iclr25/data/icl_model/training_log.json"
SENSITIVITY = {
    "symbolic-noisy (default)": "experiments/results/icl-order-sensitivity.json",
    "symbolic": "experiments/results/icl-order-sensitivity-symbolic.json",
    "categories": "experiments/results/icl-order-sensitivity-categories.json",
}
ANALYSIS = "experiments/results/icl-order-analysis.json"


def _iv(stat: dict, scale: float = 1.0, digits: int = 3) -> str:
    low, high = stat["interval"]
    return interval(scale * stat["value"], scale * low, scale * high, digits)


def model(sources) -> str:
    log = sources.load(TRAINING)
    acc = log["final_accuracy_by_k"]
    ks = [k for k in ("0", "1", "2", "4", "8") if k in acc]
    table = md_table([["accuracy", *[acc[k] for k in ks]]], ["k demonstrations", *ks])
    return (
        f"Trained for {log['steps']:,} steps (batch {log['batch_size']}, "
        f"{log['params']:,} parameters) in **{num(log['wall_s'])} s** on "
        f"{log.get('torch_threads', 1)} torch thread ({num(log['steps_per_s'])} steps/s). "
        "Held-out accuracy on noise-free four-class symbolic episodes (1,000 episodes of a "
        "seed never used in training, among the episode's labels):\n\n" + table
    )


def sensitivity(sources) -> str:
    rows, verdicts = [], []
    for name, path in SENSITIVITY.items():
        r = sources.load(path)["document"]["results"]
        bias = " / ".join(f"{100 * v:+.1f}" for v in r["position_bias"])
        rows.append(
            [
                name,
                _iv(r["accuracy_spread"], 100, 3),
                _iv(r["flip_rate"], 100, 3),
                _iv(r["variance_between_subsets"]),
                _iv(r["variance_between_orders"]),
                _iv(r["accuracy"]),
                r["chance"],
                bias,
            ]
        )
        verdicts.append(f"* `{name.split()[0]}`: {r['order_verdict']}")
    headers = [
        "task",
        "spread (points)",
        "flip rate (%)",
        "variance between subsets",
        "variance between orders",
        "accuracy",
        "chance",
        "copies position 1/2/3/4 (points)",
    ]
    first = sources.load(next(iter(SENSITIVITY.values())))["document"]["results"]
    size = (
        f"k = {first['k']}, {first['draws']} subsets x {first['orderings_per_draw']} orders x "
        f"{first['queries']} test queries, 95% bootstrap intervals over subsets"
    )
    return f"{size}:\n\n{md_table(rows, headers)}\n\n" + "\n".join(verdicts)


def _method_rows(search: dict) -> list[list]:
    rows = []
    for method, r in search["comparison"].items():
        per_query = r["evaluations"] / (search["queries"] * search["seeds"])
        pick = "—"
        if "mean_percentile" in r:
            pick = interval(*(100 * v for v in (r["mean_percentile"], *r["percentile_interval"])))
        rows.append(
            [
                f"`{method}`",
                interval(r["accuracy"], *r["interval"]),
                " / ".join(f"{a:.3f}" for a in r["accuracy_by_seed"]),
                num(per_query),
                pick,
            ]
        )
    return rows


def _paired_lines(search: dict) -> str:
    lines = []
    for name, p in search["paired"].items():
        state = "significant" if p["significant"] else "not significant"
        points = interval(*(100 * v for v in (p["difference"], *p["interval"])))
        lines.append(
            f"* {name.replace('_vs_', ' vs ')}: {points} points, McNemar p = "
            f"{num(p['p_value'])} ({state})"
        )
    return "\n".join(lines)


def search(sources) -> str:
    doc = sources.load(BENCH)
    s = doc["figures"]["search"]
    task = doc["figures"]["task"]
    head = (
        f"n = {s['candidates']}, k = {s['k']}, {s['queries']} queries x {s['seeds']} seeds, "
        f"task `{task['name']}` (chance {num(task['chance'])}), "
        f"middle rule `{s['middle']}`; accuracy with 95% bootstrap intervals over queries; "
        "pick percentile = share of the 1,680 exhaustive organisations with lower entropy "
        "than the method's pick (%):"
    )
    table = md_table(
        _method_rows(s), ["method", "accuracy", "by seed", "evaluations / query", "pick percentile"]
    )
    conditions = "\n".join(
        f"* {c['condition']}: {num(c['measured'])} → **{c['verdict']}**"
        for c in s["pass_conditions"]
    )
    return (
        f"{head}\n\n{table}\n\nPaired differences (cluster minus control):\n\n"
        f"{_paired_lines(s)}\n\nVerdict: {s['verdict']}.\n\nPass conditions fixed in "
        f"`controls.py` before the run:\n\n{conditions}"
    )


def middle(sources) -> str:
    doc = sources.load(BENCH)
    pct_by_rule = doc["figures"]["middle_rule_mean_percentile"]
    acc = doc["figures"]["search"]["comparison"]
    default = doc["figures"]["search"]["middle"]
    rows = []
    for rule, value in pct_by_rule.items():
        key = (
            "sample" if rule == "sample" else ("cluster" if rule == default else f"cluster@{rule}")
        )
        label = f"`{rule}`" + (" (default)" if rule == default else "")
        rows.append([label, pct(value, 2), num(acc[key]["accuracy"])])
    return md_table(rows, ["middle rule", "mean pick percentile", "accuracy"])


def timing(sources) -> str:
    doc = sources.load(BENCH)
    checks = {t["name"]: t for t in doc["targets"]}
    rows = []
    for label, key, name in (
        (
            "cluster vs exhaustive search",
            "search_cluster_vs_exhaustive",
            "time_saved_cluster_vs_exhaustive",
        ),
        (
            "prefix-cached vs naive exhaustive scoring",
            "exhaustive_scoring_prefix_cache_vs_naive",
            "speedup_prefix_cache_vs_naive",
        ),
    ):
        sides = doc["timings"][key]
        names = [k for k in sides if k != "statistic"]
        medians = " / ".join(f"{n} {num(sides[n]['median_s'])} s" for n in names)
        rows.append([label, medians, num(checks[name]["measured"]), checks[name]["note"]])
    return md_table(rows, ["comparison", "median wall time per call", "measured", "setting"])


def analysis(sources) -> str:
    from iclr25.core.icl_order.headline import headline

    r = sources.load(ANALYSIS)["document"]["results"]
    rows = [
        [
            part,
            f"{num(r['silhouette'][part])} ± {num(r['silhouette_ci95'][part])}",
            f"{num(r['purity'][part])} ± {num(r['purity_ci95'][part])}",
            num(r["distance_ratio"][part]),
        ]
        for part in ("first", "last", "middle")
    ]
    table = md_table(rows, ["partition by", "silhouette", "purity", "intra/inter distance"])
    return (
        f"`iclr25 icl-order` (task `{r['task']}`, k = {r['k']}, {r['draws']} draws): "
        f"**{headline(r)}**.\n\nClustering of the prompt embeddings by position (mean ± "
        f"95% CI over draws; chance purity {num(r['chance_purity'])}):\n\n{table}\n\n"
        f"Measured order: **{r['pattern']}** ('>' only where the paired interval of the "
        "difference excludes zero, '≈' otherwise)."
    )


SECTIONS = {
    "model": model,
    "sensitivity": sensitivity,
    "search": search,
    "middle": middle,
    "timing": timing,
    "analysis": analysis,
}

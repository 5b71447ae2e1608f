"""Measured sections of docs/diffusion-probe.md (and the README's line)."""

from __future__ import annotations

from docs.sections import md_table, num

NOISES = ("flip", "mask", "soft")


def _conditions(verdict: dict) -> str:
    names = (
        "chi_grows_with_depth",
        "peak_at_class_transition",
        "peak_approaches_threshold",
        "controls_flat",
    )
    marks = {True: "pass", False: "**fail**", None: "untested"}
    return ", ".join(f"{n} {marks[verdict.get(n)]}" for n in names)


def rhm(sources) -> str:
    parts = []
    for noise in NOISES:
        doc = sources.load(f"experiments/results/diffusion-probe-rhm-{noise}.json")
        res = doc["document"]["results"]
        rows = []
        for d in res["per_depth"]:
            ctrl = {
                name: next(c for c in rows_ if c["depth"] == d["depth"])
                for name, rows_ in res["controls"].items()
            }
            rows.append(
                [
                    d["depth"],
                    d["tokens"],
                    f"{num(d['peak_chi_norm'])} ± {num(d['peak_chi_norm_ci95'], 2)}",
                    num(d["peak_level"]),
                    num(d["class_midpoint"]),
                    num(ctrl["markov"]["peak_chi_norm"]) if "markov" in ctrl else "—",
                    num(ctrl["iid"]["peak_chi_norm"]) if "iid" in ctrl else "—",
                ]
            )
        v = res["verdict"]
        state = (
            "**observed**"
            if v["observed"]
            else "**NOT observed** (" + ", ".join(v["failed"] + v["untested"]) + ")"
        )
        parts.append(
            f"**{noise}** noise — threshold (density evolution) {num(res['threshold'])}; "
            f"{state}: {_conditions(v)}.\n\n"
            + md_table(
                rows,
                [
                    "L",
                    "tokens",
                    "peak χ̃ (± 95 %)",
                    "at",
                    "class midpoint",
                    "Markov peak χ̃",
                    "iid peak χ̃",
                ],
            )
        )
    return "\n\n".join(parts)


def threshold(sources) -> str:
    res = sources.load("experiments/results/diffusion-probe-threshold.json")["document"]["results"]
    seeds = ", ".join(num(x) for x in res["per_seed"])
    return (
        f"(9, 6, 3), flip noise: ε* = {num(res['threshold'])} ± {num(res['threshold_spread'], 2)} "
        f"(sd over DE seeds: {seeds})."
    )


def image(sources) -> str:
    doc = sources.load("experiments/results/diffusion-probe-image.json")["document"]["results"]
    ctrl = (doc["control"] or {}).get("per_time") or [None] * len(doc["per_time"])
    rows = [
        [
            num(r["t"], 2),
            num(r["chi_norm"]),
            num(r["class_change"]),
            num(c["chi_norm"]) if c else "—",
        ]
        for r, c in zip(doc["per_time"], ctrl, strict=True)
    ]
    v = doc["verdict"]
    state = "**observed**" if v["observed"] else "**NOT observed** (" + ", ".join(v["failed"]) + ")"
    head = (
        f"Peak time {num(doc['peak_time'])} T, class midpoint {num(doc['class_midpoint'])} T: "
        f"{state}.\n\n"
    )
    return head + md_table(rows, ["t / T", "χ̃ (model)", "class change", "χ̃ (Gaussian control)"])


def bench(sources) -> str:
    doc = sources.load("benchmarks/results/diffusion-probe.json")
    figs = doc["figures"]
    lines = []
    loop = figs.get("numpy_vs_loop")
    if loop:
        lines.append(
            f"- numpy vs the per-node loop: {loop['data']} data at {loop['shape']}, "
            f"samples agree on {100 * loop['token_agreement']:.2f} % of tokens."
        )
    pg = figs.get("pgmpy")
    if isinstance(pg, dict):
        lines.append(
            f"- pgmpy variable elimination, {pg['shape']}: numpy BP is "
            f"{num(pg['speedup_numpy_bp_vs_pgmpy_ve'])}× faster, root marginals agree "
            f"to {num(pg['max_abs_difference'])}."
        )
    elif pg:
        lines.append(f"- pgmpy: {pg}")
    from docs.sections import targets_table

    return targets_table(doc) + "\n\n" + "\n".join(lines)


SECTIONS = {"rhm": rhm, "threshold": threshold, "image": image, "bench": bench}

"""Measured sections of docs/diffusion-at.md, rendered from the studies' result files.

Every figure comes from ``experiments/results/diffusion-at-*.json`` (the `compare`
documents, with their verdicts computed by the command) or from
``benchmarks/results/diffusion-at.json``.
"""

from __future__ import annotations

from docs.sections import md_table, num

STUDIES = {
    "8gaussians": "experiments/results/diffusion-at-8gaussians.json",
    "paper": "experiments/results/diffusion-at-8gaussians-paper.json",
    "digits": "experiments/results/diffusion-at-digits-reduced.json",
    "quick": "experiments/results/diffusion-at-quick.json",
}
BENCH = "benchmarks/results/diffusion-at.json"


#: studies whose result file may be absent: sized for a quiet machine, they can fail to
#: finish on a shared one; their sections then say so instead of quoting anything
OPTIONAL = ("digits",)


def _results(sources, study: str) -> tuple[dict, dict]:
    doc = sources.load(STUDIES[study])
    return doc, doc["document"]["results"]


def _missing(sources, study: str) -> str | None:
    """The sentence that replaces an optional study's figures when it has no result file."""
    path = STUDIES[study]
    if study not in OPTIONAL or (sources.root / path).is_file():
        return None
    name = path.rsplit("/", 1)[-1].removesuffix(".json")
    return (
        f"**Not measured in this round**: `{path}` does not exist (the study did not finish "
        f"on the shared machine). Run `python -m experiments run {name}`, then `make docs`."
    )


def _mean_sd(cell: dict, digits: int = 3) -> str:
    if cell.get("mean") is None:
        return "—"
    if cell.get("sd") is None:
        return num(cell["mean"], digits)
    return f"{num(cell['mean'], digits)} ± {num(cell['sd'], 2)}"


def _difference(test: dict) -> str:
    d = test["difference"]
    if d.get("low") is None:
        return num(d.get("mean"))
    mark = " **✓**" if test["significant"] else ""
    return f"{d['mean']:+.3g} [{d['low']:+.3g}, {d['high']:+.3g}]{mark}"


def _setting(doc: dict, res: dict) -> str:
    at = res["at"]
    step = "default" if at["step"] is None else f"{at['step']:.3g}"
    start = f", AT from step {res['at_start']}" if res["at_start"] else ", AT from step 0"
    args = " ".join(doc["provenance"]["command_line"][1:]) if doc.get("provenance") else ""
    return (
        f"`iclr25 {args}` — {res['data']}, {res['objective']}, {res['steps']} optimiser steps"
        f"{start}; {at['method']} AT, {at['norm']}, α = {at['alpha']:g}, step {step}, "
        f"{at['free_replays']} replays, target {at['target']}; {len(res['seeds'])} seeds; "
        f"{doc['seconds'] / 60:.0f} min on the machine below."
    )


def per_nfe(sources, study: str) -> str:
    """The study's table: every variant per NFE, the paired differences, the verdict."""
    if missing := _missing(sources, study):
        return missing
    doc, res = _results(sources, study)
    metric, variants = res["primary_metric"], res["variants"]
    others = [v for v in variants if v != "baseline"]
    rows = []
    for row in res["per_nfe"]:
        cells = [str(row["nfe"])] + [_mean_sd(row[v][metric]) for v in variants]
        cells += [_difference(row["versus_baseline"][v]) for v in others]
        cells.append(", ".join(row["significant"]) or "none")
        rows.append(cells)
    headers = ["NFE", *variants, *[f"{v} − baseline [95% CI]" for v in others]]
    headers.append("significantly better")
    label = res.get("primary_label", metric)
    return "\n\n".join(
        [
            _setting(doc, res),
            f"{label} (lower is better), mean ± sd over seeds; differences are paired by "
            "seed, **✓** = significant (two-sided paired t-test, Holm-adjusted over all "
            "variant × NFE comparisons, α = 0.05).",
            md_table(rows, headers),
            f"**Verdict:** {res['verdict']['statement']}",
            _unadjusted(res),
            _at_versus_controls(res),
            _delta_norms(res),
        ]
    )


def _unadjusted(res: dict) -> str:
    """Where a single comparison's 95% interval excludes 0, before the Holm correction."""
    from iclr25.core.diffusion_at.metric_names import HIGHER_IS_BETTER

    higher = res["primary_metric"] in HIGHER_IS_BETTER
    sides: dict[str, list[str]] = {"better": [], "worse": []}
    for row in res["per_nfe"]:
        for v, test in row["versus_baseline"].items():
            d = test["difference"]
            if d.get("low") is None:
                continue
            above, below = d["low"] > 0, d["high"] < 0
            if above or below:
                side = "better" if above == higher else "worse"
                sides[side].append(f"`{v}` at NFE {row['nfe']}")
    text = {k: ", ".join(v) or "none" for k, v in sides.items()}
    return (
        "Single comparisons whose 95% interval excludes 0 (unadjusted, so not evidence on "
        f"their own): better than the baseline — {text['better']}; worse — {text['worse']}."
    )


def _at_versus_controls(res: dict) -> str:
    controls = [c for c in ("replay", "noise") if c in res["variants"]]
    if not controls or "at" not in res["variants"]:
        return ""
    rows = [
        [str(r["nfe"])] + [_difference(r["at_versus"][c]) for c in controls] for r in res["per_nfe"]
    ]
    return (
        "AT against each control (AT − control, paired; **✓** = AT significantly better):\n\n"
        + (md_table(rows, ["NFE", *[f"AT − {c}" for c in controls]]))
    )


def _delta_norms(res: dict) -> str:
    training = res["training"]
    parts = [
        f"{v} {num(training[v]['delta_norm']['mean'])}"
        for v in res["variants"]
        if training[v]["delta_norm"]["mean"]
    ]
    if not parts:
        return ""
    return (
        "Mean per-sample ‖δ‖ of the perturbed passes, measured in training: "
        + ", ".join(parts)
        + "."
    )


def mismatch(sources, study: str) -> str:
    """MMD² between the sampler's states and q(x_t), per visited timestep and variant."""
    if _missing(sources, study):
        return "No mismatch curve: the study has no result file."
    _, res = _results(sources, study)
    m = res["mismatch"]
    if not m["curve"]:
        return "No mismatch curve was measured in this study."
    variants = res["variants"]
    rows = []
    for r in m["curve"]:
        t = "x̂₀" if r["t"] < 0 else str(r["t"])
        cells = [t] + [num(r[v]["mmd"]["mean"]) for v in variants]
        d = r.get("at_minus_baseline_mmd")
        if d is not None:
            cells.append(_ci(d))
        rows.append(cells)
    headers = ["t", *variants] + (["AT − baseline [95% CI]"] if "at" in variants else [])
    raises, lowers = m.get("at_raises_t", []), m.get("at_lowers_t", [])

    def ts(values):
        return ", ".join("x̂₀" if t < 0 else str(t) for t in values) or "none"

    return "\n\n".join(
        [
            f"{m['sampler'].upper()} with NFE {m['nfe']}; unbiased MMD² (mean over seeds) "
            "between the sampler's states and exact samples of q(x_t).",
            md_table(rows, headers),
            f"AT **raises** the measured mismatch (95% interval above 0) at t = {ts(raises)}; "
            f"it **lowers** it at t = {ts(lowers)}.",
        ]
    )


def _ci(test: dict) -> str:
    if test.get("low") is None:
        return num(test.get("mean"))
    return f"{test['mean']:+.2e} [{test['low']:+.2e}, {test['high']:+.2e}]"


def demo(sources) -> str:
    """The demo's headline, from the same function the demo prints."""
    from iclr25.core.diffusion_at.verdict import headline

    doc, res = _results(sources, "quick")
    return f"`iclr25 diffusion-at compare --quick` ({doc['seconds']:.0f} s): {headline(res)}"


def verdicts(sources) -> str:
    """One line per study: what it showed."""
    lines = []
    for study, about in (
        ("8gaussians", "8gaussians, free AT from step 0"),
        ("paper", "8gaussians, `--preset paper`"),
        ("digits", "digits (U-Net), `--preset paper`"),
    ):
        if _missing(sources, study):
            lines.append(f"- **{about}**: not measured in this round (no result file).")
            continue
        _, res = _results(sources, study)
        v = res["verdict"]
        h2 = {True: "met", False: "not met", None: "not decided"}[v["adversarial_effect_observed"]]
        lines.append(
            f"- **{about}** ({len(res['seeds'])} seeds, {res['steps']} steps): H1 "
            f"{'met' if v['paper_claim_observed'] else 'not met'}, H2 {h2}. {v['statement']} "
            + _mismatch_line(res)
        )
    return "\n".join(lines)


def _mismatch_line(res: dict) -> str:
    """Where AT raised or lowered the measured train/sample mismatch (MMD², 95% interval)."""
    m = res["mismatch"]
    if not m["curve"] or "at" not in res["variants"]:
        return "The mismatch was not measured."

    def ts(values):
        return ", ".join("x̂₀" if t < 0 else str(t) for t in values) or "none"

    head = f"Mismatch (MMD² at NFE {m['nfe']}, AT − baseline, {len(m['curve'])} points):"
    if not m["at_raises_t"] and not m["at_lowers_t"]:
        return f"{head} no 95% interval excludes 0 — AT neither raised nor lowered it here."
    return (
        f"{head} AT raises it at t = {ts(m['at_raises_t'])}, "
        f"lowers it at t = {ts(m['at_lowers_t'])}."
    )


def speed(sources) -> str:
    """Optimiser steps per CPU second of every arm (the benchmark's figures)."""
    doc = sources.load(BENCH)
    rows = []
    for data in ("8gaussians", "digits"):
        rate = doc["figures"][f"{data}_steps_per_cpu_s"]
        cost = doc["figures"][f"{data}_cpu_cost_over_plain"]
        rows.append([data, *[f"{num(rate[a])} ({num(cost[a])}×)" for a in rate]])
    arms = list(doc["figures"]["8gaussians_steps_per_cpu_s"])
    return md_table(rows, ["data", *arms])


SECTIONS = {
    "demo": demo,
    "verdicts": verdicts,
    "study_8gaussians": lambda s: per_nfe(s, "8gaussians"),
    "mismatch_8gaussians": lambda s: mismatch(s, "8gaussians"),
    "study_paper": lambda s: per_nfe(s, "paper"),
    "mismatch_paper": lambda s: mismatch(s, "paper"),
    "study_digits": lambda s: per_nfe(s, "digits"),
    "mismatch_digits": lambda s: mismatch(s, "digits"),
    "speed": speed,
}

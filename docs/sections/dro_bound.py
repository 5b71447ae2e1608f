"""Measured sections of docs/dro-bound.md: the benchmark against skwdro and cvxpy, the
coverage studies (calibrated, theory, control; entropic) and the demo's certificate."""

from __future__ import annotations

from docs.sections import interval, md_table, num

BENCH = "benchmarks/results/dro_bound.json"


def _study(sources, name: str) -> dict:
    return sources.load(f"experiments/results/{name}.json")["document"]["results"]


def render_benchmark(sources) -> str:
    doc = sources.load(BENCH)
    timings, figures = doc["timings"], doc["figures"]
    rows = []
    labels = {
        "skwdro_dedicated": "skwdro `dedicated` (same problem: κ = 1000)",
        "skwdro_default": "skwdro default (`t-NLC-2-2`, entropic) vs our default (q = 1, κ = ∞): "
        "**different problems**",
        "cvxpy": "cvxpy/Clarabel reformulation (same problem: κ = 1)",
    }
    for label, t in timings.items():
        peer = next(k for k in t if k not in ("statistic", "ours"))
        kind = next(k for k in labels if label.startswith(k))
        size = label.split("_n")[-1].replace("_d", ", d = ")
        gap = "—"
        if kind == "skwdro_dedicated":
            gap = num(figures[kind]["relative_gap"], 2)
        elif kind == "cvxpy":
            gap = num(figures["cvxpy"][f"n{label.split('_n')[-1]}"]["relative_gap"], 2)
        rows.append(
            [
                labels[kind],
                f"n = {size}",
                num(t["ours"]["median_s"]),
                num(t[peer]["median_s"]),
                f"{t[peer]['median_s'] / t['ours']['median_s']:.3g}×",
                gap,
            ]
        )
    table = md_table(
        rows, ["comparison", "size", "ours (median s)", "peer (median s)", "ratio", "objective gap"]
    )
    split = figures.get("skwdro_dedicated", {}).get("skwdro_median_split_s")
    text = table
    if split:
        text += (
            f"\n\nskwdro `dedicated`, median of its calls: {num(split['wall_s'])} s in all = "
            f"{num(split['build_s'])} s building the cvxpy model in Python + "
            f"{num(split['compile_s'])} s cvxpy compilation + {num(split['solver_s'])} s in "
            f"the conic solver ({figures['skwdro_dedicated']['skwdro_solver']}); the rest of "
            "`solve` is cvxpy's own bookkeeping."
        )
    proto = doc["timing_protocol"]
    text += (
        f"\n\nTiming: {proto['order']}, warm-up {proto['warmup']} (the slow comparisons warm "
        "both sides on a small instance instead), at least "
        f"{proto['repeats']} rounds per side, median wall time; every side single-threaded."
    )
    return text


def _coverage_rows(results: dict, kinds: tuple[str, ...]) -> str:
    rows = []
    for c in results["cells"]:
        if c["kind"] not in kinds:
            continue
        rho = num(c["rho_mean"]) + (
            f" (c = {num(c['constant_mean'])})" if c.get("constant_mean") else ""
        )
        rows.append(
            [
                c["kind"],
                c["d"],
                c["n"],
                c["certified_rows"],
                rho,
                interval(c["coverage"], *c["coverage_ci"], digits=2),
                interval(c["uniform_coverage"], *c["uniform_ci"], digits=2),
                interval(c["mean_gap"], *c["gap_ci"]),
            ]
        )
    headers = [
        "kind",
        "d",
        "n",
        "certified rows",
        "mean ρ",
        "coverage of θ̂ [95 % CI]",
        "uniform over θ̂ + θ set",
        "mean gap [95 % CI]",
    ]
    return md_table(rows, headers)


def _slopes(results: dict, kinds: tuple[str, ...]) -> str:
    rows = []
    for s in results["slopes"]:
        if s["kind"] not in kinds:
            continue
        ci = "—" if not s.get("ci") else f"[{num(s['ci'][0])}, {num(s['ci'][1])}]"
        inside = "—" if s.get("contains_minus_half") is None else num(s["contains_minus_half"])
        rows.append([s["kind"], s["d"], num(s["slope"]), ci, inside, s.get("reason", "")])
    return md_table(rows, ["kind", "d", "log-log slope of the gap", "95 % CI", "−1/2 inside", ""])


def _verdict(results: dict) -> str:
    from iclr25.core.dro_bound.coverage_report import headline

    lines = [f"Hypothesis: {results['hypothesis']}", f"Control: {results['control']}", ""]
    for key, text in results["pass_conditions"].items():
        lines.append(f"- {text}: **{results['verdict'].get(key, 'not measured')}**")
    line = headline(
        results["cells"],
        results["slopes"],
        results["verdict"],
        results["target_coverage"],
        results["primary_kind"],
    )  # the command's own headline function, on the stored cells
    lines.append(f"\nVerdict: **{results['verdict']['overall']}** — {line}")
    return "\n".join(lines)


def render_coverage(sources) -> str:
    res = _study(sources, "dro-bound-coverage")
    kinds = ("calibrated", "empirical")
    return "\n\n".join([_coverage_rows(res, kinds), _slopes(res, ("calibrated",)), _verdict(res)])


def render_coverage_bounded(sources) -> str:
    res = _study(sources, "dro-bound-coverage-bounded")
    kinds = ("theory", "calibrated", "empirical")
    return "\n\n".join(
        [_coverage_rows(res, kinds), _slopes(res, ("theory", "calibrated")), _verdict(res)]
    )


def _entropic_study(sources, name: str) -> str:
    res = _study(sources, name)
    rows = [
        [
            c["d"],
            c["n"],
            num(c["rho_mean"]),
            interval(c["coverage"], *c["coverage_ci"], digits=2),
            interval(c["plain_true_risk_coverage"], *c["plain_true_risk_ci"], digits=2),
            interval(c["uniform_coverage"], *c["uniform_ci"], digits=2),
            interval(c["mean_gap"], *c["gap_ci"]),
        ]
        for c in res["cells"]
        if c["kind"] == "user"
    ]
    ent = res["entropic"]
    constant = next(c["constant_mean"] for c in res["cells"] if c["kind"] == "user")
    sigma = "σ = ρ/√d (the default rule)" if ent["sigma"] is None else f"σ = {num(ent['sigma'])}"
    head = (
        f"ε = {num(ent['epsilon'])}, {sigma}, {ent['samples']} reference samples per point, "
        f"c = {num(constant)} given (kind user); target: {ent['target']}."
    )
    headers = [
        "d",
        "n",
        "ρ",
        "covers the smoothed risk [95 % CI]",
        "covers the plain true risk",
        "uniform over θ̂ + θ set (smoothed)",
        "mean gap over the smoothed risk",
    ]
    return head + "\n\n" + md_table(rows, headers) + "\n\n" + _verdict(res)


def render_entropic(sources) -> str:
    return "\n\n".join(
        _entropic_study(sources, name)
        for name in ("dro-bound-coverage-entropic", "dro-bound-coverage-entropic-wide")
    )


def render_certify(sources) -> str:
    from iclr25.core.dro_bound.pipeline import certify_headline

    res = sources.load("experiments/results/dro-bound-certify.json")["document"]["results"]
    split = res["radius"]["split"]
    return (
        f"`iclr25 dro-bound certify --synthetic gaussian-classes --bootstrap 60` (n = 500, "
        f"d = 5, δ = {num(res['delta'])}): c = {num(res['radius_constant'])} estimated on "
        f"{split['calibration_rows']} held-out rows, the model fitted and certified on the "
        f"other {split['certified_rows']}; empirical risk {num(res['empirical_risk'])}.\n\n"
        f"> {certify_headline(res)}"
    )


SECTIONS = {
    "benchmark": render_benchmark,
    "coverage": render_coverage,
    "coverage_bounded": render_coverage_bounded,
    "entropic": render_entropic,
    "certify": render_certify,
}

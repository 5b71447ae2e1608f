"""Measured sections of docs/bandit-replicable.md, rendered from the studies and benchmark."""

from __future__ import annotations

from docs.sections import interval, md_table, num, pct

STUDY = "experiments/results/{}.json"


def _results(sources, name: str) -> dict:
    return sources.load(STUDY.format(name))["document"]["results"]


def _bound(value) -> str:
    if value is None:
        return "—"
    return num(value) if value < 10**9 else f"{float(value):.3g}"


def _bounds(pair) -> str:
    if not pair:
        return "—"
    lo, hi = pair
    return f"{lo}–{hi}" if hi is not None else f"≥ {lo}"


def _guarantee(entry: dict) -> str:
    from iclr25.core.bandit_replicable.summaries import guarantee_line

    return guarantee_line(entry)


# ---------------------------------------------------------------------------------------
def render_benchmark(sources) -> str:
    from docs.sections import targets_table

    doc = sources.load("benchmarks/results/bandit-replicable.json")
    figures = doc["figures"]
    big = figures["alg1_large_seconds"]
    lines = [
        targets_table(doc),
        "",
        f"Alg. 1 aggregated at {num(big['runs'])} executions × T = {num(big['horizon'])}, "
        f"k = 10: {num(big['median_s'])} s (median). Mean regrets of each timed pair "
        "(same problem, different random streams): Alg. 1 "
        f"{num(figures['alg1_mean_regret']['ours'])} aggregated vs "
        f"{num(figures['alg1_mean_regret']['peer'])} per round; UCB1 "
        f"{num(figures['ucb1_mean_regret']['ours'])} ours vs "
        f"{num(figures['ucb1_mean_regret']['peer'])} Python loop.",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
def render_compare(sources) -> str:
    from iclr25.core.bandit_replicable.summaries import compare_headline

    res = _results(sources, "bandit-replicable-compare")
    rows = []
    for a in res["algorithms"]:
        rows.append(
            [
                f"`{a['algorithm']}`",
                interval(a["mean_regret"], *a["mean_regret_ci95"]),
                a["traces_covering_1_minus_delta"],
                _bounds(a["list_size_interval"]),
                _bound(a["list_bound"]),
                _guarantee(a),
                num(a["pair_agreement"]),
            ]
        )
    headers = [
        "algorithm",
        "mean regret [95%]",
        "traces covering 95%",
        "95% bounds",
        "bound ℓ",
        "guarantee",
        "pairs agree",
    ]
    means = ", ".join(f"{m:.3g}" for m in res["instance"]["means"])
    lines = [
        f"k = {res['instance']['k']}, T = {num(res['horizon'])}, {num(res['runs'])} runs, "
        f"δ = {res['delta']}, means {means}:",
        "",
        md_table(rows, headers),
        "",
    ]
    for a in res["algorithms"]:
        b = a["regret_bound"]
        if b:
            state = "vacuous (≥ T·max gap)" if b["vacuous"] else "informative"
            lines.append(
                f"- `{a['algorithm']}`: regret bound {num(b['bound'])} at c = "
                f"{num(b['accuracy_ratio'])} with probability {num(b['probability'])} — "
                f"{state}; measured quantile {num(b['measured_quantile'])}."
            )
    lines += ["", f"Summary: {compare_headline(res)}."]
    lines += _crossing_table(res["crossing"])
    return "\n".join(lines)


def _crossing_table(crossing: dict | None) -> list[str]:
    if not crossing:
        return []
    rows = []
    for i, t in enumerate(crossing["horizons"]):
        alg1 = crossing["regret"]["list-2k"]["mean_regret"][i]
        etc = crossing["regret"]["etc"]["mean_regret"][i]
        rows.append(
            [num(t), num(alg1), num(etc), "Alg. 1" if t in crossing["alg1_ahead_at"] else "—"]
        )
    fits = crossing["fits"]
    return [
        "",
        'Alg. 1 against ETC on the same instance (mean regret; "ahead": the 95% intervals '
        "do not overlap):",
        "",
        md_table(rows, ["T", "list-2k", "etc", "ahead"]),
        "",
        f"Fitted exponents past exploration: list-2k {_fit(fits['list-2k'])}, etc "
        f"{_fit(fits['etc'])}; {crossing['alg1_overtakes_etc']['note']}.",
    ]


def _fit(fit: dict) -> str:
    ci = fit.get("fitted_exponent_ci95")
    return interval(fit["fitted_exponent"], *(ci or (None, None)))


# ---------------------------------------------------------------------------------------
SWEEPS = (
    ("etc", "bandit-replicable-sweep-etc"),
    ("list-2k", "bandit-replicable-sweep-list-2k"),
    ("list-k-delta", "bandit-replicable-sweep-list-k-delta"),
    ("replicable-elimination", "bandit-replicable-sweep-replicable-elimination"),
    ("list-batched, B = 2", "bandit-replicable-sweep-list-batched-b2"),
    ("list-batched, B = 3", "bandit-replicable-sweep-list-batched-b3"),
    ("list-batched, B = 4", "bandit-replicable-sweep-list-batched-b4"),
    ("linear-batched, B = 2", "bandit-replicable-sweep-linear-batched-b2"),
    ("linear-batched, B = 3", "bandit-replicable-sweep-linear-batched-b3"),
    ("ucb1", "bandit-replicable-sweep-ucb1"),
)


def render_exponents(sources) -> str:
    rows, found = [], {}
    for label, name in SWEEPS:
        res = _results(sources, name)
        found[name] = res
        fit = res["fit_horizons"]
        span = f"{num(fit[0])}–{num(fit[-1])} ({len(fit)})" if fit else "none"
        every = res["fitted_exponent_all_horizons"]
        design = res["design_exponent"]
        counts = res["guarantee_outcomes"]
        rows.append(
            [
                f"`{label}`",
                _fit(res),
                span,
                num(every),
                num(res["claimed_exponent"], 4),
                num(design, 4) if design is not None else "—",
                res["verdict"],
                f"{counts['held']}/{counts['violated']}/{counts['untestable']}",
            ]
        )
    headers = [
        "algorithm",
        "exponent past exploration [95%]",
        "horizons in fit",
        "all horizons",
        "claimed",
        "design",
        "verdict",
        "held/violated/untestable",
    ]
    lines = [md_table(rows, headers), "", _worst_case_crossing(found)]
    return "\n".join(lines)


def _worst_case_crossing(found: dict) -> str:
    from iclr25.core.bandit_replicable.fits import crossing

    alg1, etc = found["bandit-replicable-sweep-list-2k"], found["bandit-replicable-sweep-etc"]
    last = alg1["rows"][-1]["horizon"]
    ahead = [
        a["horizon"]
        for a, e in zip(alg1["rows"], etc["rows"], strict=True)
        if a["mean_regret_ci95"][1] < e["mean_regret_ci95"][0]
    ]
    cross = crossing(alg1, etc, last)
    measured = (
        f"Alg. 1's worst-case regret is below ETC's (95% intervals apart) from "
        f"T = {num(min(ahead))}"
        if ahead
        else f"ETC's worst-case regret stays below Alg. 1's up to T = {num(last)}"
    )
    return f"Worst case, Alg. 1 against ETC: {measured}; from the fits: {cross['note']}."


# ---------------------------------------------------------------------------------------
LISTS = (
    ("bandit-replicable-lists-k-etc"),
    ("bandit-replicable-lists-k-list-2k"),
    ("bandit-replicable-lists-k-list-k-delta"),
    ("bandit-replicable-lists-k-list-batched"),
    ("bandit-replicable-lists-k-linear-batched"),
    ("bandit-replicable-lists-delta-list-k-delta"),
    ("bandit-replicable-lists-batches-list-batched"),
)


def render_lists(sources) -> str:
    from iclr25.core.bandit_replicable.summaries import list_sweep_headline

    lines = []
    for name in LISTS:
        res = _results(sources, name)
        rows = []
        for r in res["rows"]:
            rows.append(
                [
                    num(r["value"]),
                    f"{r['instance_family']} g = {num(r['instance_scale'])}",
                    r["traces_covering_1_minus_delta"],
                    _bounds(r["list_size_interval"]),
                    _bound(r["list_bound"])
                    + (f" ({r['prefix_list_bound']})" if r["prefix_list_bound"] else ""),
                    pct(r["share_of_bound"]),
                    _guarantee(r),
                    num(r["regret_over_horizon"]),
                ]
            )
        headers = [
            res["over"],
            "instance",
            "traces covering 95%",
            "95% bounds",
            "bound ℓ",
            "of ℓ",
            "guarantee",
            "regret/T",
        ]
        lines += [
            f"**`{res['algorithm']}` over {res['over']}** (T = {num(res['horizon'])}, "
            f"{num(res['runs'])} fresh runs per value): {list_sweep_headline(res)}.",
            "",
            md_table(rows, headers),
            "",
        ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
LOWER = (
    "bandit-replicable-lower-bound",
    "bandit-replicable-lower-bound-k4",
    "bandit-replicable-lower-bound-baselines",
)


def render_lower_bound(sources) -> str:
    from iclr25.core.bandit_replicable.summaries import lower_bound_headline

    lines = []
    for name in LOWER:
        res = _results(sources, name)
        rows = []
        for a in res["algorithms"]:
            needs, restricted = a["needs_k_traces"], a["restricted"]
            inst = needs["instance"]
            rows.append(
                [
                    f"`{a['algorithm']}`",
                    f"{inst['family']} (spread {num(inst['spread'])})",
                    _bounds(needs["list_size_interval"]),
                    needs["verdict"],
                    " → ".join(num(r["restricted_regret_over_T"]) for r in restricted["rows"]),
                    " → ".join(num(r["unrestricted_regret_over_T"]) for r in restricted["rows"]),
                    "met" if restricted["passed"] else "**not met**",
                ]
            )
        horizons = ", ".join(num(t) for t in res["horizons"])
        lines += [
            f"**k = {res['k']}**, Δ = {res['gap']}, δ = {res['delta']}, T = {horizons} "
            f"({num(res['runs'])} runs; part A at the largest T, means within "
            f"{res['max_scale']}): {lower_bound_headline(res)}.",
            "",
            md_table(
                rows,
                [
                    "algorithm",
                    "A: instance found",
                    "list size 95%",
                    "A",
                    "B: restricted regret/T",
                    "own regret/T",
                    "B",
                ],
            ),
            "",
        ]
    return "\n".join(lines)


SECTIONS = {
    "benchmark": render_benchmark,
    "compare": render_compare,
    "exponents": render_exponents,
    "lists": render_lists,
    "lower_bound": render_lower_bound,
}

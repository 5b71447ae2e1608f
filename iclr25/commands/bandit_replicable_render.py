"""Terminal output of the `iclr25 bandit-replicable` commands (tables and summary lines)."""

from __future__ import annotations


def _short_table(rows: list[dict], headers: dict[str, str], title: str):
    """A table of ``rows`` showing the keys of ``headers`` under short names (≤ 100 columns)."""
    from iclr25.output import rows_table

    shown = [{headers[key]: row.get(key) for key in headers} for row in rows]
    return rows_table(shown, list(headers.values()), title=title)


def bound_text(bound):
    return bound if bound is None or bound < 10**9 else f"{float(bound):.3g}"


def interval_text(interval) -> str:
    if not interval:
        return "—"
    lo, hi = interval
    return f"{lo}..{hi if hi is not None else '?'}"


def _guarantee(entry: dict) -> str:
    from iclr25.core.bandit_replicable.summaries import guarantee_line

    return guarantee_line(entry)


def render_run(console, results) -> None:
    from iclr25.output import render_mapping

    hidden = ("regret_curve", "instance", "guarantee_check", "regret_bound")
    shown = {k: v for k, v in results.items() if k not in hidden}
    render_mapping(console, shown, title=f"bandit-replicable run: {results['algorithm']}")
    if results["guarantee_check"]:
        render_mapping(console, results["guarantee_check"], title="list guarantee check")
    if results["regret_bound"]:
        render_mapping(console, results["regret_bound"], title="regret bound at these constants")
    render_mapping(console, results["instance"], title="instance")


def render_compare(console, results) -> None:
    from iclr25.core.bandit_replicable.summaries import crossing_line

    headers = {
        "algorithm": "algorithm",
        "mean_regret": "regret",
        "regret_over_horizon": "regret/T",
        "traces_covering_1_minus_delta": "cover 1-δ",
        "list_size": "95% bounds",
        "list_bound": "bound ℓ",
        "guarantee": "guarantee",
        "pair_agreement": "pairs agree",
    }
    rows = [
        {
            **a,
            "list_bound": bound_text(a["list_bound"]),
            "list_size": interval_text(a["list_size_interval"]),
            "guarantee": _guarantee(a),
        }
        for a in results["algorithms"]
    ]
    title = f"T = {results['horizon']:,}, {results['runs']:,} executions, δ = {results['delta']}"
    console.print(_short_table(rows, headers, title))
    for a in results["algorithms"]:
        bound = a["regret_bound"]
        if bound:
            verdict = "vacuous: ≥ T·max gap" if bound["vacuous"] else "informative"
            console.print(
                f"{a['algorithm']}: regret bound {bound['bound']:.4g} at c = "
                f"{bound['accuracy_ratio']:.4g} ({verdict}); measured "
                f"{bound['probability']:.3g}-quantile {bound['measured_quantile']:.4g}"
            )
    line = crossing_line(results.get("crossing"))
    if line:
        console.print(line)


def render_sweep(console, results) -> None:
    headers = {
        "horizon": "T",
        "mean_regret": "mean regret",
        "regret_over_horizon": "regret/T",
        "worst_gap": "worst gap",
        "past_exploration": "in fit",
        "traces_covering_1_minus_delta": "cover 1-δ",
        "list_bound": "bound ℓ",
        "guarantee": "guarantee",
    }
    rows = [{**r, "list_bound": bound_text(r["list_bound"])} for r in results["rows"]]
    console.print(_short_table(rows, headers, f"{results['algorithm']}: {results['mode']}"))
    fitted, ci = results["fitted_exponent"], results["fitted_exponent_ci95"]
    line = f"measured exponent {fitted:.3f}" if fitted is not None else "measured exponent n/a"
    if ci:
        line += f" (95% CI {ci[0]:.3f}..{ci[1]:.3f})"
    console.print(f"{line}   claimed {results['claimed_exponent']:.4g}")
    every = results["fitted_exponent_all_horizons"]
    if every is not None:
        console.print(
            f"fit over {results['fit_horizons']} (past exploration); over all horizons: {every:.3f}"
        )
    console.print(f"verdict: {results['verdict']}")
    batches = results["batches"]
    if batches is not None:
        console.print(
            f"B = {batches} batches: design {results['design_exponent']:.4g} = {batches}-batch "
            f"lower bound (Gao et al. 2019); claim needs ≥ {results['batches_needed_for_claim']}"
            " batches"
        )


def render_list_sweep(console, results) -> None:
    from iclr25.core.bandit_replicable.summaries import list_sweep_headline

    headers = {
        "value": results["over"],
        "instance_family": "instance",
        "traces_covering_1_minus_delta": "cover 1-δ",
        "list_size": "95% bounds",
        "distinct_traces": "distinct",
        "list_bound": "bound ℓ",
        "share": "of bound",
        "guarantee": "guarantee",
    }
    rows = [
        {
            **r,
            "list_bound": bound_text(r["list_bound"]),
            "list_size": interval_text(r["list_size_interval"]),
            "share": f"{r['share_of_bound']:.1%}" if r["share_of_bound"] is not None else "—",
            "guarantee": _guarantee(r),
        }
        for r in results["rows"]
    ]
    title = f"{results['algorithm']}: list size over {results['over']}, T = {results['horizon']:,}"
    console.print(_short_table(rows, headers, title))
    console.print(list_sweep_headline(results))


def render_lower(console, results) -> None:
    from iclr25.core.bandit_replicable.summaries import lower_bound_headline

    rows = []
    for a in results["algorithms"]:
        needs, restricted = a["needs_k_traces"], a["restricted"]
        last = restricted["rows"][-1]
        rows.append(
            {
                "algorithm": a["algorithm"],
                "needs": needs["verdict"],
                "bounds": interval_text(needs["list_size_interval"]),
                "on": f"{needs['instance']['family']} g={needs['instance']['scale']:.3g}",
                "restricted": min(r["restricted_regret_over_T"] for r in restricted["rows"]),
                "own": last["unrestricted_regret_over_T"],
                "verdict": restricted["verdict"].split(";")[0].split(",")[0],
            }
        )
    headers = {
        "algorithm": "algorithm",
        "needs": "A: near-tied instance",
        "bounds": "list 95%",
        "on": "found on",
        "restricted": "B: min restricted regret/T",
        "own": "own regret/T (last T)",
        "verdict": "B",
    }
    title = f"lower bound, k = {results['k']}, Δ = {results['gap']}, δ = {results['delta']}"
    console.print(_short_table(rows, headers, title))
    console.print(lower_bound_headline(results))

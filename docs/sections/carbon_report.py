"""Measured sections of docs/carbon-report.md (`<!-- generated: carbon_report.<name> -->`)."""

from __future__ import annotations

from docs.sections import md_table, num, pct

STUDY = "experiments/results/carbon-report-{}.json"


def _study(sources, name: str) -> dict:
    return sources.load(STUDY.format(name))["document"]["results"]


def _figure(q: dict) -> str:
    value = q["computed"]
    return (
        f"{value:.4g}"
        if abs(value) < 1e6
        else f"{value:.4g}".replace("e+0", "e").replace("e+", "e")
    )


def render_reproduce(sources) -> str:
    res = _study(sources, "reproduce")
    rows = [
        [
            row["name"],
            row["table"],
            q["quantity"],
            q["printed"],
            _figure(q),
            f"{q['rel_error']:+.1%}",
            "yes" if q["agrees"] else "**no**",
        ]
        for row in res["rows"]
        for q in row["quantities"]
    ]
    headers = ["row", "where", "figure", "printed", "computed", "error", "within rounding"]
    skipped = "\n".join(f"- {r['name']}: {r['why']}." for r in res["not_reproducible"])
    return (
        f"{md_table(rows, headers)}\n\n**{res['headline']}** — verdict: "
        f"**{res['verdict']}** (pass condition: {res['pass_condition']}).\n\n"
        f"Not reproducible here:\n\n{skipped}"
    )


def render_inference(sources) -> str:
    res = _study(sources, "inference")
    per, paper = res["per_request"], res["paper"]
    lines = [
        f"- energy per request: {res['energy_per_request_basis']} = "
        f"{num(per['energy_wh'])} Wh (facility), {num(per['co2e_g'])} g CO2e, "
        f"{num(per['water_ml'])} mL water at the Texas site;",
        f"- break-even against {num(res['training']['co2e_kg'] / 1000)} t of training CO2e "
        f"({res['training']['source']}): {res['breakeven']['requests_co2e']:.3g} requests;",
    ]
    checks = ", ".join(
        f"{q['quantity']} printed {q['printed']}, computed {_figure(q)} "
        f"({'within rounding' if q['agrees'] else 'not within rounding'})"
        for q in paper["quantities"]
    )
    lines.append(f"- against Table 3: {checks}.")
    return "\n".join(lines)


def render_power_example(sources) -> str:
    res = _study(sources, "power-example")
    prof = res["profile"]
    trace = res["example"]["trace"]
    return (
        f"Bundled log (SYNTHETIC: {trace['gpus']} GPUs, {num(trace['duration_s'])} s, seed "
        f"{trace['seed']}): {num(res['energy_kwh'])} kWh over {res['gpu_count']} GPUs, "
        f"{prof['dips']['count']} dips ({num(prof['dips']['total_duration_s'])} s), "
        f"{pct(prof['time_above_high_frac'])} of the time above 85% of TDP and "
        f"{pct(prof['time_below_low_frac'])} below 15%; the summed power rises by up to "
        f"{num(prof['aggregate']['max_rise_w_per_s'])} W/s; "
        f"{res['gaps']['count']} logger gaps reported, not bridged; "
        f"{num(res['co2e_kg'])} kg CO2e at the Texas site."
    )


def render_estimate_example(sources) -> str:
    res = _study(sources, "estimate-example")
    rows = [
        [
            r["name"],
            r["datacenter"],
            r["energy_kwh"] / 1000,
            r["co2e_kg"] / 1000,
            r["water_l"] / 1000,
        ]
        for r in res["runs"]
    ]
    totals = res["totals"]
    rows.append(
        [
            "total",
            "",
            totals["energy_kwh"] / 1000,
            totals["co2e_kg"] / 1000,
            totals["water_l"] / 1000,
        ]
    )
    return md_table(rows, ["run", "site", "MWh", "t CO2e", "kL water"])


def render_benchmark(sources) -> str:
    doc = sources.load("benchmarks/results/carbon-report.json")
    fig, power = doc["figures"], doc["timings"]["power"]
    track = doc["timings"]["track"]
    return (
        f"On a {num(fig['power_log']['rows'])}-row, {num(fig['power_log']['mb'])} MB nvidia-smi "
        f"log (8 GPUs): ours {num(power['ours']['median_s'])} s, pandas "
        f"{num(power['pandas']['median_s'])} s (median wall, {power['ours']['repeats']} "
        f"interleaved rounds); CPU-time ratio {num(fig['power_cpu_speedup_vs_pandas'])}; peak "
        f"RSS {num(fig['power_peak_rss_mb']['ours'])} MB vs "
        f"{num(fig['power_peak_rss_mb']['pandas'])} MB; energies agree to "
        f"{num(fig['power_energy_rel_diff'])} relative. `track`: tracked "
        f"{num(track['tracked']['median_s'])} s vs bare {num(track['bare']['median_s'])} s "
        f"(median wall), CPU-time ratio {num(fig.get('track_cpu_ratio'))}; "
        f"the sampler used {pct(fig['track_sampler_cpu_frac'], 2)} of the run. Machine: "
        f"{fig['cpus']} CPUs, load average {num(fig['load_average'][0])} at the end."
    )


SECTIONS = {
    "reproduce": render_reproduce,
    "inference": render_inference,
    "power_example": render_power_example,
    "estimate_example": render_estimate_example,
    "benchmark": render_benchmark,
}

"""`carbon-report inference` and `carbon-report reproduce`: the paper's deployment side and
its per-row figures. Registered on the `carbon-report` app by
:mod:`iclr25.commands.carbon_report`; light imports only at module level."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands import carbon_report_options as opt
from iclr25.runner import Run

INFERENCE = "Serving measurement"
TRAINING = "Training to break even with"

Preset = Annotated[
    str | None,
    opt.option(
        "--preset",
        "A serving measurement of the paper's simulated deployment (Table 3): "
        "olmo-2-7b-1rps, olmo-2-7b-batch, olmo-1b-1rps, llama-2-13b-1rps.",
        INFERENCE,
    ),
]
EnergyKwh = opt._float(
    "--energy-kwh", "Measured energy of serving --requests requests (kWh).", INFERENCE, min=0.0
)
Requests = opt._float("--requests", "Requests served with --energy-kwh.", INFERENCE, min=1e-9)
PowerW = opt._float("--power-w", "Mean power while serving (W, all GPUs).", INFERENCE, min=0.0)
Throughput = opt._float(
    "--throughput", "Requests per second served at --power-w.", INFERENCE, min=1e-12
)
IncludesPue = Annotated[
    bool | None,
    typer.Option(
        "--energy-includes-pue/--energy-is-it",
        help="Whether the measured energy is facility energy (default: IT energy; the "
        "presets: as the paper).",
        rich_help_panel=INFERENCE,
    ),
]
RequestsTotal = opt._float(
    "--requests-total", "Also report the footprint of this many requests.", None, min=0.0
)
TrainingManifest = Annotated[
    Path | None,
    opt.option(
        "--training-manifest",
        "An `estimate` manifest whose total CO2e and water the break-even is against.",
        TRAINING,
    ),
]
TrainingCo2e = opt._float("--training-co2e-kg", "Training CO2e (kg).", TRAINING, min=0.0)
TrainingWater = opt._float("--training-water-l", "Training water (L).", TRAINING, min=0.0)

INFERENCE_KEYS = (
    "JSON results: energy_per_request_basis, energy_includes_pue, per_request (it_energy_kwh, "
    "energy_kwh, energy_wh, co2e_kg, co2e_g, water_l, water_ml), site, deployment (with "
    "--requests-total), training (co2e_kg, water_l, source), breakeven (requests_co2e, "
    "requests_water), preset and paper (the preset's row of Table 3: printed and computed "
    "figures, agrees) when a preset is used with its own site and training."
)
REPRODUCE_KEYS = (
    "JSON results: hypothesis, pass_condition, rows (per row: name, table, kind, inputs, "
    "quantities — printed, printed_interval, computed, computed_interval, rel_error, agrees), "
    "not_reproducible (name, why), figures, figures_agreeing, rows_agreeing, disagreeing, "
    "verdict, headline."
)


def _training(run: Run, manifest, co2e_kg, water_l, preset_row) -> dict | None:
    """What the break-even is against: given figures, a manifest's totals, or the preset's
    printed training CO2e."""
    if manifest is not None:
        from iclr25.core.carbon_report.accounting import summarize
        from iclr25.core.carbon_report.manifest import load_runs

        specs, warnings = load_runs(manifest)
        for message in warnings:
            run.warn(message)
        totals = summarize(specs)["totals"]
        return {
            "co2e_kg": co2e_kg if co2e_kg is not None else totals["total_co2e_kg"],
            "water_l": water_l if water_l is not None else totals["total_water_l"],
            "source": f"{manifest} (totals: operational + embodied, all stages)",
        }
    if co2e_kg is not None or water_l is not None:
        return {"co2e_kg": co2e_kg, "water_l": water_l, "source": "given"}
    if preset_row is not None:
        t = float(preset_row["inputs"]["training_co2e_t"]) * 1000
        return {"co2e_kg": t, "water_l": None, "source": preset_row["inputs"]["training_source"]}
    return None


def _preset_row(name: str) -> dict:
    from iclr25.core.carbon_report.reproduction import paper_rows
    from iclr25.errors import InputError

    rows = {r["preset"]: r for r in paper_rows()["inference"]}
    if name not in rows:
        raise InputError(f"unknown --preset {name!r}", f"use one of {', '.join(rows)}")
    return rows[name]


def inference(
    preset: Preset = None,
    energy_kwh: EnergyKwh = None,
    requests: Requests = None,
    power_w: PowerW = None,
    throughput: Throughput = None,
    energy_includes_pue: IncludesPue = None,
    requests_total: RequestsTotal = None,
    training_manifest: TrainingManifest = None,
    training_co2e_kg: TrainingCo2e = None,
    training_water_l: TrainingWater = None,
    datacenter: opt.Datacenter = None,
    pue: opt.Pue = None,
    carbon_intensity: opt.Intensity = None,
    wue_onsite: opt.WueOn = None,
    wue_offsite: opt.WueOff = None,
    *,
    run: Run,
) -> None:
    """Energy, CO2e and water per request, and how many requests match training's impact."""
    from iclr25.core.carbon_report.inference import ServingMeasurement, analyse
    from iclr25.core.carbon_report.presets import datacenter as preset_site
    from iclr25.core.carbon_report.reproduction import inference_row
    from iclr25.errors import InputError

    measured = any(v is not None for v in (energy_kwh, requests, power_w, throughput))
    if preset is None and not measured:
        preset = "olmo-2-7b-1rps"
        run.warn(
            "no serving measurement given: the paper's example (OLMo 2 7B at 1 request/s, "
            "Table 3) — give --energy-kwh/--requests or --power-w/--throughput for your own"
        )
    if preset is not None and measured:
        raise InputError("--preset and a measurement given", "give one of them")
    row = _preset_row(preset) if preset else None
    if row is not None:
        inputs = row["inputs"]
        includes = inputs["energy_includes_pue"]
        if energy_includes_pue is not None:
            includes = energy_includes_pue
        meas = ServingMeasurement(
            float(inputs["energy_kwh"]), float(inputs["requests"]), energy_includes_pue=includes
        )
    else:
        meas = ServingMeasurement(
            energy_kwh, requests, power_w, throughput, bool(energy_includes_pue)
        )
        meas.energy_per_request_kwh()  # an incomplete measurement fails before the site
    site = opt.site(datacenter, pue, carbon_intensity, wue_onsite, wue_offsite)
    if site is None:
        if row is None:
            raise InputError(
                "no site for the serving energy",
                "pass --datacenter texas|iowa|lumi, or --pue, --carbon-intensity, "
                "--wue-onsite and --wue-offsite",
            )
        site = preset_site(row["site"])
    training = _training(run, training_manifest, training_co2e_kg, training_water_l, row)
    results = analyse(meas, site, training, requests_total)
    if row is not None:
        results["preset"] = {"name": preset, "row": row["name"], "table": row["table"]}
        own = (
            site == preset_site(row["site"])
            and training is not None
            and training["source"] == row["inputs"]["training_source"]
            and energy_includes_pue is None
        )
        if own:
            results["paper"] = inference_row(row)
    if training is None:
        run.warn(
            "no training figure: no break-even; give --training-manifest or --training-co2e-kg"
        )
    elif results["breakeven"]["requests_co2e"] is None:
        run.warn("the site emits no CO2e per request (or training has none): no break-even")
    run.finish(results, {"measurement": meas, "site": site}, _render_inference)


def _render_inference(console, results) -> None:
    from iclr25.output import render_mapping, rows_table

    per = results["per_request"]
    summary = {
        "energy per request": results["energy_per_request_basis"],
        "Wh per request (facility)": per["energy_wh"],
        "g CO2e per request": per["co2e_g"],
        "mL water per request": per["water_ml"],
    }
    if "breakeven" in results:
        summary["training"] = results["training"]
        summary["break-even requests (CO2e)"] = results["breakeven"]["requests_co2e"]
        summary["break-even requests (water)"] = results["breakeven"]["requests_water"]
    if "deployment" in results:
        summary["deployment"] = results["deployment"]
    render_mapping(console, summary, title="inference")
    if "paper" in results:
        console.print(rows_table(_comparison(results["paper"]), title="against the paper"))


def _comparison(row: dict) -> list[dict]:
    return [
        {
            "row": row["name"],
            "figure": q["quantity"],
            "printed": q["printed"],
            "computed": q["computed"],
            "rel. error": f"{q['rel_error']:+.1%}",
            "within rounding": "yes" if q["agrees"] else "NO",
        }
        for q in row["quantities"]
    ]


def reproduce(*, run: Run) -> None:
    """The paper's printed per-row figures recomputed from its printed per-row inputs."""
    from iclr25.core.carbon_report.reproduction import headline
    from iclr25.core.carbon_report.reproduction import reproduce as compute

    results = compute()
    results["headline"] = headline(results)
    run.finish(results, {"data": "iclr25/data/carbon_report/morrison2025.json"}, _render_reproduce)


def _render_reproduce(console, results) -> None:
    from iclr25.output import rows_table

    rows = [c for row in results["rows"] for c in _comparison(row)]
    console.print(rows_table(rows, title="the paper's rows, recomputed from their printed inputs"))
    skipped = [
        {"row": r["name"], "why not reproduced": r["why"]} for r in results["not_reproducible"]
    ]
    console.print(rows_table(skipped, title="rows whose inputs are not available"))
    console.print(f"{results['headline']} — verdict: {results['verdict']}")

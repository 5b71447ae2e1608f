"""`iclr25 carbon-report`: energy, carbon and water of model development (Morrison et al.,
ICLR 2025) — from a manifest of runs (`estimate`), from GPU power logs (`power`), or by
measuring a command live (`track`)."""

import json
from pathlib import Path
from typing import Annotated

import typer

from iclr25.commands import carbon_report_options as opt
from iclr25.commands import carbon_report_paper as paper
from iclr25.demo import DemoStep
from iclr25.runner import Run, command, require

NAME = "carbon-report"
HELP = "Energy, carbon and water of model development: estimates, power logs, live tracking."

app = typer.Typer(no_args_is_help=True, help=HELP)


def example_file(name: str) -> Path:
    from iclr25.paths import package_file

    return package_file("iclr25.data", "carbon_report", name)


def _fmt(value: float) -> str:
    from iclr25.output import format_value

    return format_value(float(value)) if value is not None else ""


# ---------------------------------------------------------------------------------------
# estimate
# ---------------------------------------------------------------------------------------
def _render_estimate(console, results) -> None:
    from iclr25.output import rows_table

    runs = [
        {
            "run": r["name"],
            "stage": r["stage"],
            "site": r["datacenter"],
            "GPU-h": r["gpu_hours"],
            "MWh": r["energy_kwh"] / 1000,
            "t CO2e": r["co2e_kg"] / 1000,
            "kL H2O": r["water_l"] / 1000,
            "emb. t": r["embodied_co2e_kg"] / 1000,
            "total t": r["total_co2e_kg"] / 1000,
        }
        for r in results["runs"]
    ]
    title = "runs: MWh of facility energy (PUE applied), operational CO2e and water, embodied CO2e"
    console.print(rows_table(runs, title=title))
    table = [
        {
            "stage": r["stage"],
            "GPU-h": r["gpu_hours"],
            "MWh": r["energy_kwh"] / 1000,
            "t CO2e": r["co2e_kg"] / 1000,
            "kL water": r["water_l"] / 1000,
        }
        for r in results["breakdown"]
    ]
    console.print(rows_table(table, title="by stage, as the paper reports it"))
    eq, ratio = results["equivalences"], results["development_final_ratio"]
    co2e_homes = eq["us_home_years_co2e"]
    console.print(
        f"development / final: {_fmt(ratio['co2e_kg'])} (CO2e), {_fmt(ratio['water_l'])} (water); "
        f"≈ {eq['us_home_years_electricity']:.1f} US home-years of electricity"
        + (f" ({co2e_homes:.1f} by CO2e)" if co2e_homes is not None else "")
        + f", ≈ {eq['us_person_years_water']:.1f} US person-years of water"
    )


@command(app, "estimate", epilog=opt.ESTIMATE_KEYS)
def estimate(
    manifest: Annotated[
        Path | None,
        typer.Argument(
            help="Runs as YAML, JSON or CSV (docs/carbon-report.md); default: bundled example.",
            show_default=False,
        ),
    ] = None,
    datacenter: opt.Datacenter = None,
    pue: opt.Pue = None,
    carbon_intensity: opt.Intensity = None,
    wue_onsite: opt.WueOn = None,
    wue_offsite: opt.WueOff = None,
    gpu_model: opt.GpuModel = None,
    tdp_w: opt.Tdp = None,
    avg_power_w: opt.AvgPower = None,
    utilization: opt.Utilization = None,
    embodied_co2e_kg_per_gpu: opt.EmbodiedCo2e = None,
    embodied_water_l_per_gpu: opt.EmbodiedWater = None,
    lifetime_years: opt.Lifetime = None,
    energy_includes_pue: Annotated[
        bool | None,
        typer.Option(
            "--energy-includes-pue/--energy-is-it",
            help="Default for runs that give energy_kwh without saying whether PUE is included.",
        ),
    ] = None,
    co2e_kg_per_home_year: opt.HomeYear = None,
    kwh_per_home_year: opt.HomeKwh = None,
    water_l_per_person_year: opt.PersonYear = None,
    *,
    run: Run,
) -> None:
    """Carbon and water of runs listed in a manifest: operational, embodied, by stage."""
    from iclr25.core.carbon_report.accounting import summarize
    from iclr25.core.carbon_report.manifest import Overrides, load_runs

    over = Overrides(
        gpu_model=gpu_model,
        tdp_w=tdp_w,
        embodied_co2e_kg_per_gpu=embodied_co2e_kg_per_gpu,
        embodied_water_l_per_gpu=embodied_water_l_per_gpu,
        lifetime_years=lifetime_years,
        datacenter=datacenter,
        pue=pue,
        carbon_intensity_kg_per_kwh=carbon_intensity,
        wue_onsite_l_per_kwh=wue_onsite,
        wue_offsite_l_per_kwh=wue_offsite,
        avg_power_w=avg_power_w,
        utilization=utilization,
        energy_includes_pue=energy_includes_pue,
    )
    if manifest is None:
        manifest = example_file("example_manifest.yaml")
        run.warn(
            f"no manifest given: the bundled example {manifest.name} (the paper's final "
            "training runs whose inputs it prints, not its totals)"
        )
    factors = {
        "co2e_kg_per_us_home_year": co2e_kg_per_home_year,
        "kwh_per_us_home_year": kwh_per_home_year,
        "water_l_per_us_person_year": water_l_per_person_year,
    }
    with run.timer("estimate_s"):
        specs, warnings = load_runs(manifest, over)
        results = summarize(specs, factors)
    for message in warnings:
        run.warn(message)
    if run.wants_artifacts:
        from iclr25.core.carbon_report.plots import stages_figure

        run.save_plot(stages_figure(results), "stages.png")
    config = {"manifest": str(manifest), "overrides": over, "equivalence_factors": factors}
    run.finish(results, config, _render_estimate)


# ---------------------------------------------------------------------------------------
# power
# ---------------------------------------------------------------------------------------
def _render_power(console, results) -> None:
    from iclr25.output import render_mapping, rows_table

    rows = [
        {
            "gpu": g["gpu"],
            "node": g["node"],
            "kWh": g["energy_kwh"],
            "mean W": g["avg_power_w"],
            "samples": g["samples"],
            "gaps": g.get("gaps"),
        }
        for g in results["gpus"][:64]
    ]
    if rows:
        console.print(rows_table(rows, title=f"{len(results['gpus'])} logged GPU(s)"))
    runs = [
        {
            "run": r["run_id"],
            "GPUs": r["gpu_count"],
            "kWh": r["energy_kwh"],
            "CPU kWh": r["cpu_energy_kwh"],
            "GPU kWh": r["gpu_energy_kwh"],
            "RAM kWh": r["ram_energy_kwh"],
            "s": r["duration_s"],
        }
        for r in results["runs"][:64]
    ]
    if runs:
        console.print(rows_table(runs, title="CodeCarbon runs (IT energy)"))
    keys = ("energy_kwh", "gpu_energy_kwh", "cpu_energy_kwh", "ram_energy_kwh", "gpu_count")
    keys += ("measured_energy_kwh", "scale", "gpu_hours", "avg_power_w")
    summary = {k: results[k] for k in keys if results[k] is not None}
    for key in ("co2e_kg", "water_l"):
        if key in results:
            summary[key] = results[key]
    profile = results.get("profile")
    if profile:
        summary["time_below_low_frac"] = profile["time_below_low_frac"]
        summary["time_above_high_frac"] = profile["time_above_high_frac"]
        summary["dips"] = {
            k: profile["dips"][k]
            for k in ("count", "total_duration_s", "energy_kwh", "deficit_kwh")
        }
        summary["aggregate"] = {
            k: profile["aggregate"][k]
            for k in ("peak_power_w", "max_rise_w_per_s", "max_fall_w_per_s")
        }
    summary["gpu_layout"] = {f["path"]: f["gpu_layout"] for f in results["files"]}
    summary["gaps"] = {k: results["gaps"][k] for k in ("count", "total_s")}
    summary["skipped"] = {k: v for k, v in results["skipped"].items() if v}
    render_mapping(console, summary, title="power logs")


def _write_power_artifacts(run: Run, analysis) -> None:
    from iclr25 import atomic

    if analysis.results["profile"] is None:
        return
    from iclr25.core.carbon_report.plots import power_profile_figure

    profile = analysis.results["profile"]
    run.save_plot(
        power_profile_figure(analysis, profile["low_share"], profile["high_share"]),
        "power_profile.png",
    )
    lines = ["start_s,duration_s"] + [f"{s:.3f},{d:.3f}" for s, d in sorted(analysis.dips)]
    atomic.write_text(run.artifact_path("dips.csv"), "\n".join(lines) + "\n")
    series = ["start_s,power_w"] + [
        f"{t:.3f},{p:.3f}"
        for t, p in zip(analysis.series_t_s, analysis.series_power_w, strict=True)
    ]
    atomic.write_text(run.artifact_path("series.csv"), "\n".join(series) + "\n")


@command(app, "power", epilog=opt.POWER_KEYS)
def power(
    logs: Annotated[
        list[Path] | None,
        typer.Argument(
            help="nvidia-smi CSV, CodeCarbon emissions.csv, or timestamp,gpu,power_w "
            "CSV/Parquet (CSV may be .gz/.bz2); one file per node. Default: the bundled "
            "example log.",
            show_default=False,
        ),
    ] = None,
    nodes: opt.Nodes = None,
    gpus: opt.Gpus = None,
    gpu_column: opt.GpuColumn = None,
    max_gap: opt.MaxGap = 60.0,
    strict: opt.Strict = False,
    gpu_model: opt.GpuModel = None,
    tdp_w: opt.Tdp = None,
    embodied_co2e_kg_per_gpu: opt.EmbodiedCo2e = None,
    embodied_water_l_per_gpu: opt.EmbodiedWater = None,
    lifetime_years: opt.Lifetime = None,
    dip_threshold: opt.DipThreshold = 0.5,
    dip_min_s: opt.DipMin = 5.0,
    low_share: opt.LowShare = 0.15,
    high_share: opt.HighShare = 0.85,
    bin_s: opt.BinS = 1.0,
    datacenter: opt.Datacenter = None,
    pue: opt.Pue = None,
    carbon_intensity: opt.Intensity = None,
    wue_onsite: opt.WueOn = None,
    wue_offsite: opt.WueOff = None,
    *,
    run: Run,
) -> None:
    """Energy and power profile of GPU power logs (and their carbon and water)."""
    from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power
    from iclr25.core.carbon_report.profile import ProfileConfig
    from iclr25.core.carbon_report.streaming import total_rows_estimate

    require(
        low_share <= high_share,
        "--low-share is above --high-share",
        "give --low-share <= --high-share",
    )
    require(
        max_gap > 0,
        f"--max-gap {max_gap:g} would make every sampling interval a gap",
        "give the longest interval (s) to integrate across, or inf to bridge every gap",
    )
    profile = ProfileConfig(dip_threshold, dip_min_s, low_share, high_share, bin_s)
    hardware = opt.hardware(
        gpu_model, tdp_w, embodied_co2e_kg_per_gpu, embodied_water_l_per_gpu, lifetime_years
    )
    config = PowerConfig(
        max_gap, strict, nodes, hardware, profile, gpus=gpus, gpu_column=gpu_column
    )
    site = opt.site(datacenter, pue, carbon_intensity, wue_onsite, wue_offsite)
    example = None
    if not logs:
        logs = [example_file("example_power_log.csv")]
        example = json.loads(example_file("example_power_log.json").read_text(encoding="utf-8"))
        trace = example["trace"]
        run.warn(
            f"no log given: analysing the bundled example {logs[0].name}, a SYNTHETIC "
            f"trace ({trace['gpus']} GPUs, {trace['duration_s']:g} s, checkpoint every "
            f"{trace['checkpoint_every_s']:g} s, seed {trace['seed']}; parameters in "
            "results.example) — pass your own nvidia-smi log"
        )
    for path in logs:
        require(path.is_file(), f"{path}: no such log file", "pass the path of a power log")
    with (
        run.progress("reading power logs", total=total_rows_estimate(logs)) as advance,
        run.timer("power_s"),
    ):
        analysis = analyse_power(logs, config, site, on_progress=advance)
    for message in analysis.warnings:
        run.warn(message)
    if example is not None:
        analysis.results["example"] = example
    if run.wants_artifacts:
        _write_power_artifacts(run, analysis)
    run.finish(
        analysis.results,
        {"logs": [str(p) for p in logs], "power": config, "site": site},
        _render_power,
    )


# ---------------------------------------------------------------------------------------
# track
# ---------------------------------------------------------------------------------------
def _open_log(run: Run, log: Path | None):
    """(file to stream the power log to, its temporary path, final path) or Nones."""
    from iclr25 import atomic

    target = log if log is not None else run.artifact_path("power_log.csv")
    if target is None:
        return None, None, None
    if log is not None:
        atomic.refuse_existing(log, run.options.overwrite)
        log.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.partial")
    return open(tmp, "w", encoding="utf-8", buffering=1 << 16), tmp, target


@command(
    app,
    "track",
    epilog=opt.TRACK_KEYS,
    context_settings={"allow_interspersed_args": False},
)
def track(
    cmd: Annotated[
        list[str], typer.Argument(help="The command to run, after --.", show_default=False)
    ],
    interval: opt.Interval = 0.5,
    log: opt.Log = None,
    emissions_csv: opt.EmissionsCsv = None,
    project_name: opt.ProjectName = "iclr25",
    cpu_tdp_w: opt.CpuTdp = 85.0,
    ram_w_per_gb: opt.RamModel = 0.375,
    gpu_model: opt.GpuModel = None,
    embodied_co2e_kg_per_gpu: opt.EmbodiedCo2e = None,
    embodied_water_l_per_gpu: opt.EmbodiedWater = None,
    lifetime_years: opt.Lifetime = None,
    datacenter: opt.Datacenter = None,
    pue: opt.Pue = None,
    carbon_intensity: opt.Intensity = None,
    wue_onsite: opt.WueOn = None,
    wue_offsite: opt.WueOff = None,
    *,
    run: Run,
) -> None:
    """Run CMD and measure GPU (NVML), CPU (RAPL or estimate) and RAM (estimate) energy."""
    from iclr25.core.carbon_report import track as core
    from iclr25.core.carbon_report.codecarbon_csv import check_appendable

    hardware = opt.hardware(
        gpu_model, None, embodied_co2e_kg_per_gpu, embodied_water_l_per_gpu, lifetime_years
    )
    config = core.TrackConfig(
        interval, cpu_tdp_w, ram_w_per_gb, project_name=project_name, hardware=hardware
    )
    site = opt.site(datacenter, pue, carbon_intensity, wue_onsite, wue_offsite)
    if emissions_csv is not None:
        check_appendable(emissions_csv)  # before the child runs, not after hours of it
    log_file, tmp, target = _open_log(run, log)
    try:
        measurement = core.track_command(cmd, config, log_file, stdout_to_stderr=run.json)
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)  # nothing partial is left behind
        raise
    finally:
        if log_file is not None:
            log_file.close()
    if tmp is not None:
        tmp.replace(target)
    results = core.summarize(measurement, config)
    if site is not None:
        results.update(core.account(results, site, config))
    _write_emissions(run, emissions_csv, core.emissions_row(measurement, results, config))
    results["files"] = {
        "power_log": str(log) if log else ("power_log.csv" if target else None),
        "emissions_csv": str(emissions_csv) if emissions_csv else None,
    }
    _track_warnings(run, results, measurement)
    run.finish(results, {"track": config, "site": site, "command": cmd}, _render_track)
    run.exit_code = measurement.exit_code


def _render_track(console, results) -> None:
    from iclr25.output import render_mapping, rows_table

    gpus = [
        {
            "gpu": g["gpu"],
            "name": g["name"],
            "kWh": g["energy_kwh"],
            "mean W": g["avg_power_w"],
            "method": g["method"],
        }
        for g in results["gpus"]
    ]
    if gpus:
        console.print(rows_table(gpus, title="GPUs"))
    keys = ("exit_code", "duration_s", "gpu_energy_kwh", "cpu_energy_kwh", "ram_energy_kwh")
    summary = {k: results[k] for k in (*keys, "it_energy_kwh")}
    for key in ("energy_kwh", "co2e_kg", "water_l", "total_co2e_kg", "total_water_l"):
        if key in results:
            summary[key] = results[key]
    summary["methods"] = results["methods"]
    summary["files"] = {k: v for k, v in results["files"].items() if v}
    render_mapping(console, summary, title="tracked command (IT energy; PUE in energy_kwh)")


def _write_emissions(run: Run, path: Path | None, row: dict) -> None:
    from iclr25.core.carbon_report.codecarbon_csv import append_row, check_appendable

    staged = run.artifact_path("emissions.csv")
    if staged is not None:
        append_row(staged, row)
    if path is not None:
        release = check_appendable(path)[2]
        dropped = append_row(path, row)  # in the file's own columns
        if dropped:
            run.warn(
                f"{path} has CodeCarbon {release} columns: {', '.join(dropped)} not written "
                "(the row follows the file's header)"
            )


def _track_warnings(run: Run, results: dict, m) -> None:
    for note in m.notes:
        run.warn(note)
    for part in ("cpu", "ram"):
        if results["estimated"][part]:
            run.warn(f"{part.upper()} energy is estimated ({results['methods'][part]})")
    if not results["gpus"]:
        run.warn(f"no GPU measured ({results['methods']['gpu']})")
    if "co2e_kg" not in results:
        run.warn(
            "no site given: CO2e and water left empty; pass --datacenter or --carbon-intensity"
        )
    elif results["gpus"] and not results["accounting"]["embodied_counted"]:
        names = ", ".join(sorted({g["name"] for g in results["gpus"]}))
        run.warn(
            f"GPU model {names} is not a preset: embodied CO2e and water not counted; "
            "pass --gpu-model or --embodied-co2e-kg-per-gpu, --embodied-water-l-per-gpu "
            "and --lifetime-years"
        )
    if results["exit_code"]:
        run.warn(
            f"the command exited with {results['exit_code']}; measurements up to then are reported"
        )


# ---------------------------------------------------------------------------------------
# inference, reproduce (iclr25/commands/carbon_report_paper.py)
# ---------------------------------------------------------------------------------------
command(app, "inference", epilog=paper.INFERENCE_KEYS)(paper.inference)
command(app, "reproduce", epilog=paper.REPRODUCE_KEYS)(paper.reproduce)


DEMO = (
    DemoStep(
        "carbon-report reproduce",
        ("carbon-report", "reproduce"),
        lambda doc: doc["results"]["headline"],
        timeout_s=60.0,
    ),
    DemoStep(
        "carbon-report estimate",
        ("carbon-report", "estimate"),
        lambda doc: (
            f"{len(doc['results']['runs'])} of the paper's runs: "
            f"{doc['results']['totals']['total_co2e_kg'] / 1000:.0f} t CO2e, "
            f"{doc['results']['totals']['total_water_l'] / 1000:,.0f} kL water"
        ),
        timeout_s=60.0,
    ),
    DemoStep(
        "carbon-report inference",
        ("carbon-report", "inference"),
        lambda doc: (
            f"{doc['results']['per_request']['co2e_g']:.3f} g CO2e per request; "
            f"{doc['results']['breakeven']['requests_co2e']:.3g} requests match training"
        ),
        timeout_s=60.0,
    ),
    DemoStep(
        "carbon-report power",
        ("carbon-report", "power", "--datacenter", "texas"),
        lambda doc: (
            f"synthetic example: {doc['results']['energy_kwh']:.3f} kWh over "
            f"{doc['results']['gpu_count']} GPUs, "
            f"{doc['results']['profile']['dips']['count']} dips, "
            f"{doc['results']['profile']['time_above_high_frac']:.0%} of time above 85% TDP"
        ),
        timeout_s=60.0,
    ),
)

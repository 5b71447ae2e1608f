"""Options shared by the `iclr25 carbon-report` subcommands, their epilogs, and their parsing
into the core's site and GPU constants.

Kept apart from :mod:`iclr25.commands.carbon_report` so that the command file stays readable;
like every command module it imports only typer, the stdlib and light iclr25 modules at
module level.
"""

from pathlib import Path
from typing import Annotated, Any

import typer

SITE = "Site constants (override the presets)"
GPU = "GPU constants (override the presets)"
PROFILE = "Power profile"
EQUIVALENCES = "Equivalences (override the presets)"


def option(flag: str, help: str, panel: str | None = None, **kwargs: Any) -> Any:  # noqa: A002
    """A typer option with its help text and help panel."""
    return typer.Option(flag, help=help, rich_help_panel=panel, **kwargs)


def _float(flag: str, help: str, panel: str | None, **kwargs: Any) -> Any:  # noqa: A002
    return Annotated[float | None, option(flag, help, panel, **kwargs)]


# -- site -------------------------------------------------------------------------------
Datacenter = Annotated[
    str | None,
    option(
        "--datacenter", "Preset site: texas, iowa, lumi (aliases jupiter, augusta, hydro).", SITE
    ),
]
Pue = _float("--pue", "Power usage effectiveness (facility/IT energy).", SITE, min=1.0)
Intensity = _float("--carbon-intensity", "Grid carbon intensity, kg CO2e per kWh.", SITE, min=0.0)
WueOn = _float("--wue-onsite", "On-site cooling water, L per kWh of IT energy.", SITE, min=0.0)
WueOff = _float(
    "--wue-offsite", "Water of electricity generation, L per kWh of facility energy.", SITE, min=0.0
)

# -- GPU --------------------------------------------------------------------------------
GpuModel = Annotated[
    str | None,
    option("--gpu-model", "GPU model: H100, A100, H200, a preset key, or an nvidia-smi name.", GPU),
]
Tdp = _float("--tdp-w", "GPU TDP in W.", GPU, min=1.0)
EmbodiedCo2e = _float(
    "--embodied-co2e-kg-per-gpu", "Manufacturing CO2e per GPU (kg).", GPU, min=0.0
)
EmbodiedWater = _float(
    "--embodied-water-l-per-gpu", "Manufacturing water per GPU (L).", GPU, min=0.0
)
Lifetime = _float("--lifetime-years", "GPU lifetime for amortising embodied impact.", GPU, min=0.01)
AvgPower = _float("--avg-power-w", "Mean power per GPU for runs given in GPU-hours.", GPU, min=0.0)
Utilization = _float(
    "--utilization", "Fraction of TDP for runs given in GPU-hours.", GPU, min=0.0, max=1.0
)

# -- equivalences -----------------------------------------------------------------------
HomeYear = _float(
    "--co2e-kg-per-home-year",
    "CO2e of a US home's electricity for a year (kg): adds home-years by CO2e (no default).",
    EQUIVALENCES,
    min=1e-9,
)
HomeKwh = _float(
    "--kwh-per-home-year",
    "Electricity of a US home for a year (kWh; default EIA's 10,715).",
    EQUIVALENCES,
    min=1e-9,
)
PersonYear = _float(
    "--water-l-per-person-year", "Water use of a US person for a year (L).", EQUIVALENCES, min=1e-9
)

# -- power ------------------------------------------------------------------------------
Nodes = Annotated[
    int | None,
    option("--nodes", "Total nodes the files stand for: energy is scaled by nodes / files.", min=1),
]
Gpus = Annotated[
    int | None,
    option(
        "--gpus",
        "GPUs per log file without a GPU id column (default: read from the timestamps' "
        "layout; an ambiguous layout is refused).",
        min=1,
    ),
]
GpuColumn = Annotated[
    str | None,
    option("--gpu-column", "The log's column naming each row's GPU (default: index, uuid ...)."),
]
MaxGap = Annotated[
    float,
    option(
        "--max-gap",
        "Sampling intervals longer than this (s) are gaps: reported, not integrated "
        "(inf bridges every gap).",
    ),
]
Strict = Annotated[
    bool,
    option(
        "--strict",
        "Fail on the first bad row (malformed, bad power, duplicate or out-of-order time) "
        "instead of skipping and counting it.",
    ),
]
DipThreshold = Annotated[
    float,
    option(
        "--dip-threshold", "A dip is power below this share of TDP ...", PROFILE, min=0, max=1.5
    ),
]
DipMin = Annotated[
    float, option("--dip-min-s", "... lasting at least this long (s).", PROFILE, min=0.0)
]
LowShare = Annotated[
    float, option("--low-share", "Report time below this share of TDP.", PROFILE, min=0, max=1.5)
]
HighShare = Annotated[
    float, option("--high-share", "Report time above this share of TDP.", PROFILE, min=0, max=1.5)
]
BinS = Annotated[
    float, option("--bin-s", "Resolution of the aggregate power series (s).", PROFILE, min=0.001)
]

# -- track ------------------------------------------------------------------------------
Interval = Annotated[float, option("--interval", "GPU power sampling period (s).", min=0.01)]
Log = Annotated[Path | None, option("--log", "Write the power log (timestamp,gpu,power_w) here.")]
EmissionsCsv = Annotated[
    Path | None,
    option("--emissions-csv", "Append a CodeCarbon-compatible row to this emissions.csv."),
]
ProjectName = Annotated[str, option("--project-name", "project_name column of emissions.csv.")]
CpuTdp = Annotated[
    float,
    option("--cpu-tdp-w", "CPU package TDP for the estimate used when RAPL is unreadable.", min=1),
]
RamModel = Annotated[
    float, option("--ram-w-per-gb", "RAM power model (W per GB resident).", min=0.0)
]

ESTIMATE_KEYS = (
    "JSON results: runs (per run: name, stage, gpus, gpu_model, datacenter, gpu_hours, "
    "it_energy_kwh, energy_kwh [facility, PUE applied], co2e_kg, water_l, water_onsite_l, "
    "water_offsite_l, embodied_co2e_kg, embodied_water_l, total_co2e_kg, total_water_l, "
    "energy_basis, estimated, constants), stages (development/final/inference with the same "
    "footprint keys, manufacturing = embodied), totals, development_final_ratio "
    "(energy_kwh, co2e_kg, water_l), equivalences (us_home_years_electricity, "
    "us_home_years_co2e, us_person_years_water, factors, sources), breakdown (the paper's "
    "table), sources."
)
POWER_KEYS = (
    "JSON results: energy_kwh (all GPUs and files, scaled by --nodes; CodeCarbon files: CPU + "
    "GPU + RAM), measured_energy_kwh, gpu_energy_kwh, cpu_energy_kwh, ram_energy_kwh, "
    "nodes, scale, gpu_count, gpu_hours, avg_power_w, files (with gpu_layout), runs "
    "(CodeCarbon runs), skipped, gaps (count, total_s, "
    "max_s, energy_if_bridged_kwh, first), profile (share_of_tdp, time_below_low_frac, "
    "time_above_high_frac, share_percentiles, power_percentiles_w, dips, ramps, aggregate), "
    "gpus (per GPU: energy_kwh, avg_power_w, samples, duration_s, covered_s, gaps, profile); "
    "with --datacenter or constants also co2e_kg, water_l, total_co2e_kg, total_water_l "
    "and accounting."
)
TRACK_KEYS = (
    "JSON results: command, exit_code, interrupted, signals, duration_s, gpus (per GPU: "
    "energy_kwh, avg_power_w, method), gpu_energy_kwh, cpu_energy_kwh, ram_energy_kwh, "
    "it_energy_kwh, estimated (gpu/cpu/ram), methods, samples, interval_s, "
    "sampler_cpu_frac, files; with --datacenter or constants also energy_kwh, co2e_kg, "
    "water_l, total_co2e_kg, total_water_l (with the GPUs' embodied share) and accounting."
)


def site(datacenter, pue, intensity, wue_on, wue_off):
    """A Site from the command line, or None when no site option was given."""
    from iclr25.core.carbon_report.manifest import Overrides, resolve_site

    values = (pue, intensity, wue_on, wue_off)
    if datacenter is None and all(v is None for v in values):
        return None
    over = Overrides(
        datacenter=datacenter,
        pue=pue,
        carbon_intensity_kg_per_kwh=intensity,
        wue_onsite_l_per_kwh=wue_on,
        wue_offsite_l_per_kwh=wue_off,
    )
    return resolve_site({}, over, "command line")


def hardware(gpu_model, tdp_w, embodied_co2e, embodied_water, lifetime_years):
    """The GPU constants given on the command line (None: preset / log)."""
    from iclr25.core.carbon_report.manifest import GpuOverrides

    return GpuOverrides(gpu_model, tdp_w, embodied_co2e, embodied_water, lifetime_years)

"""Carbon and water accounting of Morrison et al., "Holistically Evaluating the
Environmental Impact of Creating Language Models" (ICLR 2025).

Paper symbols -> code names (per run):

- E (IT energy drawn by the GPUs, kWh)         -> ``it_energy_kwh``
- PUE                                          -> ``site.pue``
- E · PUE (facility energy, kWh)                -> ``energy_kwh``
- CI (kg CO2e / kWh)                           -> ``site.carbon_intensity_kg_per_kwh``
- CO2e = E · PUE · CI                          -> ``co2e_kg``
- WUE_onsite, WUE_offsite (L / kWh)            -> ``site.wue_onsite_l_per_kwh``, ``...offsite...``
- embodied CO2e per GPU / lifetime, per GPU-h  -> ``embodied_co2e_kg``
- embodied water per GPU / lifetime, per GPU-h -> ``embodied_water_l``

Water. The paper writes W = E · PUE · (WUE_onsite + WUE_offsite). We follow common practice
(The Green Grid's WUE is defined per IT energy; off-site water comes with every kWh the
facility draws)::

    water_l = E · WUE_onsite + E · PUE · WUE_offsite

The two agree whenever WUE_onsite = 0, which holds at both of the paper's sites (closed-loop
cooling), so the paper's figures are reproduced exactly; with on-site evaporative cooling our
figure is lower by E · (PUE - 1) · WUE_onsite.

Embodied. Manufacturing impact is amortised linearly over the GPU's lifetime:
``embodied_co2e_kg = gpu_hours · embodied_co2e_kg_per_gpu / (lifetime_years · 8760)``
(the paper: 3,700 kg per 8×H100 server ≈ 463 kg per GPU over 4 years ≈ 0.013 kg per
GPU-hour). The paper reports it as a separate "hardware manufacturing" stage; we keep the
share of every run and also report the sum as that stage.
"""

from __future__ import annotations

import dataclasses
import math

from iclr25.core.carbon_report.presets import GpuModel, Site, equivalence
from iclr25.errors import InputError

HOURS_PER_YEAR = 8760.0
STAGES = ("development", "final", "inference")
#: the keys that every footprint (run, stage, totals) carries, in display order
FOOTPRINT_KEYS = (
    "gpu_hours",
    "it_energy_kwh",
    "energy_kwh",
    "co2e_kg",
    "water_l",
    "embodied_co2e_kg",
    "embodied_water_l",
    "total_co2e_kg",
    "total_water_l",
)


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One run of a manifest, fully resolved (energy known, constants known)."""

    name: str
    stage: str  # development | final | inference
    it_energy_kwh: float  # energy drawn by the GPUs, before PUE
    energy_basis: str  # how it_energy_kwh was obtained (shown to the user)
    site: Site
    gpus: int | None = None
    gpu_hours: float | None = None  # GPU-hours summed over GPUs (None: embodied unknown)
    gpu: GpuModel | None = None  # None: embodied unknown
    estimated: bool = False  # True when energy comes from an assumed power, not a measurement


def facility_energy_kwh(energy_kwh: float, includes_pue: bool, pue: float) -> tuple[float, float]:
    """(IT energy, facility energy) from a given energy and whether it includes PUE."""
    if includes_pue:
        return energy_kwh / pue, energy_kwh
    return energy_kwh, energy_kwh * pue


def operational(it_energy_kwh: float, site: Site) -> dict[str, float]:
    """Facility energy, CO2e and water of ``it_energy_kwh`` drawn at ``site``."""
    energy_kwh = it_energy_kwh * site.pue
    water_onsite_l = it_energy_kwh * site.wue_onsite_l_per_kwh
    water_offsite_l = energy_kwh * site.wue_offsite_l_per_kwh
    return {
        "energy_kwh": energy_kwh,
        "co2e_kg": energy_kwh * site.carbon_intensity_kg_per_kwh,
        "water_l": water_onsite_l + water_offsite_l,
        "water_onsite_l": water_onsite_l,
        "water_offsite_l": water_offsite_l,
    }


def embodied_per_gpu_hour(gpu: GpuModel) -> tuple[float, float]:
    """(kg CO2e, L water) of manufacturing, per GPU-hour of use."""
    hours = gpu.lifetime_years * HOURS_PER_YEAR
    return gpu.embodied_co2e_kg_per_gpu / hours, gpu.embodied_water_l_per_gpu / hours


def embodied(gpu_hours: float, gpu: GpuModel) -> tuple[float, float]:
    co2e_per_h, water_per_h = embodied_per_gpu_hour(gpu)
    return gpu_hours * co2e_per_h, gpu_hours * water_per_h


def check_finite(row: dict, what: str) -> dict:
    """``row`` unchanged, or InputError when a footprint overflowed (absurd inputs)."""
    bad = [k for k in FOOTPRINT_KEYS if row.get(k) is not None and not math.isfinite(row[k])]
    if bad:
        raise InputError(
            f"{what}: {bad[0]} = {row[bad[0]]} (the inputs are too large to add up)",
            "check the units of energy_kwh, gpu_hours, avg_power_w and the site constants",
        )
    return row


def account_run(spec: RunSpec) -> dict:
    """The footprint of one run: operational, embodied and total."""
    op = operational(spec.it_energy_kwh, spec.site)
    has_embodied = spec.gpu_hours is not None and spec.gpu is not None
    emb_co2e, emb_water = embodied(spec.gpu_hours, spec.gpu) if has_embodied else (0.0, 0.0)
    row = {
        "name": spec.name,
        "stage": spec.stage,
        "gpus": spec.gpus,
        "gpu_model": spec.gpu.name if spec.gpu else None,
        "datacenter": spec.site.name,
        "energy_basis": spec.energy_basis,
        "estimated": spec.estimated,
        "gpu_hours": spec.gpu_hours,
        "it_energy_kwh": spec.it_energy_kwh,
        **op,
        "embodied_co2e_kg": emb_co2e,
        "embodied_water_l": emb_water,
        "embodied_counted": has_embodied,
        "total_co2e_kg": op["co2e_kg"] + emb_co2e,
        "total_water_l": op["water_l"] + emb_water,
        "constants": {
            "pue": spec.site.pue,
            "carbon_intensity_kg_per_kwh": spec.site.carbon_intensity_kg_per_kwh,
            "wue_onsite_l_per_kwh": spec.site.wue_onsite_l_per_kwh,
            "wue_offsite_l_per_kwh": spec.site.wue_offsite_l_per_kwh,
            **(
                {
                    "embodied_co2e_kg_per_gpu_hour": embodied_per_gpu_hour(spec.gpu)[0],
                    "embodied_water_l_per_gpu_hour": embodied_per_gpu_hour(spec.gpu)[1],
                }
                if spec.gpu
                else {}
            ),
        },
    }
    return check_finite(row, f"run {spec.name!r}")


def sum_footprints(rows: list[dict]) -> dict[str, float]:
    """Sum the footprint keys (a missing GPU-hour count adds nothing)."""
    out = dict.fromkeys(FOOTPRINT_KEYS, 0.0)
    for row in rows:
        for key in FOOTPRINT_KEYS:
            value = row.get(key)
            if value is not None:
                out[key] += float(value)
    out["runs"] = len(rows)
    return out


def _ratio(a: float, b: float) -> float:
    return a / b if b > 0 else math.nan


def development_final_ratio(stages: dict[str, dict]) -> dict[str, float]:
    """Development over final training, operational figures (the paper's "~50%")."""
    dev = stages.get("development", sum_footprints([]))
    fin = stages.get("final", sum_footprints([]))
    return {k: _ratio(dev[k], fin[k]) for k in ("energy_kwh", "co2e_kg", "water_l")}


def equivalences(totals: dict, factors: dict[str, float] | None = None) -> dict:
    """US home-years of electricity and US person-years of water of ``totals``.

    Home-years by energy (facility kWh / a home's yearly kWh, EIA), and by CO2e only when
    ``factors`` gives ``co2e_kg_per_us_home_year`` (the paper's "98 homes" uses an EPA
    factor it does not print, so no default is assumed); person-years of water from USGS'
    per-capita domestic use. ``factors`` may replace ``kwh_per_us_home_year`` and
    ``water_l_per_us_person_year`` as well."""
    given = {k: v for k, v in (factors or {}).items() if v is not None}

    def factor(key: str) -> tuple[float, str]:
        return (given[key], "given") if key in given else equivalence(key)

    per_home_kwh, home_src = factor("kwh_per_us_home_year")
    per_person_l, person_src = factor("water_l_per_us_person_year")
    per_home_co2e = given.get("co2e_kg_per_us_home_year")
    return {
        "us_home_years_electricity": totals["energy_kwh"] / per_home_kwh,
        "us_home_years_co2e": totals["total_co2e_kg"] / per_home_co2e if per_home_co2e else None,
        "us_person_years_water": totals["total_water_l"] / per_person_l,
        "kwh_per_us_home_year": per_home_kwh,
        "co2e_kg_per_us_home_year": per_home_co2e,
        "water_l_per_us_person_year": per_person_l,
        "sources": {
            "us_home_years_electricity": home_src,
            "us_home_years_co2e": "given" if per_home_co2e else "not computed: give a factor",
            "us_person_years_water": person_src,
        },
    }


def breakdown(stages: dict[str, dict], totals: dict) -> list[dict]:
    """The paper's table: manufacturing (embodied), then each stage's operational figures."""
    rows = [
        {
            "stage": "manufacturing",
            "gpu_hours": totals["gpu_hours"],
            "energy_kwh": 0.0,
            "co2e_kg": totals["embodied_co2e_kg"],
            "water_l": totals["embodied_water_l"],
        }
    ]
    for stage in STAGES:
        if stage in stages:
            s = stages[stage]
            rows.append({"stage": stage, **{k: s[k] for k in ("gpu_hours", "energy_kwh")}})
            rows[-1].update(co2e_kg=s["co2e_kg"], water_l=s["water_l"])
    rows.append(
        {
            "stage": "total",
            "gpu_hours": totals["gpu_hours"],
            "energy_kwh": totals["energy_kwh"],
            "co2e_kg": totals["total_co2e_kg"],
            "water_l": totals["total_water_l"],
        }
    )
    return rows


def summarize(specs: list[RunSpec], equivalence_factors: dict[str, float] | None = None) -> dict:
    """Per run, per stage and total footprints, ratio, equivalences and the paper's table."""
    runs = [account_run(spec) for spec in specs]
    stages = {
        stage: sum_footprints([r for r in runs if r["stage"] == stage])
        for stage in STAGES
        if any(r["stage"] == stage for r in runs)
    }
    totals = check_finite(sum_footprints(runs), "the totals")
    stages_out = dict(stages)
    stages_out["manufacturing"] = {
        "gpu_hours": totals["gpu_hours"],
        "embodied_co2e_kg": totals["embodied_co2e_kg"],
        "embodied_water_l": totals["embodied_water_l"],
        "total_co2e_kg": totals["embodied_co2e_kg"],
        "total_water_l": totals["embodied_water_l"],
        "derived": "embodied share of every run (already included in each stage's total_*)",
    }
    return {
        "runs": runs,
        "stages": stages_out,
        "totals": totals,
        "development_final_ratio": development_final_ratio(stages),
        "equivalences": equivalences(totals, equivalence_factors),
        "breakdown": breakdown(stages, totals),
        "sources": constant_sources(specs),
    }


def constant_sources(specs: list[RunSpec]) -> dict[str, dict[str, str]]:
    """The source of every preset constant the runs used, by site and GPU model."""
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        out.setdefault(f"site:{spec.site.name}", spec.site.sources)
        if spec.gpu is not None:
            out.setdefault(f"gpu:{spec.gpu.name}", spec.gpu.sources)
    return out

"""Manifests of runs for ``carbon-report estimate``: YAML, JSON or CSV, resolved to RunSpecs.

A manifest is a list of runs, or a mapping ``{"defaults": {...}, "runs": [...]}`` whose
defaults fill in what a run leaves out. Each run has ``name``, ``stage`` (``development``,
``final`` or ``inference``; manufacturing is derived), and

- energy: ``energy_kwh`` (with ``energy_includes_pue``, default false), or GPU time —
  ``gpu_hours`` (summed over GPUs, as the paper counts) or ``hours`` × ``gpus`` — with
  ``avg_power_w`` per GPU or ``utilization`` (a fraction of the model's ``tdp_w``);
- site: ``datacenter: <preset>`` and/or ``pue``, ``carbon_intensity_kg_per_kwh``,
  ``wue_onsite_l_per_kwh``, ``wue_offsite_l_per_kwh``;
- hardware: ``gpus``, ``gpu_model`` (preset name, short or nvidia-smi form) and optionally
  ``tdp_w``, ``embodied_co2e_kg_per_gpu``, ``embodied_water_l_per_gpu``, ``lifetime_years``.

Precedence, highest first: command-line overrides, the run, the manifest defaults, the
presets. ``--datacenter`` on the command line re-sites every run (the manifest's site
constants are then ignored); single constants (``--pue`` ...) replace just themselves.
``energy_includes_pue`` describes the data, so the command line only supplies a default.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from iclr25.core.carbon_report.accounting import STAGES, RunSpec, facility_energy_kwh
from iclr25.core.carbon_report.presets import (
    GPU_FIELDS,
    SITE_FIELDS,
    GpuModel,
    Site,
    datacenter,
    gpu_model,
)
from iclr25.errors import InputError

INT_FIELDS = ("gpus",)
POSITIVE_FIELDS = ("tdp_w", "lifetime_years")  # divided by: 0 is not a value
FLOAT_FIELDS = (
    "energy_kwh",
    "gpu_hours",
    "hours",
    "avg_power_w",
    "utilization",
    *SITE_FIELDS,
    *GPU_FIELDS,
)
STR_FIELDS = ("name", "stage", "gpu_model", "datacenter", "notes")
BOOL_FIELDS = ("energy_includes_pue",)
KNOWN_FIELDS = (*STR_FIELDS, *INT_FIELDS, *FLOAT_FIELDS, *BOOL_FIELDS)
STAGE_ALIASES = {
    "development": "development",
    "dev": "development",
    "final": "final",
    "final training": "final",
    "final_training": "final",
    "training": "final",
    "inference": "inference",
}


@dataclasses.dataclass(frozen=True)
class GpuOverrides:
    """GPU constants from the command line (None: the preset, or the model in the log)."""

    gpu_model: str | None = None
    tdp_w: float | None = None
    embodied_co2e_kg_per_gpu: float | None = None
    embodied_water_l_per_gpu: float | None = None
    lifetime_years: float | None = None


@dataclasses.dataclass(frozen=True)
class Overrides(GpuOverrides):
    """Command-line values for ``estimate``: constants override every run;
    ``energy_includes_pue`` is only a default for runs that do not say."""

    datacenter: str | None = None
    pue: float | None = None
    carbon_intensity_kg_per_kwh: float | None = None
    wue_onsite_l_per_kwh: float | None = None
    wue_offsite_l_per_kwh: float | None = None
    avg_power_w: float | None = None
    utilization: float | None = None
    energy_includes_pue: bool | None = None


@dataclasses.dataclass
class RawRun:
    where: str  # "manifest.yaml line 12 (run 'olmo-1b')" - for error messages
    fields: dict[str, Any]


# ---------------------------------------------------------------------------------------
# 1. reading the file
# ---------------------------------------------------------------------------------------
def _yaml_with_lines(text: str, path: Path) -> Any:
    import yaml

    class LineLoader(yaml.SafeLoader):
        pass

    def construct_mapping(loader, node, deep=False):
        mapping = yaml.SafeLoader.construct_mapping(loader, node, deep=deep)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping

    LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    try:
        return yaml.load(text, Loader=LineLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}:{where} is not valid YAML ({exc})", "fix the syntax") from None


def _read_csv(text: str, path: Path) -> list[RawRun]:
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames:
        raise InputError(
            f"{path}: the CSV manifest is empty", "add a header row and one run per row"
        )
    runs = []
    for i, row in enumerate(reader):
        line = i + 2
        if None in row:
            raise InputError(f"{path}: line {line} has more cells than the header", "fix the row")
        fields = {k.strip(): v.strip() for k, v in row.items() if v is not None and v.strip()}
        if fields:
            runs.append(RawRun(f"{path} line {line}", fields))
    return runs


def _runs_from_document(doc: Any, path: Path) -> tuple[list[RawRun], dict]:
    defaults: dict = {}
    if isinstance(doc, dict):
        unknown = set(doc) - {"runs", "defaults", "description", "notes", "__line__"}
        if unknown or "runs" not in doc:
            raise InputError(
                f"{path}: top level must be a list of runs or have 'runs' (and 'defaults')",
                f"found keys {sorted(unknown or doc)}; put the runs under 'runs:'",
            )
        defaults = doc.get("defaults") or {}
        if not isinstance(defaults, dict):
            raise InputError(
                f"{path}: 'defaults' must be a mapping", "write defaults: {key: value}"
            )
        doc = doc["runs"]
    if not isinstance(doc, list):
        raise InputError(
            f"{path}: no list of runs found", "write runs as a list (YAML '- name: ...')"
        )
    runs = []
    for i, item in enumerate(doc):
        if not isinstance(item, dict):
            raise InputError(f"{path}: run {i + 1} is not a mapping", "give each run as key: value")
        line = item.pop("__line__", None)
        name = item.get("name", f"#{i + 1}")
        where = f"{path}" + (f" line {line}" if line else f" run {i + 1}") + f" (run {name!r})"
        runs.append(RawRun(where, item))
    defaults.pop("__line__", None)
    return runs, defaults


def read_manifest(path: Path) -> tuple[list[RawRun], dict]:
    """Raw runs (with where they are in the file) and the manifest's defaults."""
    path = Path(path)
    if not path.is_file():
        what = "is a folder, not a manifest" if path.is_dir() else "no such manifest file"
        raise InputError(f"{path}: {what}", "pass the path of a YAML, JSON or CSV file")
    text = path.read_text(encoding="utf-8-sig")
    if not text.strip():
        raise InputError(f"{path}: the manifest is empty", "list at least one run")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        runs, defaults = _read_csv(text, path), {}
    elif suffix == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"{path}: line {exc.lineno} is not valid JSON ({exc.msg})", "fix the syntax"
            ) from None
        runs, defaults = _runs_from_document(doc, path)
    elif suffix in (".yaml", ".yml"):
        runs, defaults = _runs_from_document(_yaml_with_lines(text, path), path)
    else:
        raise InputError(
            f"{path}: unknown manifest format {suffix!r}", "use .yaml, .yml, .json or .csv"
        )
    if not runs:
        raise InputError(f"{path}: the manifest lists no runs", "add at least one run")
    return runs, defaults


# ---------------------------------------------------------------------------------------
# 2. typing and validating fields
# ---------------------------------------------------------------------------------------
def _as_bool(value: Any, key: str, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "y"):
        return True
    if text in ("false", "no", "0", "n"):
        return False
    raise InputError(f"{where}: {key}={value!r} is not true/false", f"write {key}: true or false")


def _as_number(value: Any, key: str, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"{where}: {key}={value!r} is not a number", f"give {key} as a number"
        ) from None
    if not math.isfinite(number) or number < 0:
        raise InputError(f"{where}: {key}={value!r} must be a finite number >= 0", f"fix {key}")
    if key == "gpus" and (number != int(number) or number < 1):
        raise InputError(f"{where}: gpus={value!r} must be a whole number >= 1", "fix gpus")
    if key in POSITIVE_FIELDS and number == 0:
        raise InputError(f"{where}: {key}=0 must be above 0", f"fix {key}")
    return number


def typed_fields(raw: dict, where: str) -> dict[str, Any]:
    """Check keys against the known fields and convert values to their types."""
    unknown = sorted(set(raw) - set(KNOWN_FIELDS))
    if unknown:
        raise InputError(
            f"{where}: unknown field(s) {', '.join(unknown)}",
            f"use only {', '.join(KNOWN_FIELDS)}",
        )
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if key in BOOL_FIELDS:
            out[key] = _as_bool(value, key, where)
        elif key in INT_FIELDS:
            out[key] = int(_as_number(value, key, where))
        elif key in FLOAT_FIELDS:
            out[key] = _as_number(value, key, where)
        else:
            out[key] = str(value).strip()
    return out


# ---------------------------------------------------------------------------------------
# 3. resolving a run: site, GPU model, energy
# ---------------------------------------------------------------------------------------
def resolve_site(fields: dict, over: Overrides, where: str) -> Site:
    preset_name = over.datacenter or fields.get("datacenter")
    explicit = {} if over.datacenter else {k: fields[k] for k in SITE_FIELDS if k in fields}
    explicit.update({k: getattr(over, k) for k in SITE_FIELDS if getattr(over, k) is not None})
    base = datacenter(preset_name) if preset_name else None
    values, sources = {}, {}
    for key in SITE_FIELDS:
        if key in explicit:
            values[key], sources[key] = float(explicit[key]), "given"
        elif base is not None:
            values[key], sources[key] = getattr(base, key), base.sources[key]
    missing = [k for k in SITE_FIELDS if k not in values]
    if missing:
        raise InputError(
            f"{where}: no data center constants ({', '.join(missing)} missing)",
            "add datacenter: texas|iowa|lumi (or --datacenter), or give the missing constants",
        )
    if values["pue"] < 1.0:
        raise InputError(
            f"{where}: pue={values['pue']} is below 1", "PUE is facility/IT energy, >= 1"
        )
    if base is None:
        name = "custom"
    else:
        name = f"{base.name} (with given constants)" if explicit else base.name
    return Site(name=name, **values, sources=sources)


def resolve_gpu(fields: dict, over: GpuOverrides, where: str) -> GpuModel | None:
    """The GPU model with overridden constants, or None when no model and no constants."""
    name = over.gpu_model or fields.get("gpu_model")
    given = {k: fields[k] for k in GPU_FIELDS if k in fields}
    given.update({k: getattr(over, k) for k in GPU_FIELDS if getattr(over, k) is not None})
    if name is None:
        if all(k in given for k in GPU_FIELDS):
            return GpuModel(name="custom", **given, sources=dict.fromkeys(given, "given"))
        return None
    try:
        base = gpu_model(name)
    except InputError as exc:
        raise InputError(f"{where}: {exc.what}", exc.fix) from None
    if not given:
        return base
    sources = {**base.sources, **dict.fromkeys(given, "given")}
    assumed = tuple(k for k in base.assumed if k not in given)
    return dataclasses.replace(base, **given, sources=sources, assumed=assumed)


def _gpu_hours(fields: dict, where: str) -> float | None:
    gpu_hours, hours, gpus = fields.get("gpu_hours"), fields.get("hours"), fields.get("gpus")
    if hours is not None:
        if gpus is None:
            raise InputError(
                f"{where}: 'hours' is wall clock and needs 'gpus'", "add gpus, or give gpu_hours"
            )
        from_hours = hours * gpus
        if gpu_hours is not None and not math.isclose(gpu_hours, from_hours, rel_tol=1e-9):
            raise InputError(
                f"{where}: gpu_hours={gpu_hours} disagrees with hours x gpus = {from_hours}",
                "give only one of gpu_hours and hours",
            )
        return from_hours
    return gpu_hours


def _power_w(fields: dict, over: Overrides, gpu: GpuModel | None, where: str) -> tuple[float, str]:
    """Average power per GPU and how it was obtained."""
    if over.avg_power_w is not None or over.utilization is not None:
        fields = {k: v for k, v in fields.items() if k not in ("avg_power_w", "utilization")}
        fields.update(
            {
                k: getattr(over, k)
                for k in ("avg_power_w", "utilization")
                if getattr(over, k) is not None
            }
        )
    avg, util = fields.get("avg_power_w"), fields.get("utilization")
    if avg is not None and util is not None:
        raise InputError(
            f"{where}: both avg_power_w and utilization given", "give only one of them"
        )
    if avg is not None:
        return avg, "gpu_hours x avg_power_w"
    if util is None:
        raise InputError(
            f"{where}: GPU-hours without a power figure",
            "add avg_power_w (W per GPU) or utilization (fraction of TDP; 1.0 = TDP, upper bound)",
        )
    if util > 1.0:
        raise InputError(
            f"{where}: utilization={util} is above 1", "give a fraction of TDP between 0 and 1"
        )
    if gpu is None:
        raise InputError(
            f"{where}: utilization needs the GPU's TDP", "add gpu_model (e.g. H100) or tdp_w"
        )
    return util * gpu.tdp_w, f"gpu_hours x utilization {util:g} x TDP {gpu.tdp_w:g} W (estimate)"


def resolve_run(raw: RawRun, defaults: dict, over: Overrides, warnings: list[str]) -> RunSpec:
    where = raw.where
    fields = {**typed_fields(defaults, where + " defaults"), **typed_fields(raw.fields, where)}
    name = fields.get("name") or raw.where
    stage_text = str(fields.get("stage", "")).strip().lower()
    if stage_text == "manufacturing":
        raise InputError(
            f"{where}: stage 'manufacturing' is derived from the runs' GPU-hours", "list runs only"
        )
    if stage_text not in STAGE_ALIASES:
        raise InputError(
            f"{where}: stage={fields.get('stage')!r} is not known",
            f"use one of {', '.join(STAGES)}",
        )
    stage = STAGE_ALIASES[stage_text]
    site = resolve_site(fields, over, where)
    gpu = resolve_gpu(fields, over, where)
    gpu_hours = _gpu_hours(fields, where)
    estimated = False
    if "energy_kwh" in fields:
        includes = fields.get("energy_includes_pue")
        includes = (over.energy_includes_pue or False) if includes is None else includes
        it_energy, _ = facility_energy_kwh(fields["energy_kwh"], includes, site.pue)
        basis = "energy_kwh (PUE included)" if includes else "energy_kwh (IT energy, PUE applied)"
        if "avg_power_w" in fields or "utilization" in fields:
            warnings.append(f"{name}: energy_kwh given, so avg_power_w/utilization are not used")
    elif gpu_hours is not None:
        power_w, basis = _power_w(fields, over, gpu, where)
        it_energy = gpu_hours * power_w / 1000.0
        estimated = "utilization" in basis
    else:
        raise InputError(
            f"{where}: the run has neither energy_kwh nor gpu_hours/hours",
            "add energy_kwh, or gpu_hours (or hours and gpus) with avg_power_w or utilization",
        )
    if gpu_hours is None or gpu is None:
        what = "gpu_hours (or hours and gpus)" if gpu_hours is None else "gpu_model"
        warnings.append(f"{name}: no {what}, so its embodied CO2e and water are not counted")
    return RunSpec(
        name, stage, it_energy, basis, site, fields.get("gpus"), gpu_hours, gpu, estimated
    )


def load_runs(path: Path, over: Overrides | None = None) -> tuple[list[RunSpec], list[str]]:
    """Read and resolve a manifest: (runs, warnings)."""
    raws, defaults = read_manifest(path)
    over = over or Overrides()
    warnings: list[str] = []
    specs = [resolve_run(raw, defaults, over, warnings) for raw in raws]
    names = [s.name for s in specs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        warnings.append(f"duplicate run names {', '.join(dupes)}: each is counted")
    assumed = sorted(
        {f"{s.gpu.name} {f}" for s in specs if s.gpu and s.gpu_hours for f in s.gpu.assumed}
    )
    if assumed:
        warnings.append(
            "embodied figures assumed from the H100 (no published figure): "
            + ", ".join(assumed)
            + " - pass --embodied-co2e-kg-per-gpu / --embodied-water-l-per-gpu to set them"
        )
    return specs, warnings

"""Presets for carbon-report: data centers, GPU models and equivalences, each with a source.

The constants live in ``iclr25/data/carbon_report/presets.json`` as ``{"value", "source"}``
pairs (``"assumed": true`` where no published figure exists for that exact product and the
closest documented one is used). This module loads them and resolves names:

- data centers by key or alias, case-insensitively (``texas`` / ``Jupiter``);
- GPU models by key, short name (``H100``, ``a100``, ``H200``) or the name ``nvidia-smi``
  prints (``NVIDIA H100 80GB HBM3``, ``NVIDIA A100-SXM4-80GB``, ``NVIDIA H100 PCIe``).
  Names are lower-cased, stripped of ``nvidia`` / ``tesla`` and punctuation; an exact alias
  match wins, else the family (``h100`` / ``h200`` / ``a100``) and form factor (``pcie``,
  ``nvl``, otherwise SXM) decide.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from typing import Any

from iclr25.errors import InputError
from iclr25.paths import package_file

SITE_FIELDS = (
    "pue",
    "carbon_intensity_kg_per_kwh",
    "wue_onsite_l_per_kwh",
    "wue_offsite_l_per_kwh",
)
GPU_FIELDS = ("tdp_w", "embodied_co2e_kg_per_gpu", "embodied_water_l_per_gpu", "lifetime_years")


@dataclasses.dataclass(frozen=True)
class Site:
    """Where energy is drawn: PUE, grid carbon intensity and water usage effectiveness."""

    name: str  # preset key, or "custom"
    pue: float  # facility energy / IT energy
    carbon_intensity_kg_per_kwh: float  # grid CI, kg CO2e per kWh drawn by the facility
    wue_onsite_l_per_kwh: float  # cooling water per kWh of IT energy
    wue_offsite_l_per_kwh: float  # water of electricity generation per kWh of facility energy
    sources: dict[str, str] = dataclasses.field(default_factory=dict, compare=False)


@dataclasses.dataclass(frozen=True)
class GpuModel:
    """A GPU model: TDP and the embodied figures amortised per GPU-hour."""

    name: str  # preset key, or "custom"
    tdp_w: float
    embodied_co2e_kg_per_gpu: float
    embodied_water_l_per_gpu: float
    lifetime_years: float
    sources: dict[str, str] = dataclasses.field(default_factory=dict, compare=False)
    assumed: tuple[str, ...] = ()  # fields with no published figure for this product


@functools.lru_cache(maxsize=1)
def load_presets() -> dict[str, Any]:
    path = package_file("iclr25.data", "carbon_report", "presets.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _normalise(name: str) -> str:
    text = re.sub(r"[^a-z0-9]+", " ", str(name).lower())
    words = [w for w in text.split() if w not in ("nvidia", "tesla", "geforce")]
    return " ".join(words)


def datacenter_names() -> list[str]:
    return sorted(load_presets()["datacenters"])


def gpu_model_names() -> list[str]:
    return sorted(load_presets()["gpus"])


def _find_key(section: str, name: str) -> str | None:
    """The key of ``section`` whose key or an alias matches ``name`` once normalised."""
    wanted = _normalise(name)
    for key, entry in load_presets()[section].items():
        if wanted in {_normalise(key), *(_normalise(a) for a in entry.get("aliases", ()))}:
            return key
    return None


def datacenter(name: str) -> Site:
    """The preset data center ``name`` (key or alias, any case)."""
    key = _find_key("datacenters", name)
    if key is None:
        raise InputError(
            f"unknown data center preset {name!r}",
            f"use one of {', '.join(datacenter_names())}, or give pue, "
            "carbon_intensity_kg_per_kwh, wue_onsite_l_per_kwh and wue_offsite_l_per_kwh",
        )
    entry = load_presets()["datacenters"][key]
    values = {f: float(entry[f]["value"]) for f in SITE_FIELDS}
    return Site(name=key, **values, sources={f: entry[f]["source"] for f in SITE_FIELDS})


def _gpu_key_by_family(norm: str) -> str | None:
    words = set(norm.split())
    family = next((f for f in ("h100", "h200", "a100") if f in words), None)
    if family is None:
        return None
    if "nvl" in words and family in ("h100", "h200"):
        return f"{family}-nvl"
    if "pcie" in words:
        if family == "a100":
            return "a100-pcie-40gb" if "40gb" in words else "a100-pcie-80gb"
        if family == "h100":
            return "h100-pcie"
    return f"{family}-sxm"


def find_gpu_model_key(name: str) -> str | None:
    """The preset key for a GPU name (short, key or nvidia-smi form), or None."""
    norm = _normalise(name)
    if not norm:
        return None
    return _find_key("gpus", norm) or _gpu_key_by_family(norm)


def gpu_model(name: str) -> GpuModel:
    """The preset GPU model matching ``name``; InputError listing valid names otherwise."""
    key = find_gpu_model_key(name)
    if key is None:
        raise InputError(
            f"unknown GPU model {name!r}",
            f"use one of {', '.join(gpu_model_names())} (or H100, A100, H200, or the name "
            "nvidia-smi prints), or give tdp_w and the embodied_* constants explicitly",
        )
    entry = load_presets()["gpus"][key]
    return GpuModel(
        name=key,
        **{f: float(entry[f]["value"]) for f in GPU_FIELDS},
        sources={f: entry[f]["source"] for f in GPU_FIELDS},
        assumed=tuple(f for f in GPU_FIELDS if entry[f].get("assumed")),
    )


def equivalence(key: str) -> tuple[float, str]:
    entry = load_presets()["equivalences"][key]
    return float(entry["value"]), entry["source"]

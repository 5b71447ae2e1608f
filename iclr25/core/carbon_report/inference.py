"""Inference: energy, carbon and water per request, and the break-even count of requests
whose impact equals a model's training (Morrison et al., ICLR 2025, Section 4.2, Table 3).

Symbols -> code names:

- E_req, energy per request (kWh): ``energy_kwh / requests`` of a measured batch of
  requests, or ``power_w / throughput_rps`` (J per request) of a steady serving
  measurement — the paper measures the GPU energy of serving 2,400 ShareGPT prompts;
- CO2e_req = E_req · PUE · CI, W_req = E_req · WUE_onsite + E_req · PUE · WUE_offsite
  (:func:`accounting.operational`);
- break-even N* = CO2e_training / CO2e_req (and the same for water): the number of
  requests after which serving has emitted as much as training did.

Like the paper's figures, E_req counts the GPU energy of the serving process only (no
idle time, CPU or network): N* is an upper bound on the requests it takes.
"""

from __future__ import annotations

import dataclasses
import math

from iclr25.core.carbon_report.accounting import operational
from iclr25.core.carbon_report.presets import Site
from iclr25.errors import InputError

J_PER_KWH = 3.6e6


@dataclasses.dataclass(frozen=True)
class ServingMeasurement:
    """A throughput measurement: measured energy for a number of requests, or mean power at
    a throughput (exactly one of the two)."""

    energy_kwh: float | None = None  # energy of serving `requests` requests
    requests: float | None = None
    power_w: float | None = None  # mean power while serving (all GPUs of the server)
    throughput_rps: float | None = None  # requests served per second at that power
    energy_includes_pue: bool = False  # True when the measurement is facility energy

    def energy_per_request_kwh(self) -> tuple[float, str]:
        """(E_req in kWh, how it was obtained); InputError for an incomplete measurement."""
        by_energy = self.energy_kwh is not None or self.requests is not None
        by_power = self.power_w is not None or self.throughput_rps is not None
        if by_energy and by_power:
            raise InputError(
                "both an energy measurement and a power measurement given",
                "give --energy-kwh with --requests, or --power-w with --throughput",
            )
        if by_energy:
            if self.energy_kwh is None or not self.requests:
                raise InputError(
                    "--energy-kwh needs --requests (how many requests it served), and both > 0",
                    "give both, e.g. --energy-kwh 0.358 --requests 2400",
                )
            return self.energy_kwh / self.requests, (
                f"{self.energy_kwh:g} kWh / {self.requests:g} requests"
            )
        if by_power:
            if self.power_w is None or not self.throughput_rps:
                raise InputError(
                    "--power-w needs --throughput (requests per second at that power), both > 0",
                    "give both, e.g. --power-w 450 --throughput 8",
                )
            e_req = self.power_w / self.throughput_rps / J_PER_KWH
            return e_req, f"{self.power_w:g} W / {self.throughput_rps:g} requests per s"
        raise InputError(
            "no serving measurement",
            "give --energy-kwh and --requests, or --power-w and --throughput",
        )


def footprint_per_request(energy_kwh: float, includes_pue: bool, site: Site) -> dict:
    """IT and facility energy, CO2e and water of one request of ``energy_kwh``."""
    it_kwh = energy_kwh / site.pue if includes_pue else energy_kwh
    op = operational(it_kwh, site)
    return {
        "it_energy_kwh": it_kwh,
        "energy_kwh": op["energy_kwh"],
        "co2e_kg": op["co2e_kg"],
        "water_l": op["water_l"],
    }


def breakeven(training_co2e_kg: float | None, training_water_l: float | None, req: dict) -> dict:
    """Requests whose CO2e (and water) equal the training's; None where unknown or the
    request costs nothing (a zero-carbon site)."""

    def ratio(total: float | None, per: float) -> float | None:
        if total is None or per <= 0:
            return None
        return total / per

    return {
        "requests_co2e": ratio(training_co2e_kg, req["co2e_kg"]),
        "requests_water": ratio(training_water_l, req["water_l"]),
    }


def analyse(
    measurement: ServingMeasurement,
    site: Site,
    training: dict | None = None,
    requests_total: float | None = None,
) -> dict:
    """Per-request footprint, the footprint of ``requests_total`` requests, and the
    break-even against ``training`` (``co2e_kg``, ``water_l``, ``source``)."""
    e_req, basis = measurement.energy_per_request_kwh()
    if not (math.isfinite(e_req) and e_req >= 0):
        raise InputError(f"energy per request {e_req} kWh is not a number >= 0", "check the inputs")
    per = footprint_per_request(e_req, measurement.energy_includes_pue, site)
    out = {
        "energy_per_request_basis": basis,
        "energy_includes_pue": measurement.energy_includes_pue,
        "per_request": {
            **per,
            "energy_wh": per["energy_kwh"] * 1000,
            "co2e_g": per["co2e_kg"] * 1000,
            "water_ml": per["water_l"] * 1000,
        },
        "site": {
            "name": site.name,
            "pue": site.pue,
            "carbon_intensity_kg_per_kwh": site.carbon_intensity_kg_per_kwh,
            "wue_onsite_l_per_kwh": site.wue_onsite_l_per_kwh,
            "wue_offsite_l_per_kwh": site.wue_offsite_l_per_kwh,
        },
    }
    if requests_total is not None:
        out["deployment"] = {
            "requests": requests_total,
            **{k: v * requests_total for k, v in per.items()},
        }
    if training is not None:
        out["training"] = training
        out["breakeven"] = breakeven(training.get("co2e_kg"), training.get("water_l"), per)
    return out

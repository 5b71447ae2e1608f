"""Accounting formulas against hand calculations and the paper's figures."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.carbon_report.accounting import (
    RunSpec,
    account_run,
    embodied,
    embodied_per_gpu_hour,
    facility_energy_kwh,
    operational,
    summarize,
)
from iclr25.core.carbon_report.manifest import load_runs
from iclr25.core.carbon_report.presets import Site, datacenter, gpu_model
from iclr25.errors import InputError
from iclr25.paths import package_file
from iclr25.testing import assert_close


def _run(name, stage, energy_kwh, site, includes_pue=True, gpu_hours=None, gpu=None):
    it, _ = facility_energy_kwh(energy_kwh, includes_pue, site.pue)
    return RunSpec(name, stage, it, "test", site, None, gpu_hours, gpu)


@pytest.mark.parametrize(
    ("energy_mwh", "co2e_t", "water_kl"),
    [
        (30, 10, 39),  # paper: OLMo 1B, 30 MWh -> 10 t CO2e, 39 kL (Texas, PUE included)
        (54, 18, 70),  # paper: OLMoE 0924, 54 MWh -> 18 t CO2e, 70 kL
    ],
)
def test_paper_texas_rows(energy_mwh, co2e_t, water_kl):
    row = account_run(_run("r", "final", energy_mwh * 1000, datacenter("texas")))
    # hand calculation: E (PUE included) x 0.332 kg/kWh and x 1.29 L/kWh
    assert_close(row["co2e_kg"], energy_mwh * 1000 * 0.332, rtol=1e-12)
    assert_close(row["water_l"], energy_mwh * 1000 * 1.29, rtol=1e-12)
    assert round(row["co2e_kg"] / 1000) == co2e_t
    assert round(row["water_l"] / 1000) == water_kl
    assert_close(row["energy_kwh"], energy_mwh * 1000, rtol=1e-12)  # facility energy
    assert_close(row["it_energy_kwh"], energy_mwh * 1000 / 1.2, rtol=1e-12)


def test_hand_calculation_with_onsite_water_and_the_papers_formula():
    site = Site(
        "s",
        pue=1.5,
        carbon_intensity_kg_per_kwh=0.4,
        wue_onsite_l_per_kwh=2.0,
        wue_offsite_l_per_kwh=3.0,
    )
    out = operational(100.0, site)  # 100 kWh of IT energy
    assert out["energy_kwh"] == pytest.approx(150.0)
    assert out["co2e_kg"] == pytest.approx(60.0)  # 150 x 0.4
    assert out["water_l"] == pytest.approx(
        100 * 2.0 + 150 * 3.0
    )  # on-site per IT, off-site per facility
    paper = 100 * 1.5 * (2.0 + 3.0)  # the paper's W = E PUE (WUE_on + WUE_off)
    assert paper - out["water_l"] == pytest.approx(100 * (1.5 - 1) * 2.0)
    texas = datacenter("texas")  # on-site WUE 0: the two formulas agree
    assert operational(100.0, texas)["water_l"] == pytest.approx(100 * texas.pue * 1.29)


def test_embodied_per_gpu_hour_matches_the_paper():
    h100 = gpu_model("H100")
    co2e_h, water_h = embodied_per_gpu_hour(h100)
    assert round(co2e_h, 3) == 0.013  # paper: ~0.013 kg CO2e per GPU-hour
    assert round(water_h, 3) == 0.003  # paper: ~0.003 L per GPU-hour
    co2e, water = embodied(1.65e6, h100)  # paper: 1.65 M GPU-hours -> 22 t, 4.8 kL
    assert round(co2e / 1000) == 22
    assert round(water / 1000, 1) == 4.8
    assert_close(co2e, 1.65e6 * 462.5 / (4 * 8760), rtol=1e-12)


def test_hydro_site_counts_zero():
    row = account_run(
        _run("lumi", "final", 1000.0, datacenter("lumi"), gpu_hours=100.0, gpu=gpu_model("A100"))
    )
    assert row["co2e_kg"] == 0 and row["water_l"] == 0
    assert row["embodied_co2e_kg"] > 0  # manufacturing is not hydro-powered


def test_bundled_manifest_reproduces_the_papers_headline():
    specs, warnings = load_runs(
        package_file("iclr25.data", "carbon_report", "example_manifest.yaml")
    )
    out = summarize(specs)
    totals, stages = out["totals"], out["stages"]
    # paper: 493 t CO2e and 2,769 kL in total; development 159 t / 843 kL; final 312 t / 1,921 kL
    assert totals["total_co2e_kg"] == pytest.approx(493_000, rel=0.005)
    assert totals["total_water_l"] == pytest.approx(2_769_000, rel=0.001)
    assert stages["development"]["co2e_kg"] == pytest.approx(159_000, rel=0.001)
    assert stages["final"]["water_l"] == pytest.approx(1_921_000, rel=0.001)
    assert stages["manufacturing"]["embodied_co2e_kg"] == pytest.approx(22_000, rel=0.02)
    assert out["development_final_ratio"]["co2e_kg"] == pytest.approx(0.5, abs=0.02)  # "~50%"
    assert out["equivalences"]["us_home_years"] == pytest.approx(98, abs=0.5)
    assert out["equivalences"]["us_person_years_water"] == pytest.approx(24.5, abs=0.1)
    assert [r["stage"] for r in out["breakdown"]] == [
        "manufacturing",
        "development",
        "final",
        "total",
    ]
    assert sum(r["co2e_kg"] for r in out["breakdown"][:-1]) == pytest.approx(
        out["breakdown"][-1]["co2e_kg"]
    )
    assert warnings == []


energies = st.floats(min_value=0.0, max_value=1e7, allow_nan=False)


@given(
    st.lists(
        st.tuples(energies, st.sampled_from(["development", "final", "inference"]), energies),
        min_size=1,
        max_size=8,
    )
)
def test_totals_are_sums_of_runs_and_stages(items):
    texas, h100 = datacenter("texas"), gpu_model("H100")
    specs = [
        RunSpec(f"r{i}", stage, e, "t", texas, 8, h, h100) for i, (e, stage, h) in enumerate(items)
    ]
    out = summarize(specs)
    for key in (
        "energy_kwh",
        "co2e_kg",
        "water_l",
        "embodied_co2e_kg",
        "total_co2e_kg",
        "total_water_l",
    ):
        by_runs = sum(r[key] for r in out["runs"])
        by_stage = sum(
            out["stages"][s][key]
            for s in ("development", "final", "inference")
            if s in out["stages"]
        )
        assert out["totals"][key] == pytest.approx(by_runs, rel=1e-9, abs=1e-9)
        assert out["totals"][key] == pytest.approx(by_stage, rel=1e-9, abs=1e-9)
    for r in out["runs"]:
        assert r["total_co2e_kg"] == pytest.approx(r["co2e_kg"] + r["embodied_co2e_kg"])


@given(st.floats(min_value=1.0, max_value=3.0), st.floats(min_value=0.0, max_value=1e6))
def test_pue_included_and_excluded_are_consistent(pue, energy):
    it, fac = facility_energy_kwh(energy, True, pue)
    it2, fac2 = facility_energy_kwh(it, False, pue)
    assert math.isclose(fac2, fac, rel_tol=1e-12, abs_tol=1e-9) and math.isclose(
        it2, it, rel_tol=1e-12, abs_tol=1e-9
    )


def test_equivalence_factors_can_be_given():
    texas = datacenter("texas")
    spec = RunSpec("r", "final", 1000.0, "t", texas)  # 1000 kWh IT -> 1200 kWh x 0.332
    out = summarize([spec], {"co2e_kg_per_us_home_year": 100.0, "water_l_per_us_person_year": None})
    eq = out["equivalences"]
    assert eq["us_home_years"] == pytest.approx(1200 * 0.332 / 100.0)
    assert eq["sources"]["us_home_years"] == "given"
    assert eq["water_l_per_us_person_year"] == pytest.approx(113020.4)  # the preset stays
    assert "paper" in eq["sources"]["us_person_years_water"]


def test_overflowing_inputs_are_an_error_not_inf():
    site = Site("s", 1e308, 0.3, 0.0, 1.0)
    with pytest.raises(InputError, match="energy_kwh = inf") as err:
        account_run(RunSpec("huge", "final", 10.0, "t", site))
    assert "units" in err.value.fix

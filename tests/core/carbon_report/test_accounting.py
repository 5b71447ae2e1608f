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


def test_bundled_manifest_is_the_papers_rows_with_printed_inputs():
    """The example manifest holds exactly the Table 2 rows of morrison2025.json (nothing
    solved from a total), and its totals are their hand-computed sum."""
    from iclr25.core.carbon_report.reproduction import paper_rows

    specs, warnings = load_runs(
        package_file("iclr25.data", "carbon_report", "example_manifest.yaml")
    )
    rows = paper_rows()["training"]
    assert [s.name for s in specs] == [r["name"] for r in rows]
    for spec, row in zip(specs, rows, strict=True):
        assert spec.site.name == row["site"]
        assert spec.it_energy_kwh * spec.site.pue == pytest.approx(
            float(row["inputs"]["energy_mwh"]) * 1000
        )
    out = summarize(specs)
    # hand: (30 + 157 + 54) MWh x 0.332 + 230 MWh x 0.352 = 80.012 + 80.96 t
    assert out["totals"]["co2e_kg"] == pytest.approx(241_000 * 0.332 + 230_000 * 0.352)
    # hand: 241 MWh x 1.29 + 230 MWh x 3.10 L/kWh
    assert out["totals"]["water_l"] == pytest.approx(241_000 * 1.29 + 230_000 * 3.10)
    assert out["totals"]["embodied_co2e_kg"] == 0  # no GPU-hours printed per run
    assert sum("embodied CO2e and water are not counted" in w for w in warnings) == 4


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
    assert eq["us_home_years_co2e"] == pytest.approx(1200 * 0.332 / 100.0)
    assert eq["sources"]["us_home_years_co2e"] == "given"
    # the presets: EIA's 10,715 kWh per home-year, USGS' 82 gallons per person-day
    assert eq["us_home_years_electricity"] == pytest.approx(1200 / 10_715)
    assert eq["water_l_per_us_person_year"] == pytest.approx(82 * 3.785411784 * 365, rel=1e-6)
    assert "USGS" in eq["sources"]["us_person_years_water"]
    assert "EIA" in eq["sources"]["us_home_years_electricity"]
    no_factor = summarize([spec])["equivalences"]
    assert no_factor["us_home_years_co2e"] is None  # no CO2e-per-home preset is assumed


def test_overflowing_inputs_are_an_error_not_inf():
    site = Site("s", 1e308, 0.3, 0.0, 1.0)
    with pytest.raises(InputError, match="energy_kwh = inf") as err:
        account_run(RunSpec("huge", "final", 10.0, "t", site))
    assert "units" in err.value.fix

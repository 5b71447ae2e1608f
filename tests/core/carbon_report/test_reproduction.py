"""The paper's per-row figures, recomputed from its per-row inputs (never from a total)."""

from __future__ import annotations

import pytest

from iclr25.core.carbon_report.reproduction import (
    compare,
    headline,
    inference_row,
    paper_rows,
    printed_interval,
    reproduce,
    training_row,
)


def test_printed_figures_stand_for_their_rounding_interval():
    assert printed_interval("30") == (30.0, (29.5, 30.5))
    value, (lo, hi) = printed_interval("0.533")
    assert value == 0.533 and lo == pytest.approx(0.5325) and hi == pytest.approx(0.5335)
    _, (lo, hi) = printed_interval("1.05e9")
    assert (lo, hi) == pytest.approx((1.045e9, 1.055e9))
    assert printed_interval("1,921")[1] == (1920.5, 1921.5)
    assert printed_interval("2400", exact=True) == (2400.0, (2400.0, 2400.0))


def test_a_figure_outside_the_rounding_disagrees():
    one = {"x": 1.0}
    assert compare("y", "10", lambda x: 10.4 * x, one, {"x": (1.0, 1.0)})["agrees"]
    off = compare("y", "10", lambda x: 10.6 * x, one, {"x": (1.0, 1.0)})
    assert not off["agrees"] and off["rel_error"] == pytest.approx(0.06)
    # the input's own rounding widens the computed interval: 10.6 x [0.95, 1.05] reaches 10
    assert compare("y", "10", lambda x: 10.6 * x, one, {"x": (0.95, 1.05)})["agrees"]


# hand: Table 2 rows at the paper's Texas constants (energy includes the PUE):
# CO2e = E x 0.332 kg/kWh, water = E x 1.29 L/kWh; Iowa: 0.352 kg/kWh, 3.10 L/kWh
TABLE_2 = {
    "OLMo 1B (3T)": (30_000 * 0.332 / 1000, 30_000 * 1.29 / 1000, True),
    "OLMo 2 7B": (157_000 * 0.332 / 1000, 157_000 * 1.29 / 1000, True),
    "OLMoE 0924": (54_000 * 0.332 / 1000, 54_000 * 1.29 / 1000, True),
    # printed 101 t and 892 kL: 1.25x what 230 MWh gives at Iowa's constants
    "OLMo 2 13B": (230_000 * 0.352 / 1000, 230_000 * 3.10 / 1000, False),
}


@pytest.mark.parametrize("row", paper_rows()["training"], ids=lambda r: r["name"])
def test_table_2_rows_per_row(row):
    co2e_t, water_kl, agrees = TABLE_2[row["name"]]
    out = training_row(row)
    got = {q["quantity"]: q for q in out["quantities"]}
    assert got["co2e_t"]["computed"] == pytest.approx(co2e_t, rel=1e-12)
    assert got["water_kl"]["computed"] == pytest.approx(water_kl, rel=1e-12)
    assert got["co2e_t"]["agrees"] is agrees and got["water_kl"]["agrees"] is agrees
    if agrees:  # within the rounding of the printed value: |computed - printed| <= 0.5 + input
        for q in got.values():
            assert abs(q["computed"] - float(q["printed"])) <= 0.5 + 0.5 * 1.29


def test_table_3_rows_co2e_and_breakeven_reproduce_water_does_not():
    rows = {r["preset"]: inference_row(r) for r in paper_rows()["inference"]}
    by = {k: {q["quantity"]: q for q in r["quantities"]} for k, r in rows.items()}
    # hand: 0.358 kWh per 2,400 requests x 0.332 kg/kWh = 118.856 g (printed 118.9)
    assert by["olmo-2-7b-1rps"]["co2e_g"]["computed"] == pytest.approx(118.856)
    # hand: 52 t / (118.856 g / 2400) = 1.0500e9 requests (printed 1.05 billion)
    assert by["olmo-2-7b-1rps"]["breakeven_requests"]["computed"] == pytest.approx(
        52e6 * 2400 / 118.856
    )
    for preset, quantities in by.items():
        assert quantities["co2e_g"]["agrees"], preset
        assert quantities["breakeven_requests"]["agrees"], preset
        if "water_l" in quantities:  # printed water is 1.49 L/kWh, the paper's Texas WUE 1.29
            water = quantities["water_l"]
            assert not water["agrees"] and water["rel_error"] == pytest.approx(-0.134, abs=0.002)


def test_the_whole_reproduction_and_its_verdict():
    res = reproduce()
    # manufacturing, hand: 1.65e6 GPU-h x 3700 / 8 kg / (4 x 8760 h) = 21.78 t (printed 22);
    # water 1.65e6 x (100.4 + 2.2) L / 35,040 h = 4.831 kL (printed 4.8)
    manufacturing = next(r for r in res["rows"] if r["kind"] == "manufacturing")
    got = {q["quantity"]: q["computed"] for q in manufacturing["quantities"]}
    assert got["co2e_t"] == pytest.approx(1.65e6 * 462.5 / 35_040 / 1000)
    assert got["water_kl"] == pytest.approx(1.65e6 * 102.6 / 35_040 / 1000)
    assert manufacturing["agrees"]
    assert res["figures"] == 23 and res["figures_agreeing"] == 18
    assert {d["row"] for d in res["disagreeing"]} == {
        "OLMo 2 13B",
        "OLMo 2 7B, 1 req/s",
        "OLMo 1B (3T), 1 req/s",
        "Llama 2 13B, 1 req/s",
    }
    assert res["verdict"] == "not met" and len(res["not_reproducible"]) == 6
    assert headline(res).startswith("18 of 23 printed figures reproduced within rounding")

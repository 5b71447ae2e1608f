"""Energy, carbon and water per request, and the break-even count (hand-computed)."""

from __future__ import annotations

import pytest

from iclr25.core.carbon_report.inference import ServingMeasurement, analyse
from iclr25.core.carbon_report.presets import datacenter
from iclr25.errors import InputError


def test_power_and_throughput_give_energy_per_request():
    texas = datacenter("texas")
    # hand: 450 W / 8 requests per s = 56.25 J = 1.5625e-5 kWh IT per request;
    # x 1.2 PUE x 0.332 kg/kWh = 6.225e-6 kg; water x 1.2 x 1.29 L/kWh
    out = analyse(ServingMeasurement(power_w=450.0, throughput_rps=8.0), texas)
    per = out["per_request"]
    assert per["it_energy_kwh"] == pytest.approx(56.25 / 3.6e6)
    assert per["co2e_g"] == pytest.approx(56.25 / 3.6e6 * 1.2 * 0.332 * 1000)
    assert per["water_ml"] == pytest.approx(56.25 / 3.6e6 * 1.2 * 1.29 * 1000)
    assert "breakeven" not in out


def test_breakeven_against_a_training_figure():
    iowa = datacenter("iowa")
    meas = ServingMeasurement(energy_kwh=2.0, requests=1000, energy_includes_pue=True)
    training = {"co2e_kg": 10_000.0, "water_l": 50_000.0, "source": "given"}
    out = analyse(meas, iowa, training, requests_total=1e6)
    # hand: 2 Wh facility per request (PUE included) x 0.352 = 0.704 g; 10 t / 0.704 g
    assert out["per_request"]["co2e_g"] == pytest.approx(0.704)
    assert out["breakeven"]["requests_co2e"] == pytest.approx(10_000 / 0.000704)
    # water: 2 Wh x 3.10 L/kWh = 6.2 mL per request; 50 kL / 6.2 mL
    assert out["breakeven"]["requests_water"] == pytest.approx(50_000 / 0.0062)
    assert out["deployment"]["co2e_kg"] == pytest.approx(704.0)
    hydro = analyse(meas, datacenter("lumi"), training)
    assert hydro["breakeven"]["requests_co2e"] is None  # a request at 0 CO2e never breaks even


@pytest.mark.parametrize(
    ("meas", "message"),
    [
        (ServingMeasurement(energy_kwh=1.0), "needs --requests"),
        (ServingMeasurement(power_w=300.0), "needs --throughput"),
        (ServingMeasurement(energy_kwh=1.0, requests=5, power_w=3.0), "both"),
        (ServingMeasurement(), "no serving measurement"),
    ],
)
def test_incomplete_measurements_are_errors(meas, message):
    with pytest.raises(InputError, match=message):
        analyse(meas, datacenter("texas"))

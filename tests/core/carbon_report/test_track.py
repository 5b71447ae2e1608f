"""Live tracking with a stand-in NVML and a fake RAPL tree (no GPU needed)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from iclr25.core.carbon_report import sensors
from iclr25.core.carbon_report.codecarbon_csv import COLUMNS, append_row, read_codecarbon
from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power
from iclr25.core.carbon_report.track import TrackConfig, emissions_row, summarize, track_command
from iclr25.errors import InputError


class FakeNvml:
    """The pynvml calls we use, for GPUs drawing constant power."""

    class NVMLError(Exception):
        pass

    def __init__(self, power_w=(300.0, 150.0, 75.0), counter=True):
        self.power_w, self.counter, self.t0 = power_w, counter, time.time()

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        pass

    def nvmlDeviceGetCount(self):
        return len(self.power_w)

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return b"NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-{h:04d}-abcd"

    def nvmlDeviceGetPowerUsage(self, h):
        return int(self.power_w[h] * 1000)  # mW

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        if not self.counter:
            raise self.NVMLError("not supported")
        return (time.time() - self.t0) * self.power_w[h] * 1000  # mJ


@pytest.mark.parametrize(
    ("visible", "expected"),
    [
        (None, [0, 1, 2]),
        ("2,0", [2, 0]),
        ("GPU-0001", [1]),
        ("", []),
        ("1,oops,2", [1]),
        ("-1", []),
    ],
)
def test_only_visible_gpus_are_measured(visible, expected):
    env = {} if visible is None else {"CUDA_VISIBLE_DEVICES": visible}
    gpus, reason = sensors.open_nvml(env, FakeNvml())
    got = [d.index for d in gpus.devices] if gpus else []
    assert got == expected
    if gpus:
        assert [d.label for d in gpus.devices] == [
            str(i) for i in range(len(expected))
        ]  # CUDA order
    else:
        assert reason == "no visible GPU"


def test_rapl_counters_and_wraparound(tmp_path):
    for name, value in (("intel-rapl:0", 900), ("intel-rapl:1", 10)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "energy_uj").write_text(f"{value}\n")
        (tmp_path / name / "max_energy_range_uj").write_text("1000\n")
    (tmp_path / "intel-rapl:0:0").mkdir()  # a sub-domain (core): not double counted
    rapl = sensors.Rapl(tmp_path)
    assert rapl.available and len(rapl.domains) == 2
    assert rapl.delta_j([900, 10], [100, 60]) == pytest.approx((200 + 50) / 1e6)
    assert not sensors.Rapl(tmp_path / "none").available


def _child(seconds: float, code: int = 0) -> list[str]:
    return [sys.executable, "-c", f"import time, sys; time.sleep({seconds}); sys.exit({code})"]


@pytest.mark.parametrize("counter", [True, False])
def test_tracked_energy_log_and_codecarbon_round_trip(tmp_path, counter):
    config = TrackConfig(interval_s=0.05, powercap_root=tmp_path / "no-rapl")
    log = tmp_path / "power_log.csv"
    with open(log, "w") as fh:
        m = track_command(_child(0.6), config, fh, nvml=FakeNvml(counter=counter), environ={})
    results = summarize(m, config)
    assert m.exit_code == 0 and results["samples"] >= 5
    for gpu, watts in zip(results["gpus"], (300.0, 150.0, 75.0), strict=True):
        assert gpu["energy_kwh"] * 3.6e6 == pytest.approx(watts * m.duration_s, rel=0.05)
        assert gpu["method"] == (
            "NVML energy counter" if counter else "NVML power polling (trapezoid)"
        )
    assert results["estimated"] == {"gpu": False, "cpu": True, "ram": True}
    # the power log reads back with `power` (same energy, up to the sampling of the ends)
    logged = analyse_power([log], PowerConfig())
    assert logged.results["gpu_count"] == 3
    assert logged.results["measured_energy_kwh"] == pytest.approx(
        results["gpu_energy_kwh"], rel=0.1
    )
    # emissions.csv: written with CodeCarbon's columns, read back by `power` exactly
    csv_path = tmp_path / "emissions.csv"
    append_row(csv_path, emissions_row(m, results, config))
    append_row(csv_path, emissions_row(m, results, config))  # appends under one header
    lines = csv_path.read_text().splitlines()
    assert lines[0].split(",") == list(COLUMNS) and len(lines) == 3
    (run, _) = read_codecarbon(csv_path).runs
    assert run["gpu_energy_kwh"] == results["gpu_energy_kwh"] and run["gpu_count"] == 3
    assert run["cpu_energy_kwh"] == results["cpu_energy_kwh"]
    again = analyse_power([csv_path], PowerConfig()).results
    assert again["energy_kwh"] == pytest.approx(2 * results["it_energy_kwh"], rel=1e-12)
    assert again["gpu_energy_kwh"] == pytest.approx(2 * results["gpu_energy_kwh"], rel=1e-12)
    assert again["gpu_count"] == 3  # GPUs, not runs


def test_exit_status_and_cpu_estimate(tmp_path):
    config = TrackConfig(interval_s=0.05, powercap_root=tmp_path)
    busy = [
        sys.executable,
        "-c",
        "import time,sys\ns=time.process_time()\n"
        "while time.process_time()-s<0.3: pass\nsys.exit(3)",
    ]
    m = track_command(busy, config, None, nvml=FakeNvml(), environ={"CUDA_VISIBLE_DEVICES": ""})
    assert m.exit_code == 3 and m.gpus == []
    assert m.cpu_seconds >= 0.3
    assert m.cpu_energy_j == pytest.approx(m.cpu_seconds * 85.0 / (os.cpu_count() or 1))
    killed = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"]
    assert track_command(killed, config, None, nvml=FakeNvml(), environ={}).exit_code == 128 + 15


def test_missing_command_is_an_input_error(tmp_path):
    config = TrackConfig(powercap_root=tmp_path)
    with pytest.raises(InputError, match="command not found"):
        track_command(["no-such-command-xyz"], config, None, nvml=FakeNvml(), environ={})
    with pytest.raises(InputError, match="no command"):
        track_command([], config, None, nvml=FakeNvml(), environ={})


def test_emissions_csv_with_other_columns_is_refused(tmp_path):
    path = tmp_path / "emissions.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="other columns"):
        append_row(path, {"timestamp": "x"})
    assert path.read_text() == "a,b\n1,2\n"


def test_accounting_counts_the_tracked_gpus_embodied_share(tmp_path):
    from iclr25.core.carbon_report.manifest import GpuOverrides
    from iclr25.core.carbon_report.presets import datacenter
    from iclr25.core.carbon_report.track import account

    config = TrackConfig(interval_s=0.05, powercap_root=tmp_path)
    m = track_command(_child(0.2), config, None, nvml=FakeNvml(), environ={})
    results = summarize(m, config)
    out = account(results, datacenter("texas"), config)
    acc = out["accounting"]
    gpu_hours = 3 * m.duration_s / 3600  # three H100s (NVML's name) for the run's duration
    assert acc["gpu_model"] == "h100-sxm" and acc["gpu_hours"] == pytest.approx(gpu_hours)
    assert acc["embodied_co2e_kg"] == pytest.approx(gpu_hours * 462.5 / (4 * 8760))
    assert out["total_co2e_kg"] == pytest.approx(out["co2e_kg"] + acc["embodied_co2e_kg"])
    assert out["co2e_kg"] == pytest.approx(results["it_energy_kwh"] * 1.2 * 0.332)
    given = TrackConfig(hardware=GpuOverrides(embodied_co2e_kg_per_gpu=100.0, lifetime_years=1))
    acc = account(results, datacenter("texas"), given)["accounting"]
    assert acc["embodied_co2e_kg"] == pytest.approx(gpu_hours * 100.0 / 8760)
    cpu_only = {**results, "gpus": []}
    assert account(cpu_only, datacenter("texas"), config)["accounting"]["embodied_co2e_kg"] == 0

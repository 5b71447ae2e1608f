"""CodeCarbon emissions.csv files as CodeCarbon 2.3, 2.8 and 3.x write them."""

from __future__ import annotations

import csv
import io

import pytest

from iclr25.core.carbon_report.codecarbon_csv import (
    append_row,
    check_appendable,
    read_codecarbon,
)
from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power
from iclr25.errors import InputError

# The header lines of real CodeCarbon output (the field order of its EmissionsData), as in
# CodeCarbon's own tests/test_data/emissions_valid_headers.csv at v2.3.4, v2.8.5 and v3.2.9
# (3.3.0, the newest release at the time of writing, writes the same as 3.2.9).
HEADER_2_3 = (
    "timestamp,project_name,run_id,duration,emissions,emissions_rate,cpu_power,gpu_power,"
    "ram_power,cpu_energy,gpu_energy,ram_energy,energy_consumed,country_name,country_iso_code,"
    "region,cloud_provider,cloud_region,os,python_version,codecarbon_version,cpu_count,"
    "cpu_model,gpu_count,gpu_model,longitude,latitude,ram_total_size,tracking_mode,on_cloud,pue"
)
HEADER_2_8 = (
    "timestamp,project_name,run_id,experiment_id,duration,emissions,emissions_rate,cpu_power,"
    "gpu_power,ram_power,cpu_energy,gpu_energy,ram_energy,energy_consumed,country_name,"
    "country_iso_code,region,cloud_provider,cloud_region,os,python_version,codecarbon_version,"
    "cpu_count,cpu_model,gpu_count,gpu_model,longitude,latitude,ram_total_size,tracking_mode,"
    "on_cloud,pue"
)
HEADER_3 = (
    "timestamp,project_name,run_id,experiment_id,duration,emissions,emissions_rate,cpu_power,"
    "gpu_power,ram_power,cpu_energy,gpu_energy,ram_energy,energy_consumed,water_consumed,"
    "country_name,country_iso_code,region,cloud_provider,cloud_region,os,python_version,"
    "codecarbon_version,cpu_count,cpu_model,gpu_count,gpu_model,longitude,latitude,"
    "ram_total_size,tracking_mode,cpu_utilization_percent,gpu_utilization_percent,"
    "ram_utilization_percent,ram_used_gb,on_cloud,pue,wue"
)
HEADERS = {"2.3": HEADER_2_3, "2.8": HEADER_2_8, "3.x": HEADER_3}


def _row(header: str, **cells) -> str:
    """One data line for ``header`` (cells not given are empty, as CodeCarbon leaves them)."""
    columns = header.split(",")
    base = {"timestamp": "2024-05-31T10:39:13", "project_name": "codecarbon", "pue": "1.0"}
    values = {**base, **cells}
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow([values.get(c, "") for c in columns])
    return buffer.getvalue()


def _cpu_run(header: str, run_id: str, cpu: float, ram: float, duration: float = 100.0):
    """A CPU-only run, as CodeCarbon writes it: gpu_energy 0, gpu_count and model empty."""
    return _row(
        header,
        run_id=run_id,
        duration=repr(duration),
        cpu_energy=repr(cpu),
        gpu_energy="0",
        ram_energy=repr(ram),
        energy_consumed=repr(cpu + ram),
    )


@pytest.mark.parametrize("release", list(HEADERS))
def test_a_cpu_only_file_gives_the_sum_of_energy_consumed(tmp_path, release):
    header = HEADERS[release]
    lines = [_cpu_run(header, f"r{i}", 2e-5 * (i + 1), 3e-5) for i in range(3)]
    path = tmp_path / "emissions.csv"
    path.write_text("\n".join([header, *lines]) + "\n")
    cc = read_codecarbon(path)
    assert cc.release == release and cc.extra_columns == [] and cc.problems == {}
    res = analyse_power([path], PowerConfig()).results
    # hand: energy_consumed = (2e-5 + 4e-5 + 6e-5) CPU + 3 x 3e-5 RAM = 2.1e-4 kWh
    assert res["energy_kwh"] == pytest.approx(2.1e-4, rel=1e-12)
    assert res["cpu_energy_kwh"] == pytest.approx(1.2e-4) and res["ram_energy_kwh"] == 9e-5
    assert res["gpu_energy_kwh"] == 0 and res["gpu_count"] == 0 and len(res["runs"]) == 3


def test_bad_rows_are_skipped_with_their_lines_and_an_empty_part_keeps_the_total(tmp_path):
    h = HEADER_2_8
    lines = [
        _cpu_run(h, "a", 1e-4, 1e-5),
        _row(
            h,
            run_id="b",
            duration="50",
            cpu_energy="1e-4",
            ram_energy="1e-5",
            energy_consumed="2e-4",
            gpu_energy="",
        ),  # empty gpu_energy cell: line 3
        _row(h, run_id="c", duration="x", energy_consumed="1"),  # line 4: bad duration
        "2024-05-31T10:39:13,codecarbon,d,short row",  # line 5: too few cells
        _row(h, run_id="e", duration="9", energy_consumed="-1"),  # line 6: negative energy
    ]
    path = tmp_path / "emissions.csv"
    path.write_text("\n".join([h, *lines]) + "\n")
    cc = read_codecarbon(path)
    assert [r["run_id"] for r in cc.runs] == ["a", "b"]
    assert cc.problems == {
        "missing_part": 1,
        "bad_duration": 1,
        "malformed_rows": 1,
        "bad_energy": 1,
    }
    assert cc.first_lines["malformed_rows"] == [5] and cc.first_lines["bad_energy"] == [6]
    b = cc.runs[1]
    assert b["energy_kwh"] == 2e-4 and b["gpu_energy_kwh"] is None
    notes = " | ".join(cc.notes())
    assert "(lines 4)" in notes and "(lines 5)" in notes and "their total is kept" in notes
    assert analyse_power([path], PowerConfig()).results["energy_kwh"] == pytest.approx(3.1e-4)
    path.write_text("\n".join([h, lines[2], lines[3]]) + "\n")
    with pytest.raises(InputError, match="no usable CodeCarbon row"):
        read_codecarbon(path)


def test_gpu_count_pue_and_cumulative_rows(tmp_path):
    h = HEADER_3
    gpu_run = dict(
        run_id="g",
        cpu_energy="0.01",
        ram_energy="0.002",
        gpu_count="8",
        gpu_model="8 x NVIDIA H100 80GB HBM3",
        pue="1.2",
    )
    lines = [
        _row(h, duration="1800", gpu_energy="1.2", energy_consumed="1.212", **gpu_run),
        _row(h, duration="3600", gpu_energy="2.4", energy_consumed="2.424", **gpu_run),
    ]
    path = tmp_path / "emissions.csv"
    path.write_text("\n".join([h, *lines]) + "\n")
    analysis = analyse_power([path], PowerConfig())
    res = analysis.results
    # hand: the latest cumulative row, PUE 1.2 divided out: 2.424 / 1.2 = 2.02 kWh IT
    assert res["energy_kwh"] == pytest.approx(2.02) and res["gpu_energy_kwh"] == pytest.approx(2.0)
    assert res["gpu_count"] == 8 and res["gpu_hours"] == pytest.approx(8.0)
    assert res["runs"][0]["gpu_model_key"] == "h100-sxm"
    assert any("pue column (1.2)" in w for w in analysis.warnings)


def test_an_unknown_extra_column_is_kept_and_warned_about(tmp_path):
    h = HEADER_2_3 + ",my_tag"
    path = tmp_path / "emissions.csv"
    path.write_text(h + "\n" + _cpu_run(h, "r", 1e-4, 0.0) + "\n")
    cc = read_codecarbon(path)
    assert cc.extra_columns == ["my_tag"] and cc.release == "2.3"
    analysis = analyse_power([path], PowerConfig())
    assert any("my_tag" in w for w in analysis.warnings)
    assert analysis.results["energy_kwh"] == pytest.approx(1e-4)


@pytest.mark.parametrize("release", list(HEADERS))
def test_append_keeps_the_files_own_columns(tmp_path, release):
    header = HEADERS[release]
    path = tmp_path / "emissions.csv"
    path.write_text(header + "\r\n" + _cpu_run(header, "old", 1e-4, 1e-5) + "\r\n")
    row = {
        "timestamp": "2025-01-01T00:00:00",
        "run_id": "new",
        "experiment_id": "x",
        "duration": 10.0,
        "cpu_energy": 1e-3,
        "gpu_energy": 0.0,
        "ram_energy": 0.0,
        "energy_consumed": 1e-3,
        "water_consumed": 0.5,
        "pue": 1.0,
    }
    dropped = append_row(path, row)
    raw = path.read_bytes().decode()
    assert raw.splitlines()[0] == header and raw.count("\r\n") == 3  # CRLF kept
    assert check_appendable(path)[2] == release
    got = {r["run_id"]: r for r in read_codecarbon(path).runs}
    assert got["new"]["energy_kwh"] == 1e-3 and set(got) == {"old", "new"}
    expected = {"2.3": ["experiment_id", "water_consumed"], "2.8": ["water_consumed"], "3.x": []}
    assert dropped == expected[release]


def test_append_refuses_a_file_that_is_not_codecarbons(tmp_path):
    path = tmp_path / "emissions.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="other columns"):
        append_row(path, {"timestamp": "x"})
    assert path.read_text() == "a,b\n1,2\n"

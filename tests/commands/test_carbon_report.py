"""`iclr25 carbon-report` through the real console script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from iclr25.commands.carbon_report import example_file
from iclr25.testing import error_line

KEYS = (
    "energy_kwh",
    "co2e_kg",
    "water_l",
    "embodied_co2e_kg",
    "embodied_water_l",
    "total_co2e_kg",
    "total_water_l",
)


def test_estimate_bundled_example_reproduces_the_paper(cli, tmp_path):
    out = tmp_path / "run"
    result = cli("carbon-report", "estimate", "--json", "--out", out)
    assert result.returncode == 0, result
    res = result.json()["results"]
    for key in KEYS:  # the key names, per run and in totals
        assert key in res["totals"] and all(key in r for r in res["runs"])
    assert all("gpus" in r for r in res["runs"])
    assert res["totals"]["total_co2e_kg"] == pytest.approx(493_000, rel=0.005)  # paper: 493 t
    assert res["totals"]["total_water_l"] == pytest.approx(2_769_000, rel=0.001)  # 2,769 kL
    assert set(res["stages"]) == {"development", "final", "manufacturing"}
    assert (out / "stages.png").stat().st_size > 1000
    again = cli("carbon-report", "estimate", "--out", out)  # an existing --out is refused
    assert again.returncode == 2 and "--overwrite" in again.stderr


def test_estimate_overrides_and_csv_manifest(cli, tmp_path):
    manifest = tmp_path / "runs.csv"
    manifest.write_text(
        "name,stage,gpus,hours,avg_power_w,gpu_model\nsweep,development,8,10,500,H100\n"
    )
    result = cli("carbon-report", "estimate", manifest, "--datacenter", "iowa", "--json")
    assert result.returncode == 0, result
    (run,) = result.json()["results"]["runs"]
    assert run["it_energy_kwh"] == pytest.approx(40.0)  # 8 GPUs x 10 h x 500 W
    assert run["co2e_kg"] == pytest.approx(40 * 1.12 * 0.352)
    assert run["embodied_co2e_kg"] == pytest.approx(80 * 462.5 / (4 * 8760))
    hydro = cli("carbon-report", "estimate", manifest, "--datacenter", "hydro", "--json").json()
    assert hydro["results"]["totals"]["co2e_kg"] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such manifest"),
        (
            "runs:\n  - name: a\n    stage: final\n    datacenter: texas\n",
            "neither energy_kwh nor gpu_hours",
        ),
        (
            "runs:\n  - name: a\n    stage: final\n    energy_kwh: 3\n    datacenter: moon\n",
            "texas",
        ),
        ("runs: [\n", "not valid YAML"),
    ],
)
def test_estimate_bad_input_exits_2_with_a_fix(cli, tmp_path, content, message):
    path = tmp_path / "m.yaml"
    if content is not None:
        path.write_text(content)
    result = cli("carbon-report", "estimate", path)
    assert result.returncode == 2, result
    assert (
        error_line(result.stderr).startswith("Error: ")
        and message in result.stderr
        and " — " in result.stderr
    )
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_power_on_the_bundled_log(cli, tmp_path):
    out = tmp_path / "run"
    result = cli("carbon-report", "power", "--json", "--out", out, "--datacenter", "texas")
    assert result.returncode == 0, result
    doc = result.json()
    res = doc["results"]
    assert res["gpu_count"] == 2 and res["energy_kwh"] > 0
    assert res["co2e_kg"] == pytest.approx(res["energy_kwh"] * 1.2 * 0.332)
    assert res["water_l"] == pytest.approx(res["energy_kwh"] * 1.2 * 1.29)
    assert res["profile"]["dips"]["count"] == 4  # two checkpoints x two GPUs
    assert res["gaps"]["count"] == 2 and any("gap" in w for w in doc["warnings"])
    assert {p.name for p in out.iterdir()} >= {
        "power_profile.png",
        "dips.csv",
        "series.csv",
        "result.json",
    }
    scaled = cli(
        "carbon-report", "power", example_file("example_power_log.csv"), "--nodes", "4", "--json"
    ).json()
    assert scaled["results"]["energy_kwh"] == pytest.approx(4 * res["energy_kwh"])
    assert "co2e_kg" not in scaled["results"]


def test_power_strict_and_bad_files(cli, tmp_path):
    log = tmp_path / "smi.csv"
    log.write_text(
        "timestamp, index, power.draw [W]\n2024/05/01 12:00:00.000, 0, 300 W\n"
        "broken\n2024/05/01 12:00:01.000, 0, 300 W\n2024/05/01 12:00:01.000, 0, 900 W\n"
        "2024/05/01 12:00:00.500, 0, 900 W\n2024/05/01 12:00:02.000, 0, 0.3 kW\n"
    )
    ok = cli("carbon-report", "power", log, "--json")
    assert ok.returncode == 0, ok
    doc = ok.json()
    skipped = doc["results"]["skipped"]
    assert skipped == {
        "malformed_rows": 1,
        "duplicate_timestamps": 1,
        "out_of_order": 1,
        "converted_units": 1,
    }
    assert doc["results"]["energy_kwh"] * 3.6e6 == pytest.approx(600.0)  # 300 W for 2 s
    warnings = " | ".join(doc["warnings"])
    assert f"{log} line 5" in warnings and f"{log} line 6" in warnings  # duplicate, earlier
    assert "sort the log by time" in warnings and "converted to W" in warnings
    strict = cli("carbon-report", "power", log, "--strict")
    assert strict.returncode == 2 and "line 3" in strict.stderr and "--strict" in strict.stderr
    log.write_text(
        "\n".join(log.read_text().splitlines()[:2] + ["2024/05/01 12:00:00.000, 0, 1 W"])
    )
    dup = cli("carbon-report", "power", log, "--strict")
    assert dup.returncode == 2 and "line 3: duplicate timestamp" in dup.stderr
    gap = cli("carbon-report", "power", log, "--max-gap", "0")
    assert gap.returncode == 2 and "inf to bridge every gap" in gap.stderr
    unknown = cli("carbon-report", "power", log, "--gpu-model", "V100")
    assert unknown.returncode == 2 and "h100-sxm" in unknown.stderr


def test_track_cpu_only_round_trip_and_exit_code(cli, tmp_path):
    out, emissions = tmp_path / "run", tmp_path / "emissions.csv"
    code = "import sys; print('hello from the child'); sys.exit(3)"
    result = cli(
        "carbon-report",
        "track",
        "--json",
        "--out",
        out,
        "--emissions-csv",
        emissions,
        "--datacenter",
        "texas",
        "--",
        sys.executable,
        "-c",
        code,
    )
    assert result.returncode == 3, result  # the child's exit status
    doc = json.loads(result.stdout)  # the child's stdout went to stderr: stdout is the document
    assert "hello from the child" in result.stderr
    res = doc["results"]
    assert res["exit_code"] == 3 and res["estimated"]["cpu"] and res["estimated"]["ram"]
    assert any("estimated" in w for w in doc["warnings"])
    assert (out / "result.json").exists() and (out / "power_log.csv").read_text().startswith(
        "timestamp,gpu,power_w"
    )
    back = cli("carbon-report", "power", emissions, "--json")  # CodeCarbon CSV round trip
    assert back.returncode == 0, back
    assert back.json()["results"]["energy_kwh"] == pytest.approx(res["gpu_energy_kwh"], abs=1e-15)
    gpu_row = back.json()["results"]["gpus"][0]
    assert gpu_row["cpu_energy_kwh"] == pytest.approx(res["cpu_energy_kwh"], rel=1e-12)


def test_track_refuses_a_foreign_emissions_csv_before_running_the_child(cli, tmp_path):
    foreign, ran = tmp_path / "emissions.csv", tmp_path / "ran"
    foreign.write_text("a,b\n1,2\n")
    code = f"import pathlib; pathlib.Path({str(ran)!r}).write_text('x')"
    result = cli(
        "carbon-report", "track", "--emissions-csv", foreign, "--", sys.executable, "-c", code
    )
    assert result.returncode == 2 and "other columns" in result.stderr
    assert not ran.exists() and foreign.read_text() == "a,b\n1,2\n"


def test_estimate_gpu_and_equivalence_overrides(cli, tmp_path):
    manifest = tmp_path / "runs.yaml"
    manifest.write_text(
        "runs:\n  - {name: a, stage: final, gpu_hours: 1000, utilization: 0.5, datacenter: texas}\n"
    )
    result = cli(
        "carbon-report",
        "estimate",
        manifest,
        "--gpu-model",
        "NVIDIA H200",
        "--co2e-kg-per-home-year",
        "1000",
        "--json",
    )
    assert result.returncode == 0, result
    res = result.json()["results"]
    (run,) = res["runs"]
    # hand: 1000 GPU-h x 0.5 x 700 W (H200 SXM TDP) = 350 kWh IT; x 1.2 x 0.332 kg/kWh
    assert run["gpu_model"] == "h200-sxm" and run["it_energy_kwh"] == pytest.approx(350.0)
    assert run["co2e_kg"] == pytest.approx(350 * 1.2 * 0.332)
    assert res["equivalences"]["us_home_years"] == pytest.approx(run["total_co2e_kg"] / 1000)


def _console_script() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "iclr25")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "iclr25"]


def test_track_forwards_ctrl_c_and_keeps_partial_measurements(tmp_path):
    ready, out = tmp_path / "ready", tmp_path / "run"
    child = (
        "import pathlib, sys, time\n"
        f"pathlib.Path({str(ready)!r}).write_text('x')\n"
        "try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n"
        "    print('child: saving a checkpoint', file=sys.stderr); sys.exit(130)\n"
    )
    argv = [
        *_console_script(),
        "carbon-report",
        "track",
        "--json",
        "--interval",
        "0.1",
        "--out",
        str(out),
        "--",
        sys.executable,
        "-c",
        child,
    ]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not ready.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert ready.exists(), "the child never started"
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)  # no terminal: track forwards it to the child
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "child: saving a checkpoint" in stderr
    res = json.loads(stdout)["results"]
    assert res["interrupted"] and res["signals"] == ["SIGINT"] and res["exit_code"] == 130
    assert res["duration_s"] > 0.3
    saved = json.loads((out / "result.json").read_text())["results"]  # partial run kept
    assert saved["interrupted"] and saved["samples"] >= 2


def test_help_epilogs_list_the_json_keys(cli):
    for sub, key in (
        ("estimate", "total_co2e_kg"),
        ("power", "energy_if_bridged_kwh"),
        ("track", "it_energy_kwh"),
    ):
        result = cli("carbon-report", sub, "--help")
        assert result.returncode == 0 and key in result.stdout

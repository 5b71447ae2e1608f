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
from iclr25.testing import error_line, sigint_default

KEYS = (
    "energy_kwh",
    "co2e_kg",
    "water_l",
    "embodied_co2e_kg",
    "embodied_water_l",
    "total_co2e_kg",
    "total_water_l",
)


def test_estimate_bundled_example_is_the_papers_rows(cli, tmp_path):
    out = tmp_path / "run"
    result = cli("carbon-report", "estimate", "--json", "--out", out)
    assert result.returncode == 0, result
    res = result.json()["results"]
    for key in KEYS:  # the key names, per run and in totals
        assert key in res["totals"] and all(key in r for r in res["runs"])
    assert all("gpus" in r for r in res["runs"])
    # hand: Table 2's printed energies (PUE included): 241 MWh at Texas, 230 MWh at Iowa
    assert res["totals"]["co2e_kg"] == pytest.approx(241_000 * 0.332 + 230_000 * 0.352)
    assert res["totals"]["water_l"] == pytest.approx(241_000 * 1.29 + 230_000 * 3.10)
    assert set(res["stages"]) == {"final", "manufacturing"}
    assert "bundled example" in result.stderr and "not its totals" in result.stderr
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
    assert "SYNTHETIC" in result.stderr and res["example"]["synthetic"] is True
    assert res["example"]["trace"]["gpus"] == 2 and res["example"]["trace"]["seed"] == 20250424
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


@pytest.mark.slow  # > 10 s: run by `make test-slow`
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
    # CPU + GPU + RAM, PUE (written into the row, as CodeCarbon does) divided out again
    read = back.json()["results"]
    assert read["energy_kwh"] == pytest.approx(res["it_energy_kwh"], rel=1e-12)
    assert read["cpu_energy_kwh"] == pytest.approx(res["cpu_energy_kwh"], rel=1e-12)
    assert read["gpu_count"] == 0 and read["runs"][0]["pue"] == 1.2


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
    assert res["equivalences"]["us_home_years_co2e"] == pytest.approx(run["total_co2e_kg"] / 1000)


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
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )
    deadline = time.time() + 60
    while not ready.exists() and time.time() < deadline:
        time.sleep(0.05)
    assert ready.exists(), "the child never started"
    time.sleep(1.0)  # several 0.1 s samples even on a loaded machine
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
        ("inference", "requests_co2e"),
        ("reproduce", "computed_interval"),
    ):
        result = cli("carbon-report", sub, "--help")
        assert result.returncode == 0 and key in result.stdout


def _four_gpu_log(path, samples=60, drop=None):
    lines = ["timestamp, power.draw [W]"]
    for i in range(samples):
        stamp = f"2024/05/01 12:{i // 60:02d}:{i % 60:02d}.250"
        lines += [f"{stamp}, {w:.2f} W" for w in (100.0, 200.0, 300.0, 400.0)]
    if drop is not None:
        del lines[drop]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_power_counts_every_gpu_and_warns_on_a_redirected_stderr(console_command, tmp_path):
    log = _four_gpu_log(tmp_path / "smi.csv")
    err_file = tmp_path / "stderr.txt"
    with open(err_file, "w") as err:  # stderr is a file, not a terminal
        proc = subprocess.run(
            [*console_command, "carbon-report", "power", str(log), "--json"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            check=False,
        )
    assert proc.returncode == 0
    res = json.loads(proc.stdout)["results"]
    # hand: 60 samples 1 s apart, (100 + 200 + 300 + 400) W x 59 s
    assert res["gpu_count"] == 4 and res["energy_kwh"] * 3.6e6 == pytest.approx(1000.0 * 59)
    stderr = err_file.read_text()
    assert "Warning:" in stderr and "no GPU id column; 4 GPUs" in stderr
    quiet = subprocess.run(
        [*console_command, "carbon-report", "power", str(log), "--quiet", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert quiet.returncode == 0 and "Warning" not in quiet.stderr


def test_power_refuses_an_ambiguous_log_and_takes_the_fix(cli, tmp_path):
    log = _four_gpu_log(tmp_path / "smi.csv", drop=10)
    bad = cli("carbon-report", "power", log)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "--gpus N" in bad.stderr and "--gpu-column" in bad.stderr
    fixed = cli("carbon-report", "power", log, "--gpus", "4", "--json")
    assert fixed.returncode == 0 and fixed.json()["results"]["gpu_count"] == 4


def test_power_reads_a_cpu_only_codecarbon_file(cli, tmp_path):
    header = (
        "timestamp,project_name,run_id,duration,emissions,emissions_rate,cpu_power,gpu_power,"
        "ram_power,cpu_energy,gpu_energy,ram_energy,energy_consumed,country_name,"
        "country_iso_code,region,cloud_provider,cloud_region,os,python_version,"
        "codecarbon_version,cpu_count,cpu_model,gpu_count,gpu_model,longitude,latitude,"
        "ram_total_size,tracking_mode,on_cloud,pue"
    )  # CodeCarbon 2.3's columns
    row = ",codecarbon,{run},120.0,,,42.5,0.0,3.0,{cpu},0,{ram},{total}" + "," * 16 + ",N,1.0"
    rows = [row.format(run=f"r{i}", cpu=3e-5, ram=1.67e-5, total=4.67e-5) for i in range(2)]
    path = tmp_path / "emissions.csv"
    path.write_text("\n".join([header, *("2024-05-31T10:39:13" + r for r in rows)]) + "\n")
    result = cli("carbon-report", "power", path, "--json")
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["energy_kwh"] == pytest.approx(2 * 4.67e-5)  # the sum of energy_consumed
    assert res["cpu_energy_kwh"] == pytest.approx(6e-5) and res["gpu_count"] == 0


def test_track_appends_to_a_codecarbon_2_3_file_in_its_columns(cli, tmp_path):
    header = (
        "timestamp,project_name,run_id,duration,emissions,emissions_rate,cpu_power,gpu_power,"
        "ram_power,cpu_energy,gpu_energy,ram_energy,energy_consumed,country_name,"
        "country_iso_code,region,cloud_provider,cloud_region,os,python_version,"
        "codecarbon_version,cpu_count,cpu_model,gpu_count,gpu_model,longitude,latitude,"
        "ram_total_size,tracking_mode,on_cloud,pue"
    )
    path = tmp_path / "emissions.csv"
    path.write_text(header + "\n")
    result = cli(
        "carbon-report", "track", "--emissions-csv", path, "--", sys.executable, "-c", "pass"
    )
    assert result.returncode == 0, result
    lines = path.read_text().splitlines()
    assert lines[0] == header and len(lines) == 2 and len(lines[1].split(",")) == 31
    assert "has CodeCarbon 2.3 columns: ram_used_gb not written" in result.stderr


def test_inference_paper_example_and_own_measurement(cli, tmp_path):
    default = cli("carbon-report", "inference", "--json")
    assert default.returncode == 0, default
    res = default.json()["results"]
    assert "the paper's example" in default.stderr
    # hand: 0.358 kWh / 2400 requests x 0.332 kg/kWh; 52 t of training / that
    assert res["per_request"]["co2e_g"] == pytest.approx(358 / 2400 * 0.332)
    assert res["breakeven"]["requests_co2e"] == pytest.approx(52e6 / (358 / 2400 * 0.332))
    assert res["paper"]["quantities"][0]["agrees"]
    manifest = tmp_path / "train.yaml"
    manifest.write_text("runs:\n  - {name: t, stage: final, energy_kwh: 1000, datacenter: iowa}\n")
    own = cli(
        "carbon-report",
        "inference",
        "--power-w",
        "400",
        "--throughput",
        "4",
        "--datacenter",
        "iowa",
        "--training-manifest",
        manifest,
        "--json",
    )
    assert own.returncode == 0, own
    r = own.json()["results"]
    per_kg = 100 / 3.6e6 * 1.12 * 0.352  # 400 W / 4 req/s = 100 J per request, IT
    assert r["per_request"]["co2e_kg"] == pytest.approx(per_kg)
    assert r["breakeven"]["requests_co2e"] == pytest.approx(1000 * 1.12 * 0.352 / per_kg)
    assert "paper" not in r
    for args, message in (
        (("--power-w", "400"), "needs --throughput"),
        (("--energy-kwh", "1", "--requests", "2"), "no site"),
        (("--preset", "gpt-5"), "olmo-2-7b-1rps"),
    ):
        bad = cli("carbon-report", "inference", *args)
        assert bad.returncode == 2 and message in bad.stderr, bad


def test_reproduce_reports_every_row_and_its_verdict(cli):
    result = cli("carbon-report", "reproduce", "--json")
    assert result.returncode == 0, result
    res = result.json()["results"]
    assert res["figures"] == 23 and res["figures_agreeing"] == 18 and res["verdict"] == "not met"
    assert res["headline"].startswith("18 of 23")
    table = cli("carbon-report", "reproduce")
    assert "OLMo 2 13B" in table.stdout and "not reproduced" in table.stdout

"""Energy integration: analytic integrals under irregular sampling, gaps, bad order,
several GPUs and files, and the streaming paths against a plain reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power
from iclr25.errors import InputError
from iclr25.testing import assert_close


def _energy_j(paths, **kw):
    block = kw.pop("block_bytes", 1 << 20)
    analysis = analyse_power(paths, PowerConfig(block_bytes=block, **kw))
    return analysis, analysis.results["measured_energy_kwh"] * 3.6e6


def _irregular_times(rng, duration, n):
    t = np.sort(rng.uniform(0, duration, n - 2))
    return np.concatenate([[0.0], t, [duration]])


@pytest.mark.parametrize("shape", ["constant", "ramp", "sine"])
def test_analytic_integrals_with_irregular_sampling(tmp_path, helpers, rng, shape):
    duration = 600.0
    t = _irregular_times(rng, duration, 3000)
    if shape == "constant":  # E = P T
        p, exact, rtol = np.full_like(t, 412.5), 412.5 * duration, 1e-12
    elif shape == "ramp":  # p = 100 + t: trapezoid is exact; E = 100 T + T^2 / 2
        p, exact, rtol = 100 + t, 100 * duration + duration**2 / 2, 1e-12
    else:  # p = 400 + 200 sin(2 pi t / 60): E = 400 T (whole periods); error O(max dt^2)
        p = 400 + 200 * np.sin(2 * np.pi * t / 60)
        exact, rtol = 400 * duration, 1e-3
    path = helpers.write_plain(tmp_path / "log.csv", t, [0] * len(t), p)
    _, energy = _energy_j([path], max_gap_s=1e9)
    assert_close(energy, exact, rtol=rtol)


def test_gaps_are_reported_not_bridged(tmp_path, helpers):
    t = np.array([0, 1, 2, 3, 103, 104, 105.0])  # a 100 s outage after t=3
    p = np.full_like(t, 500.0)
    path = helpers.write_plain(tmp_path / "log.csv", t, [0] * len(t), p)
    analysis, energy = _energy_j([path], max_gap_s=60)
    assert energy == pytest.approx(500 * 5)  # 3 s + 2 s, the gap excluded
    gaps = analysis.results["gaps"]
    assert gaps["count"] == 1 and gaps["total_s"] == pytest.approx(100)
    assert gaps["energy_if_bridged_kwh"] * 3.6e6 == pytest.approx(500 * 100)
    assert gaps["first"][0]["start_s"] == pytest.approx(3.0)
    assert any("gap" in w and "--max-gap" in w for w in analysis.warnings)
    _, bridged = _energy_j([path], max_gap_s=1000)
    assert bridged == pytest.approx(500 * 105)


def _messy_log(rng, n_gpus=4, n=400):
    """Interleaved GPUs with drifting order, jitter, missing values, duplicates and one
    out-of-order sample per GPU."""
    rows = []
    for g in range(n_gpus):
        t = np.cumsum(rng.uniform(0.05, 0.3, n))
        p = rng.uniform(50, 700, n)
        p[rng.choice(n, 5, replace=False)] = np.nan
        rows += [(ti, g, pi) for ti, pi in zip(t, p, strict=True)]
        rows.append((t[10], g, 123.0))  # a duplicate timestamp
        rows.append((t[20] - 0.01, g, 321.0))  # out of order
    rows.sort(key=lambda r: r[0] + rng.uniform(0, 0.2))  # roughly time-ordered file
    return rows


def test_streaming_paths_match_the_reference(tmp_path, helpers, rng):
    rows = _messy_log(rng)
    t = [r[0] for r in rows]
    g = [r[1] for r in rows]
    p = [r[2] for r in rows]
    path = helpers.write_plain(tmp_path / "log.csv", t, g, p)
    expected = helpers.reference_energy_j(t, g, p, max_gap_s=60)
    for block in (1 << 20, 4096, 1500):  # one batch, and many batch boundaries
        analysis, _ = _energy_j([path], block_bytes=block)
        got = {int(r["gpu"]): r["energy_kwh"] * 3.6e6 for r in analysis.results["gpus"]}
        assert set(got) == set(expected)
        for gpu in expected:
            assert_close(got[gpu], expected[gpu], rtol=1e-9, what=f"gpu {gpu}, block {block}")
    last, dropped = {}, {"duplicate_timestamps": 0, "out_of_order": 0}  # the reference's drops
    for ti, gi, pi in zip(t, g, p, strict=True):
        if pi != pi:
            continue
        if gi in last and ti <= last[gi]:
            dropped["duplicate_timestamps" if ti == last[gi] else "out_of_order"] += 1
        else:
            last[gi] = ti
    skipped = analysis.results["skipped"]
    assert {k: skipped[k] for k in dropped} == dropped
    assert dropped["duplicate_timestamps"] >= 4 and dropped["out_of_order"] >= 4
    with pytest.raises(InputError, match=r"log\.csv line \d+"):
        analyse_power([path], PowerConfig(strict=True))
    ordered = helpers.write_plain(tmp_path / "dup.csv", [0.0, 1.0, 1.0, 2.0], [0] * 4, [1.0] * 4)
    with pytest.raises(InputError, match="dup.csv line 4: duplicate timestamp"):
        analyse_power([ordered], PowerConfig(strict=True))


def test_regular_nvidia_smi_path_equals_the_general_path(tmp_path, helpers, rng):
    t = helpers.T0 + np.cumsum(rng.uniform(0.08, 0.12, 2000))
    rows = [(ti, g, 300 + 50 * g + 100 * math.sin(ti)) for ti in t for g in range(8)]
    regular = helpers.write_smi(tmp_path / "regular.csv", rows)
    swapped = list(rows)
    swapped[0], swapped[1] = swapped[1], swapped[0]  # GPU 1 first: never the regular layout
    shuffled = helpers.write_smi(tmp_path / "general.csv", swapped)
    a, _ = _energy_j([regular], block_bytes=3000)
    b, _ = _energy_j([shuffled], block_bytes=3000)
    # the reference sees what the file holds: times to the millisecond, power to 1 mW
    ms = [round(r[0] * 1000) / 1000 for r in rows]
    ref = helpers.reference_energy_j(ms, [r[1] for r in rows], [round(r[2], 3) for r in rows], 60)
    by_label = {r["gpu"]: r for r in b.results["gpus"]}
    for ra in a.results["gpus"]:
        assert_close(ra["energy_kwh"], by_label[ra["gpu"]]["energy_kwh"], rtol=1e-12)
        assert_close(ra["energy_kwh"] * 3.6e6, ref[int(ra["gpu"])], rtol=1e-9)
    shares_a, shares_b = a.results["profile"]["share_of_tdp"], b.results["profile"]["share_of_tdp"]
    assert [sorted(r) for r in shares_a] == [sorted(r) for r in shares_b]
    for key in shares_a[0]:
        assert_close([r[key] for r in shares_a], [r[key] for r in shares_b], rtol=1e-9, what=key)


def test_several_files_are_nodes_and_nodes_scale(tmp_path, helpers):
    t = np.arange(0, 101, 1.0)
    one = helpers.write_plain(tmp_path / "n1.csv", t, [0] * len(t), np.full_like(t, 300.0))
    two = helpers.write_plain(
        tmp_path / "n2.csv",
        np.concatenate([t, t]),
        [0] * len(t) + [1] * len(t),
        np.full(2 * len(t), 600.0),
    )
    analysis, energy = _energy_j([one, two])
    assert energy == pytest.approx(300 * 100 + 2 * 600 * 100)
    assert [(r["node"], r["gpu"]) for r in analysis.results["gpus"]] == [
        (0, "0"),
        (1, "0"),
        (1, "1"),
    ]
    scaled, _ = _energy_j([one, two], nodes=64)  # 2 files stand for 64 nodes: x 32
    assert scaled.results["energy_kwh"] == pytest.approx(32 * analysis.results["energy_kwh"])
    assert scaled.results["gpu_hours"] == pytest.approx(32 * 3 * 100 / 3600)
    series = scaled.series_power_w
    assert np.nanmax(series) == pytest.approx(300 + 1200)  # the summed power of both nodes


@pytest.mark.slow
def test_large_logs_stream_in_bounded_memory(tmp_path):
    """Peak RSS does not grow with the log: 1 M and 4 M rows (36 MB and 145 MB of text)."""
    import json
    import subprocess
    import sys

    from iclr25.core.carbon_report.synthetic import TraceConfig, write_nvidia_smi_log

    code = (
        "import json, resource, sys\n"
        "from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power\n"
        "r = analyse_power([sys.argv[1]], PowerConfig()).results\n"
        # VmHWM: this image's own peak (a child's ru_maxrss starts at its parent's peak)
        "hwm = [x for x in open('/proc/self/status') if x.startswith('VmHWM')]\n"
        "print(json.dumps({'rss_mb': int(hwm[0].split()[1]) / 1024,"
        " 'samples': sum(g['samples'] for g in r['gpus'])}))\n"
    )
    peaks = []
    for rows in (1_000_000, 4_000_000):
        path = tmp_path / f"log{rows}.csv"
        written = write_nvidia_smi_log(path, TraceConfig(gpus=8), name=None, rows=rows)
        proc = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        out = json.loads(proc.stdout)
        assert out["samples"] == written
        peaks.append(out["rss_mb"])
        path.unlink()
    # 3 M more rows would add >= 72 MB as float64 arrays (t, power, id) and ~110 MB as text
    assert peaks[1] - peaks[0] < 30, peaks


def test_accounting_of_logs_uses_the_given_gpu_constants(tmp_path, helpers):
    from iclr25.core.carbon_report.manifest import GpuOverrides
    from iclr25.core.carbon_report.presets import datacenter

    t = np.arange(0, 3601, 1.0)  # 2 GPUs at 300 W for an hour: 0.6 kWh, 2 GPU-hours
    path = helpers.write_plain(
        tmp_path / "log.csv",
        np.concatenate([t, t]),
        [0] * len(t) + [1] * len(t),
        np.full(2 * len(t), 300.0),
    )
    hardware = GpuOverrides("NVIDIA H100 80GB HBM3", None, 1000.0, None, 2.0)
    config = PowerConfig(nodes=4, hardware=hardware)
    res = analyse_power([path], config, site=datacenter("texas")).results
    # hand: x 4 nodes; facility = IT x 1.2; CO2e x 0.332; embodied 1000 kg / (2 y x 8760 h)
    assert res["energy_kwh"] == pytest.approx(4 * 0.6)
    assert res["co2e_kg"] == pytest.approx(4 * 0.6 * 1.2 * 0.332)
    acc = res["accounting"]
    assert acc["gpu_model"] == "h100-sxm" and acc["gpu_hours"] == pytest.approx(4 * 2)
    assert acc["embodied_co2e_kg"] == pytest.approx(8 * 1000 / (2 * 8760))
    assert acc["embodied_water_l"] == pytest.approx(8 * 102.6 / (2 * 8760))  # preset water
    assert res["total_co2e_kg"] == pytest.approx(res["co2e_kg"] + acc["embodied_co2e_kg"])
    plain = analyse_power([path], PowerConfig(), site=datacenter("texas")).results
    assert plain["accounting"]["embodied_counted"] is False  # no model named: none counted

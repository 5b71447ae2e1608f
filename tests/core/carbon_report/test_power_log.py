"""Log formats, value conversion and bad rows (counted, with line numbers; strict fails)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from iclr25.core.carbon_report.codecarbon_csv import read_codecarbon
from iclr25.core.carbon_report.power_log import PowerLogReader, detect_format
from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power
from iclr25.core.carbon_report.power_values import parse_power
from iclr25.errors import InputError


def _read(path, fmt=None, strict=False, block_bytes=1 << 20):
    reader = PowerLogReader(
        path, fmt or detect_format(path), strict=strict, block_bytes=block_bytes
    )
    batches = list(reader.batches())
    cat = lambda k: np.concatenate([getattr(b, k) for b in batches])  # noqa: E731
    return reader, cat("t_s"), cat("gpu"), cat("power_w")


def test_parse_power_units_missing_and_negative():
    values = pa.array(
        ["612.5 W", " 0.7 kW", "700", "-3 W", "[N/A]", "abc", "500000 mW", None, "[Not Supported]"]
    )
    watts, kinds = parse_power(values, 1.0)
    np.testing.assert_allclose(watts[[0, 1, 2, 6]], [612.5, 700.0, 700.0, 500.0])
    assert np.isnan(watts[[3, 4, 5, 7, 8]]).all()
    assert kinds["negative_power"].tolist() == [False, False, False, True] + [False] * 5
    assert kinds["missing_power"].nonzero()[0].tolist() == [4, 7, 8]
    assert kinds["bad_power"].nonzero()[0].tolist() == [5]
    assert kinds["converted_units"].nonzero()[0].tolist() == [1, 6]
    kw, _ = parse_power(pa.array(["0.5", "1.5 W"]), 1000.0)  # header unit [kW]
    np.testing.assert_allclose(kw, [500.0, 1.5])


def test_format_detection(tmp_path, helpers):
    smi = helpers.write_smi(tmp_path / "smi.csv", [(helpers.T0, 0, 100.0)])
    plain = helpers.write_plain(tmp_path / "plain.csv", [0.0], [0], [1.0])
    cc = tmp_path / "emissions.csv"
    cc.write_text("timestamp,run_id,duration,gpu_energy\n2024-01-01T00:00:00,r,10,0.5\n")
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert [detect_format(p) for p in (smi, plain, cc)] == ["nvidia-smi", "plain", "codecarbon"]
    with pytest.raises(InputError, match="unrecognised header"):
        detect_format(other)
    with pytest.raises(InputError, match="empty"):
        detect_format(empty)


def test_bad_rows_are_counted_with_their_lines(tmp_path, helpers):
    t = helpers.T0
    path = helpers.write_smi(
        tmp_path / "smi.csv",
        [
            (t, 0, 100.0),
            (t, 1, 100.0),
            (t + 1, 0, "[N/A]"),
            (t + 1, 1, "-5 W"),
            (t + 2, 0, 200.0),
            (t + 2, 1, "x W"),
        ],
        name="NVIDIA H100 80GB HBM3",
    )
    text = path.read_text().splitlines()
    text.insert(4, "garbage line")  # becomes line 5
    text.insert(6, "")  # a blank line is skipped without a count
    path.write_text("\n".join(text) + "\n")
    reader, t_s, gpu, watts = _read(path)
    assert reader.problems.counts == {
        "malformed_rows": 1,
        "missing_power": 1,
        "negative_power": 1,
        "bad_power": 1,
    }
    assert reader.problems.first["malformed_rows"] == [f"{path} line 5"]
    assert reader.problems.first["missing_power"] == [f"{path} line 4"]
    assert reader.problems.first["negative_power"] == [f"{path} line 6"]
    assert reader.problems.first["bad_power"] == [f"{path} line 9"]
    assert np.isfinite(watts).sum() == 3
    assert reader.read_gpu_names() == {"0": "NVIDIA H100 80GB HBM3", "1": "NVIDIA H100 80GB HBM3"}
    with pytest.raises(InputError) as err:
        _read(path, strict=True)
    assert f"{path} line 4" in err.value.what and "--strict" in err.value.fix


def test_nounits_and_parquet_read_the_same(tmp_path, helpers, rng):
    t = helpers.T0 + np.cumsum(rng.uniform(0.05, 0.2, 50))
    rows = [(ti, g, 300 + 10 * g + ti % 7) for ti in t for g in range(3)]
    a = _read(helpers.write_smi(tmp_path / "u.csv", rows))
    b = _read(helpers.write_smi(tmp_path / "n.csv", rows, units=False))
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "timestamp": pa.array([r[0] for r in rows]),
            "gpu": [r[1] for r in rows],
            "power_w": [r[2] for r in rows],
        }
    )
    pq.write_table(table, tmp_path / "p.parquet")
    c = _read(tmp_path / "p.parquet")
    for other in (b, c):
        np.testing.assert_allclose(other[1] + other[0].origin_s, a[1] + a[0].origin_s, atol=1e-3)
        np.testing.assert_allclose(other[3], a[3], atol=1e-3)
    assert c[0].format == "parquet"


def test_codecarbon_keeps_the_latest_row_of_each_run(tmp_path):
    path = tmp_path / "emissions.csv"
    path.write_text(
        "timestamp,project_name,run_id,duration,gpu_energy,cpu_energy,ram_energy,energy_consumed,gpu_count,gpu_model\n"
        "2024-01-01T00:00:10,p,r1,10,0.1,0.01,0.001,0.111,2,2 x NVIDIA H100 80GB HBM3\n"
        "2024-01-01T00:00:20,p,r1,20,0.3,0.02,0.002,0.322,2,2 x NVIDIA H100 80GB HBM3\n"
        "2024-01-01T00:00:05,p,r2,5,0.05,0.0,0.0,0.05,1,\n"
    )
    runs = {r["run_id"]: r for r in read_codecarbon(path).runs}
    assert runs["r1"]["gpu_energy_kwh"] == 0.3 and runs["r1"]["duration_s"] == 20
    analysis = analyse_power([path], PowerConfig())
    res = analysis.results
    # hand: the latest row of r1 (0.322 kWh) + r2 (0.05 kWh), CPU + GPU + RAM
    assert res["energy_kwh"] == pytest.approx(0.372)
    assert res["gpu_energy_kwh"] == pytest.approx(0.35)
    assert res["cpu_energy_kwh"] == pytest.approx(0.02) and res["ram_energy_kwh"] == 0.002
    assert res["gpu_count"] == 2 and len(res["runs"]) == 2 and res["gpus"] == []
    assert res["gpu_hours"] == pytest.approx((20 * 2 + 5 * 1) / 3600)
    assert analysis.results["profile"] is None


def test_unusable_logs_fail_clearly(tmp_path, helpers):
    path = helpers.write_smi(tmp_path / "smi.csv", [(helpers.T0, 0, "[N/A]")])
    with pytest.raises(InputError, match="no usable power samples"):
        analyse_power([path], PowerConfig())
    with pytest.raises(InputError, match="no such log file"):
        analyse_power([tmp_path / "missing.csv"], PowerConfig())


def test_non_finite_power_is_rejected_not_summed(tmp_path):
    watts, kinds = parse_power(pa.array([b" 300.00 W", b" inf W", b" 1e999 W"]), 1.0)
    assert watts[0] == 300.0 and np.isnan(watts[1:]).all()
    assert kinds["bad_power"].nonzero()[0].tolist() == [1, 2]
    watts, kinds = parse_power(pa.array([300.0, float("inf"), float("nan")]), 1.0)
    assert kinds["bad_power"].tolist() == [False, True, False]
    assert kinds["missing_power"].tolist() == [False, False, True]
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "timestamp": [0.0, 1.0, 2.0, float("inf"), 3.0, 4.0],
            "power_w": [100.0, 100.0, float("inf"), 100.0, 100.0, 100.0],
        }
    )
    pq.write_table(table, tmp_path / "p.parquet")
    analysis = analyse_power([tmp_path / "p.parquet"], PowerConfig())
    # hand: samples at 0, 1, 3, 4 s of 100 W (row 3 has no time, row 4 no power) -> 400 J
    assert analysis.results["measured_energy_kwh"] * 3.6e6 == pytest.approx(400.0)
    assert analysis.results["skipped"] == {
        "bad_power": 1,
        "malformed_rows": 1,
        "duplicate_timestamps": 0,
        "out_of_order": 0,
    }
    assert analysis.results["files"][0]["first_lines"]["bad_power"] == [
        f"{tmp_path / 'p.parquet'} row 3"
    ]


def test_a_long_preamble_of_bad_rows_does_not_shift_the_clock(tmp_path, helpers):
    """The clock origin comes from the first valid time even past the first 4096 rows;
    before the fix, such a file mixed absolute and relative times across blocks."""
    t = helpers.T0 + np.arange(3000) * 0.5
    rows = [("garbage", 0, 100.0)] * 4200
    path = tmp_path / "pre.csv"
    lines = ["timestamp,gpu,power_w"] + [f"{a},{g},{p}" for a, g, p in rows]
    lines += [f"{float(ti)!r},0,{200.0 + (i % 7)}" for i, ti in enumerate(t)]
    path.write_text("\n".join(lines) + "\n")
    power = [200.0 + (i % 7) for i in range(len(t))]
    want = helpers.reference_energy_j(list(t), [0] * len(t), power)[0]
    analysis = analyse_power([path], PowerConfig(block_bytes=120_000))
    assert len(analysis.results["files"]) == 1 and analysis.results["skipped"]["out_of_order"] == 0
    assert analysis.results["skipped"]["malformed_rows"] == 4200
    assert analysis.results["measured_energy_kwh"] * 3.6e6 == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_compressed_logs_read_like_plain_ones(tmp_path, helpers, suffix):
    import bz2
    import gzip

    rows = [(helpers.T0 + 0.5 * i, g, 100.0 + i + g) for i in range(400) for g in range(2)]
    plain = helpers.write_smi(tmp_path / "smi.csv", rows, name="NVIDIA H100 80GB HBM3")
    packed = tmp_path / f"smi.csv{suffix}"
    packed.write_bytes((gzip if suffix == ".gz" else bz2).compress(plain.read_bytes()))
    want = analyse_power([plain], PowerConfig()).results
    got = analyse_power([packed], PowerConfig()).results
    assert got["measured_energy_kwh"] == want["measured_energy_kwh"] > 0
    assert [g["gpu_model"] for g in got["gpus"]] == ["h100-sxm", "h100-sxm"]  # name column read
    broken = tmp_path / f"broken.csv{suffix}"
    broken.write_bytes(b"not compressed at all")
    with pytest.raises(InputError, match="cannot be read"):
        analyse_power([broken], PowerConfig())

"""Multi-GPU logs without a GPU id column: every GPU counted, or a clear refusal."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.carbon_report.interleave import detect
from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power
from iclr25.errors import InputError

WATTS = (100.0, 200.0, 300.0, 400.0)  # GPU g draws WATTS[g], constant


def _smi_lines(helpers, n_samples, watts=WATTS, skew_s=None, step_s=1.0, order=None):
    """nvidia-smi rows without an index column: one line per GPU per sample."""
    lines = []
    for i in range(n_samples):
        for pos, g in enumerate(order or range(len(watts))):
            t = helpers.T0 + i * step_s + (pos * skew_s if skew_s else 0.0)
            lines.append(f"{helpers.smi_stamp(t)}, {watts[g]:.2f} W")
    return lines


def _write(path, lines, header="timestamp, power.draw [W]"):
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def _energy_j(path, **config):
    return analyse_power([path], PowerConfig(**config))


def test_four_gpus_sharing_timestamps_give_four_times_one_gpu(tmp_path, helpers):
    path = _write(tmp_path / "four.csv", _smi_lines(helpers, 600))
    res = _energy_j(path).results
    # hand: 600 samples 1 s apart -> 599 s per GPU; (100 + 200 + 300 + 400) W x 599 s
    assert res["gpu_count"] == 4
    assert res["measured_energy_kwh"] * 3.6e6 == pytest.approx(1000.0 * 599)
    assert [g["energy_kwh"] * 3.6e6 for g in res["gpus"]] == pytest.approx([w * 599 for w in WATTS])
    one = _write(tmp_path / "one.csv", _smi_lines(helpers, 600, watts=(250.0,)))
    # the case: 4 GPUs at 250 W each read as 4 x one GPU, not as one
    same = _write(tmp_path / "same.csv", _smi_lines(helpers, 600, watts=(250.0,) * 4))
    e_one = _energy_j(one).results["measured_energy_kwh"]
    assert _energy_j(same).results["measured_energy_kwh"] == pytest.approx(4 * e_one)
    assert res["files"][0]["gpu_layout"] == "4 GPUs: 4 rows per timestamp"
    assert res["skipped"]["duplicate_timestamps"] == 0


def test_a_repeating_pattern_of_distinct_timestamps(tmp_path, helpers):
    """Each GPU queried 3 ms after the previous one, in the order 2, 0, 3, 1."""
    lines = _smi_lines(helpers, 300, skew_s=0.003, order=(2, 0, 3, 1))
    res = _energy_j(_write(tmp_path / "skew.csv", lines)).results
    # hand: per GPU, 299 intervals of 1 s -> (100 + 200 + 300 + 400) W x 299 s
    assert res["gpu_count"] == 4
    assert res["measured_energy_kwh"] * 3.6e6 == pytest.approx(1000.0 * 299)
    assert "repeating pattern" in res["files"][0]["gpu_layout"]


def test_a_log_starting_mid_sample_keeps_each_gpu_in_its_column(tmp_path, helpers):
    lines = _smi_lines(helpers, 50)[2:]  # the first sample cut: its GPUs 2 and 3 only
    res = _energy_j(_write(tmp_path / "cut.csv", lines)).results
    watts = sorted(g["avg_power_w"] for g in res["gpus"])
    assert watts == pytest.approx(list(WATTS))  # each GPU keeps its own constant power


def test_ambiguous_layouts_are_refused_with_the_fix(tmp_path, helpers):
    lines = _smi_lines(helpers, 20)
    del lines[9]  # sample 2 has 3 rows, the others 4
    path = _write(tmp_path / "amb.csv", lines)
    with pytest.raises(InputError) as err:
        _energy_j(path)
    assert "3 to 4 rows share a timestamp" in err.value.what
    assert "--gpus N" in err.value.fix and "--gpu-column" in err.value.fix
    back = _write(
        tmp_path / "back.csv", ["1714564800.5,100", "1714564800.2,100"] * 3, "timestamp,power_w"
    )
    with pytest.raises(InputError, match="go back in time"):
        _energy_j(back)


def test_a_gpu_line_missing_later_in_the_file_is_an_error_naming_the_line(tmp_path, helpers):
    lines = _smi_lines(helpers, 3000)
    del lines[8001]  # sample 2000 lacks GPU 1: well past the rows the layout is read from
    # rows shift up: sample 2001 GPU 0 (line 8005) now sits in the slot of sample 2000 GPU 3
    path = _write(tmp_path / "gap.csv", lines)
    with pytest.raises(InputError) as err:
        _energy_j(path, block_bytes=64 * 1024)  # several blocks: the check spans them
    assert f"{path} line 8005" in err.value.what and "--gpus" in err.value.fix


def test_a_millisecond_of_jitter_in_a_shared_timestamp_is_not_a_broken_layout(tmp_path, helpers):
    lines = _smi_lines(helpers, 2000)
    stamp = helpers.smi_stamp(helpers.T0 + 1500 + 0.002)  # sample 1500, GPU 2: 2 ms late
    lines[1500 * 4 + 2] = f"{stamp}, {WATTS[2]:.2f} W"
    res = _energy_j(_write(tmp_path / "jit.csv", lines)).results
    assert res["gpu_count"] == 4
    assert res["measured_energy_kwh"] * 3.6e6 == pytest.approx(1000.0 * 1999)


def test_gpus_and_gpu_column_options(tmp_path, helpers):
    lines = _smi_lines(helpers, 20)
    del lines[9]
    path = _write(tmp_path / "amb.csv", lines)
    forced = _energy_j(path, gpus=4).results  # the user's word: row i is GPU i mod 4
    assert forced["gpu_count"] == 4 and "--gpus" in forced["files"][0]["gpu_layout"]
    bus = [f"{line}, 0000:{i % 4:02d}:00.0" for i, line in enumerate(_smi_lines(helpers, 10))]
    by_column = _write(tmp_path / "bus.csv", bus, "timestamp, power.draw [W], bus")
    res = _energy_j(by_column, gpu_column="bus").results
    assert res["gpu_count"] == 4 and res["measured_energy_kwh"] * 3.6e6 == pytest.approx(9000.0)
    with pytest.raises(InputError, match="no column 'slot'"):
        _energy_j(by_column, gpu_column="slot")
    indexed = helpers.write_smi(
        tmp_path / "idx.csv", [(helpers.T0 + i, 0, 100.0) for i in range(5)]
    )
    with pytest.raises(InputError, match="names 1 GPUs, --gpus says 2"):
        _energy_j(indexed, gpus=2)


def test_concatenated_logs_repeat_the_header(tmp_path, helpers):
    first = _smi_lines(helpers, 10)
    later = [
        f"{helpers.smi_stamp(helpers.T0 + 20 + i)}, {w:.2f} W" for i in range(10) for w in WATTS
    ]
    path = _write(tmp_path / "cat.csv", [*first, "timestamp, power.draw [W]", *later])
    analysis = _energy_j(path, max_gap_s=float("inf"))
    res = analysis.results
    # hand: samples at 0..9 s and 20..29 s, bridged: 29 s per GPU
    assert res["gpu_count"] == 4 and res["measured_energy_kwh"] * 3.6e6 == pytest.approx(1000 * 29)
    assert res["skipped"]["repeated_header"] == 1 and "malformed_rows" not in res["skipped"]
    assert any("repeated header" in w and "line 42" in w for w in analysis.warnings)


def test_timestamps_going_back_across_gpus_are_fine_with_an_index(tmp_path, helpers):
    rows = [
        (helpers.T0 + i + (0.002 if g == 0 else 0.0), g, WATTS[g])
        for i in range(100)
        for g in (0, 1)
    ]
    res = _energy_j(helpers.write_smi(tmp_path / "idx.csv", rows)).results
    assert res["measured_energy_kwh"] * 3.6e6 == pytest.approx(300.0 * 99)
    assert res["skipped"]["out_of_order"] == 0


@pytest.mark.parametrize(("unit", "factor"), [("mW", 1e3), ("W", 1.0), ("kW", 1e-3)])
def test_power_units_in_the_header(tmp_path, helpers, unit, factor):
    lines = [f"{helpers.smi_stamp(helpers.T0 + i)}, {300.0 * factor:.6f}" for i in range(11)]
    res = _energy_j(_write(tmp_path / "u.csv", lines, f"timestamp, power.draw [{unit}]")).results
    assert res["measured_energy_kwh"] * 3.6e6 == pytest.approx(3000.0)


def test_an_unknown_or_ambiguous_unit_is_refused(tmp_path, helpers):
    lines = [f"{helpers.smi_stamp(helpers.T0 + i)}, 1" for i in range(3)]
    for unit in ("MW", "J"):
        path = _write(tmp_path / "u.csv", lines, f"timestamp, power.draw [{unit}]")
        with pytest.raises(InputError, match=f"is in '{unit}'"):
            _energy_j(path)


def test_detect_on_its_own():
    t = np.repeat(np.arange(10.0), 8)
    layout = detect(t, "x")
    assert (layout.gpus, layout.offset, layout.skew_s) == (8, 0, 0.25)  # a quarter period
    assert detect(np.arange(50.0) * 0.1, "x").gpus == 1
    jitter = np.cumsum(np.random.default_rng(0).uniform(0.08, 0.12, 500))
    assert detect(jitter, "x").gpus == 1  # irregular single-GPU sampling is no pattern
    assert detect(np.repeat(np.arange(10.0), 3)[1:], "x").offset == 1  # starts at GPU 1

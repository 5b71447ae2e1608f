"""Power profile: shares of TDP, dips, ramps and the aggregate series, with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.carbon_report.manifest import GpuOverrides
from iclr25.core.carbon_report.power_report import PowerConfig, analyse_power
from iclr25.core.carbon_report.profile import ProfileConfig
from iclr25.core.carbon_report.synthetic import TraceConfig, write_nvidia_smi_log
from iclr25.testing import assert_close


def _analyse(paths, block_bytes=1 << 20, **profile):
    config = PowerConfig(
        hardware=GpuOverrides(tdp_w=700.0),
        block_bytes=block_bytes,
        profile=ProfileConfig(**profile),
    )
    return analyse_power(paths, config)


def test_constant_power_sits_in_one_share_bin(tmp_path, helpers):
    t = np.arange(0, 200, 0.5)
    path = helpers.write_plain(tmp_path / "c.csv", t, [0] * len(t), np.full_like(t, 360.0))
    profile = _analyse([path]).results["profile"]
    table = profile["share_of_tdp"]
    assert table[10]["share_from"] == 0.5 and table[10]["time_frac"] == pytest.approx(
        1.0
    )  # 360/700 = 51%
    assert table[10]["energy_frac"] == pytest.approx(1.0)
    assert profile["time_below_low_frac"] == 0 and profile["time_above_high_frac"] == 0
    for value in profile["power_percentiles_w"].values():
        assert value == pytest.approx(360.0, abs=0.7)  # resolution: 0.1% of 700 W
    assert profile["dips"]["count"] == 0
    assert profile["ramps"]["max_rise_w_per_s"] == 0


def _square_wave(helpers, tmp_path, name="sq.csv"):
    """650 W with dips to 100 W at samples 100..159 (60 samples), 400..429 and 700..702."""
    t = np.arange(0, 1000, 1.0)
    p = np.full_like(t, 650.0)
    for lo, hi in ((100, 160), (400, 430), (700, 703)):
        p[lo:hi] = 100.0
    return helpers.write_plain(tmp_path / name, t, [0] * len(t), p)


@pytest.mark.parametrize("block_bytes", [1 << 20, 700])
def test_square_wave_dips_have_known_durations_and_energy(tmp_path, helpers, block_bytes):
    path = _square_wave(helpers, tmp_path)
    analysis = _analyse([path], block_bytes=block_bytes, dip_threshold=0.5, dip_min_s=5.0)
    dips = analysis.results["profile"]["dips"]
    # intervals with mean power < 350 W: 100->100 only (650->100 averages 375 W), so the
    # dips last 59 s and 29 s; the 2 s one is shorter than dip_min_s
    assert dips["count"] == 2
    assert dips["total_duration_s"] == pytest.approx(59 + 29)
    assert dips["duration_s"] == {"min": 29.0, "median": 44.0, "max": 59.0}
    assert dips["energy_kwh"] * 3.6e6 == pytest.approx(100 * 88)
    assert dips["deficit_kwh"] * 3.6e6 == pytest.approx((650 - 100) * 88, rel=2e-3)
    assert sorted(analysis.dips) == [(100.0, 59.0), (400.0, 29.0)]


def test_ramp_rates_of_a_linear_ramp(tmp_path, helpers, rng):
    t = np.sort(np.concatenate([[0.0, 60.0], rng.uniform(0, 60, 500)]))
    path = helpers.write_plain(tmp_path / "r.csv", t, [0] * len(t), 100 + 10 * t)
    ramps = _analyse([path]).results["profile"]["ramps"]
    assert ramps["max_rise_w_per_s"] == pytest.approx(10.0, rel=1e-6)
    assert ramps["max_fall_w_per_s"] == pytest.approx(-10.0, rel=1e-6)  # never falls
    assert ramps["abs_ramp_w_per_s"]["p50"] == pytest.approx(10.5)  # 1 W/s bins, centre


def test_aggregate_series_sums_gpus(tmp_path, helpers):
    t = np.arange(0, 100, 0.25)
    path = helpers.write_plain(
        tmp_path / "a.csv",
        np.concatenate([t, t]),
        [0] * len(t) + [1] * len(t),
        np.r_[np.full_like(t, 300.0), np.full_like(t, 500.0)],
    )
    analysis = _analyse([path])
    interior = analysis.series_power_w[1:-1]
    assert np.allclose(interior[np.isfinite(interior)], 800.0)
    aggregate = analysis.results["profile"]["aggregate"]
    assert aggregate["bin_s"] == 1.0 and aggregate["peak_power_w"] == pytest.approx(800.0)
    assert aggregate["max_rise_w_per_s"] == pytest.approx(0.0, abs=1e-9)


def test_synthetic_training_trace_shows_the_papers_checkpoint_dips(tmp_path):
    cfg = TraceConfig(
        gpus=2, duration_s=3600, interval_s=0.5, checkpoint_every_s=600, checkpoint_s=45, seed=3
    )
    path = tmp_path / "trace.csv"
    write_nvidia_smi_log(path, cfg)
    profile = analyse_power([path], PowerConfig()).results["profile"]  # TDP from the name column
    assert (
        profile["dips"]["count"] == 2 * 6
    )  # one per checkpoint per GPU; 2.5 s stalls are too short
    assert 41 < profile["dips"]["duration_s"]["median"] < 45
    assert profile["time_above_high_frac"] > 0.8  # computing above 85% of TDP most of the time
    assert profile["share_percentiles"]["p5"] < 0.2  # and near 15% while checkpointing


def _reference_dips(t, p, threshold_w, min_s, max_gap_s):
    """Plain per-GPU dip finder: maximal runs of intervals with mean power below the
    threshold (a gap ends a run), kept when they last at least min_s."""
    dips, run = [], None
    for i in range(1, len(t)):
        dt = t[i] - t[i - 1]
        if dt <= max_gap_s and (p[i] + p[i - 1]) / 2 < threshold_w:
            run = [t[i - 1], 0.0] if run is None else run
            run[1] += dt
            continue
        if run is not None and run[1] >= min_s:
            dips.append(tuple(run))
        run = None
    if run is not None and run[1] >= min_s:
        dips.append(tuple(run))
    return dips


@pytest.mark.parametrize("block_bytes", [1 << 20, 2000, 613])
def test_dips_match_a_plain_reference_across_blocks_and_gaps(tmp_path, helpers, rng, block_bytes):
    n, gpus = 900, 3
    t = np.cumsum(rng.uniform(0.5, 1.5, n))
    t[400:] += 100.0  # a 100 s outage: a gap that ends any dip
    power = rng.choice([80.0, 200.0, 600.0], size=(n, gpus), p=[0.3, 0.2, 0.5])
    path = helpers.write_plain(
        tmp_path / "d.csv", np.repeat(t, gpus), np.tile(np.arange(gpus), n), power.ravel()
    )
    analysis = _analyse([path], block_bytes=block_bytes, dip_threshold=0.25, dip_min_s=2.0)
    want = []
    for g in range(gpus):
        want += _reference_dips(t, power[:, g], 0.25 * 700, 2.0, 60.0)
    got = sorted(analysis.dips)
    assert len(got) == len(sorted(want)) > 20
    assert_close(np.array(got), np.array(sorted(want)), rtol=1e-12)
    dips = analysis.results["profile"]["dips"]
    assert dips["count"] == len(want)
    assert_close(dips["total_duration_s"], sum(d for _, d in want), rtol=1e-12)

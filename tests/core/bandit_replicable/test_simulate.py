"""Experiments: reproducibility, independence, list statistics, memory guard, sweeps."""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import stats

from iclr25.core.bandit_replicable import simulate as sim
from iclr25.core.bandit_replicable.environments import ArmsEnvironment, k_armed, unit_ball
from iclr25.core.bandit_replicable.lower_bound import LowerBoundConfig, run_lower_bound
from iclr25.core.bandit_replicable.sweep import (
    SweepConfig,
    fit_exponent,
    horizon_grid,
    map_cells,
    run_compare,
    run_sweep,
)
from iclr25.errors import UsageError

ENV = ArmsEnvironment(np.array([0.7, 0.6, 0.5, 0.3]), "bernoulli")


ZONES = ArmsEnvironment(np.array([0.5, 0.375, 0.25, 0.0]), "gaussian", 0.05)


@pytest.mark.parametrize("algo,env,horizon", [("list-2k", ZONES, 20_000), ("ucb1", ENV, 2000)])
def test_same_seed_identical_different_seeds_independent(algo, env, horizon):
    config = sim.SimulationConfig(algo, horizon, 400)
    a = sim.simulate(env, config, seed=1)
    b = sim.simulate(env, config, seed=1)
    c = sim.simulate(env, config, seed=2)
    assert (a.regret == b.regret).all() and (a.keys == b.keys).all()
    assert not (a.regret == c.regret).all()
    assert stats.ks_2samp(a.regret, c.regret).pvalue > 1e-3  # same distribution
    assert abs(stats.spearmanr(a.regret, c.regret).statistic) < 0.2  # not coupled


@pytest.mark.parametrize(
    "algo,horizon", [("successive-elimination", 2000), ("ucb1", 2000), ("list-2k", 20_000)]
)
def test_progress_advances_within_a_chunk_and_adds_up_to_the_runs(algo, horizon):
    steps = []
    config = sim.SimulationConfig(algo, horizon, 300)
    sim.simulate(ENV, config, seed=0, on_progress=steps.append)
    assert sum(steps) == pytest.approx(300) and min(steps) > 0
    assert len(steps) >= 3  # not one jump at the end of the chunk (list-2k: 3 phases)


def test_summary_keys_and_guarantee():
    result = sim.run_experiment(ENV, sim.SimulationConfig("etc", 3000, 500), seed=0)
    for key in (
        "mean_regret",
        "mean_regret_ci95",
        "distinct_traces",
        "list_bound",
        "traces_covering_1_minus_delta",
        "guarantee_held",
    ):
        assert key in result
    assert isinstance(result["traces_covering_1_minus_delta"], int)
    lo, hi = result["mean_regret_ci95"]
    assert lo <= result["mean_regret"] <= hi
    assert result["list_bound"] == 4 and result["guarantee_held"] is True
    assert result["distinct_traces"] <= 4
    curve = result["regret_curve"]
    assert curve["t"][-1] == 3000
    assert curve["mean_regret"][-1] == pytest.approx(result["mean_regret"])
    assert np.all(np.diff(curve["mean_regret"]) >= -1e-9)  # regret only grows


def test_regret_interval_covers_known_mean():
    # uniform exploration only (list-k-delta never leaves phase 1 here): regret = T·mean gap
    result = sim.run_experiment(ENV, sim.SimulationConfig("list-k-delta", 4000, 200), seed=0)
    assert result["mean_regret"] == pytest.approx(4000 * ENV.gaps.mean())
    assert result["distinct_traces"] == 1


def test_memory_guard_says_how_much_is_needed():
    config = sim.SimulationConfig("list-2k", 1000, 10**12)
    with pytest.raises(UsageError) as err:
        sim.check_memory(ENV, config, available=8 * 2**30)
    assert "GiB" in err.value.what and "--runs" in err.value.fix
    sim.check_memory(ENV, sim.SimulationConfig("list-2k", 1000, 1000), available=8 * 2**30)


def test_validation_errors():
    with pytest.raises(UsageError, match="delta"):
        sim.validate(sim.SimulationConfig("etc", 100, 10, delta=1.5))
    with pytest.raises(UsageError, match="batches"):
        sim.validate(sim.SimulationConfig("list-batched", 100, 10, batches=1))
    with pytest.raises(UsageError) as err:
        sim.validate(sim.SimulationConfig("nope", 100, 10))
    assert "list-2k" in err.value.fix and "thompson" in err.value.fix
    ball = unit_ball(dim=3, horizon=100, theta_norm=1, sigma=1, rng=np.random.default_rng(0))
    with pytest.raises(UsageError, match="unit ball"):
        sim.simulate(ball, sim.SimulationConfig("ucb1", 100, 10), seed=0)


def test_fit_exponent_known_answer():
    t = [1e3, 1e4, 1e5, 1e6]
    fit = fit_exponent(t, [5 * x**0.6 for x in t])
    assert fit["fitted_exponent"] == pytest.approx(0.6)
    lo, hi = fit["fitted_exponent_ci95"]
    assert lo == pytest.approx(0.6) and hi == pytest.approx(0.6)


def test_sweep_etc_exponent_and_workers_do_not_change_results():
    config = SweepConfig("etc", horizon_grid(1000, 100_000, 3), runs=100, k=3, gap_points=3)
    one = run_sweep(config, None, seed=0)
    assert one["claimed_exponent"] == pytest.approx(2 / 3)
    assert abs(one["fitted_exponent"] - 2 / 3) < 0.05  # ETC's worst case is its exploration
    assert one["guarantee_held_everywhere"] is True
    two = run_sweep(SweepConfig(**{**config.__dict__, "workers": 2}), None, seed=0)
    assert two["rows"] == one["rows"]


@pytest.mark.timeout(120)
def test_map_cells_stops_queued_and_running_cells_on_an_error():
    # cell 0 fails at once while a worker sleeps in cell 1: the pool is terminated instead
    # of waiting an hour for cells 1-2 (a ProcessPoolExecutor would wait, and hang here)
    with pytest.raises(ValueError, match="non-negative"):
        map_cells(time.sleep, [(-1,), (3600,), (3600,)], workers=2)


def test_compare_and_lower_bound():
    env = k_armed(k=3, horizon=2000, instance="equal-gaps", gap=0.2)
    base = sim.SimulationConfig("etc", 2000, 200)
    out = run_compare(["etc", "list-2k", "ucb1"], env, base, seed=0, workers=1)
    names = [a["algorithm"] for a in out["algorithms"]]
    assert names == ["etc", "list-2k", "ucb1"]
    ucb = out["algorithms"][2]
    assert ucb["distinct_traces"] > out["algorithms"][0]["distinct_traces"]
    lb = run_lower_bound(LowerBoundConfig(k=3, gap=0.2, horizons=(1000, 100_000), runs=200), 0)
    capped = [r["capped_worst_regret_over_T"] for r in lb["rows"]]
    plain = [r["etc_worst_regret_over_T"] for r in lb["rows"]]
    assert capped[-1] > 0.9 * 0.2  # linear: ≈ Δ on the instance whose best arm is excluded
    assert plain[-1] < 0.1 * capped[-1]  # ETC with k traces: sublinear
    assert all(r["capped_max_traces"] <= 2 for r in lb["rows"])
    assert lb["centre"]["k_minus_1_list_replicable_here"] is False

"""Instances that stress the list bounds, the search over them, and the list-size sweep."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.bandit_replicable import simulate as sim
from iclr25.core.bandit_replicable.environments import ArmsEnvironment, family_means, k_armed
from iclr25.core.bandit_replicable.instances import SearchConfig, search_instance
from iclr25.core.bandit_replicable.list_sweep import ListSweepConfig, run_list_sweep
from iclr25.errors import UsageError
from iclr25.parallel import Execution


def test_family_means_known_answers():
    assert family_means("stress", 8, 0.5).tolist() == [0.75] + [0.25] * 7  # the issue's
    tied = family_means("near-tied", 5, 0.1)
    assert tied.max() - tied.min() == pytest.approx(0.1) and tied.mean() == pytest.approx(0.5)
    spread = family_means("spread", 4, 0.25)
    gaps = spread[0] - spread[1:]
    assert gaps.min() == pytest.approx(0.25) and gaps.max() < 0.5  # one octave [g, 2g)
    ladder = family_means("ladder", 3, 0.5)
    assert (ladder[0] - ladder[1:]).tolist() == pytest.approx([0.5, 0.125])
    with pytest.raises(UsageError, match="--gap"):
        family_means("stress", 3, 0.7)
    env = k_armed(k=4, horizon=1000, instance="stress")  # the CLI's --instance stress
    assert env.means.tolist() == [0.75, 0.25, 0.25, 0.25]


def test_list_2k_approaches_its_bound_on_the_stress_instance():
    """k = 8, means 0.75 and seven at 0.25: every gap is 1/2 = τ_1, the centre of phase 1's
    zone, so each arm is dropped at phase 1 or 2 — up to 2^(k-1) = 128 traces."""
    k = 8
    env = ArmsEnvironment(family_means("stress", k, 0.5))
    result = sim.run_experiment(env, sim.SimulationConfig("list-2k", 100_000, 1500), seed=4)
    assert result["distinct_traces"] > 2 ** (k - 2)  # the bound is approached ...
    assert result["distinct_traces"] <= 2**k  # ... and never passed
    assert result["traces_covering_1_minus_delta"] > 2 ** (k - 2)
    lower, upper = result["list_size_interval"]
    assert 2 ** (k - 2) < lower and (upper is None or upper <= 2**k)
    assert result["guarantee"] == "held" and result["list_bound"] == 2**k


def test_search_finds_at_least_the_stress_instance_and_is_reproducible():
    config = SearchConfig("list-2k", 4, 30_000, pilot_runs=200)
    found = search_instance(config, seed=1)
    assert found == search_instance(config, seed=1)
    assert found["searched"] and found["candidates"] > 10
    stress = ArmsEnvironment(family_means("stress", 4, 0.5))
    plain = sim.run_experiment(stress, sim.SimulationConfig("list-2k", 30_000, 200), seed=9)
    assert found["pilot_covering"] >= plain["traces_covering_1_minus_delta"] - 1
    assert search_instance(SearchConfig("ucb1", 4, 1000), 0)["searched"] is False


def test_list_sweep_over_k_rows_and_bounds():
    config = ListSweepConfig(
        "list-2k", "k", (2.0, 3.0, 4.0), horizon=20_000, runs=300, family="stress"
    )
    one, outcome = run_list_sweep(config, seed=0, execution=Execution(cache=False))
    assert outcome.backend == "in-process"
    rows = one["rows"]
    assert [r["k"] for r in rows] == [2, 3, 4] and [r["list_bound"] for r in rows] == [4, 8, 16]
    for row in rows:
        lower, upper = row["list_size_interval"]
        assert lower <= row["traces_covering_1_minus_delta"] <= row["list_bound"]
        assert row["share_of_bound"] == row["traces_covering_1_minus_delta"] / row["list_bound"]
        assert row["guarantee"] != "violated"
    assert rows[-1]["traces_covering_1_minus_delta"] >= 5  # 2^(k-1) = 8 possible at k = 4


def test_list_sweep_rejects_bad_values():
    with pytest.raises(UsageError, match="batched"):
        run_list_sweep(ListSweepConfig("list-2k", "batches", (2.0,)), 0)
    with pytest.raises(UsageError, match="k = 1"):
        run_list_sweep(ListSweepConfig("list-2k", "k", (1.0,)), 0)
    with pytest.raises(UsageError, match="empty"):
        run_list_sweep(ListSweepConfig("list-2k", "k", ()), 0)
    with pytest.raises(UsageError, match="integer"):
        run_list_sweep(ListSweepConfig("list-2k", "k", (2.5,)), 0)


def test_prefix_bound_reported_for_list_batched():
    config = ListSweepConfig(
        "list-batched", "batches", (2.0, 3.0), horizon=20_000, runs=200, k=4, family="ladder"
    )
    results, _ = run_list_sweep(config, 0, Execution(cache=False))
    assert [r["prefix_list_bound"] for r in results["rows"]] == [4, 10]  # C(k+B-2, B-1)
    assert all(
        r["traces_covering_1_minus_delta"] <= r["prefix_list_bound"] for r in results["rows"]
    )
    assert np.isfinite(results["bound_approached"])


def test_max_spread_keeps_every_candidate_near_tied():
    config = SearchConfig("list-k-delta", 4, 20_000, pilot_runs=100, max_scale=0.1, max_spread=0.1)
    found = search_instance(config, seed=2)
    means = np.asarray(found["means"])
    assert means.max() - means.min() <= 0.1 + 1e-9

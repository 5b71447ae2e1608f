"""Both halves of the lower bound, measured: ≥ k traces near the all-equal instance, and
linear regret when restricted to k-1 traces."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.bandit_replicable import lower_bound as lb
from iclr25.errors import UsageError
from iclr25.parallel import Execution


def test_listed_traces_and_restricted_regret_known_answer():
    keys = np.array([[7, 7], [5, 5], [7, 7], [9, 9], [5, 5], [7, 7]], np.uint64)
    pulls = np.array(
        [[80, 10, 10], [10, 80, 10], [80, 10, 10], [5, 5, 90], [10, 80, 10], [80, 10, 10]]
    )
    listed, share = lb.listed_traces(keys, pulls, 2)  # the two most frequent: 7 then 5
    assert listed.tolist() == [[80, 10, 10], [10, 80, 10]] and share == pytest.approx(5 / 6)
    # on I_3 (arm 3 best) both listed traces play arm 3 only 10 times: regret Δ (T - 10)
    assert lb.restricted_regret(listed, 0.2, 100).tolist() == pytest.approx([4.0, 4.0, 18.0])


def test_etc_needs_k_traces_near_the_centre_and_is_linear_when_restricted():
    config = lb.LowerBoundConfig(
        algos=("etc", "list-2k"), k=3, horizons=(1_000, 100_000), runs=400, pilot_runs=150
    )
    results, outcomes = lb.run_lower_bound(config, seed=0, execution=Execution(cache=False))
    assert [o.computed for o in outcomes] == [2, 4]
    etc, alg1 = results["algorithms"]
    # ETC commits to each of 3 near-tied arms about a third of the time: ≥ 3 traces
    assert etc["needs_k_traces"]["passed"] and etc["needs_k_traces"]["list_size_interval"][0] >= 3
    assert etc["needs_k_traces"]["instance"]["spread"] <= config.max_scale + 1e-9
    # Alg. 1: two fates per arm on a zone-centred instance, 2^(k-1) = 4 traces
    assert alg1["needs_k_traces"]["passed"]
    for entry in (etc, alg1):
        rows = entry["restricted"]["rows"]
        # pigeonhole: any fixed list of k-1 traces leaves some vertex at regret/T ≥ Δ/2
        assert all(r["restricted_regret_over_T"] >= config.gap / 2 - 1e-12 for r in rows)
        assert all(r["listed_traces"] <= 2 for r in rows)
    assert [r["listed_traces"] for r in alg1["restricted"]["rows"]] == [1, 1]  # no elimination
    assert [r["listed_traces"] for r in etc["restricted"]["rows"]] == [2, 2]
    assert etc["restricted"]["passed"]  # ETC itself: 0.004 at T = 10^5, far below 0.1
    assert etc["restricted"]["rows"][-1]["unrestricted_regret_over_T"] < 0.02
    assert results["escapes"] == [line for line in results["escapes"] if not line.startswith("etc")]


def test_bad_config():
    with pytest.raises(UsageError, match="--max-scale"):
        lb.run_lower_bound(lb.LowerBoundConfig(max_scale=0.9), 0)
    with pytest.raises(UsageError, match="--gap"):
        lb.run_lower_bound(lb.LowerBoundConfig(gap=0.0), 0)
    with pytest.raises(UsageError, match="empty"):
        lb.run_lower_bound(lb.LowerBoundConfig(algos=()), 0)

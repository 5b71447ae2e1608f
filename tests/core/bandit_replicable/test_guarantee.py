"""The list-guarantee test: exact binomial bounds, three outcomes exactly where they fall."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from iclr25.core.bandit_replicable import guarantee as g


def _exact_interval(x: int, n: int) -> tuple[float, float]:
    """Clopper–Pearson one-sided 95% bounds, from scipy's binomtest (an independent path):
    the two-sided 90% exact interval has them as its ends."""
    ci = stats.binomtest(x, n).proportion_ci(confidence_level=0.90, method="exact")
    return ci.low, ci.high


@pytest.mark.parametrize("x,n", [(0, 10), (3, 50), (17, 200), (200, 200), (1, 1)])
def test_clopper_pearson_matches_scipy_binomtest(x, n):
    low, high = _exact_interval(x, n)
    assert float(g.cp_upper(x, n)) == pytest.approx(high, abs=1e-10)
    assert float(g.cp_lower(x, n)) == pytest.approx(low, abs=1e-10)


def test_zero_successes_known_answer():
    # P(X = 0) = (1 - p)^n = α  ⇒  p = 1 - α^(1/n): 0.04951 ≤ 0.05 at n = 59, not at 58
    assert float(g.cp_upper(0, 59)) == pytest.approx(1 - 0.05 ** (1 / 59), rel=1e-12)
    assert float(g.cp_upper(0, 59)) <= 0.05 < float(g.cp_upper(0, 58))


def _keys(selection: list[int], test: list[int]) -> np.ndarray:
    """Executions in order: the selection half, then the test half (labels are traces)."""
    assert len(selection) == len(test)
    return np.asarray(selection + test, np.int64)


def _largest(ok, n: int) -> int:
    return max(x for x in range(n + 1) if ok(x))


def test_held_exactly_up_to_the_binomial_boundary():
    # list ℓ = 2 chosen from the selection half (traces 0 and 1); the test half has x
    # executions on traces never seen before: held iff CP_upper(x, n) ≤ δ
    n, delta = 400, 0.05
    boundary = _largest(lambda x: float(g.cp_upper(x, n)) <= delta, n)
    assert 0 < boundary < delta * n  # the bound is stricter than the point estimate
    selection = [0] * 300 + [1] * 100
    for x, outcome in ((boundary, "held"), (boundary + 1, "untestable")):
        test = [0] * (300 - x) + [1] * 100 + list(range(100, 100 + x))
        check = g.check_guarantee(_keys(selection, test), 2, delta)
        assert check.outcome == outcome, (x, check.reason)
        assert (check.outside_share_upper <= delta) == (outcome == "held")


def test_violated_exactly_past_the_binomial_boundary():
    # all N executions: y executions outside the 2 most frequent traces (all singletons):
    # violated iff CP_lower(y, N) > δ
    big, delta = 800, 0.05
    boundary = min(y for y in range(big + 1) if float(g.cp_lower(y, big)) > delta)
    assert boundary > delta * big
    for y, outcome in ((boundary, "violated"), (boundary - 1, "untestable")):
        labels = [0] * (big - y - 100) + [1] * 100 + list(range(2, 2 + y))
        keys = np.asarray(np.random.default_rng(0).permutation(labels), np.int64)
        check = g.check_guarantee(keys, 2, delta)
        assert check.outcome == outcome, (y, check.reason)
        assert check.bounds.lower == (3 if outcome == "violated" else 2)


def test_untestable_when_runs_do_not_exceed_the_list_and_the_count_that_decides():
    # 400 distinct traces, ℓ = 1200: the old check said "held" (400 ≤ 1200); no list of
    # 1200 can be shown to miss anything, and the test half is all unseen traces
    check = g.check_guarantee(np.arange(400), 1200, 0.05)
    assert check.outcome == "untestable" and check.runs_needed is not None
    # with runs_needed executions of the same kind (all distinct) the test decides
    decided = g.check_guarantee(np.arange(check.runs_needed), 1200, 0.05)
    assert decided.outcome == "violated"
    assert g.check_guarantee(np.arange(check.runs_needed - 50), 1200, 0.05).outcome == (
        "untestable"
    )


def test_runs_needed_makes_a_concentrated_distribution_held():
    rng = np.random.default_rng(3)

    def draw(n):  # one trace with probability 0.99, otherwise a fresh one
        return np.where(rng.random(n) < 0.99, 0, np.arange(1, n + 1))

    small = g.check_guarantee(draw(60), 5, 0.05)
    assert small.outcome == "untestable" and small.runs_needed is not None
    assert small.runs_needed > 60
    assert g.check_guarantee(draw(2 * small.runs_needed), 5, 0.05).outcome == "held"


def test_delta_zero_claim_is_violated_by_one_extra_trace():
    keys = np.array([0] * 500 + [1] * 499 + [2])
    check = g.check_guarantee(keys, 2, 0.0, delta_tested=0.05)
    assert check.outcome == "violated" and check.delta_tested == 0.05
    ok = g.check_guarantee(np.array([0, 1] * 300), 2, 0.0, delta_tested=0.05)
    assert ok.outcome == "held"


@pytest.mark.parametrize("q_star,expected", [(0.05, None), (0.01, "held"), (0.12, "violated")])
def test_error_rates_on_synthetic_trace_distributions(q_star, expected):
    """ℓ = 4 heavy traces carry 1 - q*, the rest of the mass is spread over fresh traces.
    At q* = δ (the boundary) neither wrong conclusion may exceed α = 5% (plus Monte Carlo
    slack); away from it, the right conclusion comes with 1000 runs."""
    rng = np.random.default_rng(11)
    reps, runs, counts = 300, 1000, {"held": 0, "violated": 0, "untestable": 0}
    for _ in range(reps):
        heavy = rng.random(runs) >= q_star
        keys = np.where(heavy, rng.integers(0, 4, runs), 4 + rng.integers(0, 10**9, runs))
        counts[g.check_guarantee(keys, 4, 0.05, project=False).outcome] += 1
    if expected is None:
        assert counts["held"] / reps <= 0.05 + 0.03
        assert counts["violated"] / reps <= 0.05 + 0.03
    else:
        assert counts[expected] / reps >= 0.95


@given(
    st.lists(st.integers(0, 12), min_size=1, max_size=300),
    st.integers(1, 20),
    st.sampled_from([0.01, 0.05, 0.2]),
)
def test_properties(labels, ell, delta):
    keys = np.asarray(labels, np.int64)
    bounds = g.list_size_bounds(keys, delta)
    assert bounds.lower <= bounds.covering <= bounds.distinct  # ℓ̲ never above the estimate
    check = g.check_guarantee(keys, ell, delta, project=False)
    if check.outcome == "held":  # never without evidence: the test half's share ≤ δ
        x = int(bounds.outside_test[min(ell, bounds.outside_test.size - 1)])
        assert x / bounds.test_runs <= delta
    if check.outcome == "violated":
        assert bounds.distinct > ell
    assert check.runs_needed is None  # no projection asked for


def test_bounds_bracket_the_true_list_size_of_a_uniform_distribution():
    # 128 equally likely traces: the fewest covering 95% is ⌈0.95·128⌉ = 122
    keys = np.random.default_rng(5).integers(0, 128, 4000)
    bounds = g.list_size_bounds(keys, 0.05)
    assert bounds.lower <= 122 <= bounds.upper


def test_runs_needed_projects_a_finite_support_it_has_not_fully_seen():
    """128 equally likely traces, 300 runs (about 115 of them seen), ℓ = 256: the
    projection must account for the unseen traces (Good–Turing / Chao1), and at the
    projected count fresh samples of the true distribution mostly decide (held)."""
    rng = np.random.default_rng(8)
    check = g.check_guarantee(rng.integers(0, 128, 300), 256, 0.05)
    assert check.outcome == "untestable" and 300 < check.runs_needed <= 4000
    outcomes = [
        g.check_guarantee(rng.integers(0, 128, check.runs_needed), 256, 0.05, project=False)
        for _ in range(10)
    ]
    assert sum(c.outcome == "held" for c in outcomes) >= 7
    assert not any(c.outcome == "violated" for c in outcomes)

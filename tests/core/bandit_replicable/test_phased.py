"""Alg. 1-3 and successive elimination: decision rules and list sizes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.core.bandit_replicable import list_batched as lb
from iclr25.core.bandit_replicable import list_k_delta as lkd
from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.list_2k import List2k
from iclr25.core.bandit_replicable.list_batched import ListBatched, batch_ends, choose_threshold
from iclr25.core.bandit_replicable.schedule import simulate_aggregated
from iclr25.core.bandit_replicable.successive_elimination import SuccessiveElimination
from iclr25.core.bandit_replicable.traces import fewest_covering, trace_counts


def gaussian(means, sigma=0.05):
    return ArmsEnvironment(np.asarray(means, float), "gaussian", sigma)


# gaps at the centres of the zones Z_1, Z_2, Z_3 (τ_p = 2^-p): every suboptimal arm is
# uncertain at exactly one phase, the worst case for Alg. 1's list size
ZONE_CENTRES = [0.5, 0.375, 0.25, 0.0]


def test_alg1_decision_rule_known_answer():
    algo = List2k(0.05)
    state = algo.init(gaussian([0.5, 0.4, 0.2]), 10_000, 2, np.random.default_rng(0))
    counts = np.full((2, 3), 100)
    # empirical means (0.9, 0.6, 0.35) and (0.9, 0.85, 0.2); τ_1 = 0.5
    sums = np.array([[90.0, 60.0, 35.0], [90.0, 85.0, 20.0]])
    algo.decide(state, 0, sums, counts, np.array([True, True]))
    assert state.active.tolist() == [[True, True, False], [True, True, False]]
    assert state.eliminated_at.tolist() == [[0, 0, 1], [0, 0, 1]]
    algo.decide(state, 1, sums, counts, np.array([True, False]))  # τ_2 = 0.25; row 1 skipped
    assert state.active.tolist() == [[True, False, False], [True, True, False]]


@pytest.mark.parametrize("seed", [0, 1])
def test_alg1_each_arm_has_at_most_two_adjacent_fates(seed):
    env = gaussian(ZONE_CENTRES)
    out = simulate_aggregated(List2k(0.05), env, 20_000, 3000, np.random.default_rng(seed))
    fates = out.state.eliminated_at  # (runs, k)
    for arm in range(env.k):
        values = np.unique(fates[:, arm])
        assert values.size <= 2
        if values.size == 2 and values.min() > 0:
            assert values[1] - values[0] == 1
    assert (fates[:, 0] == 0).all()  # the best arm is never eliminated
    counts = trace_counts(out.keys)
    assert counts.size >= 4  # the instance really exercises several fates
    assert fewest_covering(counts, 0.95) <= 2 ** (env.k - 1)  # margin: 2^(k-1) < 2^k


def test_alg2_accuracy_known_answers():
    # k = 5, δ = 0.05: ℓ = 1200, C = 17, m = ⌊log2(1200/17)⌋ = 6 ≥ k-1: Alg. 1's accuracy
    assert lkd.list_bound(5, 0.05) == 1200 and lkd.cell_bound(5) == 17
    assert lkd.tolerated_ambiguity(5, 0.05) == 6
    assert lkd.accuracy_ratio(5, 0.05) == 1 / 8
    # k = 10: ℓ = 2400, C = 37, m = 6 < 9: c = (3δ/4)(m+1)/(5(k-1)) = 0.0375·7/45
    assert lkd.tolerated_ambiguity(10, 0.05) == 6
    assert lkd.accuracy_ratio(10, 0.05) == pytest.approx(0.0375 * 7 / 45, rel=1e-12)
    assert lkd.list_bound(2, 0.2) == 120  # ⌈12 k / δ⌉
    # the documented reason Alg. 2 shares Alg. 1's accuracy: at δ = 0.05, C·2^(k-1) ≤ ℓ
    # (k = 7: 25·64 = 1600 ≤ 1680) up to k = 7, and no further (k = 8: 29·128 > 1920)
    assert [lkd.accuracy_ratio(k, 0.05) == 1 / 8 for k in range(2, 10)] == [True] * 6 + [False] * 2


@given(st.integers(2, 400), st.floats(1e-3, 0.99))
def test_alg2_list_budget_holds(k, delta):
    """C·2^min(m, k-1) traces fit in ℓ, and P(G fails) + P(more than m ambiguous arms)
    ≤ δ/4 + 5c(k-1)/(m+1) ≤ δ (the module docstring's argument)."""
    m, c = lkd.tolerated_ambiguity(k, delta), lkd.accuracy_ratio(k, delta)
    assert 0 < c <= 1 / 8
    assert lkd.cell_bound(k) * 2 ** min(m, k - 1) <= lkd.list_bound(k, delta)
    if m < k - 1:
        assert delta / 4 + 5 * c * (k - 1) / (m + 1) <= delta * (1 + 1e-12)


def band_mask(gap: float, c: float, r: np.ndarray, phases: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference: for offsets r, whether an arm of gap Δ is ambiguous (some phase p with
    |2^p Δ - 1 - r| ≤ 2c) and the ambiguous phase (0 = none)."""
    p = np.arange(1, phases + 1)[None, :]
    hit = np.abs(2.0**p * gap - 1.0 - r[:, None]) <= 2 * c  # (n, P)
    return hit.any(axis=1), np.where(hit.any(axis=1), np.argmax(hit, axis=1) + 1, 0)


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-3, 2.0), st.floats(1e-4, 1 / 8))
def test_alg2_band_is_short_and_at_most_two_intervals(gap, c):
    r = (np.arange(100_000) + 0.5) / 100_000  # a fine grid of [0, 1)
    ambiguous, _ = band_mask(gap, c, r, 40)
    assert ambiguous.mean() <= 5 * c + 1e-5  # |B_i| ≤ 5c
    assert np.count_nonzero(np.diff(ambiguous.astype(np.int8))) <= 4  # ≤ 4 interior ends


@pytest.mark.parametrize(
    "means,seed,least",
    [
        # gaps 0.15, 0.15, 0.3 share one band: up to 3 ambiguous arms in a cell (2^3 traces)
        ([0.5, 0.35, 0.35, 0.2], 3, 8),
        ([0.5, 0.35, 0.35, 0.2], 4, 8),
        ([0.5, 0.42, 0.3, 0.1], 5, 4),  # gaps 0.08, 0.2, 0.4: bands at different offsets
    ],
)
def test_alg2_fates_follow_the_offset_and_cells_bound_the_traces(means, seed, least):
    env = gaussian(means)
    algo = lkd.ListKDelta(0.2)
    out = simulate_aggregated(algo, env, 60_000, 4000, np.random.default_rng(seed))
    state, c = out.state, lkd.accuracy_ratio(env.k, 0.2)
    assert c == 1 / 8 and state.targets[5] * env.k <= 60_000  # phases 1-6 complete
    r = state.thresholds[:, 0] * 2 - 1  # τ_1(r) = (1 + r)/2
    assert ((r >= 0) & (r < 1)).all() and np.unique(r).size == r.size  # fresh, continuous
    ends = []
    for arm in range(1, env.k):
        gap = env.gaps[arm]
        ambiguous, phase = band_mask(gap, c, r, state.targets.size)
        fates = state.eliminated_at[:, arm]
        p = np.arange(1, 8)[None, :]
        certain = np.argmax(gap > 2.0**-p * (1 + r[:, None]), axis=1) + 1  # min{p: Δ > τ_p}
        assert (fates[~ambiguous] == certain[~ambiguous]).all()
        assert np.isin(fates[ambiguous] - phase[ambiguous], [0, 1]).all()
        assert 0.2 < ambiguous.mean() < 5 * c  # the band is exercised, and no longer than 5c
        grid = (np.arange(100_000) + 0.5) / 100_000
        edges = np.flatnonzero(np.diff(band_mask(gap, c, grid, 40)[0].astype(np.int8)))
        ends.extend(grid[edges])
    assert (state.eliminated_at[:, 0] == 0).all()
    cells = np.searchsorted(np.sort(ends), r)  # the cell of each offset
    ambiguous_count = sum(band_mask(g, c, r, 40)[0] for g in env.gaps[1:])
    for cell in np.unique(cells):
        rows = cells == cell
        traces = trace_counts(out.keys[rows]).size
        assert traces <= 2 ** ambiguous_count[rows].max()
    assert trace_counts(out.keys).size <= lkd.cell_bound(env.k) * 2 ** (env.k - 1)
    assert trace_counts(out.keys).size >= least  # the instance shows the ambiguity


def test_phase_targets_do_not_overflow_for_tiny_accuracies():
    # k = 20, δ = 0.05: c = 1/422, so 2σ²L/η_p² passes 2^63 in the late phases of T = 10^7;
    # the cast used to wrap to negative values (and stall the schedule) with a warning
    env = ArmsEnvironment(np.full(20, 0.5), "bernoulli")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state = lkd.ListKDelta(0.05).init(env, 10**7, 1, np.random.default_rng(0))
    targets = state.targets
    # N_1 = ⌈2σ²L/η_1²⌉, σ = 1/2, L = ln(2·20·25/(δ/4)), η_1 = c/2, c = 0.0375·6/95
    assert (np.diff(targets) >= 0).all() and targets[0] == 4_025_296
    assert targets[-1] == 10**7 + 1  # capped: a phase that cannot complete within T


def test_batch_ends_minimax_grid_known_answers():
    assert batch_ends(10**6, 2).tolist() == [10_000, 10**6]  # a = T^(2/3)
    ends = batch_ends(10**6, 3)  # a = T^(4/7); t_2 = a^(3/2)
    assert ends[0] == int(10 ** (24 / 7)) and abs(ends[1] - 10 ** (36 / 7)) <= 1
    tiny = batch_ends(6, 4, k=3)
    assert (np.diff(tiny) > 0).all() and tiny[0] >= 3 and tiny[-1] == 6


@pytest.mark.parametrize("batches", [2, 3, 4, 5, 8])
def test_claimed_exponent_needs_one_more_batch(batches):
    # 1/2 + 2^-(B+1) lies between the B- and (B+1)-batch lower bounds 1/(2 - 2^(1-M))
    # (Gao et al. 2019) and equals the fixed grid T^(1-2^-b) with B+1 batches: 1/2 + 2^-M
    claimed = lb.claimed_exponent(batches)
    assert lb.design_exponent(batches + 1) < claimed < lb.design_exponent(batches)
    assert lb.batches_for_exponent(claimed) == batches + 1
    assert claimed == 0.5 + 2.0 ** -(batches + 1)
    assert lb.batches_for_exponent(lb.design_exponent(batches)) == batches


def test_prefix_list_bound_known_answers():
    assert lb.prefix_list_bound(5, 3) == 15 and lb.list_bound(5, 3) == 36
    assert lb.prefix_list_bound(5, 2) == 5  # one decision: |A_2| ∈ {1..5}
    assert lb.prefix_list_bound(2, 4) == 4  # sizes 2 ≥ s2 ≥ s3 ≥ s4 ≥ 1: C(4, 3)


def test_choose_threshold_known_answer():
    # η = 1: candidates γ_j = 4, 9, 14, ...; ĝ = 4.5 blocks γ_0, ĝ = 13 blocks γ_2
    gaps = np.array([[0.0, 4.5, 13.0]])
    choice, gamma = choose_threshold(gaps, np.ones((1, 3), bool), np.array([1.0]), 3)
    assert choice.tolist() == [1] and gamma.tolist() == [9.0]


@pytest.mark.parametrize("means", [[0.5, 0.45, 0.3], [0.5, 0.48, 0.46, 0.2, 0.1]])
def test_alg3_trace_is_a_function_of_the_choices(means):
    env = ArmsEnvironment(np.array(means), "gaussian", 0.1)
    algo = ListBatched(0.05, 3)
    out = simulate_aggregated(algo, env, 5000, 3000, np.random.default_rng(0))
    choices = out.state.choices  # (runs, B-1)
    assert ((choices >= 0) & (choices <= env.k)).all()
    groups = {}
    for row, key in zip(map(tuple, choices), map(tuple, out.keys), strict=True):
        groups.setdefault(row, set()).add(key)
    ambiguous = sum(len(keys) > 1 for keys in groups.values())
    assert ambiguous == 0
    # the active sets are nested prefixes of the arms sorted by gap: C(k+1, 2) traces
    assert trace_counts(out.keys).size <= lb.prefix_list_bound(env.k, 3) < (env.k + 1) ** 2


def test_successive_elimination_rule_and_many_traces():
    algo = SuccessiveElimination(0.05)
    env = ArmsEnvironment(np.array([0.7, 0.5, 0.45]), "bernoulli")
    state = algo.init(env, 1000, 1, np.random.default_rng(0))
    counts = np.array([[100, 100, 100]])
    radius = 0.5 * np.sqrt(2 * np.log(4 * 3 * 100**2 / 0.05) / 100)  # r(100), σ = 1/2
    assert algo.radius(state, np.array([100])) == pytest.approx(radius, rel=1e-12)
    sums = np.array([[70.0, 70.0 - 100 * (2 * radius + 0.01), 69.0]])
    algo.decide(state, 0, sums, counts, np.array([True]))
    assert state.active.tolist() == [[True, False, True]]
    out = simulate_aggregated(SuccessiveElimination(0.05), env, 3000, 500, np.random.default_rng(1))
    assert trace_counts(out.keys).size > 400  # traces explode without replicability

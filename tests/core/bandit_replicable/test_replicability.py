"""ρ-replicability (shared internal bits) against list replicability (fresh bits)."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.core.bandit_replicable import replicable_elimination as re_
from iclr25.core.bandit_replicable import simulate as sim
from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.sequential import simulate_sequential
from iclr25.core.bandit_replicable.thompson import Thompson

# gaps 0.75 and 0.375 sit mid-way in the octaves of phases 1 and 2 (2^p Δ = 1.5), so with
# fresh bits each arm's elimination phase is a fair coin over its own phase offset U_p
OCTAVES = ArmsEnvironment(np.array([0.75, 0.0, 0.375]), "gaussian", 0.05)


def test_pair_agreement_known_answer():
    keys = np.array([[1, 1], [1, 1], [2, 2], [3, 3], [4, 4]], dtype=np.uint64)
    out = sim.pair_agreement(keys)  # pairs (0, 1) agree, (2, 3) do not; 4 has no partner
    assert out["pair_agreement"] == 0.5
    lo, hi = out["pair_agreement_ci95"]
    assert 0 < lo < 0.5 < hi < 1
    assert sim.pair_agreement(keys[:1])["pair_agreement"] is None


def test_accuracy_ratio_known_answer():
    # c = (3ρ/4) / (8 (k-1)): k = 5, ρ = 0.05 → 0.0375 / 32
    assert re_.accuracy_ratio(5, 0.05) == pytest.approx(0.0375 / 32, rel=1e-12)
    assert re_.accuracy_ratio(2, 0.8) == pytest.approx(0.075, rel=1e-12)  # < 1/8 always


def _run(algo: str, shared: bool) -> dict:
    config = sim.SimulationConfig(algo, 300_000, 2000, delta=0.2, shared_randomness=shared)
    return sim.run_experiment(OCTAVES, config, seed=0)


def test_replicable_elimination_is_rho_replicable_but_not_a_short_list():
    fresh, shared = _run("replicable-elimination", False), _run("replicable-elimination", True)
    # fresh bits: two independent fair coins → 4 traces of ≈ 1/4 each, pairs agree ≈ 1/4
    assert fresh["distinct_traces"] == 4
    assert all(0.2 < share < 0.3 for share in fresh["top_trace_shares"])
    assert fresh["pair_agreement"] < 0.35
    # shared bits: the pair follows the same coins → agreement ≥ 1 - ρ = 0.8
    assert shared["pair_agreement"] >= 0.95 and shared["rho_held"] is True
    assert fresh["rho_held"] is None and shared["rho_bound"] == 0.2
    assert shared["mean_regret"] == pytest.approx(fresh["mean_regret"], rel=0.1)


def test_list_checks_are_skipped_with_shared_bits_and_alg1_is_not_rho_replicable():
    zones = ArmsEnvironment(np.array([0.5, 0.375, 0.25, 0.0]), "gaussian", 0.05)
    config = sim.SimulationConfig("list-2k", 200_000, 2000, delta=0.2)
    fresh = sim.run_experiment(zones, config, seed=1)
    shared = sim.run_experiment(
        zones, sim.SimulationConfig(**{**config.__dict__, "shared_randomness": True}), seed=1
    )
    assert fresh["guarantee_held"] is True and shared["guarantee_held"] is None
    # deterministic: sharing bits changes nothing, and zone-centred gaps split the pairs
    assert shared["pair_agreement"] == fresh["pair_agreement"] < 0.5


def test_thompson_pairs_share_posterior_draws_not_rewards():
    env = ArmsEnvironment(np.array([0.5, 0.45, 0.4]), "gaussian", 1e-9)  # rewards ≈ means
    ids = np.arange(400)
    fresh = simulate_sequential(Thompson(0.3), env, 300, ids, seed=5, record_arms=True)
    shared = simulate_sequential(
        Thompson(0.3), env, 300, ids, seed=5, record_arms=True, shared_pairs=True
    )
    assert (shared.arms[0::2] == fresh.arms[0::2]).all()  # execution 2i keeps its own bits
    assert (shared.arms[0::2] == shared.arms[1::2]).all()  # its partner copies them
    assert (fresh.arms[0::2] != fresh.arms[1::2]).any(axis=1).mean() > 0.9
    noisy = ArmsEnvironment(np.array([0.5, 0.45, 0.4]), "gaussian", 1.0)
    out = simulate_sequential(Thompson(1.0), noisy, 300, ids, seed=5, shared_pairs=True)
    assert (out.keys[0::2] != out.keys[1::2]).any(axis=1).mean() > 0.9  # rewards differ

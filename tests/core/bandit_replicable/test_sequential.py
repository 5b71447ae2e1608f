"""UCB1 / Thompson: the vectorised CPU path against the plain reference, and UCB1's
logarithmic regret."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iclr25.core.bandit_replicable.environments import ArmsEnvironment
from iclr25.core.bandit_replicable.sequential import simulate_sequential
from iclr25.core.bandit_replicable.thompson import Thompson
from iclr25.core.bandit_replicable.traces import partition, sequence_keys
from iclr25.core.bandit_replicable.ucb1 import Ucb1
from iclr25.gpu.kernels.bandit_sequential.reference import sequential_reference_run


@pytest.mark.parametrize("noise", ["bernoulli", "gaussian"])
@pytest.mark.parametrize("name", ["ucb1", "thompson"])
def test_vectorised_path_equals_reference_exactly(name, noise):
    env = ArmsEnvironment(np.array([0.6, 0.55, 0.3, 0.58]), noise, 0.7)
    scale = 1.0 if noise == "bernoulli" else 0.7
    rule = Ucb1() if name == "ucb1" else Thompson(scale)
    ids = np.array([0, 3, 17])
    out = simulate_sequential(rule, env, 250, ids, seed=9, record_arms=True)
    for i, run in enumerate(ids):
        ref = sequential_reference_run(
            name, env.means.tolist(), noise, 0.7, 250, 9, int(run), scale
        )
        assert out.arms[i].tolist() == ref["arms"]
        assert out.pulls[i].tolist() == ref["pulls"]
        assert tuple(int(x) for x in out.keys[i]) == ref["key"]
        assert out.regret[i] == pytest.approx(ref["regret"], abs=1e-9)


def test_empty_and_single_execution():
    env = ArmsEnvironment(np.array([0.5, 0.4]), "bernoulli")
    empty = simulate_sequential(Ucb1(), env, 10, np.zeros(0, np.int64), seed=0)
    assert empty.pulls.shape == (0, 2) and empty.regret.shape == (0,)
    one = simulate_sequential(Ucb1(), env, 10, np.array([5]), seed=0)
    assert one.pulls.sum() == 10


def test_rolling_hash_partition_equals_full_sequences():
    env = ArmsEnvironment(np.array([0.5, 0.5, 0.45]), "bernoulli")
    out = simulate_sequential(Ucb1(), env, 40, np.arange(3000), seed=1, record_arms=True)
    by_sequence = partition(sequence_keys(out.arms))
    assert (by_sequence == partition(np.ascontiguousarray(out.keys))).all()
    assert by_sequence.max() > 10  # several traces repeat and many differ


def test_ucb1_regret_grows_logarithmically():
    # easy instance Δ = 0.5: Auer et al. (2002), Thm 1: R(T) ≤ 8 ln T / Δ + (1 + π²/3) Δ
    env = ArmsEnvironment(np.array([0.9, 0.4]), "bernoulli")
    marks = np.array([100, 1000, 10_000])
    out = simulate_sequential(Ucb1(), env, 10_000, np.arange(300), seed=0, checkpoints=marks)
    r100, r1k, r10k = out.curve / 300
    assert r10k <= 8 * math.log(10_000) / 0.5 + (1 + math.pi**2 / 3) * 0.5
    # equal increments per decade (log growth); linear growth would give a ratio of 10
    ratio = (r10k - r1k) / (r1k - r100)
    assert 0.4 < ratio < 2.5


def test_thompson_explores_less_than_uniform_and_its_traces_explode():
    env = ArmsEnvironment(np.array([0.7, 0.5, 0.3]), "bernoulli")
    out = simulate_sequential(Thompson(), env, 2000, np.arange(200), seed=0)
    assert out.regret.mean() < 0.1 * 2000 * env.gaps.mean()
    assert np.unique(out.keys, axis=0).shape[0] == 200

from __future__ import annotations

import numpy as np
from scipy import stats

from iclr25 import counter_rng as cr


def test_splitmix64_known_answer():
    # SplitMix64 seeded with 0 outputs 0xE220A8397B1DCDAF first (Vigna's reference code:
    # state += 0x9E3779B97F4A7C15, then the finaliser).
    assert cr.mix64_int(cr.GOLDEN) == 0xE220A8397B1DCDAF
    assert int(cr.mix64(np.array([cr.GOLDEN], np.uint64))[0]) == 0xE220A8397B1DCDAF


def test_vectorised_matches_scalar():
    runs = np.array([0, 1, 7, 1000, 2**40])
    keys = cr.run_keys(42, runs)
    assert [int(k) for k in keys] == [cr.run_key_int(42, int(r)) for r in runs]
    for counter in (0, 1, 12345, 2**35):
        u = cr.uniforms(keys, counter)
        expected = [cr.uniform_int(cr.run_key_int(42, int(r)), counter) for r in runs]
        assert u.tolist() == expected
    block = cr.uniforms_streams(keys, 100, 4)  # (runs, 4)
    for s in range(4):
        assert block[:, s].tolist() == cr.uniforms(keys, 100 + s).tolist()


def test_uniforms_are_uniform_and_open_interval():
    keys = cr.run_keys(0, np.arange(20_000))
    u = cr.uniforms(keys, 3)
    assert (u > 0).all() and (u < 1).all()
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # consecutive counters of one execution are uncorrelated
    key = cr.run_keys(5, np.array([0]))
    seq = np.array([cr.uniforms(key, c)[0] for c in range(5000)])
    assert abs(np.corrcoef(seq[:-1], seq[1:])[0, 1]) < 0.05

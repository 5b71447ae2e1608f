"""χ, χ̃ and the correlation estimators on planted structure (exact, not statistical).

Walsh patterns make the design exact: columns of a Sylvester Hadamard matrix (±1 → 0/1)
are balanced and orthogonal after centring, so blocks that change together with
different Walsh patterns have sample covariance exactly 0 between blocks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.diffusion_probe import observables as obs


def walsh(n: int) -> np.ndarray:
    """(n, n − 1) balanced 0/1 columns, pairwise uncorrelated (n a power of 2)."""
    h = np.array([[1]])
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return (h[:, 1:] > 0).astype(np.int64)


def planted(blocks: int, size: int, n: int = 16) -> np.ndarray:
    patterns = walsh(n)[:, :blocks]  # (n, blocks)
    return np.repeat(patterns, size, axis=1)  # (n, blocks·size): a block changes together


@given(st.integers(1, 5), st.integers(1, 6))
def test_planted_blocks_of_size_b_give_chi_norm_b(blocks, size):
    stats = obs.change_stats(planted(blocks, size))
    assert stats["chi_norm"] == pytest.approx(size, abs=1e-12)


@given(st.integers(2, 15))
def test_independent_changes_give_chi_norm_one(tokens):
    stats = obs.change_stats(planted(tokens, 1))
    assert stats["chi_norm"] == pytest.approx(1.0, abs=1e-12)


@given(st.integers(0, 10_000))
def test_chi_is_invariant_under_a_permutation_of_positions(seed):
    rng = np.random.default_rng(seed)
    sigma = (rng.random((30, 12)) < rng.random(12)).astype(np.int64)
    perm = rng.permutation(12)
    a, b = obs.change_stats(sigma), obs.change_stats(sigma[:, perm])
    assert a["chi"] == pytest.approx(b["chi"], abs=1e-12)
    assert a["change_fraction"] == pytest.approx(b["change_fraction"])


def test_raw_chi_peaks_at_one_half_without_correlation_but_chi_norm_does_not():
    """The trap the paper's normalisation avoids: independent tokens, p = 0.1 and 0.5."""
    rng = np.random.default_rng(0)
    low = (rng.random((20_000, 27)) < 0.1).astype(np.int64)
    half = (rng.random((20_000, 27)) < 0.5).astype(np.int64)
    assert obs.change_stats(half)["chi"] > 2 * obs.change_stats(low)["chi"]
    assert obs.change_stats(half)["chi_norm"] == pytest.approx(1.0, abs=0.05)
    assert obs.change_stats(low)["chi_norm"] == pytest.approx(1.0, abs=0.05)


def test_no_change_at_all_leaves_chi_norm_undefined():
    assert obs.change_stats(np.zeros((10, 9), np.int64))["chi_norm"] is None


def test_correlation_by_distance_equals_the_direct_sum():
    rng = np.random.default_rng(1)
    sigma = (rng.random((40, 17)) < 0.3).astype(np.int64)
    c = sigma - sigma.mean(axis=0)
    direct = [
        sum(float(c[:, i] @ c[:, i + r]) for i in range(17 - r)) / ((17 - r) * 39)
        for r in range(17)
    ]
    np.testing.assert_allclose(obs.correlation_by_distance(sigma), direct, atol=1e-12)
    assert len(obs.correlation_by_distance(sigma, max_r=5)) == 6


@pytest.mark.parametrize("height", [1, 2])
def test_correlation_by_height_sees_blocks_aligned_with_the_tree(height):
    s, depth, n = 3, 3, 16
    sigma = planted(3 ** (depth - height), s**height, n)  # blocks = subtrees of that height
    var = n / (4 * (n - 1))  # balanced 0/1 column, unbiased variance
    want = [var if h <= height else 0.0 for h in range(1, depth + 1)]
    np.testing.assert_allclose(obs.correlation_by_height(sigma, s), want, atol=1e-12)


def test_class_midpoint_interpolates_the_half_maximum():
    levels = [0.1, 0.2, 0.3, 0.4]
    change = [0.0, 0.2, 0.6, 0.8]  # classes = 2: half maximum (1 - 1/2)/2 = 0.25
    assert obs.class_midpoint(levels, change, 2) == pytest.approx(0.2 + 0.05 / 0.4 * 0.1)
    assert obs.class_midpoint(levels, [0.0, 0.0, 0.1, 0.2], 2) is None


def test_peak_level_is_the_centroid_within_ten_percent():
    levels = [0.1, 0.2, 0.3, 0.4, 0.5]
    assert obs.peak_level(levels, [1.0, 3.0, 3.2, 2.95, 1.0]) == (pytest.approx(0.3), 3.2)
    assert obs.peak_level(levels, [None] * 5) is None

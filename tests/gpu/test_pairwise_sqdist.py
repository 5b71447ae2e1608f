from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from iclr25.gpu.kernels.pairwise_sqdist import (
    pairwise_sqdist,
    pairwise_sqdist_cpu,
    pairwise_sqdist_cuda,
    pairwise_sqdist_reference,
)
from iclr25.testing import assert_close

SHAPES = [(1, 1, 1), (5, 7, 3), (64, 64, 16), (65, 63, 17), (130, 3, 129), (0, 4, 5), (3, 0, 2)]


def test_reference_known_answer():
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    assert_close(pairwise_sqdist_reference(x, x), np.array([[0.0, 25.0], [25.0, 0.0]]))


@pytest.mark.parametrize("n,m,d", SHAPES)
def test_cpu_path_matches_reference(n, m, d):
    rng = np.random.default_rng(n * 100 + m * 10 + d)
    x, y = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    assert_close(
        pairwise_sqdist_cpu(x, y, block_rows=7),
        pairwise_sqdist_reference(x, y),
        rtol=1e-10,
        atol=1e-10,
    )


@given(
    arrays(
        np.float64, st.tuples(st.integers(1, 12), st.integers(1, 6)), elements=st.floats(-1e3, 1e3)
    )
)
def test_properties_symmetric_nonnegative_zero_diagonal(x):
    d = pairwise_sqdist(x)
    assert (d >= 0).all()
    assert_close(d, d.T, rtol=1e-9, atol=1e-6)
    assert_close(np.diag(d), np.zeros(len(x)), atol=1e-6 * (1 + np.abs(x).max() ** 2))


def test_dimension_mismatch_raises():
    with pytest.raises(ValueError, match="feature dimensions differ"):
        pairwise_sqdist_cpu(np.zeros((2, 3)), np.zeros((2, 4)))


@pytest.mark.gpu
@pytest.mark.parametrize("n,m,d", SHAPES + [(1000, 777, 128)])
def test_cuda_kernel_matches_reference(n, m, d):
    import cupy as cp

    rng = np.random.default_rng(7)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = rng.normal(size=(m, d)).astype(np.float32)
    got = pairwise_sqdist_cuda(cp.asarray(x), cp.asarray(y))
    assert_close(got, pairwise_sqdist_reference(x, y), rtol=1e-4, atol=1e-3)

"""Fused CSR SpMM + tanh: the loop reference, the torch.sparse path and the CUDA kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.gpu.kernels.csr_spmm_tanh import (
    MAX_D,
    csr_spmm_tanh_cuda,
    csr_spmm_tanh_reference,
    csr_spmm_tanh_torch,
    hot_path_cases,
    random_csr,
)
from iclr25.testing import assert_close


def ragged_csr(n: int, seed: int, max_degree: int = 70):
    """A valid CSR matrix with rows of 0 to min(max_degree, n) distinct, sorted columns:
    empty rows and, for n > 32, rows longer than one warp's 32."""
    rng = np.random.default_rng(seed)
    degrees = rng.integers(0, min(max_degree, n) + 1, size=n) * (rng.random(n) < 0.8)
    crow = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)  # (n + 1,)
    col = np.concatenate(
        [np.sort(rng.choice(n, size=k, replace=False)) for k in degrees] + [np.zeros(0, int)]
    ).astype(np.int64)  # (nnz,)
    val = rng.normal(size=int(crow[-1])).astype(np.float32)
    return crow, col, val


def test_reference_known_answer():
    # A = [[0, 2], [1, 0]] (CSR), x = [[0.5], [0.25]], c = [[0], [1]]:
    # row 0: tanh(0 + 2 · 0.25) = tanh(0.5); row 1: tanh(1 + 1 · 0.5) = tanh(1.5)
    got = csr_spmm_tanh_reference([0, 1, 2], [1, 0], [2.0, 1.0], [[0.5], [0.25]], [[0.0], [1.0]])
    assert_close(got, np.array([[math.tanh(0.5)], [math.tanh(1.5)]]), rtol=1e-15)


@pytest.mark.parametrize("n,d", [(1, 1), (7, 3), (40, 33), (65, 64), (0, 4)])
def test_torch_path_matches_reference(n, d):
    crow, col, val = ragged_csr(n, seed=n * 10 + d)
    rng = np.random.default_rng(d)
    x, c = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    got = csr_spmm_tanh_torch(crow, col, val, x, c).numpy()
    assert_close(got, csr_spmm_tanh_reference(crow, col, val, x, c), rtol=1e-10, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.integers(1, 5), st.integers(0, 2**31 - 1))
def test_empty_matrix_gives_tanh_of_c_and_values_stay_in_range(n, d, seed):
    rng = np.random.default_rng(seed)
    c = rng.normal(scale=5, size=(n, d))
    empty = np.zeros(n + 1, dtype=np.int64)
    assert_close(csr_spmm_tanh_reference(empty, [], [], np.ones((n, d)), c), np.tanh(c))
    crow, col, val = ragged_csr(n, seed, max_degree=4)
    out = csr_spmm_tanh_reference(crow, col, val, rng.normal(size=(n, d)), c)
    assert np.all(np.abs(out) <= 1.0)


def test_hot_path_cases_reach_1e5():
    assert any("n=100000" in case.shape for case in hot_path_cases(quick=False))
    assert any("n=100000" in case.shape for case in hot_path_cases(quick=True))


def test_random_csr_rows_are_sorted_with_fixed_degree():
    crow, col, _ = random_csr(50, 4, seed=3)
    assert crow[-1] == 200 and np.all(np.diff(crow) == 4)
    assert all(np.all(np.diff(col[a:b]) >= 0) for a, b in zip(crow[:-1], crow[1:], strict=True))


GPU_SHAPES = [(1, 1), (7, 3), (40, 33), (65, 64), (300, 129), (50, MAX_D), (0, 4)]


@pytest.mark.gpu
@pytest.mark.parametrize("n,d", GPU_SHAPES)
def test_cuda_kernel_matches_reference(n, d):
    crow, col, val = ragged_csr(n, seed=n + d)
    rng = np.random.default_rng(n * 7 + d)
    x = rng.normal(size=(n, d)).astype(np.float32)
    c = rng.normal(size=(n, d)).astype(np.float32)
    got = csr_spmm_tanh_cuda(crow, col, val, x, c).get()
    assert_close(got, csr_spmm_tanh_reference(crow, col, val, x, c), rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
def test_cuda_kernel_matches_torch_sparse_at_1e5():
    import torch

    crow, col, val = random_csr(100_000, 8, seed=5)
    rng = np.random.default_rng(6)
    x = rng.normal(size=(100_000, 64)).astype(np.float32)
    c = rng.normal(size=(100_000, 64)).astype(np.float32)
    got = csr_spmm_tanh_cuda(crow, col, val, x, c).get()
    expected = csr_spmm_tanh_torch(crow, col, val, torch.from_numpy(x).cuda(), c).cpu().numpy()
    assert_close(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.gpu
def test_cuda_kernel_rejects_too_wide_rows():
    crow, col, val = random_csr(4, 2)
    wide = np.zeros((4, MAX_D + 1), dtype=np.float32)
    with pytest.raises(ValueError, match="at most"):
        csr_spmm_tanh_cuda(crow, col, val, wide, wide)

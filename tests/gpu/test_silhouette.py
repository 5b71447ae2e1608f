"""The silhouette kernel against the float64 reference (GPU only)."""

from __future__ import annotations

import numpy as np
import pytest

from iclr25.gpu.kernels.silhouette import (
    cluster_distance_sums,
    cluster_distance_sums_cuda,
    cluster_distance_sums_reference,
    silhouette_score,
)
from iclr25.testing import assert_close

SHAPES = [(1, 1, 1), (5, 3, 2), (64, 16, 4), (65, 17, 3), (130, 129, 7), (200, 5, 32), (0, 4, 1)]


@pytest.mark.gpu
@pytest.mark.parametrize("n,d,c", SHAPES)
def test_kernel_sums_match_reference(n, d, c):
    import cupy as cp

    rng = np.random.default_rng(n + d + c)
    x = rng.normal(size=(n, d)).astype(np.float32)
    labels = (np.arange(n) % c).astype(np.int32)
    got = cluster_distance_sums_cuda(cp.asarray(x), cp.asarray(labels), c)
    want = cluster_distance_sums_reference(x, labels) if n else np.zeros((0, c))
    assert_close(got, want, rtol=1e-4, atol=1e-3)


@pytest.mark.gpu
def test_kernel_silhouette_matches_sklearn_and_falls_back_above_32_clusters():
    from sklearn.metrics import silhouette_score as sk_score

    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 24))
    for c in (4, 40):
        labels = np.arange(300) % c
        assert_close(silhouette_score(x, labels, "cuda"), sk_score(x, labels), rtol=1e-4, atol=1e-5)
    labelings = np.stack([np.arange(300) % 3, np.arange(300) % 5])
    for got, want in zip(
        cluster_distance_sums(x, labelings, "cuda"),
        cluster_distance_sums(x, labelings, "cpu"),
        strict=True,
    ):
        assert_close(got, want, rtol=1e-4, atol=1e-2)


@pytest.mark.gpu
def test_kernel_on_all_orderings_of_eight():
    """40,320 points, the largest size icl-order cluster computes (8! orderings)."""
    import cupy as cp

    rng = np.random.default_rng(8)
    x = rng.normal(size=(40320, 64)).astype(np.float32)
    labels = rng.integers(8, size=40320).astype(np.int32)
    got = cp.asnumpy(cluster_distance_sums_cuda(cp.asarray(x), cp.asarray(labels), 8))
    rows = rng.choice(40320, 50, replace=False)
    d = np.sqrt(((x[rows, None, :].astype(np.float64) - x[None, :, :]) ** 2).sum(-1))  # (50, n)
    want = np.stack([d[:, labels == c].sum(1) for c in range(8)], axis=1)
    assert_close(got[rows], want, rtol=1e-4, atol=1e-2)

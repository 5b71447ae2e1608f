"""Clustering metrics: the CPU silhouette path against scikit-learn, known answers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from iclr25.core.icl_order.clustering import (
    centroid_purity,
    distance_ratio,
    position_labels,
    position_metrics,
    project_2d,
    summarise_positions,
)
from iclr25.gpu.kernels.silhouette import (
    cluster_distance_sums,
    cluster_distance_sums_cpu,
    cluster_distance_sums_reference,
    silhouette_samples,
    silhouette_score,
    silhouette_score_reference,
)
from iclr25.testing import assert_close


@pytest.mark.parametrize("n,d,c", [(10, 3, 2), (37, 5, 4), (60, 16, 7), (24, 128, 4), (9, 2, 8)])
def test_silhouette_matches_sklearn(n, d, c):
    from sklearn.metrics import silhouette_samples as sk_samples
    from sklearn.metrics import silhouette_score as sk_score

    rng = np.random.default_rng(n + d + c)
    x = rng.normal(size=(n, d)) + np.repeat(rng.normal(size=(c, d)) * 2, -(-n // c), 0)[:n]
    labels = np.arange(n) % c  # includes singleton clusters when c > n / 2
    assert_close(silhouette_score(x, labels), sk_score(x, labels), rtol=1e-6, atol=1e-7)
    assert_close(silhouette_samples(x, labels), sk_samples(x, labels), rtol=1e-6, atol=1e-7)
    assert_close(silhouette_score_reference(x, labels), sk_score(x, labels), rtol=1e-9, atol=1e-12)


def test_cpu_sums_match_reference_in_blocks_and_for_several_labelings():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(23, 6))
    labelings = np.stack([rng.integers(3, size=23), rng.integers(5, size=23)])
    got = cluster_distance_sums_cpu(x, labelings, block_elems=50)  # 2 rows per block
    for lab, sums in zip(labelings, got, strict=True):
        assert_close(sums, cluster_distance_sums_reference(x, lab), rtol=1e-7, atol=1e-6)
    assert cluster_distance_sums(np.zeros((0, 3)), np.zeros((1, 0), int))[0].shape == (0, 0)


def test_known_answers_on_two_points_per_cluster():
    # clusters {0, 1} at x = 0, 1 and {2, 3} at x = 10, 11 on a line:
    # a(0) = 1, b(0) = mean(10, 11) = 10.5, s(0) = 9.5 / 10.5
    x = np.array([[0.0], [1.0], [10.0], [11.0]])
    labels = np.array([0, 0, 1, 1])
    assert_close(silhouette_samples(x, labels)[0], 9.5 / 10.5, rtol=1e-12)
    assert centroid_purity(x, labels) == 1.0
    # intra pairs: 4 ordered pairs at distance 1; inter: 8 ordered pairs, mean 10
    sums = cluster_distance_sums_reference(x, labels)
    assert_close(distance_ratio(sums, labels), 1 / 10, rtol=1e-12)


@given(st.integers(6, 30), st.integers(2, 4), st.integers(0, 10_000))
def test_silhouette_bounds_and_relabel_invariance(n, c, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    labels = np.arange(n) % c
    s = silhouette_samples(x, labels)
    assert (s >= -1 - 1e-12).all() and (s <= 1 + 1e-12).all()
    perm = rng.permutation(c)
    assert_close(silhouette_samples(x, perm[labels]), s, rtol=1e-9, atol=1e-12)
    p = centroid_purity(x, labels)
    assert 0 <= p <= 1 and p == centroid_purity(x, perm[labels])


def test_position_metrics_sees_planted_first_position_structure():
    """Embeddings that depend only on the first demonstration cluster perfectly by it."""
    import itertools

    orders = np.array(list(itertools.permutations(range(4))))  # (24, 4)
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 8)) * 10
    x = centres[orders[:, 0]] + rng.normal(size=(24, 8)) * 0.1
    metrics = position_metrics(x, orders)
    summary = {m: summarise_positions(v) for m, v in metrics.items()}
    assert summary["silhouette"]["first"] > 0.9
    assert summary["purity"]["first"] == 1.0
    assert abs(summary["silhouette"]["middle"]) < 0.2 and summary["silhouette"]["last"] < 0.2
    assert position_labels(orders).shape == (4, 24)


def test_summaries_and_projection():
    assert np.isnan(summarise_positions([0.5, 0.1])["middle"])
    assert summarise_positions([0.5, 0.2, 0.4, 0.1]) == {
        "first": 0.5,
        "last": 0.1,
        "middle": 0.30000000000000004,
    }
    coords, method = project_2d(np.random.default_rng(0).normal(size=(10, 5)))
    assert coords.shape == (10, 2) and method == "pca"
    coords, _ = project_2d(np.random.default_rng(0).normal(size=(10, 1)))
    assert coords.shape == (10, 2)


def test_cuda_request_without_cupy_uses_the_cpu_path(monkeypatch):
    import iclr25.gpu

    monkeypatch.setattr(iclr25.gpu, "get_cupy", lambda: None)
    x = np.random.default_rng(0).normal(size=(12, 3))
    labels = np.arange(12) % 3
    assert_close(silhouette_score(x, labels, "cuda"), silhouette_score(x, labels), rtol=1e-12)

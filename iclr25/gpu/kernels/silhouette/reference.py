"""Silhouette score from per-cluster distance sums: the definition and the CPU path.

Rousseeuw (1987): for sample i in cluster A, a(i) = mean distance to the other members
of A, b(i) = min over clusters B != A of the mean distance to B, s(i) = (b - a) /
max(a, b), and s(i) = 0 when A has one member (scikit-learn's convention). The
silhouette score is the mean of s(i).

Both paths go through S[i, c] = sum of distances from i to the members of c:

* ``cluster_distance_sums_reference``: the plain definition (float64, O(n^2) memory);
* ``cluster_distance_sums_cpu``: blocked rows, squared distances by the float64
  expansion, one matrix product with the one-hot labels of *several* labelings at once
  (the partitions by first, second, ..., last demonstration share the distances).
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.pairwise_sqdist.reference import (
    pairwise_sqdist_cpu,
    pairwise_sqdist_reference,
)


def check_labels(labels: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """Labels as int64 (n,) in [0, C); returns them and C."""
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"labels have shape {labels.shape}, expected ({n},)")
    if n and labels.min() < 0:
        raise ValueError("labels must be non-negative")
    return labels.astype(np.int64), int(labels.max()) + 1 if n else 0


def cluster_distance_sums_reference(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """S (n, C) by definition: sqrt of every pairwise squared distance, summed by label."""
    x = np.asarray(x, dtype=np.float64)
    labels, n_clusters = check_labels(labels, len(x))
    dist = np.sqrt(pairwise_sqdist_reference(x, x)) if len(x) else np.zeros((0, 0))
    out = np.zeros((len(x), n_clusters))
    for c in range(n_clusters):
        out[:, c] = dist[:, labels == c].sum(axis=1)
    return out


def cluster_distance_sums_cpu(
    x: np.ndarray, labelings: np.ndarray, block_elems: int = 8_000_000
) -> list[np.ndarray]:
    """[S_p (n, C_p)] for each row p of ``labelings`` (P, n), sharing the distances."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    labelings = np.atleast_2d(np.asarray(labelings))
    checked = [check_labels(lab, n) for lab in labelings]
    widths = [c for _, c in checked]
    onehot = np.zeros((n, sum(widths)))  # (n, sum C_p): all labelings side by side
    offset = 0
    for labels, width in checked:
        onehot[np.arange(n), offset + labels] = 1.0
        offset += width
    sums = np.empty((n, onehot.shape[1]))
    rows = max(1, block_elems // max(n, 1))
    for start in range(0, n, rows):
        block = np.sqrt(pairwise_sqdist_cpu(x[start : start + rows], x))  # (b, n)
        sums[start : start + rows] = block @ onehot
    splits = np.cumsum(widths)[:-1]
    return np.split(sums, splits, axis=1)


def silhouette_from_sums(sums: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-sample silhouette s (n,) from S (n, C) and the labels."""
    labels, n_clusters = check_labels(labels, len(sums))
    counts = np.bincount(labels, minlength=n_clusters).astype(np.float64)  # (C,)
    own = counts[labels]
    with np.errstate(divide="ignore", invalid="ignore"):
        a = sums[np.arange(len(sums)), labels] / (own - 1)
        means = sums / counts[None, :]  # (n, C) mean distance to each cluster
    means[np.arange(len(sums)), labels] = np.inf
    means[:, counts == 0] = np.inf
    b = means.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (b - a) / np.maximum(a, b)
    s[own <= 1] = 0.0  # singleton cluster (scikit-learn's convention)
    return np.nan_to_num(s, nan=0.0)  # a == b == 0: identical points


def silhouette_score_reference(x: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette by the definition (small inputs)."""
    return float(silhouette_from_sums(cluster_distance_sums_reference(x, labels), labels).mean())

"""How strongly prompt embeddings cluster by the demonstration at each position.

For the embeddings X (N, d) of N orderings of the same k demonstrations, position p
induces a partition: ordering o goes to the cluster of its p-th demonstration, o[p]. The
paper's clustering property (Pham et al., ICLR 2025, Sec. 3, Fig. 1 and 3a) is that the
partitions by the first and by the last position are visible in X, and the middle ones
much less. The paper shows it with UMAP plots and cluster shares; we measure it with

* ``silhouette``: mean silhouette score of the partition (Rousseeuw 1987; -1..1, higher
  = tighter, better-separated clusters);
* ``purity``: nearest-centroid purity — the share of orderings whose nearest partition
  centroid is their own cluster's (1/k ≈ chance for a structureless partition);
* ``distance_ratio``: mean intra-cluster distance / mean inter-cluster distance
  (< 1 when clusters are tighter than the cloud).

All three come from the per-cluster distance sums S[i, c] (``gpu/kernels/silhouette``)
except purity, which needs only centroids.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.pairwise_sqdist import pairwise_sqdist
from iclr25.gpu.kernels.silhouette import cluster_distance_sums, silhouette_from_sums


def position_labels(orderings: np.ndarray) -> np.ndarray:
    """(k, N) labels: row p is the demonstration at position p of each ordering."""
    return np.ascontiguousarray(np.asarray(orderings, dtype=np.int64).T)


def centroid_purity(x: np.ndarray, labels: np.ndarray) -> float:
    """Share of points whose nearest centroid (Euclidean) is their own cluster's."""
    clusters = np.unique(labels)
    centroids = np.stack([x[labels == c].mean(axis=0) for c in clusters])  # (C, d)
    nearest = clusters[pairwise_sqdist(x, centroids).argmin(axis=1)]
    return float((nearest == labels).mean())


def distance_ratio(sums: np.ndarray, labels: np.ndarray) -> float:
    """Mean intra-cluster over mean inter-cluster distance, from S (N, C)."""
    n = len(labels)
    counts = np.bincount(labels, minlength=sums.shape[1]).astype(np.float64)
    intra_total = sums[np.arange(n), labels].sum()
    intra_pairs = (counts * (counts - 1)).sum()
    inter_total = sums.sum() - intra_total
    inter_pairs = (counts * (n - counts)).sum()
    if intra_pairs == 0 or inter_pairs == 0:
        return float("nan")
    return float((intra_total / intra_pairs) / (inter_total / inter_pairs))


def position_metrics(x: np.ndarray, orderings: np.ndarray, device: str = "cpu") -> dict:
    """Per-position lists (length k) of silhouette, purity and distance ratio."""
    labels = position_labels(orderings)  # (k, N)
    sums = cluster_distance_sums(x, labels, device)
    out: dict[str, list[float]] = {"silhouette": [], "purity": [], "distance_ratio": []}
    for p, lab in enumerate(labels):
        if len(np.unique(lab)) < 2:  # e.g. a sample where one position never changes
            out["silhouette"].append(float("nan"))
            out["purity"].append(float("nan"))
            out["distance_ratio"].append(float("nan"))
            continue
        out["silhouette"].append(float(silhouette_from_sums(sums[p], lab).mean()))
        out["purity"].append(centroid_purity(x, lab))
        out["distance_ratio"].append(distance_ratio(sums[p], lab))
    return out


def summarise_positions(values: list[float]) -> dict[str, float]:
    """{"first", "last", "middle"}: middle is the mean over positions 2..k-1 (NaN if k<3)."""
    middle = values[1:-1]
    return {
        "first": values[0],
        "last": values[-1],
        "middle": float(np.mean(middle)) if middle else float("nan"),
    }


def project_2d(x: np.ndarray, method: str = "pca", seed: int = 0) -> tuple[np.ndarray, str]:
    """2-D coordinates for the plot and the method used: UMAP for "umap" or "auto" when
    umap-learn is installed (it is optional, not a dependency), else PCA (SVD)."""
    if method in ("umap", "auto") and len(x) > 15:
        try:
            import umap  # optional, not a dependency

            return umap.UMAP(random_state=seed).fit_transform(x), "umap"
        except ImportError:
            pass
    centred = x - x.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ vt[:2].T  # (N, 2)
    if coords.shape[1] < 2:
        coords = np.pad(coords, ((0, 0), (0, 2 - coords.shape[1])))
    return coords, "pca"

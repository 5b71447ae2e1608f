"""Silhouette scores: a tiled CUDA kernel for the per-cluster distance sums, and CPU paths.

The O(n^2 d) part of the silhouette, S[i, c] = sum of distances from point i to the
members of cluster c, is computed by ``kernel.cu`` on the GPU (float32) or by
``reference.cluster_distance_sums_cpu`` (float64, blocked, several labelings at once);
``silhouette_from_sums`` turns S into per-sample silhouettes. Both paths are tested
against scikit-learn's ``silhouette_score``. Used by ``icl-order cluster`` on up to
8! = 40,320 prompt embeddings.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.silhouette.reference import (
    check_labels,
    cluster_distance_sums_cpu,
    cluster_distance_sums_reference,
    silhouette_from_sums,
    silhouette_score_reference,
)
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="silhouette",
    package=__name__,
    description="per-cluster sums of pairwise distances for silhouette scores (fp32)",
)
TILE = 64  # must match include/sqdist_tile.cuh
CMAX = 32  # must match kernel.cu


def cluster_distance_sums_cuda(x, labels, n_clusters: int):
    """The kernel on CuPy arrays: S (n, n_clusters) float32 (CuPy)."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    if n_clusters > CMAX:
        raise ValueError(f"the kernel holds at most {CMAX} clusters, got {n_clusters}")
    x = cp.ascontiguousarray(cp.asarray(x, dtype=cp.float32))  # (n, d)
    labels = cp.ascontiguousarray(cp.asarray(labels, dtype=cp.int32))  # (n,)
    n, d = x.shape
    out = cp.zeros((n, n_clusters), dtype=cp.float32)
    if n == 0 or n_clusters == 0:
        return out
    kernel = load_module(SPEC.name).get_function("silhouette_sums_f32")
    grid = ((n + TILE - 1) // TILE,)
    kernel(grid, (16, 16), (x, labels, out, np.int32(n), np.int32(d), np.int32(n_clusters)))
    return out


def cluster_distance_sums(x, labelings, device: str = "cpu") -> list[np.ndarray]:
    """[S_p (n, C_p)] for each labeling; the kernel on ``device="cuda"`` when CuPy is
    installed (labelings with more than 32 clusters use the CPU path)."""
    from iclr25.gpu import get_cupy

    labelings = np.atleast_2d(np.asarray(labelings))
    cp = get_cupy() if device == "cuda" else None
    if cp is None:  # CPU, or CUDA through torch without CuPy: the float64 CPU path
        return cluster_distance_sums_cpu(x, labelings)
    x_dev = cp.asarray(np.asarray(x, dtype=np.float32))
    out = []
    for labels in labelings:
        labels, width = check_labels(labels, len(x))
        if width > CMAX:
            out.extend(cluster_distance_sums_cpu(x, labels[None, :]))
            continue
        sums = cluster_distance_sums_cuda(x_dev, labels, width)
        out.append(cp.asnumpy(sums).astype(np.float64))
    return out


def silhouette_samples(x, labels, device: str = "cpu") -> np.ndarray:
    """Per-sample silhouettes (n,)."""
    (sums,) = cluster_distance_sums(x, np.asarray(labels)[None, :], device)
    return silhouette_from_sums(sums, labels)


def silhouette_score(x, labels, device: str = "cpu") -> float:
    """Mean silhouette, as scikit-learn's ``silhouette_score`` (euclidean)."""
    return float(silhouette_samples(x, labels, device).mean())


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: the kernel against torch.cdist + one-hot matmul, float32."""
    from iclr25.gpu.hotpath import HotPathCase

    sizes = [(5040, 128, 7)] if quick else [(5040, 128, 7), (40320, 128, 8)]

    def make(n: int, d: int, c: int):
        def setup():
            import cupy as cp
            import torch

            rng = np.random.default_rng(0)
            x_np = rng.normal(size=(n, d)).astype(np.float32)
            lab_np = rng.integers(c, size=n).astype(np.int32)
            x, lab = cp.asarray(x_np), cp.asarray(lab_np)
            xt = torch.from_numpy(x_np).cuda()
            onehot = torch.nn.functional.one_hot(torch.from_numpy(lab_np).long(), c).float().cuda()
            return (
                lambda: cluster_distance_sums_cuda(x, lab, c),
                lambda: torch.cdist(xt, xt) @ onehot,
            )

        return HotPathCase(
            SPEC.name,
            f"n={n} d={d} C={c}",
            3.0 * n * n * d,
            "torch.cdist + one-hot matmul",
            setup,
            rtol=1e-3,
            atol=1e-1,
        )

    return [make(*size) for size in sizes]


__all__ = [
    "SPEC",
    "cluster_distance_sums",
    "cluster_distance_sums_cuda",
    "cluster_distance_sums_cpu",
    "cluster_distance_sums_reference",
    "silhouette_from_sums",
    "silhouette_samples",
    "silhouette_score",
    "silhouette_score_reference",
    "hot_path_cases",
]

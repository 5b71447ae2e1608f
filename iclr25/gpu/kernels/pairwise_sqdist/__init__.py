"""Pairwise squared Euclidean distances: a tiled CUDA kernel and its CPU paths.

Used by the clustering metrics of ``icl-order`` and by kernel two-sample statistics.
``pairwise_sqdist(x, y)`` picks the CUDA kernel when CuPy sees a device, else the CPU
path; both are tested against :func:`reference.pairwise_sqdist_reference`.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.pairwise_sqdist.reference import (
    pairwise_sqdist_cpu,
    pairwise_sqdist_reference,
)
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="pairwise_sqdist",
    package=__name__,
    description="tiled pairwise squared Euclidean distances (fp32, 64x64 tiles)",
)
TILE = 64  # must match include/sqdist_tile.cuh


def pairwise_sqdist_cuda(x, y):
    """The CUDA kernel on CuPy arrays; returns a CuPy float32 array of shape (n, m)."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    x = cp.ascontiguousarray(cp.asarray(x, dtype=cp.float32))  # (n, d)
    y = cp.ascontiguousarray(cp.asarray(y, dtype=cp.float32))  # (m, d)
    n, d = x.shape
    m = y.shape[0]
    out = cp.empty((n, m), dtype=cp.float32)
    if n == 0 or m == 0:
        return out
    kernel = load_module(SPEC.name).get_function("pairwise_sqdist_f32")
    grid = ((m + TILE - 1) // TILE, (n + TILE - 1) // TILE)
    kernel(grid, (16, 16), (x, y, out, np.int32(n), np.int32(m), np.int32(d)))
    return out


def pairwise_sqdist(x, y=None, device: str = "cpu") -> np.ndarray:
    """Squared distances between rows of ``x`` and rows of ``y`` (``x`` itself if None).

    ``device="cuda"`` uses the kernel (float32); otherwise the float64 CPU path."""
    y = x if y is None else y
    if device == "cuda":
        return pairwise_sqdist_cuda(x, y).get().astype(np.float64)
    return pairwise_sqdist_cpu(x, y)


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: the kernel against ``torch.cdist`` squared, float32 on the device."""
    from iclr25.gpu.hotpath import HotPathCase

    sizes = [(4096, 4096, 128)] if quick else [(4096, 4096, 128), (40320, 4096, 128)]

    def make(n: int, m: int, d: int):
        def setup():
            import cupy as cp
            import torch

            rng = np.random.default_rng(0)
            x_np = rng.normal(size=(n, d)).astype(np.float32)
            y_np = rng.normal(size=(m, d)).astype(np.float32)
            x, y = cp.asarray(x_np), cp.asarray(y_np)
            xt, yt = torch.from_numpy(x_np).cuda(), torch.from_numpy(y_np).cuda()
            return (lambda: pairwise_sqdist_cuda(x, y)), (lambda: torch.cdist(xt, yt).square())

        return HotPathCase(
            SPEC.name, f"n={n} m={m} d={d}", 3.0 * n * m * d, "torch.cdist (squared)", setup
        )

    return [make(*size) for size in sizes]


__all__ = [
    "SPEC",
    "pairwise_sqdist",
    "pairwise_sqdist_cuda",
    "pairwise_sqdist_cpu",
    "pairwise_sqdist_reference",
    "hot_path_cases",
]

"""Gaussian-kernel sums for MMD over 10^4–10^5 samples: a CUDA kernel and its CPU paths.

``rbf_kernel_sums(x, y, gammas, device)`` returns S_b = Σ_ij exp(-γ_b ‖x_i - y_j‖²) for
each γ_b (float64 array): the CUDA kernel (float32 pairs, float64 totals) when
``device="cuda"`` and CuPy sees a device, the tiled torch path otherwise. Both are tested
against :func:`reference.rbf_kernel_sums_reference`; the MMD itself is assembled in
``iclr25.core.diffusion_at.metrics``.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.mmd.reference import rbf_kernel_sums_reference, rbf_kernel_sums_tiled
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="mmd",
    package=__name__,
    description="Gaussian-kernel sums for MMD (fp32 pairs, fp64 totals, 64x64 tiles)",
)
TILE = 64  # must match include/sqdist_tile.cuh
MAX_BW = 8  # must match kernel.cu


def rbf_kernel_sums_cuda(x, y, gammas):
    """The CUDA kernel on CuPy (or array-like) inputs; returns a CuPy float64 array (nb,)."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    x = cp.ascontiguousarray(cp.asarray(x, dtype=cp.float32))  # (n, d)
    y = cp.ascontiguousarray(cp.asarray(y, dtype=cp.float32))  # (m, d)
    g = cp.ascontiguousarray(cp.asarray(np.atleast_1d(gammas), dtype=cp.float32))  # (nb,)
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[1]:
        raise ValueError(f"x and y must be (n, d) and (m, d), got {x.shape} and {y.shape}")
    if not 1 <= g.shape[0] <= MAX_BW:
        raise ValueError(f"between 1 and {MAX_BW} bandwidths, got {g.shape[0]}")
    n, d = x.shape
    m = y.shape[0]
    out = cp.zeros(g.shape[0], dtype=cp.float64)
    if n == 0 or m == 0:
        return out
    kernel = load_module(SPEC.name).get_function("rbf_kernel_sums_f32")
    grid = ((m + TILE - 1) // TILE, (n + TILE - 1) // TILE)
    args = (x, y, g, np.int32(g.shape[0]), out, np.int32(n), np.int32(m), np.int32(d))
    kernel(grid, (16, 16), args)
    return out


def rbf_kernel_sums(x, y, gammas, device: str = "cpu") -> np.ndarray:
    """S_b for every γ_b: the CUDA kernel on ``device="cuda"`` (CuPy), else tiled torch."""
    from iclr25.gpu import get_cupy

    if device == "cuda" and get_cupy() is not None and len(np.atleast_1d(gammas)) <= MAX_BW:
        return rbf_kernel_sums_cuda(x, y, gammas).get()
    return rbf_kernel_sums_tiled(x, y, gammas, device="cuda" if device == "cuda" else "cpu")


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: the kernel against the tiled torch path in float32 on the device."""
    from iclr25.gpu.hotpath import HotPathCase

    gammas = np.array([0.5, 2.0, 8.0])
    sizes = (
        [(10_000, 10_000, 2)]
        if quick
        else [(10_000, 10_000, 2), (100_000, 100_000, 2), (20_000, 20_000, 64)]
    )

    def make(n: int, m: int, d: int):
        def setup():
            import cupy as cp
            import torch

            rng = np.random.default_rng(0)
            x_np = rng.normal(size=(n, d)).astype(np.float32)
            y_np = (rng.normal(size=(m, d)) + 0.1).astype(np.float32)
            x, y = cp.asarray(x_np), cp.asarray(y_np)
            xt, yt = torch.from_numpy(x_np).cuda(), torch.from_numpy(y_np).cuda()

            def ours():
                return rbf_kernel_sums_cuda(x, y, gammas)

            def reference():
                sums = rbf_kernel_sums_tiled(
                    xt, yt, gammas, block=8192, dtype=torch.float32, device="cuda"
                )
                return torch.from_numpy(sums).cuda()

            return ours, reference

        flops = float(n) * m * (3 * d + 3 * len(gammas))
        return HotPathCase(
            SPEC.name,
            f"n={n} m={m} d={d} bandwidths={len(gammas)}",
            flops,
            "tiled torch (cdist expansion + exp + sum)",
            setup,
            rtol=1e-3,
            atol=1e-2,
        )

    return [make(*size) for size in sizes]


__all__ = [
    "SPEC",
    "rbf_kernel_sums",
    "rbf_kernel_sums_cuda",
    "rbf_kernel_sums_tiled",
    "rbf_kernel_sums_reference",
    "hot_path_cases",
]

"""Fused CSR SpMM + tanh, Y = tanh(C + A X): a CUDA kernel and its references.

The pre-activation of one half of ∇H in a PH-DGN step is Z = s Wᵀ + b + A (s Vᵀ), then
σ = tanh(Z) (iclr25/core/ph_dgn/phdgn.py); the dense products stay with cuBLAS, and this
kernel fuses the sparse product with the add and the tanh (one pass over Y instead of
three). ``csr_spmm_tanh_cuda`` runs it on CuPy arrays (or CUDA torch tensors). The
model's ∇H forward (iclr25/core/ph_dgn/hamiltonian_grad.py) calls it on CUDA float32
states when switched on (``use_cuda_kernel(True)`` or ``ICLR25_PH_DGN_CUDA_KERNEL=1``);
off by default, so ``csr_spmm_tanh_torch`` (the torch.sparse path) is what ships: issue
28 ships the kernel only if it is ≥ 1.2× faster than torch.sparse at n ≥ 10⁵, which needs
a CUDA device to measure (``iclr25 gpu-bench`` times :func:`hot_path_cases`). Tested
against :func:`reference.csr_spmm_tanh_reference`. Imports nothing from ``iclr25.core``.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.csr_spmm_tanh.reference import (
    csr_spmm_tanh_reference,
    csr_spmm_tanh_torch,
)
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="csr_spmm_tanh",
    package=__name__,
    description="fused CSR SpMM + add + tanh (one warp per row, features in registers)",
)
WARPS_PER_BLOCK = 8  # must match kernel.cu
MAX_D = 256  # 32 lanes × PER_LANE in kernel.cu


def csr_spmm_tanh_cuda(crow, col, val, x, c):
    """tanh(c + A x) by the kernel; inputs numpy or CuPy, returns a CuPy float32 (n, d)."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    crow = cp.ascontiguousarray(cp.asarray(crow, dtype=cp.int32))  # (n + 1,)
    col = cp.ascontiguousarray(cp.asarray(col, dtype=cp.int32))  # (nnz,)
    val = cp.ascontiguousarray(cp.asarray(val, dtype=cp.float32))  # (nnz,)
    x = cp.ascontiguousarray(cp.asarray(x, dtype=cp.float32))  # (n, d)
    c = cp.ascontiguousarray(cp.asarray(c, dtype=cp.float32))  # (n, d)
    n = crow.shape[0] - 1
    if x.ndim != 2 or x.shape[0] != n or c.shape != x.shape:
        raise ValueError(f"x and c must be (n, d) with n = {n}, got {x.shape} and {c.shape}")
    d = x.shape[1]
    if d > MAX_D:
        raise ValueError(f"d = {d} features; the kernel holds at most {MAX_D} per row")
    out = cp.empty_like(c)
    if n == 0 or d == 0:
        return out
    kernel = load_module(SPEC.name).get_function("csr_spmm_tanh_f32")
    grid = ((n + WARPS_PER_BLOCK - 1) // WARPS_PER_BLOCK,)
    kernel(grid, (32 * WARPS_PER_BLOCK,), (crow, col, val, x, c, out, np.int32(n), np.int32(d)))
    return out


def random_csr(n: int, degree: int, seed: int = 0):
    """A random CSR matrix (n, n) with ``degree`` nonzeros per row (numpy, sorted rows)."""
    rng = np.random.default_rng(seed)
    crow = np.arange(0, n * degree + 1, degree, dtype=np.int64)  # (n + 1,)
    col = np.sort(rng.integers(0, n, size=(n, degree)), axis=1).reshape(-1)  # (nnz,)
    val = rng.normal(size=n * degree).astype(np.float32)
    return crow, col, val


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: the kernel against torch.sparse (SpMM, add, tanh) in float32."""
    from iclr25.gpu.hotpath import HotPathCase

    sizes = [(100_000, 8, 64)] if quick else [(10_000, 8, 64), (100_000, 8, 64), (1_000_000, 8, 64)]

    def make(n: int, degree: int, d: int):
        def setup():
            import cupy as cp
            import torch

            crow, col, val = random_csr(n, degree)
            rng = np.random.default_rng(1)
            x_np = rng.normal(size=(n, d)).astype(np.float32)
            c_np = rng.normal(size=(n, d)).astype(np.float32)
            args = [cp.asarray(a) for a in (crow, col, val, x_np, c_np)]
            a = torch.sparse_csr_tensor(
                *(torch.from_numpy(t).cuda() for t in (crow, col, val)),
                (n, n),
                check_invariants=False,  # valid by construction; the timed side
            )
            xt, ct = torch.from_numpy(x_np).cuda(), torch.from_numpy(c_np).cuda()

            def ours():
                return csr_spmm_tanh_cuda(*args)

            def reference():
                return torch.tanh(ct + a @ xt)

            return ours, reference

        return HotPathCase(
            SPEC.name,
            f"n={n} degree={degree} d={d}",
            float(2 * n * degree * d + 2 * n * d),
            "torch.sparse CSR SpMM + add + tanh",
            setup,
            rtol=1e-4,
            atol=1e-4,
        )

    return [make(*size) for size in sizes]


__all__ = [
    "SPEC",
    "csr_spmm_tanh_cuda",
    "csr_spmm_tanh_reference",
    "csr_spmm_tanh_torch",
    "hot_path_cases",
    "random_csr",
]

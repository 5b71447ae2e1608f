"""Entropic WDRO log-sum-exp over n × m Monte Carlo samples: a CUDA kernel and CPU paths.

``lse_rows(L, C, lam, eps)`` returns, per row, log of the mean of exp((L − λC)/ε) and the
softmax-weighted transport cost (the λ-derivative). The hot path of the entropic robust
risk (:mod:`iclr25.core.dro_bound.entropic`): one call per λ of the 1-D dual search.
The CUDA kernel (float32, CuPy) is tested against :func:`reference.lse_rows_reference`;
so is the torch path used on CPU.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.dro_logsumexp.reference import lse_rows_reference, lse_rows_torch
from iclr25.gpu.loading import load_module
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="dro_logsumexp",
    package=__name__,
    description="row-wise stable log-mean-exp and softmax-weighted cost (entropic WDRO)",
)
THREADS = 256  # must match kernel.cu
MAX_BLOCKS = 65535


def lse_rows_cuda(L, C, lam: float, eps: float):
    """The CUDA kernel on CuPy arrays (cast to float32): returns (lse (n,), wc (n,))."""
    from iclr25.gpu import get_cupy

    cp = get_cupy()
    L = cp.ascontiguousarray(cp.asarray(L, dtype=cp.float32))  # (n, m)
    C = cp.ascontiguousarray(cp.asarray(C, dtype=cp.float32))  # (n, m)
    if L.shape != C.shape or L.ndim != 2:
        raise ValueError(f"L and C must be (n, m) arrays of one shape: {L.shape} vs {C.shape}")
    n, m = L.shape
    lse = cp.empty(n, dtype=cp.float32)
    wc = cp.empty(n, dtype=cp.float32)
    if n == 0:
        return lse, wc
    kernel = load_module(SPEC.name).get_function("dro_lse_rows_f32")
    blocks = min(n, MAX_BLOCKS)
    args = (L, C, np.int32(n), np.int32(m), np.float32(lam), np.float32(1.0 / eps), lse, wc)
    kernel((blocks,), (THREADS,), args)
    return lse, wc


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: the kernel against torch.logsumexp + softmax on the device."""
    from iclr25.gpu.hotpath import HotPathCase

    sizes = [(20000, 512)] if quick else [(20000, 512), (100000, 1024)]

    def make(n: int, m: int):
        def setup():
            import cupy as cp
            import torch

            rng = np.random.default_rng(0)
            L_np = rng.normal(size=(n, m)).astype(np.float32)
            C_np = rng.exponential(size=(n, m)).astype(np.float32)
            L, C = cp.asarray(L_np), cp.asarray(C_np)
            Lt, Ct = torch.from_numpy(L_np).cuda(), torch.from_numpy(C_np).cuda()

            def ours():
                lse, wc = lse_rows_cuda(L, C, 0.7, 0.1)
                return cp.concatenate([lse, wc])

            def reference():
                lse, wc = lse_rows_torch(Lt, Ct, 0.7, 0.1)
                return torch.cat([lse, wc])

            return ours, reference

        return HotPathCase(
            SPEC.name,
            f"n={n} m={m}",
            7.0 * n * m,
            "torch.logsumexp + softmax",
            setup,
            rtol=1e-4,
            atol=1e-4,
        )

    return [make(*size) for size in sizes]


__all__ = ["SPEC", "lse_rows_cuda", "lse_rows_reference", "lse_rows_torch", "hot_path_cases"]

"""GEMM on tensor cores: C = A @ B for bf16 / fp16 inputs, fp32 accumulation (kernel.cu).

``gemm(a, b)`` takes torch CUDA tensors (row-major, any leading dimension) and returns a
new (M, N) tensor of the inputs' dtype. On an sm_90 (Hopper) device with nvcc, shapes that
the 128 x 256 x 64 tile divides go to the TMA + wgmma kernel
(:mod:`iclr25.gpu.kernels.gemm_wgmma`, 0.84-0.88 of cuBLAS at 4096^3 on an H200, against
this kernel's 0.36-0.40); :func:`gemm_path` says which kernel a call takes. Tested against
:func:`reference.gemm_reference` (fp32 torch) in tests/gpu/test_gemm_bf16.py.
"""

from __future__ import annotations

import numpy as np

from iclr25.gpu.kernels.gemm_bf16.reference import gemm_reference, gemm_tolerance
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="gemm_bf16",
    package=__name__,
    description="bf16/fp16 GEMM, mma.sync m16n8k16, 128x128x32 tiles, 4-stage cp.async",
)
# Must match kernel.cu.
BM, BN, BK, STAGES, THREADS = 128, 128, 32, 4, 256
SMEM_BYTES = STAGES * (BM * BK + BK * BN) * 2
FUNCTIONS = {"bfloat16": "gemm_bf16", "float16": "gemm_f16"}


def launch_grid(m: int, n: int) -> tuple[int, int, int]:
    """One block per 128 x 128 output tile, in a 1-D grid (the kernel orders the tiles)."""
    return (-(-m // BM) * -(-n // BN), 1, 1)


def gemm(a, b, *, kernel: str = "auto"):
    """``a @ b`` with the tile kernels: a (M, K), b (K, N), both bf16 or both fp16 on CUDA.

    ``kernel``: ``"auto"`` (:func:`gemm_path`), ``"mma.sync"`` (this package's kernel, any
    shape and sm_80+) or ``"wgmma"`` (ValueError where it does not apply)."""
    import torch

    from iclr25.gpu.launch import kernel_function, launch, ptr, require_cuda_tensors

    if kernel not in ("auto", "mma.sync", "wgmma"):
        raise ValueError(f"kernel must be auto, mma.sync or wgmma, not {kernel!r}")
    require_cuda_tensors({"a": a, "b": b}, (torch.bfloat16, torch.float16))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm needs (M, K) @ (K, N); got {tuple(a.shape)} @ {tuple(b.shape)}")
    a = a if a.stride(1) == 1 and a.stride(0) >= max(1, a.shape[1]) else a.contiguous()
    b = b if b.stride(1) == 1 and b.stride(0) >= max(1, b.shape[1]) else b.contiguous()
    path = gemm_path(a, b) if kernel == "auto" else kernel
    if path == "wgmma":
        from iclr25.gpu.kernels import gemm_wgmma

        if kernel == "wgmma" and not (gemm_wgmma.applies(a, b) and gemm_wgmma.available()):
            raise ValueError(
                "the wgmma kernel needs an sm_90 device, nvcc, and M, N, K multiples of "
                f"128, 256, 64 with 16-byte aligned rows; got {tuple(a.shape)} @ {tuple(b.shape)}"
            )
        return gemm_wgmma.gemm_wgmma(a, b)
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    if m == 0 or n == 0:
        return c
    if k == 0:
        return c.zero_()
    lda, ldb = a.stride(0), b.stride(0)
    vec_ok = lda % 8 == 0 and ldb % 8 == 0 and a.data_ptr() % 16 == 0 and b.data_ptr() % 16 == 0
    pair_ok = n % 2 == 0
    fn = kernel_function(SPEC.name, FUNCTIONS[str(a.dtype).removeprefix("torch.")])
    args = (ptr(a), ptr(b), ptr(c), np.int32(m), np.int32(n), np.int32(k), np.int64(lda))
    args += (np.int64(ldb), np.int64(n), np.int32(vec_ok), np.int32(pair_ok))
    launch(fn, launch_grid(m, n), (THREADS, 1, 1), args, SMEM_BYTES, a.device)
    return c


def gemm_path(a, b) -> str:
    """``"wgmma"`` when :func:`gemm` hands ``a @ b`` to the Hopper kernel, else ``"mma.sync"``
    (``a`` and ``b`` as gemm() passes them on: row-major with unit column stride)."""
    from iclr25.gpu.kernels import gemm_wgmma

    return "wgmma" if gemm_wgmma.applies(a, b) and gemm_wgmma.available() else "mma.sync"


def hot_path_cases(quick: bool) -> list:
    """gpu-bench cases: bf16 GEMM against cuBLAS (``torch.matmul``)."""
    from iclr25.gpu.flops import gemm_flops
    from iclr25.gpu.hotpath import HotPathCase

    sizes = [4096] if quick else [2048, 4096, 8192]

    def make(s: int) -> HotPathCase:
        def setup():
            import torch

            gen = torch.Generator(device="cuda").manual_seed(0)
            a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16, generator=gen)
            b = torch.randn(s, s, device="cuda", dtype=torch.bfloat16, generator=gen)
            return (lambda: gemm(a, b)), (lambda: torch.matmul(a, b))

        rtol, atol = gemm_tolerance("bfloat16", s)
        return HotPathCase(
            SPEC.name,
            f"M=N=K={s} bf16",
            gemm_flops(s, s, s),
            "cuBLAS (torch.matmul)",
            setup,
            rtol=rtol,
            atol=atol,
        )

    return [make(s) for s in sizes]


__all__ = [
    "SPEC",
    "gemm",
    "gemm_path",
    "gemm_reference",
    "gemm_tolerance",
    "hot_path_cases",
    "launch_grid",
]

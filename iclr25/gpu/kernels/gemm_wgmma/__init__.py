"""GEMM on Hopper: C = A @ B with TMA loads and warp-specialised ``wgmma`` (kernel.cu).

The fast path of :func:`iclr25.gpu.kernels.gemm_bf16.gemm` on sm_90 devices, for shapes the
128 x 256 x 64 tile divides (:func:`applies`); every other shape and device takes the
mma.sync kernel. The kernel targets sm_90a (wgmma, setmaxnreg), which CuPy's NVRTC path
cannot request, so it is built with nvcc into a cached cubin: without nvcc, or when the
build fails, :func:`available` is False and gemm() stays on mma.sync. The TMA tensor maps
of A and B come from :mod:`iclr25.gpu.tensor_map`. Tested against
:func:`iclr25.gpu.kernels.gemm_bf16.reference.gemm_reference` in tests/gpu/test_gemm_wgmma.py.
"""

from __future__ import annotations

import functools

import numpy as np

from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="gemm_wgmma",
    package=__name__,
    description="bf16/fp16 GEMM, TMA + wgmma m64n256k16, producer/2 consumer warpgroups, 4 stages",
    archs=("sm_90a",),
    skip_reason="TMA and wgmma are Hopper-only (sm_90a)",
)
# Must match kernel.cu.
BM, BN, BK, STAGES, THREADS = 128, 256, 64, 4, 384


def smem_bytes(stages: int = STAGES) -> int:
    """Dynamic shared memory of a build with ``stages`` (-DGEMM_STAGES): the stage ring,
    1 KiB to align it for the 128-byte swizzle, and 2 x stages mbarriers."""
    return stages * (BM * BK + BK * BN) * 2 + 1024 + 16 * stages


SMEM_BYTES = smem_bytes()
FUNCTIONS = {"bfloat16": "gemm_wgmma_bf16", "float16": "gemm_wgmma_f16"}
#: TMA boxes (columns, rows): A tiles of 128 rows x 64 k; B strips of 64 k-rows x 64 columns
BOX_A, BOX_B = (BK, BM), (64, BK)


def applies(a, b) -> bool:
    """Whether the wgmma kernel can take ``a @ b``: an sm_90 device, 16-bit row-major inputs
    of one dtype with 16-byte aligned rows, and M, N, K multiples of 128, 256 and 64."""
    import torch

    if not (a.is_cuda and b.is_cuda) or a.device != b.device or a.dtype != b.dtype:
        return False
    if a.dtype not in (torch.bfloat16, torch.float16) or a.ndim != 2 or b.ndim != 2:
        return False
    if a.shape[1] != b.shape[0] or torch.cuda.get_device_capability(a.device) != (9, 0):
        return False
    (m, k), n = a.shape, b.shape[1]
    if m == 0 or n == 0 or k == 0 or m % BM or n % BN or k % BK:
        return False
    return all(t.stride(1) == 1 and t.stride(0) % 8 == 0 and t.data_ptr() % 16 == 0 for t in (a, b))


@functools.cache
def available() -> bool:
    """Whether the kernel can be built and loaded here (nvcc for sm_90a); checked once."""
    from iclr25.gpu.launch import kernel_function

    try:
        kernel_function(SPEC.name, FUNCTIONS["bfloat16"])
    except Exception as exc:  # noqa: BLE001 - no nvcc, failed build: gemm() keeps mma.sync
        import warnings

        warnings.warn(f"the wgmma GEMM is unavailable ({exc}); using mma.sync", stacklevel=2)
        return False
    return True


def gemm_wgmma(a, b):
    """``a @ b`` with the TMA + wgmma kernel; the caller checks :func:`applies` first."""
    from iclr25.gpu.launch import kernel_function

    fn = kernel_function(SPEC.name, FUNCTIONS[str(a.dtype).removeprefix("torch.")])
    return launch_gemm(fn, a, b)


def launch_gemm(fn, a, b, stages: int = STAGES):
    """Run a build ``fn`` of kernel.cu (built with ``stages``) on ``a @ b``; a new C."""
    import torch

    from iclr25.gpu.launch import launch, ptr
    from iclr25.gpu.tensor_map import device_map

    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    map_a, map_b = device_map(a, *BOX_A), device_map(b, *BOX_B)
    args = (ptr(map_a), ptr(map_b), ptr(c), np.int32(m), np.int32(n), np.int32(k), np.int64(n))
    grid = ((m // BM) * (n // BN), 1, 1)
    launch(fn, grid, (THREADS, 1, 1), args, smem_bytes(stages), a.device)
    return c


__all__ = ["SPEC", "applies", "available", "gemm_wgmma", "launch_gemm", "smem_bytes"]

"""GEMM on Hopper, the first version: C = A @ B with TMA loads and warp-specialised
``wgmma`` (kernel.cu), one block per 128 x 256 tile, tile-divisible shapes only.

Superseded by :mod:`iclr25.gpu.kernels.gemm_hopper` (persistent, any shape, transposed
operands, TMA stores, clusters) and kept as its fallback: this kernel's algorithm was
measured on an H200 (0.84-0.88 of cuBLAS at 4096^3 through scripts/gemm_variants.py, which
then synchronised after every call; see docs/gpu-bench.md). Its tensor maps are now
by-value ``__grid_constant__`` parameters launched through :mod:`iclr25.gpu.driver`, so
like gemm_hopper it is used on a device only after :func:`self_check` passed there
(:mod:`iclr25.gpu.selfcheck`). Tested against
:func:`iclr25.gpu.kernels.gemm_bf16.reference.gemm_reference` in tests/gpu/test_gemm_wgmma.py.
"""

from __future__ import annotations

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


def applies(a, b) -> str | None:
    """Why this kernel cannot take ``a @ b`` (None when it can): an sm_90 device, 16-bit
    row-major inputs of one dtype with 16-byte aligned rows, M, N, K multiples of 128, 256
    and 64."""
    import torch

    if not (a.is_cuda and b.is_cuda) or a.device != b.device or a.dtype != b.dtype:
        return "inputs must be CUDA tensors of one dtype on one device"
    if a.dtype not in (torch.bfloat16, torch.float16) or a.ndim != 2 or b.ndim != 2:
        return "needs 2-D bf16 or fp16 inputs"
    if a.shape[1] != b.shape[0] or torch.cuda.get_device_capability(a.device) != (9, 0):
        return "needs an sm_90 (Hopper) device and chaining shapes"
    (m, k), n = a.shape, b.shape[1]
    if m == 0 or n == 0 or k == 0 or m % BM or n % BN or k % BK:
        return f"M, N, K must be multiples of {BM}, {BN}, {BK}"
    if not all(
        t.stride(1) == 1 and t.stride(0) % 8 == 0 and t.data_ptr() % 16 == 0 for t in (a, b)
    ):
        return "needs row-major inputs with 16-byte aligned rows"
    return None


def gemm_wgmma(a, b):
    """``a @ b`` with the TMA + wgmma kernel; the caller checks :func:`applies` first."""
    from iclr25.gpu.compile import cubin_path

    return launch_gemm(cubin_path(SPEC.name, "sm_90a"), a, b)


def launch_gemm(cubin, a, b, stages: int = STAGES):
    """Run a build (``cubin``, built with ``stages``) of kernel.cu on ``a @ b``; a new C."""
    import torch

    from iclr25.gpu import driver, tensor_map

    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), dtype=a.dtype, device=a.device)
    index = a.device.index if a.device.index is not None else torch.cuda.current_device()
    name = FUNCTIONS[str(a.dtype).removeprefix("torch.")]
    fn = driver.function(cubin, name, index, smem_bytes(stages))
    params = [
        tensor_map.param(a, *BOX_A),
        tensor_map.param(b, *BOX_B),
        driver.u64(c.data_ptr()),
        driver.i32(m),
        driver.i32(n),
        driver.i32(k),
        driver.i64(n),
    ]
    grid = ((m // BM) * (n // BN), 1, 1)
    stream = torch.cuda.current_stream(a.device).cuda_stream
    driver.launch(fn, grid, (THREADS, 1, 1), params, smem_bytes(stages), stream)
    return c


#: one tile; several tiles; k-tiles below, at and above the 4-stage ring; a long K
SELF_CHECKS = ((128, 256, 64), (256, 512, 128), (384, 768, 320), (128, 256, 640), (256, 256, 4096))


def self_check(index: int) -> list[str]:
    """Every shape of :data:`SELF_CHECKS` (bf16, and fp16 for the first two) against the
    fp32 product on device ``index``; raises SelfCheckFailed on the first mismatch."""
    import torch

    from iclr25.gpu.kernels.gemm_bf16.reference import gemm_reference, gemm_tolerance
    from iclr25.gpu.selfcheck import SelfCheckFailed

    done = []
    with torch.cuda.device(index):
        cases = [(s, torch.bfloat16) for s in SELF_CHECKS]
        cases += [(s, torch.float16) for s in SELF_CHECKS[:2]]
        for (m, n, k), dtype in cases:
            gen = torch.Generator(device="cuda").manual_seed(m + n + k)
            a = torch.randn(m, k, device="cuda", dtype=dtype, generator=gen)
            b = torch.randn(k, n, device="cuda", dtype=dtype, generator=gen)
            got, expected = gemm_wgmma(a, b).float(), gemm_reference(a, b)
            rtol, atol = gemm_tolerance(dtype, k)
            bad = (got - expected).abs() > atol + rtol * expected.abs()
            if bad.any() or not torch.isfinite(got).all():
                raise SelfCheckFailed(f"{m}x{n}x{k} {dtype}: {int(bad.sum())} elements off")
            done.append(f"{m}x{n}x{k} {str(dtype).removeprefix('torch.')}")
    return done


__all__ = ["SPEC", "applies", "gemm_wgmma", "launch_gemm", "self_check", "smem_bytes"]

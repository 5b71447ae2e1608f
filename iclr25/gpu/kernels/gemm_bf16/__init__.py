"""GEMM on tensor cores: C = A @ B for bf16 / fp16 inputs, fp32 accumulation (kernel.cu).

``gemm(a, b)`` takes torch CUDA tensors and returns a new (M, N) tensor of the inputs'
dtype. On an sm_90 (Hopper) device with nvcc it runs the persistent Hopper kernel
(:mod:`iclr25.gpu.kernels.gemm_hopper`: any shape TMA can read, transposed operands without
a copy), else the first Hopper kernel (:mod:`iclr25.gpu.kernels.gemm_wgmma`,
tile-divisible shapes), each only after it passed its self-check on the device
(:mod:`iclr25.gpu.selfcheck`); everything else runs this package's mma.sync kernel.
:func:`gemm_plan` says which kernel a call takes and why not a faster one. Tested against
:func:`reference.gemm_reference` (fp32 torch) in tests/gpu/test_gemm_bf16.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.gpu.kernels.gemm_bf16.reference import (
    gemm_reference,
    gemm_rms_tolerance,
    gemm_tolerance,
)
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


#: what ``gemm(kernel=...)`` accepts, by kernel package
KERNELS = {"hopper": "gemm_hopper", "wgmma": "gemm_wgmma", "mma.sync": "gemm_bf16"}


@dataclass(frozen=True)
class GemmPlan:
    """The kernel :func:`gemm` runs for a pair of inputs, and why not a faster one."""

    kernel: str  # "gemm_hopper", "gemm_wgmma" or "gemm_bf16" (mma.sync)
    #: on an sm_90 device: why each faster kernel was not taken (shape, layout, a failed
    #: self-check); empty when the fastest kernel runs or the device has no other kernel
    reason: str = ""
    #: (kernel, why) for each kernel passed over because it failed its self-check here
    failed_self_check: tuple[tuple[str, str], ...] = ()


def _verdict(name: str, device):
    """The self-check verdict of ``name`` on ``device`` (None: passed), as a reason."""
    import torch

    from iclr25.gpu import selfcheck

    index = device.index if device.index is not None else torch.cuda.current_device()
    try:
        verdict = selfcheck.verify(name, index)
    except Exception as exc:  # noqa: BLE001 - e.g. the cache folder is unwritable: not verified
        verdict = selfcheck.Verdict(name, False, f"the self-check could not run: {exc}")
    return None if verdict.ok else verdict


def gemm_plan(a, b) -> GemmPlan:
    """Which kernel :func:`gemm` takes for ``a @ b``: on an sm_90 device the persistent
    Hopper kernel, else the first Hopper kernel (tile-divisible shapes), each only once it
    passed its self-check on this device (:mod:`iclr25.gpu.selfcheck`); otherwise, and on
    every other device, the mma.sync kernel."""
    import torch

    from iclr25.gpu.kernels import gemm_hopper, gemm_wgmma

    if not (a.is_cuda and torch.cuda.get_device_capability(a.device) == (9, 0)):
        return GemmPlan("gemm_bf16")
    reasons, failed = [], []
    for module in (gemm_hopper, gemm_wgmma):
        name = module.SPEC.name
        why = module.applies(a, b)
        if why is None:
            verdict = _verdict(name, a.device)
            if verdict is None:
                return GemmPlan(name, "; ".join(reasons), tuple(failed))
            why = f"failed its self-check on this GPU ({verdict.reason})"
            failed.append((name, verdict.reason))
        reasons.append(f"{name}: {why}")
    return GemmPlan("gemm_bf16", "; ".join(reasons), tuple(failed))


def gemm_path(a, b) -> str:
    """The kernel package :func:`gemm` runs for ``a @ b`` (:func:`gemm_plan`)."""
    return gemm_plan(a, b).kernel


def gemm(a, b, *, kernel: str = "auto"):
    """``a @ b`` with the tile kernels: a (M, K), b (K, N), both bf16 or both fp16 on CUDA.

    ``kernel``: ``"auto"`` (:func:`gemm_plan`, with a warning when a Hopper kernel failed
    its self-check), or one of :data:`KERNELS` — ``"mma.sync"`` (any shape, sm_80+),
    ``"wgmma"`` / ``"hopper"`` (ValueError where the kernel does not apply or has not passed
    its self-check on this device)."""
    import torch

    from iclr25.gpu.launch import require_cuda_tensors

    if kernel != "auto" and kernel not in KERNELS:
        raise ValueError(f"kernel must be auto or one of {', '.join(KERNELS)}, not {kernel!r}")
    require_cuda_tensors({"a": a, "b": b}, (torch.bfloat16, torch.float16))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm needs (M, K) @ (K, N); got {tuple(a.shape)} @ {tuple(b.shape)}")
    if kernel == "auto":
        plan = gemm_plan(a, b)
        if plan.failed_self_check:
            from iclr25.gpu import selfcheck

            for name, why in plan.failed_self_check:
                selfcheck.fallback_warning(name, why, plan.kernel)
        chosen = plan.kernel
    else:
        chosen = _forced(KERNELS[kernel], a, b)
    if chosen == "gemm_hopper":
        from iclr25.gpu.kernels.gemm_hopper import gemm_hopper

        return gemm_hopper(a, b)
    a = a if a.stride(1) == 1 and a.stride(0) >= max(1, a.shape[1]) else a.contiguous()
    b = b if b.stride(1) == 1 and b.stride(0) >= max(1, b.shape[1]) else b.contiguous()
    if chosen == "gemm_wgmma":
        from iclr25.gpu.kernels.gemm_wgmma import gemm_wgmma

        return gemm_wgmma(a, b)
    return gemm_mma_sync(a, b)


def _forced(name: str, a, b) -> str:
    """``name`` when it may run ``a @ b`` (applies and passed its self-check), else ValueError."""
    if name == "gemm_bf16":
        return name
    import importlib

    module = importlib.import_module(f"iclr25.gpu.kernels.{name}")
    why = module.applies(a, b)
    if why is None:
        verdict = _verdict(name, a.device)
        why = None if verdict is None else f"failed its self-check ({verdict.reason})"
    if why is not None:
        raise ValueError(f"{name} cannot run {tuple(a.shape)} @ {tuple(b.shape)} here: {why}")
    return name


def gemm_mma_sync(a, b):
    """``a @ b`` with this package's mma.sync kernel (row-major inputs, any shape, sm_80+)."""
    import torch

    from iclr25.gpu.launch import kernel_function, launch, ptr

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
    "gemm_mma_sync",
    "gemm_plan",
    "gemm_reference",
    "gemm_rms_tolerance",
    "gemm_tolerance",
    "hot_path_cases",
    "launch_grid",
]

"""Persistent Hopper GEMM: C = A @ B with TMA in and out and warp-specialised wgmma (kernel.cu).

The first choice of :func:`iclr25.gpu.kernels.gemm_bf16.gemm` on sm_90 devices, for any
M, N, K >= 1 whose operands TMA can describe (:func:`operand_layout`): row-major, or the
transpose of a row-major matrix (``x @ w.T`` reads ``w`` as it is stored, no copy), with
16-byte aligned rows and an output row of a multiple of 8 elements. Edge tiles are
zero-filled by TMA on load and clipped by TMA on store.

It was written without a GPU at hand, so the public path uses it on a device only after
:func:`self_check` passed there (:mod:`iclr25.gpu.selfcheck`: a subprocess with a time
limit, cached by source hash); otherwise ``gemm()`` falls back to the proven kernels with
a warning. Built with nvcc for sm_90a (:func:`iclr25.gpu.compile.build_cubin`) and launched
through the driver (:mod:`iclr25.gpu.driver`) because the tensor maps are by-value
``__grid_constant__`` parameters.
"""

from __future__ import annotations

import math

from iclr25.gpu.kernels.gemm_bf16.reference import gemm_reference, gemm_tolerance
from iclr25.gpu.registry import KernelSpec

SPEC = KernelSpec(
    name="gemm_hopper",
    package=__name__,
    description="persistent bf16/fp16 GEMM: TMA loads + stores, wgmma m64n256k16, "
    "2-CTA multicast clusters, any shape, transposed operands by descriptor",
    archs=("sm_90a",),
    skip_reason="TMA and wgmma are Hopper-only (sm_90a)",
)
# Must match kernel.cu.
BM, BN, BK, STAGES, THREADS = 128, 256, 64, 3, 384
STAGE_BYTES = (BM * BK + BK * BN) * 2
C_BYTES = BM * BN * 2
SMEM_BYTES = STAGES * STAGE_BYTES + C_BYTES + 1024 + 16 * STAGES
CLUSTERS = (1, 2)
DTYPES = {"bfloat16": "bf16", "float16": "f16"}
#: TMA boxes (columns, rows) per operand layout: "n" stored as used, "t" stored transposed
BOX_A = {"n": (BK, BM), "t": (64, BK)}
BOX_B = {"n": (64, BK), "t": (BK, 128)}
BOX_C = (64, 64)


def operand_layout(t) -> str | None:
    """``"n"`` for a row-major 2-D view with 16-byte aligned rows, ``"t"`` for the
    transpose of one (its row-major matrix is ``t.T``), None when TMA cannot read it."""
    if t.ndim != 2 or t.data_ptr() % 16:
        return None
    rows, cols = t.shape
    if t.stride(1) == 1 and (t.stride(0) % 8 == 0 or rows == 1):
        return "n"
    if t.stride(0) == 1 and (t.stride(1) % 8 == 0 or cols == 1):
        return "t"
    return None


def applies(a, b) -> str | None:
    """Why :func:`gemm_hopper` cannot take ``a @ b`` (None when it can): an sm_90 device,
    16-bit inputs of one dtype on one device, TMA-readable operands, N a multiple of 8
    (the output rows TMA stores), and M, N, K >= 1."""
    import torch

    if not (a.is_cuda and b.is_cuda) or a.device != b.device or a.dtype != b.dtype:
        return "inputs must be CUDA tensors of one dtype on one device"
    if a.dtype not in (torch.bfloat16, torch.float16) or a.ndim != 2 or b.ndim != 2:
        return "needs 2-D bf16 or fp16 inputs"
    if a.shape[1] != b.shape[0]:
        return f"shapes {tuple(a.shape)} @ {tuple(b.shape)} do not chain"
    if torch.cuda.get_device_capability(a.device) != (9, 0):
        return "needs an sm_90 (Hopper) device"
    (m, k), n = a.shape, b.shape[1]
    if min(m, n, k) < 1:
        return "empty problem"
    if operand_layout(a) is None or operand_layout(b) is None:
        return "an operand is neither row-major nor transposed with 16-byte aligned rows"
    if n % 8:
        return f"N = {n} is not a multiple of 8 (TMA stores 16-byte aligned output rows)"
    return None


def function_name(dtype, layout_a: str, layout_b: str, cluster: int) -> str:
    return (
        f"gemm_hopper_{DTYPES[str(dtype).removeprefix('torch.')]}_{layout_a}{layout_b}_c{cluster}"
    )


def grid_size(m: int, n: int, sms: int, cluster: int, max_ctas: int | None = None) -> int:
    """CTAs of the persistent launch: one per SM (whole clusters), never more than the work
    items need; ``max_ctas`` caps it (the self-check forces several tiles per CTA)."""
    items = math.ceil(math.ceil(m / BM) / cluster) * math.ceil(n / BN)
    clusters = min(items, max(1, sms // cluster))
    if max_ctas is not None:
        clusters = min(clusters, max(1, max_ctas // cluster))
    return clusters * cluster


def default_cluster(m: int) -> int:
    """2-CTA clusters when there are at least two tile rows to pair."""
    return 2 if math.ceil(m / BM) >= 2 else 1


def gemm_hopper(a, b, *, out=None, cluster: int | None = None, max_ctas: int | None = None):
    """``a @ b`` with the persistent kernel; the caller checks :func:`applies` (and the
    self-check) first. ``out``: an (M, N) row-major view to write (rows 16-byte aligned)."""
    import torch

    from iclr25.gpu import driver, tensor_map
    from iclr25.gpu.compile import cubin_path

    (m, k), n = a.shape, b.shape[1]
    layout_a, layout_b = operand_layout(a), operand_layout(b)
    c = torch.empty((m, n), dtype=a.dtype, device=a.device) if out is None else out
    cluster = cluster or default_cluster(m)
    if cluster not in CLUSTERS:
        raise ValueError(f"cluster must be one of {CLUSTERS}, not {cluster}")
    index = a.device.index if a.device.index is not None else torch.cuda.current_device()
    fn = driver.function(
        cubin_path(SPEC.name, "sm_90a"), function_name(a.dtype, layout_a, layout_b, cluster), index,
        SMEM_BYTES,
    )  # fmt: skip
    params = [
        tensor_map.param(a if layout_a == "n" else a.T, *BOX_A[layout_a]),
        tensor_map.param(b if layout_b == "n" else b.T, *BOX_B[layout_b]),
        tensor_map.param(c, *BOX_C),
        driver.i32(m),
        driver.i32(n),
        driver.i32(k),
    ]
    grid = grid_size(m, n, driver.multiprocessor_count(index), cluster, max_ctas)
    stream = torch.cuda.current_stream(a.device).cuda_stream
    driver.launch(fn, (grid, 1, 1), (THREADS, 1, 1), params, SMEM_BYTES, stream)
    return c


# --- self-check (run by iclr25.gpu.selfcheck in a subprocess) ----------------------------
#: (M, N, K, layout of A and B, cluster, max CTAs): one tile; edge tiles with K not a
#: multiple of 64 and several tiles per CTA; a phantom tile row (odd tile-row count in
#: clusters); every operand layout; one partial k-tile; a long K that wraps the ring.
SELF_CHECKS = (
    (128, 256, 64, "nn", 1, None),
    (300, 520, 200, "nn", 1, 2),
    (300, 520, 200, "nn", 2, 2),
    (264, 776, 136, "nt", 1, 3),
    (264, 776, 136, "tn", 2, 4),
    (264, 776, 136, "tt", 2, 2),
    (264, 776, 136, "nt", 2, 2),
    (264, 776, 136, "tt", 1, 1),
    (72, 8, 8, "nn", 1, None),
    (256, 512, 1032, "nn", 2, 2),
)


def _operand(rows: int, cols: int, layout: str, dtype, gen):
    """A (rows, cols) operand stored as ``layout`` says (``"t"``: a transposed view)."""
    import torch

    if layout == "n":
        return torch.randn(rows, cols, device="cuda", dtype=dtype, generator=gen)
    return torch.randn(cols, rows, device="cuda", dtype=dtype, generator=gen).T


def check_case(m, n, k, layouts, cluster, max_ctas, dtype, seed=0) -> str:
    """Run one case into a guarded output buffer and compare with the fp32 product;
    SelfCheckFailed names the worst element, or a write outside C."""
    import torch

    from iclr25.gpu.selfcheck import SelfCheckFailed

    gen = torch.Generator(device="cuda").manual_seed(seed)
    a, b = _operand(m, k, layouts[0], dtype, gen), _operand(k, n, layouts[1], dtype, gen)
    guard = torch.full((m + 2, n + 16), float("nan"), device="cuda", dtype=dtype)
    got = gemm_hopper(a, b, out=guard[1 : m + 1, 8 : n + 8], cluster=cluster, max_ctas=max_ctas)
    torch.cuda.synchronize()
    what = f"{m}x{n}x{k} {layouts} cluster {cluster} {str(dtype).removeprefix('torch.')}"
    outside = torch.ones_like(guard, dtype=torch.bool)
    outside[1 : m + 1, 8 : n + 8] = False
    if not torch.isnan(guard[outside]).all():
        raise SelfCheckFailed(f"{what}: the kernel wrote outside C")
    expected = gemm_reference(a, b)
    rtol, atol = gemm_tolerance(dtype, k)
    err = (got.float() - expected).abs()
    bad = err > atol + rtol * expected.abs()
    if bad.any() or not torch.isfinite(got).all():
        idx = tuple(int(i) for i in torch.nonzero(bad | ~torch.isfinite(got))[0])
        raise SelfCheckFailed(
            f"{what}: {int(bad.sum())} elements off, first at {idx}: "
            f"{float(got[idx])} vs {float(expected[idx])}"
        )
    return what


def self_check(index: int) -> list[str]:
    """Every case of :data:`SELF_CHECKS` in bf16 (and the first three in fp16) on device
    ``index``; raises on the first mismatch. Returns what was checked."""
    import torch

    with torch.cuda.device(index):
        done = [check_case(*case, torch.bfloat16, seed=i) for i, case in enumerate(SELF_CHECKS)]
        done += [check_case(*case, torch.float16, seed=i) for i, case in enumerate(SELF_CHECKS[:3])]
    return done


__all__ = [
    "SPEC",
    "applies",
    "default_cluster",
    "function_name",
    "gemm_hopper",
    "grid_size",
    "operand_layout",
    "self_check",
]

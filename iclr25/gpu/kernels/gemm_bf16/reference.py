"""Reference for the GEMM kernel: C = A @ B computed in fp32 (or fp64) with torch.

The kernel reads 16-bit A and B, accumulates in fp32 and rounds C to 16 bits, so the
reference takes the same 16-bit inputs, upcasts them and multiplies exactly; the kernel's
error is then its accumulation order plus the final rounding.
"""

from __future__ import annotations

from iclr25.gpu.tolerance import Tolerance


def gemm_reference(a, b, dtype=None):
    """``a @ b`` in ``dtype`` (default float32) on the inputs' device: (M, K) @ (K, N)."""
    import torch

    dtype = dtype or torch.float32
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"gemm needs (M, K) @ (K, N); got {tuple(a.shape)} @ {tuple(b.shape)}")
    return a.to(dtype) @ b.to(dtype)


def gemm_tolerance(dtype, k: int) -> tuple[float, float]:
    """(rtol, atol) for a 16-bit GEMM against the fp32 reference, inputs of unit scale.

    The output is rounded once to 16 bits (relative 2^-8 for bf16, 2^-11 for fp16); fp32
    accumulation of k products adds about k * 2^-24 relative, negligible here. atol covers
    outputs that cancel to near zero: their size is ~ sqrt(k) for unit-normal inputs."""
    eps = unit_roundoff(dtype)
    return 2 * eps, 2 * eps * max(1.0, k**0.5)


def unit_roundoff(dtype) -> float:
    """2^-8 for bfloat16, 2^-11 for float16 (a torch dtype or its name)."""
    name = str(dtype).removeprefix("torch.")
    if name not in ("bfloat16", "float16"):
        raise ValueError(f"16-bit kernels take bfloat16 or float16, not {name}")
    return 2.0**-8 if name == "bfloat16" else 2.0**-11


def gemm_rms_tolerance(dtype) -> Tolerance:
    """The bound gpu-bench checks every GEMM row with: 2u x the row's RMS + 2u x |C| (one
    rounding of C to 16 bits is at most u |C|; fp32 accumulation adds ~ K 2^-24 relative)."""
    eps = unit_roundoff(dtype)
    return Tolerance(rtol=2 * eps, atol_rms=2 * eps)

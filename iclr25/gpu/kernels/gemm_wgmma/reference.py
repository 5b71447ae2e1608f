"""Reference for the Hopper GEMM: the same fp32 product as the mma.sync kernel's
(:mod:`iclr25.gpu.kernels.gemm_bf16.reference`): both compute C = A @ B from 16-bit inputs
with fp32 accumulation and one rounding of C, so they share the reference and tolerance."""

from __future__ import annotations

from iclr25.gpu.kernels.gemm_bf16.reference import gemm_reference, gemm_tolerance

__all__ = ["gemm_reference", "gemm_tolerance"]

"""Reference for the persistent Hopper GEMM: the fp32 product of the 16-bit inputs, shared
with the other GEMM kernels (:mod:`iclr25.gpu.kernels.gemm_bf16.reference`); a transposed
operand is the same matrix, so the reference does not care how it is stored."""

from __future__ import annotations

from iclr25.gpu.kernels.gemm_bf16.reference import gemm_reference, gemm_tolerance

__all__ = ["gemm_reference", "gemm_tolerance"]

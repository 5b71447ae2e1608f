"""Reference for the Hopper attention forward: the definition and its bounds, shared with
the mma.sync forward (:mod:`iclr25.gpu.kernels.attention_fwd.reference`): both compute
softmax(scale Q K^T [causal]) V from 16-bit inputs with fp32 scores, P rounded to 16 bits
before P V, and return the natural-log row log-sum-exp."""

from __future__ import annotations

from iclr25.gpu.kernels.attention_fwd.reference import (
    LSE_TOLERANCE,
    attention_reference,
    attention_rms_tolerance,
    expand_kv,
)

__all__ = ["LSE_TOLERANCE", "attention_reference", "attention_rms_tolerance", "expand_kv"]

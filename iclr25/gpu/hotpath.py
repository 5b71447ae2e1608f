"""The protocol by which kernels offer themselves to ``iclr25 gpu-bench``.

A kernel package (``iclr25/gpu/kernels/<name>/__init__.py``) may define
``hot_path_cases(quick: bool) -> list[HotPathCase]``. Each case builds its inputs on the
CUDA device when ``setup()`` is called and returns two zero-argument callables, ours and
the reference a user would otherwise pick (e.g. ``torch.cdist``); gpu-bench times both
with its harness, computes TFLOP/s from ``flops`` and checks the two outputs agree.
Cases are only built on a CUDA machine; defining them costs nothing on CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HotPathCase:
    op: str  # the kernel name, e.g. "pairwise_sqdist"
    shape: str  # human-readable problem size, e.g. "n=40320 m=40320 d=128"
    flops: float  # floating-point operations of one call (for TFLOP/s)
    reference: str  # what the reference is, e.g. "torch.cdist (squared)"
    #: build inputs on the device; return (ours, reference) zero-argument callables whose
    #: results are arrays (CuPy or torch) comparable elementwise
    setup: Callable[[], tuple[Callable[[], Any], Callable[[], Any]]]
    rtol: float = 1e-3
    atol: float = 1e-3

"""Launch the tile kernels (``tk_tiles.cuh``) on torch CUDA tensors through CuPy.

CuPy has no bfloat16 dtype, so the 16-bit kernels take raw pointers: every tensor is passed
as ``numpy.uint64(tensor.data_ptr())`` and the kernel reads it as ``const unsigned short*``.
Launches go to torch's current stream (CuPy's launcher reads only ``stream.ptr``, so a
two-field handle does; ``cupy.cuda.ExternalStream`` is deprecated in CuPy 14), so they are
ordered with the torch work that produced the inputs and consumes the outputs. Kernels that
use more than 48 KiB of dynamic shared memory get the opt-in attribute
(``cudaFuncAttributeMaxDynamicSharedMemorySize``) set once per device, inside that device's
context: CuPy keeps one function handle per device and the attribute belongs to the handle,
so setting it on the current device only would make a launch on another GPU fail. CuPy
launches a zero-sized grid as one block, so callers return early on empty problems.
"""

from __future__ import annotations

import functools

import numpy as np

#: above this, CUDA needs cudaFuncAttributeMaxDynamicSharedMemorySize set explicitly
DEFAULT_SMEM_LIMIT = 48 * 1024


def ptr(tensor) -> np.uint64:
    """A device pointer as a kernel argument (``None`` -> a null pointer)."""
    return np.uint64(0 if tensor is None else tensor.data_ptr())


#: (id(fn), device index) -> (fn, dynamic shared bytes allowed); fn is kept alive so its id
#: is never reused
_SMEM_OPT_IN: dict[tuple[int, int], tuple[object, int]] = {}


@functools.cache
def kernel_function(module_name: str, function: str):
    """The RawKernel ``function`` of kernel module ``module_name`` (compiled lazily)."""
    from iclr25.gpu.loading import load_module

    return load_module(module_name).get_function(function)


def allow_dynamic_smem(fn, smem_bytes: int, index: int) -> None:
    """Opt ``fn`` in to ``smem_bytes`` of dynamic shared memory on the current device
    (``index``), once; nothing to do at or below the 48 KiB default."""
    if smem_bytes <= DEFAULT_SMEM_LIMIT:
        return
    key = (id(fn), index)
    if key in _SMEM_OPT_IN and _SMEM_OPT_IN[key][1] >= smem_bytes:
        return
    fn.max_dynamic_shared_size_bytes = smem_bytes
    _SMEM_OPT_IN[key] = (fn, smem_bytes)


class StreamHandle:
    """The part of a CuPy stream that ``RawKernel.__call__(..., stream=)`` uses."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


def launch(fn, grid: tuple, block: tuple, args: tuple, smem_bytes: int, device) -> None:
    """Run ``fn`` on torch's current stream of ``device`` (a torch.device)."""
    import cupy
    import torch

    if min(grid) < 1:
        raise ValueError(f"empty launch grid {grid}: return before launching")
    index = device.index if device.index is not None else torch.cuda.current_device()
    stream = StreamHandle(torch.cuda.current_stream(index).cuda_stream)
    with cupy.cuda.Device(index):
        allow_dynamic_smem(fn, smem_bytes, index)
        fn(grid, block, args, shared_mem=smem_bytes, stream=stream)


def require_cuda_tensors(names_and_tensors: dict, dtypes: tuple) -> None:
    """ValueError unless every tensor is on one CUDA device with one dtype from ``dtypes``."""
    tensors = list(names_and_tensors.items())
    first = tensors[0][1]
    for name, t in tensors:
        if not t.is_cuda:
            raise ValueError(f"{name} must be a CUDA tensor (got device {t.device})")
        if t.device != first.device:
            raise ValueError(f"{name} is on {t.device}, {tensors[0][0]} on {first.device}")
        if t.dtype not in dtypes or t.dtype != first.dtype:
            allowed = ", ".join(str(d) for d in dtypes)
            raise ValueError(f"{name} has dtype {t.dtype}; all inputs need one of: {allowed}")


def aligned(tensor, bytes_: int = 16) -> bool:
    return tensor.data_ptr() % bytes_ == 0


def contiguous_aligned(tensor):
    """A contiguous, 16-byte aligned version of ``tensor`` (a copy only when needed)."""
    tensor = tensor.contiguous()
    return tensor if aligned(tensor) else tensor.clone()

"""TMA tensor maps (``CUtensorMap``) for 2-D row-major torch tensors, built on the host.

The Hopper kernels that copy tiles with TMA (``cp.async.bulk.tensor``) read a 128-byte
tensor map describing the global matrix (address, extents, row stride), the box copied per
instruction and the shared-memory swizzle. It is encoded by the CUDA driver's
``cuTensorMapEncodeTiled`` (called through ctypes: neither torch nor CuPy exposes it) and
placed in device memory, where the kernel reads it by address (TMA accepts a tensor map in
global memory). Encoding and the copy to the device cost a few microseconds, so maps are
cached by (address, shape, strides, dtype, box): a map depends on nothing else, so a reused
address with the same geometry gets a map that is still correct.
"""

from __future__ import annotations

import ctypes
import functools
from collections import OrderedDict

#: CUtensorMapDataType values (cuda.h)
DATA_TYPES = {"float16": 6, "bfloat16": 9}
SWIZZLE_128B = 3  # CU_TENSOR_MAP_SWIZZLE_128B
L2_PROMOTION_128B = 2  # CU_TENSOR_MAP_L2_PROMOTION_L2_128B
MAP_BYTES = 128
_CACHE_SIZE = 64
_cache: OrderedDict = OrderedDict()


@functools.cache
def _encode_tiled():
    lib = ctypes.CDLL("libcuda.so.1")
    fn = lib.cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    u64p, u32p = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32)
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64p, u64p]
    fn.argtypes += [u32p, u32p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return fn


def encode_2d(tensor, box_cols: int, box_rows: int) -> bytes:
    """The 128-byte tensor map of a 2-D row-major 16-bit ``tensor`` for boxes of
    ``box_rows`` x ``box_cols`` elements, 128-byte swizzle. RuntimeError if the driver
    refuses (e.g. a row stride that is not a multiple of 16 bytes)."""
    dtype = str(tensor.dtype).removeprefix("torch.")
    if dtype not in DATA_TYPES or tensor.ndim != 2 or tensor.stride(1) != 1:
        raise ValueError(f"a tensor map needs a row-major 2-D 16-bit tensor, not {tensor.dtype}")
    rows, cols = tensor.shape
    buf = ctypes.create_string_buffer(2 * MAP_BYTES)
    addr = (ctypes.addressof(buf) + MAP_BYTES - 1) & ~(MAP_BYTES - 1)  # alignas(128)
    rc = _encode_tiled()(
        addr,
        DATA_TYPES[dtype],
        2,
        tensor.data_ptr(),
        (ctypes.c_uint64 * 2)(cols, rows),
        (ctypes.c_uint64 * 1)(tensor.stride(0) * tensor.element_size()),
        (ctypes.c_uint32 * 2)(box_cols, box_rows),
        (ctypes.c_uint32 * 2)(1, 1),
        0,  # no interleave
        SWIZZLE_128B,
        L2_PROMOTION_128B,
        0,  # out-of-bounds elements read as zero
    )
    if rc != 0:
        shape = tuple(tensor.shape)
        raise RuntimeError(f"cuTensorMapEncodeTiled failed (CUresult {rc}) for {shape}")
    return ctypes.string_at(addr, MAP_BYTES)


def device_map(tensor, box_cols: int, box_rows: int):
    """The tensor map of ``tensor`` as a 128-byte uint8 tensor on its device (cached)."""
    import torch

    key = (tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)
    key += (tensor.device, box_cols, box_rows)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    raw = encode_2d(tensor, box_cols, box_rows)
    mapped = torch.frombuffer(bytearray(raw), dtype=torch.uint8).to(tensor.device)
    _cache[key] = mapped
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return mapped

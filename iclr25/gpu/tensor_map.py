"""TMA tensor maps (``CUtensorMap``) for 2-D row-major torch tensors, built on the host.

The Hopper kernels copy tiles with TMA (``cp.async.bulk.tensor``), which reads a 128-byte
tensor map describing the global matrix (address, extents, row stride), the box copied per
instruction and the shared-memory swizzle. It is encoded by the CUDA driver's
``cuTensorMapEncodeTiled`` (called through ctypes: neither torch nor CuPy exposes it) and
passed to the kernel **by value**, as a ``const __grid_constant__ CUtensorMap`` parameter
(:mod:`iclr25.gpu.driver`): the map then lives in the launch's parameter space, so there
is no copy in device memory whose address the allocator could hand to another map while
the TMA unit still caches the old one, and no ``fence.proxy.tensormap`` is needed.

Encoding costs a few microseconds, so the encoded bytes are cached on the host by
(address, shape, strides, dtype, box): the map depends on nothing else, so a reused
address with the same geometry gets bytes that are still correct, and a stale entry is
harmless (it is only ever host memory).
"""

from __future__ import annotations

import ctypes
import functools
from collections import OrderedDict

from iclr25.gpu.driver import Param, check, library

#: CUtensorMapDataType values (cuda.h)
DATA_TYPES = {"float16": 6, "bfloat16": 9}
SWIZZLE_128B = 3  # CU_TENSOR_MAP_SWIZZLE_128B
L2_PROMOTION_128B = 2  # CU_TENSOR_MAP_L2_PROMOTION_L2_128B
MAP_BYTES = 128
#: the 128-byte swizzle needs boxes whose inner dimension is at most 128 bytes
SWIZZLE_SPAN_BYTES = 128
_CACHE_SIZE = 256
_cache: OrderedDict = OrderedDict()


@functools.cache
def _encode_tiled():
    fn = library().cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    u64p, u32p = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32)
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64p, u64p]
    fn.argtypes += [u32p, u32p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return fn


def check_tensor(tensor, box_cols: int, box_rows: int) -> None:
    """ValueError for what TMA cannot describe: not a 2-D (or 3-D: a stack of matrices)
    row-major 16-bit tensor, a row or matrix stride that is not a multiple of 16 bytes, a
    base address not 16-byte aligned, or a box wider than the 128-byte swizzle span."""
    dtype = str(tensor.dtype).removeprefix("torch.")
    if dtype not in DATA_TYPES or tensor.ndim not in (2, 3) or tensor.stride(-1) != 1:
        raise ValueError(f"a tensor map needs a row-major 2-D 16-bit tensor, not {tensor.dtype}")
    outer = [tensor.stride(d) * tensor.element_size() for d in range(tensor.ndim - 1)]
    if any(stride % 16 for stride in outer) or tensor.data_ptr() % 16:
        raise ValueError("TMA needs 16-byte aligned rows (row stride a multiple of 8 elements)")
    if box_cols * tensor.element_size() > SWIZZLE_SPAN_BYTES or not 1 <= box_rows <= 256:
        raise ValueError(f"box {box_rows} x {box_cols} does not fit the 128-byte swizzle")


def encode_2d(tensor, box_cols: int, box_rows: int) -> bytes:
    """The 128-byte tensor map of a 2-D row-major 16-bit ``tensor`` for boxes of
    ``box_rows`` x ``box_cols`` elements, 128-byte swizzle; elements outside the matrix read
    as zero and are not written by stores. A 3-D tensor is a stack of such matrices (boxes of
    one matrix each: a box sticking out of one matrix's rows reads zeros, not the next
    matrix). RuntimeError if the driver refuses."""
    check_tensor(tensor, box_cols, box_rows)
    rank = tensor.ndim
    dims = list(reversed(tensor.shape))  # innermost first: columns, rows[, matrices]
    strides = [tensor.stride(d) * tensor.element_size() for d in reversed(range(rank - 1))]
    box = [box_cols, box_rows] + [1] * (rank - 2)
    buf = ctypes.create_string_buffer(2 * MAP_BYTES)
    addr = (ctypes.addressof(buf) + MAP_BYTES - 1) & ~(MAP_BYTES - 1)  # alignas(128)
    rc = _encode_tiled()(
        addr,
        DATA_TYPES[str(tensor.dtype).removeprefix("torch.")],
        rank,
        tensor.data_ptr(),
        (ctypes.c_uint64 * rank)(*dims),
        (ctypes.c_uint64 * (rank - 1))(*strides),
        (ctypes.c_uint32 * rank)(*box),
        (ctypes.c_uint32 * rank)(*([1] * rank)),
        0,  # no interleave
        SWIZZLE_128B,
        L2_PROMOTION_128B,
        0,  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements read as zero
    )
    check(rc, f"cuTensorMapEncodeTiled{tuple(tensor.shape)}")
    return ctypes.string_at(addr, MAP_BYTES)


def map_key(tensor, box_cols: int, box_rows: int) -> tuple:
    return (
        tensor.data_ptr(),
        tuple(tensor.shape),
        tuple(tensor.stride()),
        tensor.dtype,
        box_cols,
        box_rows,
    )


def param(tensor, box_cols: int, box_rows: int) -> Param:
    """The tensor map of ``tensor`` as a by-value kernel argument (host bytes, cached)."""
    key = map_key(tensor, box_cols, box_rows)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    made = Param(encode_2d(tensor, box_cols, box_rows), align=MAP_BYTES)
    _cache[key] = made
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return made

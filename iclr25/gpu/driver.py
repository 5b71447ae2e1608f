"""The CUDA driver API through ctypes, for the Hopper kernels (sm_90a cubins built by nvcc).

Why not CuPy here: a TMA tensor map must reach the kernel as a 128-byte
``const __grid_constant__ CUtensorMap`` parameter (a map read from global memory needs a
``fence.proxy.tensormap`` acquire, and a cache of maps in device memory whose addresses
the allocator reuses is undefined behaviour), and CuPy's launcher only passes scalars and
pointers by value. ``cuLaunchKernel`` takes an array of pointers to each argument's host
bytes and copies them into the kernel's parameter space, so a struct of any size goes
through; :class:`Param` holds those bytes. Modules are loaded once per (cubin, device)
into the device's primary context, the one torch's runtime uses, so launches on torch's
stream see torch's memory.

Everything here is a thin wrapper: a failing call raises :class:`DriverError` naming the
call and the driver's error name.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from dataclasses import dataclass
from pathlib import Path

#: CUfunction_attribute values (cuda.h)
MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
#: CUdevice_attribute values (cuda.h)
MULTIPROCESSOR_COUNT = 16


class DriverError(RuntimeError):
    """A CUDA driver call failed."""


@functools.cache
def library():
    """``libcuda.so.1`` (the driver, present wherever an NVIDIA GPU is usable)."""
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise DriverError(f"the CUDA driver library is not loadable ({exc})") from None


def check(rc: int, call: str) -> None:
    """DriverError unless ``rc`` is CUDA_SUCCESS (0)."""
    if rc == 0:
        return
    name = ctypes.c_char_p()
    try:
        library().cuGetErrorName(rc, ctypes.byref(name))
    except AttributeError:  # pragma: no cover - every driver has cuGetErrorName
        pass
    shown = name.value.decode() if name.value else f"CUresult {rc}"
    raise DriverError(f"{call} failed: {shown}")


# --- kernel parameters ------------------------------------------------------------------
class Param:
    """The host bytes of one kernel argument, at an address aligned to ``align`` bytes
    (128 for a tensor map: ``CUtensorMap`` is declared ``alignas(64)``, and the encoder
    wants 64-byte alignment too)."""

    __slots__ = ("_buffer", "address", "size")

    def __init__(self, raw: bytes, align: int = 8) -> None:
        self.size = len(raw)
        self._buffer = ctypes.create_string_buffer(self.size + align)
        self.address = (ctypes.addressof(self._buffer) + align - 1) & ~(align - 1)
        ctypes.memmove(self.address, raw, self.size)

    def read(self) -> bytes:
        return ctypes.string_at(self.address, self.size)


def u64(value: int) -> Param:
    return Param(int(value).to_bytes(8, "little", signed=False))


def i32(value: int) -> Param:
    return Param(int(value).to_bytes(4, "little", signed=True), align=4)


def i64(value: int) -> Param:
    return Param(int(value).to_bytes(8, "little", signed=True))


def param_array(params: list[Param]):
    """The ``void**`` kernelParams array: one pointer to each argument's bytes."""
    return (ctypes.c_void_p * len(params))(*[p.address for p in params])


# --- contexts, modules, functions ---------------------------------------------------------
_lock = threading.Lock()


def _device_handle(index: int) -> ctypes.c_int:
    lib = library()
    check(lib.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(lib.cuDeviceGet(ctypes.byref(dev), index), "cuDeviceGet")
    return dev


@functools.cache
def primary_context(index: int) -> int:
    """The primary context of device ``index`` (retained once per process)."""
    ctx = ctypes.c_void_p()
    dev = _device_handle(index)
    check(library().cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    return ctx.value


def make_current(index: int) -> None:
    """Make device ``index``'s primary context current on this thread (one cheap query when
    it already is: torch keeps the primary context of its current device current)."""
    wanted = primary_context(index)
    current = ctypes.c_void_p()
    if library().cuCtxGetCurrent(ctypes.byref(current)) == 0 and current.value == wanted:
        return
    check(library().cuCtxSetCurrent(ctypes.c_void_p(wanted)), "cuCtxSetCurrent")


@functools.cache
def multiprocessor_count(index: int) -> int:
    count = ctypes.c_int()
    dev = _device_handle(index)
    check(
        library().cuDeviceGetAttribute(ctypes.byref(count), MULTIPROCESSOR_COUNT, dev),
        "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)",
    )
    return count.value


@dataclass(frozen=True)
class Function:
    """A kernel entry point loaded on one device; ``module`` keeps its module alive."""

    handle: int
    module: int
    device: int
    name: str


@functools.cache
def _module(path: str, index: int) -> int:
    make_current(index)
    module = ctypes.c_void_p()
    check(library().cuModuleLoad(ctypes.byref(module), path.encode()), f"cuModuleLoad({path})")
    return module.value


_smem_set: dict[tuple[int, int], int] = {}
#: (cubin, name, device, smem) -> Function: a launch looks its kernel up in a dict, with no
#: driver call (host overhead matters for kernels of a few microseconds)
_functions: dict[tuple[str, str, int, int], Function] = {}


def function(cubin: Path, name: str, index: int, smem_bytes: int = 0) -> Function:
    """Entry point ``name`` of ``cubin`` on device ``index``, opted in to ``smem_bytes`` of
    dynamic shared memory (the attribute belongs to the function handle: set once)."""
    key = (str(cubin), name, index, smem_bytes)
    hit = _functions.get(key)
    if hit is not None:
        return hit
    with _lock:
        module = _module(str(cubin), index)
        handle = ctypes.c_void_p()
        check(
            library().cuModuleGetFunction(
                ctypes.byref(handle), ctypes.c_void_p(module), name.encode()
            ),
            f"cuModuleGetFunction({name})",
        )
        fn = Function(handle.value, module, index, name)
        if smem_bytes > _smem_set.get((fn.handle, index), 48 * 1024):
            check(
                library().cuFuncSetAttribute(
                    ctypes.c_void_p(fn.handle), MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_bytes
                ),
                f"cuFuncSetAttribute({name}, MAX_DYNAMIC_SHARED_SIZE_BYTES={smem_bytes})",
            )
            _smem_set[(fn.handle, index)] = smem_bytes
    _functions[key] = fn
    return fn


def launch(
    fn: Function, grid: tuple, block: tuple, params: list[Param], smem_bytes: int, stream: int
) -> None:
    """``cuLaunchKernel`` on ``stream`` (a ``cudaStream_t`` as an integer, e.g. torch's
    ``current_stream().cuda_stream``). Clusters come from the kernel's ``__cluster_dims__``."""
    if min(grid) < 1:
        raise ValueError(f"empty launch grid {grid}: return before launching")
    grid, block = (tuple(grid) + (1, 1))[:3], (tuple(block) + (1, 1))[:3]
    make_current(fn.device)
    kernel_params = param_array(params)
    check(
        library().cuLaunchKernel(
            ctypes.c_void_p(fn.handle),
            *(ctypes.c_uint(g) for g in grid),
            *(ctypes.c_uint(b) for b in block),
            ctypes.c_uint(smem_bytes),
            ctypes.c_void_p(stream),
            kernel_params,
            None,
        ),
        f"cuLaunchKernel({fn.name})",
    )

"""Loading a registered kernel onto the current CUDA device (NVRTC or an nvcc cubin).

Separate from :mod:`iclr25.gpu.registry` (what kernels exist) and
:mod:`iclr25.gpu.compile` (nvcc builds and compile checks), so that neither of those two
imports the other's importer: registry <- compile <- loading.
"""

from __future__ import annotations

import functools

from iclr25.gpu.compile import build_cubin
from iclr25.gpu.registry import KernelSpec, get_kernel, include_dir


def device_arch(cupy) -> str:
    """The ``sm_XY`` arch of the current CuPy device (``sm_90a`` on Hopper)."""
    major, minor = divmod(int(cupy.cuda.Device().compute_capability), 10)
    arch = f"sm_{major}{minor}"
    return arch + "a" if (major, minor) == (9, 0) else arch


def needs_arch_specific_target(spec: KernelSpec) -> bool:
    """True when every arch the kernel is built for is an arch-specific target (``sm_90a``):
    it uses features (wgmma, setmaxnreg) that the plain ``sm_90`` target lacks."""
    return all(arch.endswith("a") for arch in spec.archs)


def nvrtc_options(spec: KernelSpec) -> tuple[str, ...]:
    """Options for ``cupy.RawModule(code=...)``. No ``-arch``: CuPy appends
    ``-arch=sm_XY`` for the current device itself. A second arch option is an error in older
    NVRTC (NVRTC_ERROR_INVALID_OPTION, CuPy issue #3292); NVRTC 12.9 accepts it, with a
    "followed by" warning or silently, and which target wins depends on the pair — so the
    build would depend on the NVRTC version. Targets CuPy cannot ask for (sm_90a) go
    through nvcc instead (:func:`load_module`)."""
    return ("-std=c++17", f"-I{include_dir()}", *spec.options)


@functools.cache
def load_module(name: str):
    """Compile kernel ``name`` for the current device, once per process.

    Kernels for plain archs go through CuPy's NVRTC path (``RawModule(code=...)``, cached
    on disk by CuPy under ``CUPY_CACHE_DIR``). CuPy cannot request an arch-specific target
    such as ``sm_90a``, so kernels built only for such targets are compiled with nvcc into
    a cached cubin (:func:`iclr25.gpu.compile.build_cubin`) and loaded from it."""
    from iclr25.gpu import get_cupy

    cupy = get_cupy()
    if cupy is None:
        raise RuntimeError("load_module needs CuPy and a CUDA device")
    spec = get_kernel(name)
    arch = device_arch(cupy)
    if needs_arch_specific_target(spec):
        if arch not in spec.archs:
            raise RuntimeError(f"kernel {name} runs only on {', '.join(spec.archs)}, not {arch}")
        return cupy.RawModule(path=str(build_cubin(spec, arch)))
    return cupy.RawModule(
        code=spec.read_source(),
        options=nvrtc_options(spec),
        name_expressions=spec.name_expressions or None,
    )
